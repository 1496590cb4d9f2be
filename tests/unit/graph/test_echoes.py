"""The echo signal (graph.echoes): what a target's own sampled answers say of a candidate link before any trial, and
how demand-driven synthesis uses it (proposed last, verified after the others, never refuted by it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from core.settings import Settings
from graph.echoes import PRIOR, Echo, echo_signal, prior, shape, signals_for
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord
from graph.store import all_links
from sandbox.inprocess import sandbox_mode
from synthesis.demand import DEFERRED, DemandGate
from synthesis.plans import VerifiedGraph
from tests.support.helpers import register_catalog, sampled_engine
from verification.engine import Engine


def link(lid: str, field: str, param: str, transform: dict[str, Any] | None = None) -> LinkRecord:
    return LinkRecord(
        id=lid,
        source_tool="a",
        source_field=field,
        target_tool="b",
        target_param=f"query:{param}",
        transform=transform or {"kind": "identity"},
    )


# the apartment list (a) gives complex codes; the complex detail (b) echoes the code it was asked about
A_ROWS = [{"kaptCode": "A10020074", "kaptName": "헬리오시티"}, {"kaptCode": "A10027875", "kaptName": "잠실엘스"}]
B_ROWS = [{"kaptCode": "A10027875", "kaptName": "잠실엘스", "kaptdaCnt": "5678.0"}]


def test_overlap_supports_disjoint_values_of_one_form_count_against_no_echo_is_neutral() -> None:
    same = link("l1", "kaptCode", "kaptCode")
    assert echo_signal(same, A_ROWS, B_ROWS).verdict == "support"
    # another copy's complexes: codes of the same form, none of them the target's
    other = [{"kaptCode": "A99990001"}, {"kaptCode": "A99990002"}]
    assert echo_signal(same, other, B_ROWS).verdict == "against"
    # the target repeats nothing named like the parameter: no signal either way
    assert echo_signal(link("l2", "kaptName", "complexName"), A_ROWS, B_ROWS).verdict == "none"
    # values of different forms say nothing (a name against a code)
    assert echo_signal(link("l3", "kaptName", "kaptCode"), A_ROWS, B_ROWS).verdict == "none"
    # nothing sampled: no signal
    assert echo_signal(same, [], B_ROWS).verdict == "none"
    assert prior(echo_signal(same, A_ROWS, B_ROWS)) > prior(echo_signal(same, other, B_ROWS))
    assert prior(echo_signal(link("l2", "kaptName", "complexName"), A_ROWS, B_ROWS)) == PRIOR["none"] == 1.0


def test_values_are_compared_after_the_transform_and_the_sampling_arguments_count() -> None:
    # a 10-digit 법정동코드 sliced to the 5-digit 시군구 code the building register echoes
    regions = [{"region_cd": "1171010100"}, {"region_cd": "1168010300"}]
    register = [{"sigunguCd": "11710", "bjdongCd": "10100"}]
    sliced = link("s", "region_cd", "sigunguCd", {"kind": "slice", "start": 0, "end": 5})
    assert echo_signal(sliced, regions, register).verdict == "support"
    assert echo_signal(link("raw", "region_cd", "sigunguCd"), regions, register).verdict == "none"  # 10 vs 5 digits
    # a detail that does not repeat its key: the key its sampling call answered rows for is what it knows
    detail = [{"dutyTime": "0900~1800"}]
    key = link("k", "kaptCode", "kaptCode")
    assert echo_signal(key, A_ROWS, detail).verdict == "none"
    assert echo_signal(key, A_ROWS, detail, {"kaptCode": "A10020074"}).verdict == "support"
    assert echo_signal(key, A_ROWS, detail, {"kaptCode": "A55550000"}).verdict == "against"
    # a list parameter is echoed per element
    status = [{"b_no": "1234567890", "b_stt": "계속사업자"}]
    wrapped = link("w", "bizrno", "b_no", {"kind": "wrap_list"})
    assert echo_signal(wrapped, [{"bizrno": "1234567890"}], status).verdict == "support"
    # quantities and points are answered near, not equal; dates need not be the day sampled: no signal
    points = link("p", "mapx", "xPos")
    assert echo_signal(points, [{"mapx": "126.9779692"}], [{"XPos": "127.0276368"}]).verdict == "none"
    assert shape("A10020074") == shape("JDQwMDAwMDEjNzgj/x4qtQ==") != shape("12345")


def test_signals_for_reads_each_field_once_and_skips_unsampled_tools() -> None:
    links = [link("l1", "kaptCode", "kaptCode"), link("l2", "kaptName", "kaptName")]
    got = signals_for(links, {"a": A_ROWS, "b": B_ROWS})
    assert {k: v.verdict for k, v in got.items()} == {"l1": "support", "l2": "support"}
    assert signals_for(links, {"a": A_ROWS}) == {}


class _Graph:
    """The part of VerifiedGraph the gate reads: one plan's links, their priors, and decisions."""

    def __init__(self, links: list[LinkRecord], priors: dict[str, float], echo: dict[str, Echo] | None = None) -> None:
        self.links = {lk.id: lk for lk in links}
        self.planned = dict(self.links)  # the links as the plans carry them
        self.priors = priors
        self.echo = echo or {}

    def unverified_on(self, plan: Any) -> list[LinkRecord]:
        got = [self.links.get(i, self.planned[i]) for i in plan]
        return [lk for lk in got if lk.status != "verified"]

    def link_prior(self, lk: LinkRecord) -> float:
        return self.priors.get(lk.id, 1.0)

    def decide(self, lk: LinkRecord, *, keep_pending: bool = False) -> None:
        if lk.status == "verified" or keep_pending:
            self.links[lk.id] = lk
        else:
            self.links.pop(lk.id, None)


class _Verifier:
    def __init__(self, refute: set[str]) -> None:
        self.refute = refute
        self.asked: list[list[str]] = []

    async def verify(self, links: list[LinkRecord]) -> list[LinkRecord]:
        self.asked.append([lk.id for lk in links])
        return [lk.model_copy(update={"status": "refuted" if lk.id in self.refute else "verified"}) for lk in links]


def test_gate_verifies_a_doubtful_link_last_and_only_for_a_plan_that_can_still_run() -> None:
    good, bad, doubtful, doubtful2 = (link(i, "f", "p") for i in ("good", "bad", "doubt", "doubt2"))
    graph = _Graph([good, bad, doubtful, doubtful2], {"doubt": 0.25, "doubt2": 0.25})
    verifier = _Verifier(refute={"bad"})
    gate = DemandGate(graph, verifier, deferring=False)  # type: ignore[arg-type]
    plans: list[Any] = [["good", "doubt"], ["bad", "doubt2"]]
    reasons = asyncio.run(gate.admit(plans))
    # first the links the signal does not doubt; then the doubtful link of the plan that can still run
    assert verifier.asked == [["bad", "good"], ["doubt"]]
    assert reasons[0] is None and reasons[1] is not None
    # the doubtful link of the failed plan was not asked about, and stays undecided (not refuted)
    assert "doubt2" not in gate.asked and graph.links["doubt2"].status == "candidate"


def test_gate_defers_a_plan_that_waits_for_a_doubtful_link_until_the_draw_runs_out() -> None:
    """While the draw over the undoubted links goes on, a doubtful link is not asked about: a plan that can run
    but for it waits (`deferred`); a plan with a refuted link is discarded as before; once the draw runs out
    (`open_doubtful`, once), the waiting plan's doubtful link is asked about and the plan may run."""
    good, bad, doubtful = (link(i, "f", "p") for i in ("good", "bad", "doubt"))
    graph = _Graph([good, bad, doubtful], {"doubt": 0.05})
    verifier = _Verifier(refute={"bad"})
    gate = DemandGate(graph, verifier)  # type: ignore[arg-type]
    plans: list[Any] = [["good", "doubt"], ["bad", "doubt"], ["good"]]
    reasons = asyncio.run(gate.admit(plans))
    assert verifier.asked == [["bad", "good"]]  # the doubtful link is not asked about yet
    assert reasons[0] is not None and reasons[0].startswith(DEFERRED), reasons
    assert reasons[1] is not None and "bad is refuted" in reasons[1] and reasons[2] is None
    assert graph.links["doubt"].status == "candidate"
    assert gate.open_doubtful() and not gate.open_doubtful()
    again = asyncio.run(gate.admit(plans[:1]))
    assert verifier.asked[-1] == ["doubt"] and again == [None]


def test_gate_asks_a_plans_likeliest_failure_first_and_spares_its_other_links() -> None:
    """A wave's links are asked about one per plan at a time, first the one the target's sampled answers do not
    echo (a `none` link fails more often than a `support` one): once it fails, the plan's other links are not asked
    about (they stay undecided, for a later plan); a plan whose first link holds goes on to the next."""
    echoed, silent, echoed2, silent2 = (link(i, "f", "p") for i in ("echoed", "silent", "echoed2", "silent2"))
    echo = {"echoed": Echo("support"), "echoed2": Echo("support"), "silent": Echo("none")}  # silent2: no signal
    graph = _Graph([echoed, silent, echoed2, silent2], {}, echo)
    verifier = _Verifier(refute={"silent"})
    gate = DemandGate(graph, verifier)  # type: ignore[arg-type]
    plans: list[Any] = [["echoed", "silent"], ["echoed2", "silent2"]]
    reasons = asyncio.run(gate.admit(plans))
    assert verifier.asked == [["silent", "silent2"], ["echoed2"]]
    assert reasons[0] is not None and "silent is refuted" in reasons[0] and reasons[1] is None
    assert "echoed" not in gate.asked and graph.links["echoed"].status == "candidate"


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedStore, Settings, Engine]:
    """The bundled sandbox sampled and its candidates derived (a round's first half), nothing decided."""
    settings, transport = sandbox_mode(Settings())
    store = register_catalog(EmbeddedStore(tmp_path_factory.mktemp("echo") / "g.sqlite3"), settings)
    return store, settings, sampled_engine(store, settings, transport)


def test_pending_graph_proposes_doubtful_links_last_without_refuting_them(sampled: Any) -> None:
    store, settings, engine = sampled
    graph = VerifiedGraph(store, settings, pending=True, samples=engine.samples, sample_args=engine.sample_args)
    against = {i for i, e in graph.echo.items() if e.verdict == "against"}
    assert against and against <= set(graph.links)  # in the graph, to be proposed, not dropped
    assert all(lk.status == "candidate" for lk in all_links(store) if lk.id in against)  # nothing decided
    # a step pair whose only links are doubtful weighs less than one without any doubt
    doubtful = [(a, b) for a, targets in graph.edges.items() for b, ids in targets.items() if set(ids) <= against]
    plain = [(a, b) for a, targets in graph.edges.items() for b, ids in targets.items() if not set(ids) & against]
    assert doubtful and plain
    assert all(graph.pair_prior(a, b) < 1.0 for a, b in doubtful)
    assert all(graph.pair_prior(a, b) == 1.0 for a, b in plain)
    assert all(graph.link_prior(graph.links[i]) < 1.0 for i in against)
    # a pair's prior is kept between decisions, and follows each one (sampling weighs thousands of paths)
    a, b = plain[0]
    first = graph.links[graph.edges[a][b][0]]
    before = graph.pair_prior(a, b)
    graph.decide(first.model_copy(update={"status": "refuted"}))
    assert graph.pair_prior(a, b) < before
    a, b = plain[1]
    graph.decide(graph.links[graph.edges[a][b][0]].model_copy(update={"status": "verified"}))
    assert graph.pair_prior(a, b) == 4.0
    # outside the pending graph (the baseline) the signal plays no part
    baseline = VerifiedGraph(store, settings, unverified=True)
    assert not baseline.echo and all(baseline.pair_prior(a, b) == 1.0 for a, b in doubtful)
