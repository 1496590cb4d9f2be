"""`kopa`: the command line of KOPA EDGE, one module per command group.

Every command reads the one settings object (environment variables `KOPA_*`); options override it.
"""

from __future__ import annotations

import sys

import typer

from cli import bench, graph, sandbox, serve, synth, token, train, verify

app = typer.Typer(
    help=(
        "KOPA EDGE: register public APIs, verify tool links by execution, synthesise trajectories, "
        "train and benchmark models."
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(graph.app, name="graph")
app.add_typer(token.app, name="token")
app.add_typer(bench.app, name="bench")
app.add_typer(train.app, name="train")
app.command("register")(graph.register_cmd)
app.command("serve")(serve.serve)
app.command("worker")(serve.worker)
app.command("beat")(serve.beat)
app.command("verify")(verify.verify_cmd)
app.command("synth")(synth.synth_cmd)
app.command("demo")(synth.demo)


def main() -> None:  # pragma: no cover
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


__all__ = ["app", "main"]
