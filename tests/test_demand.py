"""Verification driven by demand (synthesis.demand, verification.runs.DemandVerifier), the uncapped plan pool and
the shortfall every synthesis path reports. Embedded store, in-process sandbox."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from core.settings import Settings, get_settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord
from graph.store import all_links
from sandbox.inprocess import sandbox_mode
from synthesis.engine import synthesize
from synthesis.plans import PlanSampler, VerifiedGraph, sample_plans
from synthesis.records import SynthesisResult
from tests.support.helpers import register_catalog, sampled_engine
from verification.runs import DemandVerifier

COUNT = 24


class Counting(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner, self.requests = inner, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        return await self.inner.handle_async_request(request)


def fresh(path: Path) -> tuple[EmbeddedStore, Settings, Counting]:
    settings, transport = sandbox_mode(Settings())  # a new sandbox app: fresh quotas
    return register_catalog(EmbeddedStore(path), settings), settings, Counting(transport)


def apis(store: EmbeddedStore) -> dict[str, Any]:
    return {a.id: a for a in store.list_apis(limit=1000)[0]}


async def on_demand(
    store: EmbeddedStore, settings: Settings, transport: Counting, *, shared: bool = True, count: int = COUNT
) -> tuple[SynthesisResult, DemandVerifier]:
    economy = MemoryEconomy()
    verifier = DemandVerifier(store, settings, economy=economy if shared else MemoryEconomy(), transport=transport)
    ex = Executor(settings, economy, apis(store), transport=transport)
    try:
        out = await synthesize(store, settings, ex, count=count, seed=7, verifier=verifier)
    finally:
        await ex.aclose()
        await verifier.close()
    return out, verifier


@pytest.fixture(scope="module")
def demand_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedStore, SynthesisResult, DemandVerifier, int]:
    store, settings, transport = fresh(tmp_path_factory.mktemp("demand") / "g.sqlite3")
    out, verifier = asyncio.run(on_demand(store, settings, transport))
    return store, out, verifier, transport.requests


def test_demand_never_uses_an_unverified_link(demand_run: Any) -> None:
    store, out, verifier, _ = demand_run
    records = out["records"]
    assert len(records) == COUNT, out["shortfall"]
    used = {lk for r in records for lk in r.metadata.verified_links}
    assert used, "chains over links were synthesised"
    status = {lk.id: lk for lk in all_links(store)}
    assert all(status[lk].status == "verified" for lk in used)
    # each was decided by the demand run itself, with its evidence kept in the store
    assert all(status[lk].evidence.get("run_id") == verifier.run.id for lk in used)
    run = store.get_run(verifier.run.id)
    assert run is not None and run.status == "completed"
    # plans over links that did not come out verified were discarded before any call
    assert any("not verified: the plan does not run" in d["reason"] for d in out["discarded"])


def test_demand_verifies_fewer_links_than_a_full_run(demand_run: Any) -> None:
    store, out, verifier, requests = demand_run
    links = all_links(store)
    decided = [lk for lk in links if lk.last_run == verifier.run.id]
    # a full run decides every candidate in scope; demand decided only what the plans traverse
    assert decided and len(decided) < len(links) / 2
    assert sum(1 for lk in links if lk.status == "candidate") > len(decided)
    figures = out["verification"]
    assert figures["verified"] == sum(1 for lk in decided if lk.status == "verified")
    assert figures["calls"] == verifier.spent() > 0
    # every upstream request is one or the other (synthesis also counts calls answered without a request)
    assert figures["calls"] < requests <= figures["calls"] + out["calls"]


def test_a_later_run_reuses_the_verified_links(demand_run: Any, tmp_path: Path) -> None:
    """Links verified on demand are cached in the store: a second synthesis over the same store asks for none of
    them again."""
    store, first, _, _ = demand_run
    settings, transport = sandbox_mode(Settings())
    counting = Counting(transport)
    out, verifier = asyncio.run(on_demand(store, settings, counting))
    again = {lk.id for lk in all_links(store) if lk.last_run == verifier.run.id}
    before = {lk for r in first["records"] for lk in r.metadata.verified_links}
    assert not again & before
    assert out["verification"]["calls"] < first["verification"]["calls"]


def test_shared_economy_pays_identical_calls_once(tmp_path: Path) -> None:
    """Verification and synthesis share one call economy: an identical call (a root tool's sampling call, a trial
    with the same values) is a cache hit the second time, so the same synthesis costs fewer upstream calls than
    verifying and synthesising with separate caches."""
    store_a, settings_a, shared = fresh(tmp_path / "a.sqlite3")
    out_a, _ = asyncio.run(on_demand(store_a, settings_a, shared, shared=True))
    store_b, settings_b, separate = fresh(tmp_path / "b.sqlite3")
    out_b, _ = asyncio.run(on_demand(store_b, settings_b, separate, shared=False))
    assert len(out_a["records"]) == len(out_b["records"]) == COUNT
    assert shared.requests < separate.requests


class HalfRefuting:
    """A verifier that refutes most links by their id (no calls): plans keep failing the gate."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store

    async def discover(self) -> None:
        return None

    async def verify(self, links: list[LinkRecord]) -> list[LinkRecord]:
        out = []
        for lk in links:
            status = "verified" if int(lk.id[-2:], 16) % 3 == 0 else "refuted"
            decided = lk.model_copy(update={"status": status, "reason": "test", "last_run": "run_test"})
            self.store.save_link(decided)
            out.append(decided)
        return out

    def spent(self) -> int:
        return 0

    def samples(self) -> dict[str, list[dict[str, Any]]]:
        return {}

    def sample_args(self) -> dict[str, dict[str, Any]]:
        return {}

    async def expand(self) -> bool:
        return False


@pytest.fixture(scope="module")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedStore, Settings, Counting]:
    """Sampled and derived (a round's first half), nothing decided."""
    store, settings, transport = fresh(tmp_path_factory.mktemp("cand") / "g.sqlite3")
    sampled_engine(store, settings, transport)
    return store, settings, transport


def test_pool_is_not_capped(candidates: Any, tmp_path: Path) -> None:
    """More plans are drawn while too few are kept: with most links refuted at the gate, the old pool of
    int(1.6 * count) + 5 plans could never keep `count`."""
    base, settings, _ = candidates
    store = EmbeddedStore(tmp_path / "copy.sqlite3")
    register_catalog(store, settings)
    store.upsert_candidates(all_links(base))
    _, transport = sandbox_mode(settings)
    count = 20

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), apis(store), transport=transport)
        try:
            return await synthesize(store, settings, ex, count=count, seed=7, verifier=HalfRefuting(store), extras={})
        finally:
            await ex.aclose()

    out = asyncio.run(go())
    assert out["planned"] > int(count * 1.6) + 5
    assert len(out["records"]) == count or out["shortfall"].startswith(f"{len(out['records'])} of {count} requested")
    assert len(out["records"]) == count


def test_sampler_draws_more_until_the_plan_space_is_exhausted(candidates: Any) -> None:
    store, settings, _ = candidates
    graph = VerifiedGraph(store, settings, unverified=True)
    first = sample_plans(VerifiedGraph(store, settings, unverified=True), 30, seed=3)
    sampler = PlanSampler(graph, shapes=("single",), seed=3, min_steps=1, max_steps=1)
    drawn = sampler.more(30)
    assert len(drawn) == 30 and all(p.shape == "single" for p in drawn)
    total = len(drawn)
    while not sampler.exhausted:
        total += len(sampler.more(200))
    assert total > 30  # drawn beyond the first ask, then the space (repeats per plan) runs out
    assert sampler.more(10) == []
    # one ask of the sampler is `sample_plans`: the same seed draws the same plans
    again = PlanSampler(VerifiedGraph(store, settings, unverified=True), seed=3).more(30)
    assert [p.key for p in again] == [p.key for p in first]


def test_baseline_shortfall_is_reported(candidates: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kopa synth --baseline` says when the graph yields fewer trajectories than asked, as the EDGE path does,
    with the same exit code."""
    from cli import app

    base, settings, _ = candidates
    graph_file = tmp_path / "g.sqlite3"
    store = EmbeddedStore(graph_file)
    register_catalog(store, settings)
    store.upsert_candidates(all_links(base))
    store.close()
    monkeypatch.setenv("KOPA_STORE", "embedded")
    monkeypatch.setenv("KOPA_EMBEDDED_PATH", str(graph_file))
    monkeypatch.delenv("KOPA_REDIS_URL", raising=False)
    get_settings.cache_clear()
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "synth",
            "--baseline",
            "--sandbox",
            "--count",
            "400",
            "--shapes",
            "single",
            "--max-steps",
            "1",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    stdout = result.stdout
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["kept"] < 400 and summary["requested"] == 400
    assert f"{summary['kept']} of 400 requested: the candidate graph yielded" in result.stderr
    get_settings.cache_clear()


def test_a_refusal_of_the_request_form_is_learnt_per_parameter(tmp_path: Path) -> None:
    """NTS `validate` refuses a body of business numbers alone (HTTP 411, a mandatory field missing) whatever the
    number: the first link into the parameter is refuted on three values that all got that one refusal; the other
    links into it are asked once it is decided, and each is refuted on its first value, its reason naming the
    first link. The verdicts are those of a full run (every one of these links is refuted there too)."""
    store, settings, transport = fresh(tmp_path / "g.sqlite3")

    async def ask() -> tuple[list[LinkRecord], int]:
        verifier = DemandVerifier(store, settings, economy=MemoryEconomy(), transport=transport)
        try:
            await verifier.discover()
            into = [lk for lk in all_links(store) if lk.target_param == "body:businesses"]
            before = verifier.spent()
            decided = await verifier.verify(into)
            return decided, verifier.spent() - before
        finally:
            await verifier.close()

    decided, calls = asyncio.run(ask())
    assert len(decided) >= 5 and all(lk.status == "refuted" for lk in decided)
    refused = [lk for lk in decided if "411" in lk.reason]  # the others: a date whose transform failed, no call
    taught = [lk for lk in refused if "whatever the value" not in lk.reason]
    learnt = [lk for lk in refused if "whatever the value" in lk.reason]
    assert len(taught) == 1 and taught[0].evidence["trials"] == 3 and len(learnt) == len(refused) - 1 >= 4
    assert all(lk.evidence["trials"] == 1 and taught[0].id in lk.reason for lk in learnt)
    assert calls <= 3 + len(learnt)


def test_a_refusal_that_depends_on_the_value_is_not_learnt() -> None:
    """Only a link whose every value (three or more) got the very same refusal teaches one: refusals that differ
    (a date out of range that names the date), or a value that answered, teach nothing."""
    from execution.result import CallResult, Outcome
    from verification.engine import Engine
    from verification.trials import Trial

    engine = Engine.__new__(Engine)
    engine.refusals, engine.learnt = {}, {}
    link = LinkRecord(
        id="lk_a", source_tool="a", source_field="f", target_tool="b", target_param="query:p", status="refuted"
    )

    def refused(reason: str, outcome: Outcome = Outcome.INVALID) -> Trial:
        return Trial("v", {"p": "v"}, CallResult(outcome, code="10", reason=reason))

    engine._learn_refusal(link, [refused("date 20100110 out of range"), refused("date 20100111 out of range")] * 2)
    engine._learn_refusal(link, [refused("no rows", Outcome.EMPTY)] * 3)
    engine._learn_refusal(link, [refused("bad form")] * 2)  # two values: not enough to tell
    engine.settle()
    assert engine.refusals == {}
    engine._learn_refusal(link, [refused("bad form")] * 3)
    assert engine.refusals == {}  # learnt, consulted only once settled (not by the links decided beside it)
    engine.settle()
    assert engine.refusals == {("b", "query:p"): ("10", "bad form", "lk_a")}


def test_one_axis_of_a_point_is_tried_with_the_other_from_the_same_row(tmp_path: Path) -> None:
    """TAGO's stops near a point require gpsLati and gpsLong: a link into one axis whose source row also feeds the
    other (a sibling link) is tried with both from the start, not beside a seed value of the other axis (half a
    point): every trial sends the two values of one source row."""
    store, settings, transport = fresh(tmp_path / "g.sqlite3")

    async def ask() -> list[LinkRecord]:
        verifier = DemandVerifier(store, settings, economy=MemoryEconomy(), transport=transport)
        try:
            await verifier.discover()
            links = all_links(store)
            lati = {lk.source_tool for lk in links if lk.target_param == "query:gpsLati"}
            into = [lk for lk in links if lk.target_param == "query:gpsLong" and lk.source_tool in lati]
            return await verifier.verify(into)
        finally:
            await verifier.close()

    decided = asyncio.run(ask())
    plain = [lk for lk in decided if lk.transform.get("kind") != "coord"]  # a projection brings its own partner
    assert plain
    for lk in plain:
        assert lk.evidence["mode"] == "joint", (lk.source_tool, lk.reason)
    for lk in decided:
        for ex in lk.evidence["examples"]:
            assert {"gpsLati", "gpsLong"} <= set(ex["input"]), ex
    # the latitude sent is the source row's, not one seed value for every trial
    assert len({ex["input"]["gpsLati"] for lk in plain for ex in lk.evidence["examples"]}) > 1


def test_a_batch_run_again_closes_the_verification_run_it_left_running(tmp_path: Path) -> None:
    """An on-demand batch names its verification run as soon as it starts one. When the process running it dies
    and the queue delivers the batch again (`acks_late`), the worker closes that run as failed, saying why, before
    the batch starts a new one; nothing stays `running`."""
    from synthesis.batches import Batch, BatchRequest, new_batch, run_batch
    from workers.tasks import abandon_demand_run

    store, settings, transport = fresh(tmp_path / "g.sqlite3")
    batch = new_batch(store, settings, "team-a", BatchRequest(count=4, shapes=["single"], on_demand=True))
    first = DemandVerifier(store, settings, economy=MemoryEconomy(), transport=transport)
    asyncio.run(first.discover())  # the first delivery started verifying; then its process died
    batch.model_copy(update={"status": "running", "verification_run": first.run.id}).save(store)
    assert store.get_run(first.run.id).status == "running"  # type: ignore[union-attr]
    delivered = Batch.stored(store.get_batch(batch.id))
    assert delivered is not None and abandon_demand_run(store, delivered)
    left = store.get_run(first.run.id)
    assert left is not None and left.status == "failed" and batch.id in left.message
    named: list[bool] = []

    def watching(*args: Any) -> DemandVerifier:
        """The real factory's verifier, noting whether the batch names its run before verifying begins."""
        verifier = DemandVerifier.factory(store, settings)(*args)
        discover = verifier.discover

        async def noting() -> None:
            named.append(store.get_batch(batch.id)["verification_run"] == verifier.run.id)  # type: ignore[index]
            await discover()

        verifier.discover = noting  # type: ignore[method-assign]
        return verifier

    done = asyncio.run(run_batch(store, settings, batch.id, transport=transport, verifier=watching))
    assert done.status == "completed" and done.verification_run not in (None, first.run.id)
    assert named and all(named)
    assert store.get_run(str(done.verification_run)).status == "completed"  # type: ignore[union-attr]
    assert not abandon_demand_run(store, done)  # a finished batch leaves nothing to close
