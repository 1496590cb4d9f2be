"""Training data a model can learn to plan from: the figures over real synthesis against the sandbox,
and the checks behind them catching what they must catch.

Users know names, tools know codes (parameter roles, plans that start from natural inputs); varied slot values
drawn from tool results; goal-stating requests; arguments typed per schema and validated; the tool message shows
every value a later step uses; pairs from one row; answers that state the answered values with units; special
samples in configured shares."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy, NoCache
from execution.seeds import coerce
from execution.view import BUDGET
from graph.concepts import PAIR_GROUPS, param_role
from graph.embedded_store import EmbeddedStore
from sandbox.inprocess import sandbox_mode
from synthesis.engine import DEFAULT_EXTRAS, VerifiedGraph, sample_plans, synthesize, validate_arguments
from synthesis.facts import check_answer
from synthesis.language import STEP_WORDS
from synthesis.quality import quality
from synthesis.records import SynthesisResult, Trajectory
from tests.support.helpers import copy_store

Setup = tuple[EmbeddedStore, Settings, Any]
NUMBER = re.compile(r"^-?[\d,]+(\.\d+)?$")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path) -> Iterator[Setup]:
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, tmp_path_factory.mktemp("quality") / "g.sqlite3")
    yield store, settings, transport
    store.close()


def run(setup: Setup, count: int, seed: int, extras: dict[str, float] | None = None) -> SynthesisResult:
    store, settings, transport = setup

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=count, seed=seed, extras=extras)
        finally:
            await ex.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def result(setup: Setup) -> SynthesisResult:
    return run(setup, 200, 3)


@pytest.fixture(scope="module")
def records(result: SynthesisResult) -> list[Trajectory]:
    recs: list[Trajectory] = result["records"]
    assert len(recs) == 200
    return recs


def test_the_figures_hold(records: list[Trajectory]) -> None:
    q = quality(records, extras=DEFAULT_EXTRAS)
    assert q["code_words_in_requests"] == 0 and q["requests_listing_steps"] == 0
    assert q["sentence_frames"] >= 60
    assert q["slot_parameters"] >= 8 and q["slot_parameters_single_value"] == 0, q["single_valued"]
    assert q["argument_schema_violations"] == 0, q["violations"]
    assert q["linked_values_not_visible"] == 0 and q["cross_entity_pairs"] == 0 and q["unused_steps"] == 0
    assert q["answers_with_answered_values"] >= 0.95
    assert q["shares"] == {k: pytest.approx(v, abs=0.006) for k, v in DEFAULT_EXTRAS.items()}
    # fan-in plans whose target the root alone feeds are not planned (a careful agent skips the middle call); the
    # sandbox's fan-ins start from a code list whose row the user names (a city, then a stop in it)
    assert {"single", "chain", "parallel", "fan_in", "conditional"} <= {r.shape for r in records}
    assert q["answers_about_arbitrary_row"] == 0 and q["chains_through_unasked_entity_share"] <= 0.02
    assert q["facts_a_constant_answer_passes"] == 0
    assert q["facts_confirmed_on_own_answer"] == q["records_with_facts"] == sum(bool(r.steps) for r in records)


def test_parameter_roles() -> None:
    user = [
        ("keyword", "주소 검색어"),
        ("stationName", "측정소명"),
        ("umdName", "읍면동명"),
        ("itemName", "제품명"),
        ("b_no", "사업자등록번호 목록"),
        ("DEAL_YMD", "계약년월 (YYYYMM 6자리)"),
        ("sidoName", "시도 이름"),
        ("nodeNm", "정류소명"),
        ("routeNo", "노선번호"),
    ]
    code = [
        ("nx", "예보지점 X 좌표 (기상청 격자)"),
        ("cityCode", "도시코드"),
        ("routeId", "노선ID"),
        ("LAWD_CD", "지역코드"),
        ("contentId", "콘텐츠ID"),
        ("ykiho", "암호화된 요양기호"),
        ("kaptCode", "단지코드"),
        ("tmX", "TM_X 좌표"),
        ("regId", "예보구역코드"),
        ("rnMgtSn", "도로명코드"),
    ]
    assert all(param_role(n, d) == "user" for n, d in user), [(n, param_role(n, d)) for n, d in user]
    assert all(param_role(n, d) == "code" for n, d in code), [(n, param_role(n, d)) for n, d in code]
    assert param_role("base_time", "발표시각 (HHMM)") == "clock" and param_role("base_date", "발표일자") == "clock"
    assert param_role("MobileApp", "서비스명", non_linkable=True) == "constant"
    assert param_role("dataTerm", "기간", enum=["DAILY", "MONTH"]) == "constant"
    assert param_role("nx", "격자", override="user") == "user"  # the document's x-kopa-role wins


def test_plans_start_from_what_users_know_and_codes_come_from_results(setup: Setup) -> None:
    store, settings, _ = setup
    graph = VerifiedGraph(store, settings)
    # the x-kopa-role extension in a tool's schema overrides the classification
    kma = next(t for t in graph.tools.values() if t.name == "kma_get_ultra_srt_ncst")
    nx = next(p for p in kma.params if p.name == "nx")
    assert graph.role(kma, nx) == "code"
    schema = copy.deepcopy(kma.json_schema)
    schema["properties"]["nx"]["x-kopa-role"] = "user"
    assert VerifiedGraph(store, settings).role(kma.model_copy(update={"json_schema": schema}), nx) == "user"
    plans = sample_plans(graph, 120, seed=9)
    assert plans
    for plan in plans:
        first = plan.steps[0]
        # the user's words go into the first call, or name the row of a listing callable with constants alone
        assert any(s.kind == "slot" for s in first.sources.values()) or (first.names and len(plan.steps) > 1), plan.key
        for step in plan.steps:
            for pname, src in step.sources.items():
                p = next(x for x in step.tool.params if x.name == pname)
                if graph.role(step.tool, p) == "code":
                    assert src.kind == "link", (plan.key, pname)
            for group in PAIR_GROUPS:
                origins = sorted({s.from_step for n, s in step.sources.items() if n in group and s.kind == "link"})
                # one row, or a fan-in whose later origin was asked with the earlier one's row (the city's code and
                # the id of a stop looked up in that city)
                assert len(origins) <= 1 or (
                    plan.shape == "fan_in" and origins[0] in plan.steps[origins[1]].depends_on
                ), (
                    plan.key,
                    group,
                )


def test_slot_values_come_from_the_world_and_vary(records: list[Trajectory], result: SynthesisResult) -> None:
    assert result["pools"]["juso_addr_link_api.keyword"] > 20  # addresses harvested from tool results
    values: dict[str, set[str]] = {}
    for r in records:
        for k, v in r.slots.items():
            values.setdefault(k, set()).add(json.dumps(v, ensure_ascii=False))
    assert sum(len(v) > 1 for v in values.values()) >= 8
    months = {json.loads(v) for k, vs in values.items() if k.endswith("DEAL_YMD") for v in vs}
    assert len(months) >= 3 and all(len(m) == 6 for m in months)  # dates across the range, against the clock


def test_requests_state_goals_in_natural_frames(records: list[Trajectory]) -> None:
    for r in records:
        text = " ".join([*(m["content"] for m in r.preamble if m["role"] == "user"), r.request])
        assert not any(w in text for w in STEP_WORDS), text
        assert "{" not in text and "  " not in text
        codes = [
            str(s.arguments[p]) for s in r.steps for p, v in s.provenance.items() if v["kind"] in ("link", "clock")
        ]
        assert not any(len(c) >= 5 and c.isdigit() and c in text for c in codes), text
    personas = {"민원": 0, "보고서": 0, "분석": 0}
    for r in records:
        for word in personas:
            personas[word] += word in r.request
    assert all(personas.values()), personas


def test_arguments_are_typed_per_schema(setup: Setup, records: list[Trajectory]) -> None:
    store, _, _ = setup
    tools = {t.name: t for t in store.all_tools()}
    seen = set()
    for r in records:
        for s in r.steps:
            props = tools[s.tool].json_schema.get("properties", {})
            for k, v in s.arguments.items():
                kind = props.get(k, {}).get("type")
                if kind == "integer":
                    assert isinstance(v, int) and not isinstance(v, bool), (s.tool, k, v)
                elif kind == "number":
                    assert isinstance(v, int | float), (s.tool, k, v)
                elif kind == "array":
                    assert isinstance(v, list), (s.tool, k, v)
                elif kind == "string":
                    assert isinstance(v, str), (s.tool, k, v)
                seen.add(kind)
    assert {"integer", "number", "array", "string"} <= seen
    kma = tools["kma_get_ultra_srt_ncst"]
    good = {"base_date": "20261015", "base_time": "1300", "nx": 60, "ny": 127}
    assert validate_arguments(kma, good) is None
    assert "nx" in (validate_arguments(kma, {**good, "nx": "60"}) or "")
    assert coerce("60", {"type": "integer"}) == 60 and coerce(
        "7418899539", {"type": "array", "items": {"type": "string"}}
    ) == ["7418899539"]


def test_records_show_the_one_view_never_the_used_row_moved_in(records: list[Trajectory]) -> None:
    steps = [s for r in records for s in r.steps]
    assert steps
    for s in steps:  # the first rows in the provider's order, and the used row is one of them
        assert s.response.shown == list(range(len(s.response.items))) and 0 <= s.response.chosen < len(s.response.items)
        assert len(s.response.items) == min(s.response.rows, len(s.response.items)) <= BUDGET.rows


def test_the_checks_catch_broken_records(records: list[Trajectory]) -> None:
    linked = next(
        r
        for r in records
        if r.kind == "normal" and any(v["kind"] == "link" for s in r.steps for v in s.provenance.values())
    )
    base = quality([linked])
    assert base["linked_values_not_visible"] == base["argument_schema_violations"] == 0
    # the linked row removed from the earlier tool message
    step = next(s for s in linked.steps if any(v["kind"] == "link" for v in s.provenance.values()))
    prov = next(v for v in step.provenance.values() if v["kind"] == "link")
    hidden = linked.model_copy(deep=True)
    up = hidden.steps[prov["from_step"]]
    up.response.items = [{k: v for k, v in row.items() if k != prov["field"]} for row in up.response.items]
    assert quality([hidden])["linked_values_not_visible"] >= 1
    # an integer sent as text
    typed = next(
        r
        for r in records
        if any(isinstance(v, int) and not isinstance(v, bool) for s in r.steps for v in s.arguments.values())
    )
    broken = typed.model_copy(deep=True)
    for s in broken.steps:
        for k, v in s.arguments.items():
            if isinstance(v, int) and not isinstance(v, bool):
                s.arguments[k] = str(v)
    assert quality([broken])["argument_schema_violations"] >= 1

    # a pair built from two different steps
    def fed_pair(s: Any) -> bool:
        return {"nx", "ny"} <= set(s.provenance) and s.provenance["nx"]["kind"] == "link" and s.step >= 3

    kma = next(r for r in records if any(fed_pair(s) for s in r.steps))
    crossed = kma.model_copy(deep=True)
    target = next(s for s in crossed.steps if fed_pair(s))
    other = next(i for i in range(target.step - 1) if i != target.provenance["nx"]["from_step"])
    target.provenance["ny"] = {**target.provenance["ny"], "from_step": other}
    assert quality([crossed])["cross_entity_pairs"] == 1
    # a request that dictates the plan, a code in a request, an answer without values
    listing = linked.model_copy(update={"request": "먼저 " + linked.request})
    assert quality([listing])["requests_listing_steps"] == 1
    code = str(step.arguments[next(k for k, v in step.provenance.items() if v["kind"] == "link")])
    leaking = linked.model_copy(update={"request": f"{linked.request} ({code} 코드)"})
    assert quality([leaking])["code_words_in_requests"] == 1
    assert (
        quality([linked.model_copy(update={"final_answer": "결과를 찾았습니다."})])["answers_with_answered_values"] == 0
    )


def test_answers_state_values_with_units_and_labels(records: list[Trajectory]) -> None:
    weather = [
        r
        for r in records
        if r.kind == "normal" and any(s.tool == "kma_get_ultra_srt_ncst" and s.step in r.final_steps for s in r.steps)
    ]
    air = [
        r
        for r in records
        if any(s.tool == "airkorea_get_msrstn_accto_rltm_mesure_dnsty" and s.step in r.final_steps for s in r.steps)
    ]
    assert weather and air
    # an observation answers what was asked of it over the rows the view shows, each figure with its unit
    assert all(f.unit in r.final_answer for r in weather for f in r.facts if f.kind == "number" and f.unit)

    # hourly measurements listed newest first: "now" is the latest row, with its unit and its grade in words
    def measured(r: Trajectory) -> bool:  # the answered row has a PM10 figure (a station can miss an hour: "-")
        step = next(s for s in r.steps if s.tool == "airkorea_get_msrstn_accto_rltm_mesure_dnsty")
        row = step.response.items[min(step.response.chosen, len(step.response.items) - 1)]
        return str(row.get("pm10Value", "")).replace(".", "").isdigit()

    def asks_pm(r: Trajectory) -> bool:
        return any(f.unit == "㎍/㎥" for f in r.facts)

    missing = [
        (r.now, r.final_answer)
        for r in air
        if measured(r) and asks_pm(r) and not ("㎍/㎥" in r.final_answer and "등급" in r.final_answer)
    ]
    assert air and not missing
    for r in records:
        assert r.final_answer and "{" not in r.final_answer
        if r.steps:
            assert r.facts and check_answer(r.final_answer, r.judge_facts()).hits == len(r.facts), r.final_answer
            assert all(f.label for f in r.facts)
        assert not re.search(r"\((?:[0-9])\)", r.final_answer), r.final_answer  # codes decoded, not "흐림(4)"
        assert "첫 번째" not in r.final_answer
    parallel = next(r for r in records if r.shape == "parallel" and r.kind == "normal")
    assert parallel.question is not None and len(parallel.question.asks) == 2
    # many rows no word singles out: the question is about the set and the answer states how many
    sets = [r for r in records if r.question and any(a in ("count", "list") for a in r.question.asks)]
    assert sets and all("건" in r.final_answer for r in sets)


def test_special_samples_are_real_and_configurable(setup: Setup, records: list[Trajectory]) -> None:
    store, settings, transport = setup
    assert records[0].kind == "normal"
    irrelevant = [r for r in records if r.kind == "irrelevance"]
    assert irrelevant and all(not r.steps and r.tools and r.final_answer for r in irrelevant)
    for r in (r for r in records if r.kind == "clarification"):
        opening, question = r.preamble[0]["content"], r.preamble[1]["content"]
        value = next(iter(r.slots.values()))
        if isinstance(value, list):  # a list slot: its scalar items (an object item such as a business is
            # stated by its fields; check its first one)
            value = ", ".join(str(next(iter(v.values()))) if isinstance(v, dict) else str(v) for v in value)
        assert str(value) not in opening and str(value) in r.request and question.endswith(("?", "요."))
    refuted = {lk.id: lk for lk in store.list_links(limit=100_000)[0] if lk.status == "refuted"}
    for r in (r for r in records if r.kind == "hard_negative"):
        hn = r.metadata.model_extra["hard_negative"]  # type: ignore[index]
        assert hn["refuted_link"] in refuted and hn["tempting_tool"] in {t["function"]["name"] for t in r.tools}
        assert hn["tempting_tool"] not in {s.tool for s in r.steps}
    recovering = [r for r in records if r.kind == "error_recovery"]
    assert recovering
    tools = {t.name: t for t in store.all_tools()}

    async def replay() -> list[bool]:
        ex = Executor(
            settings, NoCache(MemoryEconomy()), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport
        )
        try:
            return [(await ex.call(tools[a.tool], a.arguments)).ok for r in recovering for a in r.attempts]
        finally:
            await ex.aclose()

    assert not any(asyncio.run(replay()))  # the recorded failures fail for real
    assert all(len(r.attempts[0].arguments) < len(r.steps[0].arguments) and r.attempts[0].error for r in recovering)
    plain = run(setup, 30, 4, extras={})
    assert {r.kind for r in plain["records"]} == {"normal"}
    many = run(setup, 40, 4, extras={"irrelevance": 0.25})
    assert sum(r.kind == "irrelevance" for r in many["records"]) == 10 and len(many["records"]) == 40


def test_demo_style_export_reports_the_figures(setup: Setup, result: SynthesisResult, tmp_path: Path) -> None:
    from synthesis.export import export_all
    from synthesis.report import quality_section

    store, settings, _ = setup
    done = export_all(tmp_path, result, store, settings, {"seed": 3})
    q = done["distribution"]["quality"]
    assert q["argument_schema_violations"] == 0 and q["trajectories"] == 200
    assert (
        json.loads((tmp_path / "quality.json").read_text(encoding="utf-8"))["sentence_frames"] == q["sentence_frames"]
    )
    section = quality_section(done["distribution"])
    assert "sentence frames" in section and "BFCL items {" in section


def test_every_scored_shape_every_reachable_tool_and_places_all_over_the_world(records: list[Trajectory]) -> None:
    """Fan-in and conditional plans are drawn over verified links at a useful share next to the other
    shapes, the tools no route reached before (bus, tourism: listings whose row the user names) are used, and
    trajectories start in many districts and KMA grid cells, not the first rows' one."""
    w = quality(records)["world"]
    for shape in ("single", "chain", "fan_in", "parallel", "conditional"):
        assert w["shapes"].get(shape, 0) >= 0.04 * len(records), (shape, w["shapes"])
    # measured on this run: tools 44 of 48, grid cells 26, places 36 of the sandbox's 43 시군구
    assert w["tools_used"] >= 42, w
    assert w["grid_cells"] >= 20 and w["places"] >= 25, w


def test_conditional_records_look_further_only_when_the_first_result_says_so(records: list[Trajectory]) -> None:
    """Issue 33: a condition is on a reading or forecast value (never a count of an API's rows), at a threshold a
    person states in their own words (synthesis/conditions.py), and the branch call waits for the result that
    decides it (its own turn); a forecast's extreme says the hours it covers."""
    conds = [r for r in records if r.kind == "normal" and r.shape == "conditional"]
    tests = [(r, (r.metadata.model_extra or {})["condition"]) for r in conds]
    assert {c["held"] for _, c in tests} == {True, False}  # the threshold is drawn on both sides of the value
    for r, c in tests:
        assert c["held"] == (c["observed"] >= c["value"] if c["op"] == ">=" else c["observed"] <= c["value"])
        assert c["label"] != "건수" and c["unit"] != "건", (r.request, c)
        decider = r.steps[c["step"] - 1].response
        numbers = {
            float(str(v).replace(",", "")) for row in decider.items for v in row.values() if NUMBER.match(str(v))
        }
        assert c["observed"] in numbers, (r.request, c)  # a value the tool message shows
        threshold = f"{int(c['value']) if float(c['value']).is_integer() else c['value']}{c['unit']}"
        assert f"{threshold} {'이상' if c['op'] == '>=' else '이하'}" in r.request, r.request
        assert "건수" not in r.request and "건" not in c["unit"], r.request
        if decider.rows > len(decider.items) and any("fcstTime" in x for x in decider.items):
            assert "예보 기준" in r.final_answer, r.final_answer  # the hours the extreme is over
        if c["held"]:
            assert r.final_steps[-1] == c["gate"] == len(r.steps), r.request
            assert c["step"] in r.steps[-1].depends_on, r.steps[-1].depends_on  # asked after the result is seen
        else:
            assert len(r.steps) == c["step"] and r.final_steps == [c["step"]] and "확인하지 않았" in r.final_answer
        assert check_answer(r.final_answer, r.judge_facts()).hits == len(r.facts)


def test_fan_in_joins_two_lookups_and_the_user_names_the_rows(records: list[Trajectory]) -> None:
    fans = [r for r in records if r.kind == "normal" and r.shape == "fan_in"]
    assert fans
    for r in fans:
        assert len(set(r.steps[-1].depends_on)) >= 2, [s.tool for s in r.steps]
    named = [(r, v) for r in records for s in r.steps for v in s.mentions.values()]
    assert named  # rows picked by what the user says (a city in a code list)
    for r, v in named:
        assert str(v) in " ".join([*(m["content"] for m in r.preamble if m["role"] == "user"), r.request])
