"""The layer rule of ARCHITECTURE.md as an import contract over every shipped module (read with `ast`, nothing is
imported): which package may import which (type-only and importlib imports included), no import circles, and
imports at module top.

    core < graph < execution < {verification, synthesis} < {training, bench}
    {workers, api} above verification and synthesis; cli above everything
    sandbox is imported only by cli, tests and perf; nothing imports api or cli except cli
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "core",
    "sandbox",
    "graph",
    "execution",
    "verification",
    "synthesis",
    "training",
    "bench",
    "workers",
    "api",
    "cli",
)
# What each package may import besides itself (the table in ARCHITECTURE.md).
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "sandbox": {"core"},
    "graph": {"core"},
    "execution": {"core", "graph"},
    "verification": {"core", "graph", "execution"},
    "synthesis": {"core", "graph", "execution"},
    "training": {"core", "graph", "execution", "verification", "synthesis"},
    "bench": {"core", "graph", "execution", "verification", "synthesis"},
    "workers": {"core", "graph", "execution", "verification", "synthesis"},
    "api": {"core", "graph", "execution", "verification", "synthesis", "workers"},
    "cli": set(PACKAGES) - {"cli"},
}
# Optional heavy extras that may be imported inside a function (they are not installed everywhere, or are slow).
HEAVY = {
    "trl",
    "torch",
    "transformers",
    "datasets",
    "peft",
    "accelerate",
    "matplotlib",
    "pyarrow",
    "tokenizers",
    "vllm",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            out[_module_name(path)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


_DYNAMIC = {"import_module", "__import__"}


def _imports(
    path: Path, source: str | None = None, this: str | None = None
) -> tuple[list[tuple[str, int]], list[tuple[str, int]], list[tuple[str, int]]]:
    """(module-level imports, imports inside functions or classes, type-only imports under TYPE_CHECKING) as
    (dotted target, line). `importlib.import_module("x")` and `__import__("x")` with a literal name count as
    imports where they are called. `from a.b import c` names the module a.b.c when that is a module of ours, else
    a.b."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    top: list[tuple[str, int]] = []
    nested: list[tuple[str, int]] = []
    typeonly: list[tuple[str, int]] = []
    this = this or _module_name(path)

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = node.module or ""
        if node.level:
            package = this if path.name == "__init__.py" else this.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]

    def dynamic(node: ast.Call) -> str | None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in _DYNAMIC and node.args and isinstance(node.args[0], ast.Constant):
            value = node.args[0].value
            return value if isinstance(value, str) else None
        return None

    def walk(node: ast.AST, inside: bool, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                walk(child, inside, True)
                continue
            sink = typeonly if typing_only else nested if inside else top
            if isinstance(child, ast.Import | ast.ImportFrom):
                sink.extend((t, child.lineno) for t in targets(child))
            elif isinstance(child, ast.Call) and (target := dynamic(child)):
                sink.append((target, child.lineno))
            walk(
                child,
                inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda),
                typing_only,
            )

    walk(tree, False, False)
    return top, nested, typeonly


def _layer_violations(name: str, path: Path, source: str | None = None) -> list[str]:
    pkg = name.split(".")[0]
    top, nested, typeonly = _imports(path, source, name)
    out = []
    for target, line in top + nested + typeonly:
        dep = _ours(target)
        if dep is not None and dep != pkg and dep not in ALLOWED[pkg]:
            out.append(f"{path.name}:{line} imports {target} ({pkg} may not import {dep})")
    return out


def _ours(target: str) -> str | None:
    head = target.split(".")[0]
    return head if head in PACKAGES else None


def test_every_package_imports_only_the_layers_below_it() -> None:
    """Type-only imports (under TYPE_CHECKING) and importlib calls count: a layer may not lean on one above it
    even for its annotations."""
    violations = [v for name, path in MODULES.items() for v in _layer_violations(name, path)]
    assert not violations, "\n".join(violations)


def test_the_checker_reads_type_only_and_importlib_imports() -> None:
    path = ROOT / "graph" / "probe.py"
    sources = {
        "type-only": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from synthesis.records import Trajectory\n"
        ),
        "importlib": "import importlib\n\ndef f():\n    return importlib.import_module('training.run')\n",
        "__import__": "x = __import__('api.app')\n",
    }
    for label, source in sources.items():
        assert _layer_violations("graph.probe", path, source), label
    assert not _layer_violations("graph.probe", path, "import importlib\nm = importlib.import_module('core.geo')\n")
    _, nested, _ = _imports(path, sources["importlib"], "graph.probe")
    assert nested == [("training.run", 4)]


def test_imports_sit_at_module_top_except_heavy_extras() -> None:
    violations = []
    for name, path in MODULES.items():
        _, nested, _ = _imports(path)
        for target, line in nested:
            if target.split(".")[0] not in HEAVY:
                violations.append(f"{path.relative_to(ROOT)}:{line} imports {target} inside a function ({name})")
    assert not violations, "\n".join(violations)


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        top, _, _ = _imports(path)
        for target, _line in top:
            # the longest module of ours that the target names
            parts = target.split(".")
            for i in range(len(parts), 0, -1):
                candidate = ".".join(parts[:i])
                if candidate in MODULES:
                    if candidate != name:
                        edges[name].add(candidate)
                    break
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_the_checker_itself_catches_a_circle() -> None:
    """The contract must be able to fail: a synthetic circle is found, an acyclic graph passes."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []


@pytest.mark.parametrize("doc", ["ARCHITECTURE.md"])
def test_architecture_doc_states_the_same_table(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    for pkg, allowed in ALLOWED.items():
        row = next((line for line in text.splitlines() if line.startswith(f"| `{pkg}/`")), None)
        assert row is not None, f"{doc} has no row for {pkg}/"
        may = row.rsplit("|", 2)[-2]
        if pkg == "cli":
            assert "everything" in may, row
            continue
        named = {p for p in PACKAGES if f"`{p}`" in may}
        assert named == allowed, f"{doc} row for {pkg}/ says {sorted(named)}, the contract says {sorted(allowed)}"
