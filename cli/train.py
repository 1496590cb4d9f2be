"""`kopa train sft|grpo|tiny`: training on the verified trajectories (needs the `train` extra)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from cli.common import fail, open_configured_store
from core.errors import KopaError
from core.settings import Settings, get_settings
from graph.store import GraphStore, all_links, open_store
from sandbox.inprocess import sandbox_mode
from training.check import check_model
from training.config import RunConfig, load_config
from training.datasets import load_records, sft_row
from training.environment import LiveBackend, secret_values
from training.run import offline, run_grpo, run_sft
from training.tiny import FAMILIES, build_tiny, conversation_texts

app = typer.Typer(
    help="Train models on the trajectories: SFT warm-up and GRPO with execution-grounded rewards.", no_args_is_help=True
)

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML config (see training/config.py).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="Override, e.g. --set train.max_steps=3 (repeatable).")]
ModelOpt = Annotated[Path | None, typer.Option(help="Local model directory (overrides model:).")]
DataOpt = Annotated[Path | None, typer.Option(help="records.jsonl or an export folder (overrides data.records).")]
OutOpt = Annotated[Path | None, typer.Option(help="Run folder (overrides output:).")]
StepsOpt = Annotated[int | None, typer.Option(help="Overrides train.max_steps.")]


def _config(
    config: Path | None,
    overrides: list[str] | None,
    model: Path | None,
    data: Path | None,
    out: Path | None,
    steps: int | None,
) -> RunConfig:
    try:
        return load_config(
            config, overrides, **{"model": model, "data.records": data, "output": out, "train.max_steps": steps}
        )
    except KopaError as exc:
        fail(exc.detail)


def _open_graph(cfg: RunConfig, settings: Settings) -> GraphStore | None:
    """The graph the run reads tools and refuted links from: data.graph (an embedded file), else the configured
    store when it is Neo4j, else none."""
    if cfg.data.graph is not None:
        if not cfg.data.graph.exists():
            fail(f"data.graph {cfg.data.graph} does not exist")
        return open_store(settings.model_copy(update={"store": "embedded", "embedded_path": cfg.data.graph}))
    if settings.store == "neo4j":
        return open_configured_store(settings)
    return None


@contextmanager
def _training_errors() -> Iterator[None]:
    """A failed run ends the command in one line: the train extra missing, or what the config or data got wrong."""
    try:
        yield
    except ImportError as exc:
        fail(f"training needs the train extra (pip install -e '.[train]'): {exc}")
    except (KopaError, ValueError) as exc:
        fail(getattr(exc, "detail", None) or str(exc).splitlines()[0])


def _sft(cfg: RunConfig) -> None:
    with _training_errors():
        summary = run_sft(cfg)
    typer.echo(json.dumps(summary, ensure_ascii=False))


def _grpo(cfg: RunConfig) -> None:
    settings = get_settings()
    transport = None
    if cfg.grpo.sandbox:
        settings, transport = sandbox_mode(settings)
    store = _open_graph(cfg, settings)
    # data.verification false (the no-verification arm): live tools from the graph, but no refuted-link signal
    refuted = all_links(store, status="refuted") if store is not None and cfg.data.verification else []
    tools = {t.name: t for t in store.all_tools()} if store is not None else {}
    apis = store.list_apis(limit=10_000)[0] if store is not None else []
    if store is not None:
        store.close()
    backend = None
    with _training_errors():
        try:
            if cfg.grpo.environment == "live":
                if not tools:
                    fail(
                        "grpo.environment live needs a graph with registered tools: set data.graph (kopa demo's "
                        "graph.sqlite3) or KOPA_STORE=neo4j"
                    )
                backend = LiveBackend(
                    settings, tools, {a.id: a for a in apis}, transport=transport, budget=cfg.grpo.view_budget()
                )
            summary = run_grpo(cfg, backend, secrets=secret_values(settings, apis), refuted=refuted)
        finally:
            if backend is not None:
                backend.close()
    typer.echo(json.dumps(summary, ensure_ascii=False))


def _training_command(name: str, run: Callable[[RunConfig], None], summary: str) -> None:
    """`kopa train NAME`: the run's config from --config, --set and the shortcut options, then `run`."""

    def command(
        config: ConfigOpt = None,
        set_: SetOpt = None,
        model: ModelOpt = None,
        data: DataOpt = None,
        out: OutOpt = None,
        steps: StepsOpt = None,
    ) -> None:
        run(_config(config, set_, model, data, out, steps))

    app.command(name, help=summary)(command)


_training_command(
    "sft", _sft, "Supervised warm-up on the trajectories' conversations with tools (assistant-only loss)."
)
_training_command(
    "grpo",
    _grpo,
    "GRPO with each record's own tools executed live (execution layer) or replayed from the recorded responses.",
)


@app.command("check")
def check(
    model: Annotated[Path, typer.Option(help="Local model directory (its tokenizer and chat template).")],
    config: ConfigOpt = None,
    set_: SetOpt = None,
    data: Annotated[
        Path | None, typer.Option(help="records.jsonl or an export folder: token lengths against the budgets.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")] = False,
) -> None:
    """Check a model before a GPU run: trl recognises its chat template, a sample renders with the right assistant
    mask, the parser reads the template's own call, and (with --data) the rows' token lengths fit the config's
    budgets. Exits 1 when a check fails."""
    offline()
    if not (model / "config.json").is_file() and not (model / "tokenizer_config.json").is_file():
        fail(f"{model}: not a model directory (no config.json or tokenizer_config.json)")
    cfg = _config(config, set_, model, data, model, None)
    try:
        records = load_records(data) if data is not None else []
        report = check_model(model, records, cfg)
    except ImportError as exc:
        fail(f"kopa train check needs the train extra (pip install -e '.[train]'): {exc}")
    except (KopaError, OSError) as exc:
        fail(getattr(exc, "detail", None) or str(exc).splitlines()[0])
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False, indent=1))
    else:
        for c in report["checks"]:
            typer.echo(f"{'ok  ' if c['ok'] else 'FAIL'} {c['check']}: {c['detail']}")
        typer.echo(f"{model}: {'ready' if report['ok'] else 'not ready (see FAIL above)'}")
    if not report["ok"]:
        raise typer.Exit(1)


@app.command("tiny")
def tiny(
    out: Annotated[Path, typer.Option(help="Where to save the model + tokenizer.")] = Path(".kopa/tiny"),
    data: DataOpt = None,
    vocab: Annotated[int, typer.Option(help="BPE vocabulary size.")] = 4096,
    family: Annotated[str, typer.Option(help=f"Chat-template family: {', '.join(FAMILIES)}.")] = "qwen2.5",
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
) -> None:
    """Build a tiny Qwen2-architecture model and tokenizer locally (tests and CPU demos; no downloads)."""
    offline()
    if family not in FAMILIES:
        fail(f"--family must be one of {', '.join(FAMILIES)}, not {family!r}")
    corpus: list[str] = []
    if data is not None:
        try:
            corpus = conversation_texts((sft_row(r) for r in load_records(data)), family)
        except KopaError as exc:
            fail(exc.detail)
    path = build_tiny(out, corpus, vocab_size=vocab, family=family, seed=seed)
    typer.echo(str(path))
