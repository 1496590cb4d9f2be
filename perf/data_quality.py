"""Data-quality figures of synthesised training data (issue 11), over the bundled catalog against an in-process
sandbox: the catalog is registered and verified, 1,000 trajectories are synthesised and exported, and the
figures are printed and checked:

* internal-code words in requests 0; requests listing steps 0; sentence frames >= 60;
* slot parameters with a single value 0; argument schema violations 0; linked values not visible in an earlier
  tool message 0; cross-entity pairs 0; unused steps 0; answers stating the answered fields' values >= 95%;
* irrelevance, clarification, error-recovery and hard-negative shares as configured; every rendered
  conversation within the documented SFT max_length.

    python -m perf.data_quality [--count 1000] [--seed 7]

Exits non-zero when a figure misses its target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from sandbox.inprocess import sandbox_mode
from synthesis.engine import DEFAULT_EXTRAS, synthesize
from synthesis.export import SFT_MAX_LENGTH, export_all
from synthesis.quality import quality_lines
from synthesis.records import SynthesisResult
from tests.support.helpers import verified_store


def targets(q: dict[str, Any], extras: dict[str, float]) -> list[str]:
    """The figures that miss the issue's targets (empty when all hold)."""
    misses = []
    for key in (
        "code_words_in_requests",
        "requests_listing_steps",
        "slot_parameters_single_value",
        "argument_schema_violations",
        "linked_values_not_visible",
        "cross_entity_pairs",
        "unused_steps",
    ):
        if q[key] != 0:
            misses.append(f"{key} = {q[key]} (target 0)")
    if q["sentence_frames"] < 60:
        misses.append(f"sentence_frames = {q['sentence_frames']} (target >= 60)")
    if q["answers_with_answered_values"] < 0.95:
        misses.append(f"answers_with_answered_values = {q['answers_with_answered_values']} (target >= 0.95)")
    for kind, share in extras.items():
        if abs(q["shares"].get(kind, 0.0) - share) > 0.01:
            misses.append(f"share of {kind} = {q['shares'].get(kind)} (configured {share})")
    if q.get("rendered_chars", {}).get("max", 0) > SFT_MAX_LENGTH:
        misses.append(f"longest rendered conversation {q['rendered_chars']['max']} characters (limit {SFT_MAX_LENGTH})")
    return misses


def run(count: int, seed: int, root: Path) -> tuple[SynthesisResult, dict[str, Any], float]:
    settings, transport = sandbox_mode(Settings())
    store = verified_store(root / "g.sqlite3", settings, transport)

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=1000)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=count, seed=seed)
        finally:
            await ex.aclose()

    t0 = time.perf_counter()
    out = asyncio.run(go())
    elapsed = time.perf_counter() - t0
    exported = export_all(root / "export", out, store, settings, {"count": count, "seed": seed})
    store.close()
    return out, exported, elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out, exported, elapsed = run(args.count, args.seed, Path(tmp))
    q = exported["quality"]
    print(
        f"synthesised {len(out['records'])} trajectories in {elapsed:.1f}s ({len(out['discarded'])} discarded, "
        f"{out['calls']} upstream calls)"
    )
    print("\n".join(quality_lines(q)))
    print("fewest values per slot:", json.dumps(q["fewest_values"], ensure_ascii=False))
    print("BFCL:", json.dumps(exported["distribution"]["bfcl"]))
    misses = targets(q, DEFAULT_EXTRAS)
    for m in misses:
        print("MISS", m)
    if len(out["records"]) < args.count:
        print(f"MISS only {len(out['records'])} of {args.count} trajectories")
        misses.append("count")
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
