"""Verification quality and yield against the sandbox ground truth, in one process:

* candidates: how many the derivation proposes and how many ground-truth links are among them;
* precision and recall of verified links (no decoy may be verified);
* measured precision: of the labelled sample's links verified now, the share labelled true, overall and by catalog,
  each with its 95% Wilson score interval (tests.support.scoring.wilson_interval), and every verified link labelled
  false (see "The labelled sample" below);
* yield: API calls per verified link and per candidate evaluated, cold cache and warm, next to a naive baseline
  (a fresh upstream call for every link, no cache) in the same run, with the ratio;
* quota: the largest share of any API's real development daily quota that a cold verification uses;
* robustness: under 10% 5xx, 5% timeouts and bursts of 200-with-error and quota errors, the verified set
  equals the fault-free one.

    python -m perf.verify_quality

The labelled sample (tests/support/sandbox_verified_sample.json; read by tests.support.scoring.sample_precision,
never by the engine): verified links, each labelled true (the value means what the parameter asks, with the link's
transform) or false by reading the two operations' documented fields and parameters (sandbox/catalog/*.json; a
generated copy's documents are those rewritten with the same descriptions), with a one-line reason (`why`) and the
catalog it was verified in (`catalog`). Its three parts, 220 links:

* sandbox, 40: the first 40 of the 600 verified links of a cold sandbox run (engine of issue 22), ordered by the
  SHA-256 of their key; 2 false (HIRA's sidoCd -> lDongRegnCd, a bjdongCd slice -> lDongSignguCd);
* sandbox, 90 (issue 35): `random.Random(35).sample` of the 500 verified links of a cold sandbox run that are in
  neither the ground truth nor part 1;
* generated, 90 (issue 35): `random.Random(3535).sample` of the 2,115 verified links that
  tests.support.generated.label_links calls unlisted (in no ground truth) in the file's `generated_run`: copies 0..2
  of the generated catalog (sandbox.generated, the sandbox's default seed), one run scoped to the APIs of copies 1
  and 2, so links within a copy and across the two; this module re-runs it in process (seconds) to see which of
  the sample's links are verified now.

Each pool was sorted by the JSON of the scoring key before sampling (the file's description says how). A sample link
that a later engine no longer verifies drops out of the precision ("verified now"); a link the engine starts to
verify is not in the sample until it is drawn and labelled, so grow the sample the same way (seeded draw from the
verified links outside the ground truth, label by the documents) rather than by picking links.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx

from core.settings import SandboxSettings, Settings
from execution.limits import MemoryEconomy, NoCache
from graph.candidates import derive_candidates
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord
from graph.store import all_links
from sandbox import generated
from sandbox.app import SandboxApp
from sandbox.ground_truth import load_ground_truth
from sandbox.inprocess import sandbox_mode
from sandbox.providers import all_operations
from tests.support.generated import instance_map, register_generated
from tests.support.helpers import register_catalog
from tests.support.scoring import SAMPLE, sample_generated_run, sample_precision, score, wilson_interval
from verification.runs import RunProgress, execute_run, new_run, run_progress

FAULTS = (
    '{"error_5xx_rate": 0.10, "timeout_rate": 0.05, "timeout_s": 1.0, "error200_burst_rate": 0.01,'
    ' "error200_burst_len": 5, "throttle_burst_rate": 0.01, "throttle_burst_len": 5}'
)


def fresh_store(root: Path, name: str, settings: Settings) -> EmbeddedStore:
    store = EmbeddedStore(root / f"{name}.sqlite3")
    store.reset()
    return register_catalog(store, settings)


def run(store: EmbeddedStore, settings: Settings, transport: Any, economy: Any, **kw: Any) -> RunProgress:
    naive = kw.pop("naive", False)
    r = asyncio.run(execute_run(store, settings, new_run(**kw), transport=transport, economy=economy, naive=naive))
    return run_progress(store, r)


def quota_share(store: EmbeddedStore, calls_by_api: dict[str, int]) -> list[tuple[float, str, int, int]]:
    quota_by_path = {op.path: op.provider.daily_quota for op in all_operations()}
    api_quota: dict[str, int] = {}
    for tool in store.all_tools():
        q = quota_by_path.get(urlparse(tool.url).path)
        if q:
            api_quota[tool.api_id] = q
    rows = [(n / api_quota[a], a, n, api_quota[a]) for a, n in calls_by_api.items() if a in api_quota]
    return sorted(rows, reverse=True)


def generated_sample_links(root: Path) -> list[LinkRecord]:
    """The links of the generated-catalog run the labelled sample's generated part was drawn from
    (tests.support.scoring.sample_generated_run: copies 0..2, a run scoped to the APIs of the pair), in process."""
    cfg = sample_generated_run()
    seed, n, pair = int(cfg["seed"]), int(cfg["instances"]), {int(k) for k in cfg["pair"]}
    path = root / "generated.sqlite3"
    settings, transport = generated.generated_mode(
        Settings(store="embedded", embedded_path=path), seed=seed, instances=n
    )
    store = register_generated(EmbeddedStore(path), settings, seed=seed, instances=n, derive=False)
    im = instance_map(store.all_tools())
    apis = sorted({t.api_id for t in store.all_tools() if im[t.name] in pair})
    asyncio.run(execute_run(store, settings, new_run(api_ids=apis), transport=transport, economy=MemoryEconomy()))
    links = all_links(store)
    store.close()
    return links


def print_sample_precision(links: list[LinkRecord]) -> None:
    sample = sample_precision(links)
    low, high = sample.interval
    print(f"== precision of verified links, labelled sample ({SAMPLE.relative_to(SAMPLE.parents[2])})")
    for catalog, (labelled, verified, true) in sample.by_catalog.items():
        lo, hi = wilson_interval(true, verified)
        print(
            f"  {catalog:9s} labelled {labelled:3d}, verified now {verified:3d}, true {true:3d}: "
            f"{true / max(1, verified):.1%} (95% Wilson interval {lo:.1%} to {hi:.1%})"
        )
    print(
        f"measured precision of verified links (labelled sample of {sample.sample_size}, "
        f"{sample.still_verified} of them verified now): {sample.true_verified}/{sample.still_verified} = "
        f"{sample.precision:.1%}, 95% Wilson interval {low:.1%} to {high:.1%}   (target >= 95%)"
    )
    for what in sample.false_verified:
        print(f"  verified, labelled false: {what}")


def main() -> None:
    base_settings, transport = sandbox_mode(Settings())
    gt = load_ground_truth()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = fresh_store(root, "edge", base_settings)
        tools = store.all_tools()
        t0 = time.perf_counter()
        cold = run(store, base_settings, transport, MemoryEconomy())
        cold_s = time.perf_counter() - t0
        links = store.list_links(limit=100_000)[0]
        proposed = score(links, tools)
        verified = score([lk for lk in links if lk.status == "verified"], tools)
        stats: dict[str, int] = {}
        derive_candidates(tools, {}, stats=stats)

        print("== candidates")
        print(f"tools {len(tools)}, fields {stats['fields']}, parameters {stats['params']}")
        print(
            f"candidates proposed {len(links)}; ground truth {sum(g['kind'] == 'true' for g in gt)} true, "
            f"{sum(g['kind'] == 'decoy' for g in gt)} decoys"
        )
        print(
            f"ground-truth links proposed   {len(proposed.matched_true)}/{proposed.true_total} = {proposed.recall:.1%}"
            "   (target >= 98%)"
        )
        print("== verification, cold cache")
        print(
            f"verified {cold['verified']}, refuted {cold['refuted']}, inconclusive {cold['inconclusive']} "
            f"in {cold_s:.1f} s"
        )
        print(
            f"recall (ground truth verified) {len(verified.matched_true)}/{verified.true_total} = {verified.recall:.1%}"
            "   (target >= 95%)"
        )
        print(
            f"decoys verified               {len(verified.matched_decoys)} of {verified.decoy_total}"
            f"   (target 0)   missed: {', '.join(verified.missed_true) or '-'}"
        )
        swaps = [
            lk
            for lk in links
            if lk.source_tool.startswith("kma_")
            and lk.target_tool.startswith("kma_")
            and {lk.source_field, lk.target_param.split(":", 1)[-1]} == {"nx", "ny"}
        ]
        print(
            f"grid-swap links (nx fed into ny and back) verified: {sum(lk.status == 'verified' for lk in swaps)} "
            f"of {len(swaps)}   (target 0)"
        )
        decided = cold["verified"] + cold["refuted"] + cold["inconclusive"]
        print(
            f"calls {cold['calls_spent']} (cache hits {cold['cache_hits']}): "
            f"{cold['calls_spent'] / cold['verified']:.2f} per verified "
            f"link, {cold['calls_spent'] / decided:.2f} per candidate"
        )
        top = quota_share(store, cold["calls_by_api"])
        share, api, n, q = top[0]
        print(f"largest share of a real development daily quota: {share:.1%} ({api}: {n} of {q})   (target < 40%)")

        print_sample_precision(links + generated_sample_links(root))

        economy = MemoryEconomy()
        run(store, base_settings, transport, economy, scope="all")  # fills the cache
        warm = run(store, base_settings, transport, economy, scope="all")
        print("== verification, warm cache (re-verify everything)")
        print(
            f"calls {warm['calls_spent']} (cache hits {warm['cache_hits']}): "
            f"{warm['calls_spent'] / max(1, warm['verified']):.2f} per verified link"
        )

        naive_store = fresh_store(root, "naive", base_settings)
        naive = run(naive_store, base_settings, transport, NoCache(MemoryEconomy()), naive=True)
        print("== naive baseline (fresh upstream call for every link, no cache), same catalog")
        print(
            f"calls {naive['calls_spent']}: {naive['calls_spent'] / max(1, naive['verified']):.2f} per verified link, "
            f"{naive['calls_spent'] / max(1, naive['verified'] + naive['refuted']):.2f} per candidate"
        )
        print(
            f"ratio naive / EDGE calls per verified link: "
            f"{(naive['calls_spent'] / max(1, naive['verified'])) / (cold['calls_spent'] / cold['verified']):.2f}x"
        )

        faulty_store = fresh_store(root, "faults", base_settings)
        flaky = httpx.ASGITransport(app=SandboxApp(SandboxSettings(faults=FAULTS)))  # type: ignore[arg-type]
        fast = base_settings.model_copy(update={"verify": base_settings.verify.model_copy(update={"timeout_s": 0.3})})
        t0 = time.perf_counter()
        faulty = run(faulty_store, fast, flaky, MemoryEconomy())
        same = {lk.id for lk in faulty_store.list_links(status="verified", limit=100_000)[0]} == {
            lk.id for lk in links if lk.status == "verified"
        }
        print("== robustness: 10% 5xx, 5% timeouts, bursts of 200-with-error and of quota errors")
        print(
            f"status {faulty['status']}, inconclusive {faulty['inconclusive']}, calls {faulty['calls_spent']} "
            f"in {time.perf_counter() - t0:.1f} s; verified set equals the fault-free one: {same}"
        )
        for s in (store, naive_store, faulty_store):
            s.close()


if __name__ == "__main__":
    main()
