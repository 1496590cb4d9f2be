"""No dead functions in shipped code: every function, method and class is called from somewhere (shipped code, tests
or perf scripts), or it is an entry point a framework calls by name and is listed below with the reason.

vulture reads the code as text (nothing runs); its unused-variable and -attribute findings are left out, since
pydantic and dataclass fields are read by serialisation it cannot see."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("api", "bench", "cli", "core", "execution", "graph", "sandbox", "synthesis", "training", "verification",
           "workers")  # fmt: skip
# Called by a framework through its decorator: FastAPI routes, Celery tasks and signals, Typer commands, validators.
DECORATORS = (
    "@router.*,@app.*,@*.command,@*.group,@*.callback,@field_validator,@model_validator,@*.task,@*.connect,"
    "@*.get,@*.post,@*.put,@*.delete,@*.middleware,@*.exception_handler"
)
# Called by a framework by name: (file, name prefix) -> who calls them.
FRAMEWORK_NAMES = {
    ("bench/bfcl/runner.py", ""): "bfcl-eval's model handler, whose methods these override",
    ("training/run.py", "on_"): "transformers' TrainerCallback hooks",
}
_FINDING = re.compile(r"^(?P<path>[^:]+):\d+: unused (?:function|method|class|import) '(?P<name>[^']+)'")


def _allowed(path: str, name: str) -> bool:
    return any(path == file and name.startswith(prefix) for file, prefix in FRAMEWORK_NAMES)


def test_no_function_is_dead() -> None:
    command = [sys.executable, "-m", "vulture", *SHIPPED, "tests", "perf", "--min-confidence", "60"]
    proc = subprocess.run(
        [*command, "--ignore-decorators", DECORATORS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 3), proc.stderr  # 3: vulture found unused code
    dead = [
        line
        for line in proc.stdout.splitlines()
        if (m := _FINDING.match(line)) and m["path"].split("/")[0] in SHIPPED and not _allowed(m["path"], m["name"])
    ]
    assert not dead, "never called (delete it, or list the framework that calls it):\n" + "\n".join(dead)
