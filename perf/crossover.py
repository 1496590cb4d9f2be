"""Where EDGE becomes cheaper than synthesise-then-filter: calls per usable trajectory against the count asked for.

Both arms run on FRESH sandboxes (a new in-process app, so fresh daily quotas, a new store and a new call economy
each), with the same seed, and every upstream request is counted at the transport (`CountingTransport`, under the
executor), so nothing either arm spends escapes the count:

* EDGE: verification driven by demand (synthesis.demand): the tools are sampled and candidates derived, the
  sampler proposes plans over links no run refuted, the links on each wave's plans are verified (once, saved with
  their evidence) and only plans over verified links run; verification and synthesis share one call economy;
* baseline: the same sampling and candidate derivation, then plans over every candidate link, executed, and what
  executes kept.

Both arms keep a trajectory by the same checks: `synthesis.batches.synthesize_guarded`, the one synthesis path of
the CLI, REST and Celery (the plan executes, `synthesis.build.build_record` accepts the record: arguments valid,
linked values visible, facts stated and not passed by a constant answer; not a near duplicate; not a benchmark
task). A full verification (`kopa verify`) on a third fresh sandbox gives the links it refutes: the share of the
baseline's kept trajectories that use one is printed.

    python -m perf.crossover [--sizes 300,1000,3000,10000] [--catalog sandbox|generated] [--seed 7]

Targets (issue 24): EDGE's calls per usable trajectory at or below the baseline's at every size from 300, below it
by >= 1.5x at 3,000 and 10,000; EDGE's verification calls per verified link <= 1.5.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import itertools
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.store import all_apis, all_links
from sandbox.inprocess import sandbox_mode
from synthesis.batches import synthesize_guarded
from synthesis.records import SynthesisRequest, Trajectory
from tests.support.helpers import register_catalog
from verification.engine import Engine
from verification.rounds import prepare_round
from verification.runs import DemandVerifier, execute_run, new_run

try:  # the generated catalog (sandbox/generated.py, tests/support/generated.py), where this checkout has it
    _generated: Any = importlib.import_module("sandbox.generated")
    _register_generated: Any = importlib.import_module("tests.support.generated").register_generated
except ImportError:  # pragma: no cover - an older checkout
    _generated = _register_generated = None

SIZES = (300, 1000, 3000, 10000)


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts every request that reaches the upstream (the in-process sandbox)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Upstream:
    """A fresh sandbox: settings pointing at it, a counting transport, an empty store with the catalog."""

    settings: Settings
    transport: CountingTransport
    store: EmbeddedStore


def fresh_upstream(root: Path, name: str, catalog: str, seed: int) -> Upstream:
    """A new in-process sandbox app (fresh quotas), a counting transport and a store with the catalog."""
    store = EmbeddedStore(root / f"{name}.sqlite3")
    if catalog == "generated":
        if _generated is None:
            raise SystemExit("--catalog generated needs sandbox/generated.py (the generated catalog)")
        # the world of the copies is the catalog's default; `seed` is the synthesis seed, the same for both arms
        settings, transport = _generated.generated_mode(Settings(), min_operations=1000)
        # candidates are derived from sampled values, as on the sandbox (not from the documents alone)
        _register_generated(store, settings, min_operations=1000, derive=False)
    else:
        settings, transport = sandbox_mode(Settings())
        register_catalog(store, settings)
    return Upstream(settings, CountingTransport(transport), store)


@dataclass
class Arm:
    name: str
    count: int
    kept: list[Trajectory]
    calls: int
    verification_calls: int
    synthesis_calls: int
    seconds: float
    shortfall: str = ""
    verified_links: int = 0
    links_asked: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def per_usable(self) -> float:
        return self.calls / max(1, len(self.kept))

    @property
    def per_verified_link(self) -> float | None:
        return round(self.verification_calls / self.verified_links, 2) if self.verified_links else None

    @property
    def trials_per_verified_link(self) -> float | None:
        """Verification calls less the tools' sampling (which the baseline pays too) per verified link."""
        trials = self.verification_calls - int(self.extra.get("sampling_calls", 0))
        return round(trials / self.verified_links, 2) if self.verified_links else None


def _apis(store: EmbeddedStore) -> dict[str, Any]:
    return {a.id: a for a in all_apis(store)}


async def edge_arm(up: Upstream, count: int, seed: int, progress: Callable[[Any], None] | None = None) -> Arm:
    """EDGE with verification driven by demand, on `up` (fresh)."""
    t0 = time.perf_counter()
    economy = MemoryEconomy()
    verifier = DemandVerifier(up.store, up.settings, economy=economy, transport=up.transport)
    ex = Executor(up.settings, economy, _apis(up.store), transport=up.transport)
    try:
        out = await synthesize_guarded(
            up.store, up.settings, ex, SynthesisRequest(count=count, seed=seed), verifier=verifier, progress=progress
        )
    finally:
        await ex.aclose()
        await verifier.close()
    figures = out["verification"] or {}
    return Arm(
        "EDGE",
        count,
        out["records"],
        up.transport.requests,
        verifier.spent(),
        up.transport.requests - verifier.spent(),
        time.perf_counter() - t0,
        out["shortfall"],
        verified_links=int(figures.get("verified", 0)),
        links_asked=int(figures.get("links_asked", 0)),
        extra={
            "refuted_by_demand": figures.get("refuted", 0),
            "attempted": out["attempted"],
            "sampling_calls": verifier.sampling_calls,
        },
    )


async def baseline_arm(up: Upstream, count: int, seed: int) -> Arm:
    """Synthesise-then-filter on `up` (fresh): sample, derive candidates, plan over all of them, keep what runs."""
    t0 = time.perf_counter()
    economy = MemoryEconomy()
    run = new_run()
    tools = up.store.all_tools()
    engine = Engine(
        up.store,
        up.settings,
        Executor(up.settings, economy, _apis(up.store), transport=up.transport, run_id=run.id),
        run,
        tools={t.name: t for t in tools},
    )
    try:
        await prepare_round(engine, tools)
    finally:
        await engine.executor.aclose()
    sampling = up.transport.requests
    ex = Executor(up.settings, economy, _apis(up.store), transport=up.transport)
    try:
        out = await synthesize_guarded(
            up.store, up.settings, ex, SynthesisRequest(count=count, seed=seed), unverified=True
        )
    finally:
        await ex.aclose()
    return Arm(
        "baseline",
        count,
        out["records"],
        up.transport.requests,
        sampling,
        up.transport.requests - sampling,
        time.perf_counter() - t0,
        out["shortfall"],
        extra={"attempted": out["attempted"]},
    )


async def full_verification(up: Upstream) -> tuple[set[str], int, int, float]:
    """A full `kopa verify` run on `up` (fresh): the refuted link ids, its calls, verified links, seconds."""
    t0 = time.perf_counter()
    await execute_run(up.store, up.settings, new_run(), transport=up.transport, economy=MemoryEconomy())
    links = all_links(up.store)
    refuted = {lk.id for lk in links if lk.status == "refuted"}
    verified = sum(1 for lk in links if lk.status == "verified")
    return refuted, up.transport.requests, verified, time.perf_counter() - t0


async def judge_links(up: Upstream, link_ids: set[str]) -> tuple[set[str], float]:
    """The verdict verification gives the links `link_ids` on `up` (fresh): the same sampling, candidates and
    per-link procedure as a full run, asked about these links only (a full run of a catalog of 60,000 candidates
    is what EDGE's demand spares). Returns the refuted ones and the seconds."""
    t0 = time.perf_counter()
    verifier = DemandVerifier(up.store, up.settings, economy=MemoryEconomy(), transport=up.transport)
    try:
        await verifier.discover()
        ask = [lk for lk in all_links(up.store) if lk.id in link_ids]
        for _ in range(2):  # an inconclusive verdict (a transient fault) is asked again once
            decided = await verifier.verify(ask)
            ask = [lk for lk in decided if lk.status == "inconclusive"]
            if not ask:
                break
    finally:
        await verifier.close()
    refuted = {lk.id for lk in all_links(up.store) if lk.id in link_ids and lk.status == "refuted"}
    return refuted, time.perf_counter() - t0


def using_refuted(records: list[Trajectory], refuted: set[str]) -> int:
    return sum(1 for r in records if set(r.metadata.verified_links) & refuted)


def break_even(rows: list[tuple[int, float, float]]) -> str:
    """The smallest count from which EDGE costs no more per usable trajectory (linear between measured sizes)."""
    if not rows:
        return "no sizes measured"
    if all(e <= b for _, e, b in rows):
        return f"EDGE at or below the baseline at every size measured (from {rows[0][0]})"
    for (n0, e0, b0), (n1, e1, b1) in itertools.pairwise(rows):
        d0, d1 = e0 - b0, e1 - b1
        if d0 > 0 >= d1:
            at = n0 + (n1 - n0) * d0 / (d0 - d1)
            return f"about {at:,.0f} trajectories (between {n0} and {n1})"
    return "not reached at the sizes measured"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated counts")
    ap.add_argument("--catalog", choices=("sandbox", "generated"), default="sandbox")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--full-reference",
        action="store_true",
        help="judge the baseline's links by one full verification of the catalog (the sandbox: seconds; the "
        "generated catalog: its every candidate) instead of verifying the links the arms used",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows: list[tuple[int, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        refuted: set[str] | None = None
        if args.full_reference:
            ref = fresh_upstream(root, "reference", args.catalog, args.seed)
            refuted, full_calls, full_verified, full_s = asyncio.run(full_verification(ref))
            ref.store.close()
            print(
                f"== catalog {args.catalog}: a full verification (fresh sandbox) spends {full_calls} calls, "
                f"{full_verified} links verified, {len(refuted)} refuted ({full_s:.0f} s)"
            )
        else:
            print(f"== catalog {args.catalog}")
        header = (
            f"{'size':>6} | {'EDGE kept':>9} {'verify':>7} {'synth':>7} {'per usable':>10} {'per link':>8} | "
            f"{'base kept':>9} {'sample':>7} {'synth':>7} {'per usable':>10} {'refuted use':>11} | {'ratio':>6}"
        )
        print(header, flush=True)
        for n in sizes:
            up = fresh_upstream(root, f"edge{n}", args.catalog, args.seed)
            edge = asyncio.run(edge_arm(up, n, args.seed))
            up.store.close()
            bup = fresh_upstream(root, f"base{n}", args.catalog, args.seed)
            base = asyncio.run(baseline_arm(bup, n, args.seed))
            bup.store.close()
            judged, judge_s = refuted, 0.0
            if judged is None:
                used = {lk for r in base.kept + edge.kept for lk in r.metadata.verified_links}
                jup = fresh_upstream(root, f"judge{n}", args.catalog, args.seed)
                judged, judge_s = asyncio.run(judge_links(jup, used))
                jup.store.close()
            bad = using_refuted(base.kept, judged)
            rows.append((n, edge.per_usable, base.per_usable))
            print(
                f"{n:>6} | {len(edge.kept):>9} {edge.verification_calls:>7} {edge.synthesis_calls:>7} "
                f"{edge.per_usable:>10.2f} {edge.per_verified_link or 0:>8.2f} | {len(base.kept):>9} "
                f"{base.verification_calls:>7} {base.synthesis_calls:>7} {base.per_usable:>10.2f} "
                f"{bad / max(1, len(base.kept)):>11.1%} | {base.per_usable / max(edge.per_usable, 1e-9):>5.2f}x"
            )
            print(
                f"       EDGE: {edge.verified_links} links verified of {edge.links_asked} asked "
                f"({edge.extra['refuted_by_demand']} refuted); of its {edge.verification_calls} verification calls "
                f"{edge.extra['sampling_calls']} sampled the tools (as the baseline's do), the other "
                f"{edge.verification_calls - edge.extra['sampling_calls']} tried and controlled links: "
                f"{edge.trials_per_verified_link} per verified link; {edge.seconds:.0f} s"
                + (f"; shortfall: {edge.shortfall}" if edge.shortfall else "")
                + f"; kept using a link the reference refutes: {using_refuted(edge.kept, judged)}"
            )
            print(
                f"       baseline: {base.seconds:.0f} s"
                + (f"; shortfall: {base.shortfall}" if base.shortfall else "")
                + f"; kept trajectories using a refuted link: {bad} of {len(base.kept)}"
                + ("" if args.full_reference else f" (their links judged on a fresh sandbox, {judge_s:.0f} s)"),
                flush=True,
            )
        print(f"== break-even: {break_even(rows)}")
        print(
            "targets: EDGE per usable <= baseline at every size; >= 1.5x below at 3,000 and 10,000; "
            "EDGE verification calls per verified link <= 1.5 (all of them: 'per link'; less the sampling "
            "both arms pay: 'tried and controlled ... per verified link')"
        )


if __name__ == "__main__":
    main()
