"""The generated catalog (sandbox/generated.py, docs/generated_catalog.md): per-region copies of the sandbox's
services, registered and derived on the embedded store, then a verification sample in process.

    python -m perf.generated_catalog [--min-operations 1000] [--seed N] [--pair 1 2 | --full] [--no-verify]
        [--no-reference]

Prints, for the whole catalog: documents, operations, tools, candidate links (within one copy, across copies, with
the shared conversion API), seconds (wall and CPU) to build the documents, register them and derive candidates,
peak RSS; and how many of the sandbox ground truth's true links are still candidates within each copy (derivation
keeps the best PER_PARAM sources of each parameter, and every copy offers the same sources).

Then the verification sample: the two copies of --pair verified in process (a run scoped to their APIs, so its
candidates are the links within each copy and across the two), with verdicts by kind and by label (the sandbox's
ground truth lifted to the copies by tests/support/generated.label_links, whose oracle executes each true link's
values in two copies), precision, and the recall of the ground truth's true links within each copy next to the
sandbox's own recall (--no-reference skips verifying the sandbox). --full verifies the whole catalog instead (about
12 minutes on 2 busy cores).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from core.settings import Settings
from execution.limits import MemoryEconomy
from graph.candidates import derive_candidates
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord, ToolRecord
from graph.store import all_links
from sandbox import generated
from sandbox.inprocess import sandbox_mode
from tests.support.generated import carry_oracle, instance_map, label_links, link_kind, register_generated
from tests.support.helpers import register_catalog, verified_store
from tests.support.scoring import score
from verification.runs import execute_run, new_run, run_progress


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self) -> str:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return f"{wall:.1f} s wall, {cpu:.1f} s CPU"


def _gt_true_within(links: list[LinkRecord], tools: list[ToolRecord], labels: dict[str, str]) -> dict[int, int]:
    im = instance_map(tools)
    out: Counter[int] = Counter()
    for lk in links:
        k = im.get(lk.source_tool)
        if k is not None and link_kind(lk, im) == "same" and labels.get(lk.id) == "true":
            out[k] += 1
    return dict(out)


def catalog_figures(root: Path, min_operations: int, seed: int) -> dict[str, Any]:
    clock = _Clock()
    docs = generated.generated_documents(min_operations=min_operations, seed=seed)
    built = clock.lap()
    settings, _ = generated.generated_mode(Settings(store="embedded", embedded_path=root / "g.sqlite3"), seed=seed)
    store = register_generated(
        EmbeddedStore(root / "g.sqlite3"), settings, min_operations=min_operations, seed=seed, derive=False
    )
    registered = clock.lap()
    rss_before = _rss_mb()
    tools = store.all_tools()
    candidates = derive_candidates(tools, {})
    derived = clock.lap()
    store.upsert_candidates(candidates)
    stored = clock.lap()
    im = instance_map(tools)
    kinds = Counter(link_kind(lk, im) for lk in candidates)
    oracle = carry_oracle(seed)
    labels = label_links(candidates, tools, oracle)
    within = _gt_true_within(candidates, tools, labels)
    store.close()
    n = len(generated.instances_for(min_operations=min_operations, seed=seed))
    per_copy = [within.get(k, 0) for k in range(n)]
    print(
        f"documents {len(docs)}, operations {generated.operation_count(docs)} "
        f"({n} copies x {generated.sandbox_operation_count()})"
    )
    print(f"tools {len(tools)} (with the built-in conversion API), unique names {len({t.name for t in tools})}")
    print(f"build documents: {built}")
    print(f"register (graph.registry.register, embedded store): {registered}")
    print(f"derive candidates: {derived}; store them: {stored}")
    print(
        f"candidates {len(candidates)}: within one copy {kinds['same']}, across copies {kinds['cross']}, "
        f"with the shared conversion API {kinds['shared']}"
    )
    print(f"RSS before derivation {rss_before:.0f} MB, peak RSS {_rss_mb():.0f} MB")
    print(
        "ground-truth true links still candidates within a copy: "
        f"min {min(per_copy)}, median {statistics.median(per_copy):.0f}, max {max(per_copy)} per copy "
        f"(copy 0 {per_copy[0]}, last copy {per_copy[-1]})"
    )
    alone = _sandbox_alone(root)
    print(f"  (the sandbox alone: {alone[0]} of {alone[1]} among its {alone[2]} candidates)")
    verdicts = Counter(c.verdict for c in oracle.values())
    local = sorted(k for k, c in oracle.items() if c.verdict == "local")
    print(
        f"oracle over {len(oracle)} true links: values cross {verdicts['crosses']}, copy-local {verdicts['local']} "
        f"({', '.join(local)}), mixed {verdicts['mixed']}, undetermined {verdicts['undetermined']}"
    )
    return {"per_copy": per_copy}


def _sandbox_alone(root: Path) -> tuple[int, int, int]:
    """Of the ground truth's true links, how many the sandbox's own documents make candidates (no copies)."""
    settings, _ = sandbox_mode(Settings(store="embedded", embedded_path=root / "alone.sqlite3"))
    store = register_catalog(EmbeddedStore(root / "alone.sqlite3"), settings)
    tools = store.all_tools()
    candidates = derive_candidates(tools, {})
    store.close()
    s = score(candidates, tools)
    return len(s.matched_true), s.true_total, len(candidates)


def _verify(root: Path, seed: int, pair: tuple[int, int] | None, min_operations: int) -> None:
    """Verify two copies (a run scoped to their APIs) or, without `pair`, the whole catalog, in process."""
    n = max(pair) + 1 if pair else None
    settings, transport = generated.generated_mode(
        Settings(store="embedded", embedded_path=root / "v.sqlite3"),
        seed=seed,
        instances=n,
        min_operations=min_operations,
    )
    store = register_generated(
        EmbeddedStore(root / "v.sqlite3"), settings, seed=seed, instances=n, min_operations=min_operations, derive=False
    )
    tools = store.all_tools()
    im = instance_map(tools)
    copies = list(pair) if pair else sorted({k for k in im.values() if k is not None})
    apis = sorted({t.api_id for t in tools if im[t.name] in pair}) if pair else None
    clock = _Clock()
    run = asyncio.run(execute_run(store, settings, new_run(api_ids=apis), transport=transport, economy=MemoryEconomy()))
    spent = clock.lap()
    progress = run_progress(store, run)
    links = [lk for lk in all_links(store) if lk.status in ("verified", "refuted", "inconclusive")]
    labels = label_links(links, tools, carry_oracle(seed))
    by_kind = Counter((link_kind(lk, im), lk.status) for lk in links)
    by_label = Counter((link_kind(lk, im), labels[lk.id], lk.status) for lk in links)
    what = f"copies {pair[0]} and {pair[1]}" if pair else f"the whole catalog ({len(copies)} copies)"
    print(
        f"\nverification of {what} in process: {spent}, run {run.status}, {progress['candidates']} candidates, "
        f"{progress['calls_spent']} calls, {run.round + 1} round(s), unreachable tools {len(progress['unreachable'])}, "
        f"peak RSS {_rss_mb():.0f} MB"
    )
    for kind in ("same", "cross", "shared"):
        row = ", ".join(f"{s} {by_kind[(kind, s)]}" for s in ("verified", "refuted", "inconclusive"))
        print(f"  {kind:6s}: {row}")
    print("  by label (kind, label): verified / refuted / inconclusive")
    for kind in ("same", "cross"):
        for label in ("true", "false", "undetermined", "unlisted"):
            v, r, i = (by_label[(kind, label, s)] for s in ("verified", "refuted", "inconclusive"))
            if v or r or i:
                print(f"    {kind:5s} {label:12s} {v:5d} / {r:5d} / {i:5d}")
    tp = sum(1 for lk in links if lk.status == "verified" and labels[lk.id] == "true")
    fp = sum(1 for lk in links if lk.status == "verified" and labels[lk.id] == "false")
    fn_ = sum(1 for lk in links if lk.status != "verified" and labels[lk.id] == "true")
    print(
        f"  precision over labelled verified links {tp}/{tp + fp} = {tp / max(1, tp + fp):.1%}; "
        f"labelled-true links not verified {fn_}"
    )
    false_verified = Counter(
        f"{lk.source_field} -> {lk.target_param}"
        for lk in links
        if lk.status == "verified" and labels[lk.id] == "false"
    )
    for what, n_ in false_verified.most_common(10):
        print(f"  verified, labelled false: {what} x{n_}")
    recall = []
    for k in copies:
        mine = [lk for lk in links if im.get(lk.source_tool) == k and im.get(lk.target_tool) == k]
        own = [t for t in tools if im[t.name] == k]
        got = score([lk for lk in mine if lk.status == "verified"], own)
        recall.append(len(got.matched_true))
        if pair:
            print(f"  copy {k}: true links verified within it {recall[-1]}/{got.true_total} = {got.recall:.1%}")
    if not pair:
        print(
            f"  true links verified within a copy: min {min(recall)}, median {statistics.median(recall):.0f}, "
            f"max {max(recall)} of 78 per copy"
        )
    store.close()


def _reference(root: Path) -> None:
    settings, transport = sandbox_mode(Settings(store="embedded", embedded_path=root / "sandbox.sqlite3"))
    clock = _Clock()
    store = verified_store(root / "sandbox.sqlite3", settings, transport)
    spent = clock.lap()
    verified = score([lk for lk in all_links(store) if lk.status == "verified"], store.all_tools())
    print(
        f"  reference, the sandbox itself: {len(verified.matched_true)}/{verified.true_total} = "
        f"{verified.recall:.1%} verified ({spent})"
    )
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-operations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=generated.DEFAULT_SEED)
    ap.add_argument("--pair", type=int, nargs=2, default=(1, 2))
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--full", action="store_true", help="verify the whole catalog (minutes) instead of --pair")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        catalog_figures(root, args.min_operations, args.seed)
        if not args.no_verify:
            pair = None if args.full else (args.pair[0], args.pair[1])
            _verify(root, args.seed, pair, args.min_operations)
            if not args.no_reference:
                _reference(root)


if __name__ == "__main__":
    main()
