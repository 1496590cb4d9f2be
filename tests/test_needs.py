"""Needs (synthesis/needs, docs/needs.md): what people ask, as data an institution extends; requests start from a
need's words and answers state exactly its facts; an API no need covers is asked what a field means in plain words,
never by a label the API files it under."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from graph.models import FieldRecord, ParamRecord, ToolRecord
from synthesis.facts import check_answer
from synthesis.language import compose
from synthesis.needs import PERSONAS, NeedError, default_needs, load_file, load_needs
from synthesis.records import Plan, Source, Step, StepResponse, TrajectoryStep


def _tool(name: str, intent: str, fields: dict[str, str], param: str = "siteName") -> ToolRecord:
    return ToolRecord(
        name=name,
        api_id="madeup",
        op_key=f"GET /{name}",
        method="GET",
        url=f"https://example.test/{name}",
        intent=intent,
        params=[ParamRecord(name=param, required=True, description="측정 지점 이름")],
        fields=[FieldRecord(name=k, path=k, description=d) for k, d in fields.items()],
    )


def _single(tool: ToolRecord, args: dict[str, Any], row: dict[str, Any]) -> tuple[Plan, list[TrajectoryStep]]:
    plan = Plan(
        shape="single", steps=[Step(tool=tool, sources={k: Source("slot", v) for k, v in args.items()})], finals=[0]
    )
    response = StepResponse(rows=1, items=[row], shown=[0], selected=True)
    prov = {k: {"kind": "slot", "value": v} for k, v in args.items()}
    return plan, [TrajectoryStep(step=1, tool=tool.name, arguments=args, provenance=prov, response=response)]


def test_the_shipped_needs_load_and_validate() -> None:
    needs = load_needs([])
    assert len(needs) >= 80 and len({n.id for n in needs}) == len(needs)
    assert all(n.wordings and set(n.wordings) <= set(PERSONAS) for n in needs)
    # every service of the sandbox catalog is asked about by some need
    families = {n.id.split(".")[0] for n in needs}
    assert {"weather", "air", "homes", "drug", "care", "business", "bus", "tour", "address"} <= families
    # a need asks by what fields mean, never by tool id
    assert not any("_get_" in a for n in needs for a in n.asks)


def test_a_bad_needs_file_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "noise.yaml"
    bad.write_text(
        "needs:\n"
        "  - id: noise.now\n"
        "    asks: [noiseDb]\n"
        "    wordings:\n"
        "      citizen: ['{entity} 지금 시끄러워?']\n"
        "  - id: noise.broken\n"
        "    asks: [noiseDb]\n"
        "    shape: chart\n"
        "    wordings:\n"
        "      citizen: ['{entity} 소음 알려 줘.']\n",
        encoding="utf-8",
    )
    with pytest.raises(NeedError, match=re.escape(f"{bad}:6") + ".*unknown shape 'chart'"):
        load_file(bad)
    bad.write_text("needs:\n  - id: noise.slot\n    asks: [noiseDb]\n    wordings:\n      citizen: ['{place} 어때?']\n")
    with pytest.raises(NeedError, match=re.escape(f"{bad}:2") + r".*unknown slot \{place\}"):
        load_file(bad)
    bad.write_text("needs:\n  - id: noise.x\n    asks: [noiseDb\n")
    with pytest.raises(NeedError, match=re.escape(f"{bad}:") + r"\d+: not YAML"):
        load_file(bad)
    bad.write_text("needs:\n  - id: noise.x\n    asks: [noiseDb]\n    wordings: {robot: ['x']}\n")
    with pytest.raises(NeedError, match=re.escape(f"{bad}:2") + ".*unknown persona 'robot'"):
        load_needs([tmp_path])


_NOISE = _tool(
    "madeup_noise_now",
    "{siteName} 측정 지점의 소음 확인",
    {"siteName": "측정 지점명", "noiseDb": "등가소음도 (dB)", "measTm": "측정 시각 (HHMM)", "siteCd": "지점 코드"},
)
_NOISE_ROW = {"siteName": "시청앞", "noiseDb": "63.5", "measTm": "1400", "siteCd": "S-0042"}


def test_a_need_added_in_a_folder_is_used_for_a_made_up_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "institution"
    folder.mkdir()
    (folder / "noise.yaml").write_text(
        "needs:\n"
        "  - id: noise.loud\n"
        "    meaning: [소음도]\n"
        "    wordings:\n"
        "      citizen: ['{entity} 지금 많이 시끄러워?']\n"
        "      civil: ['{entity} 소음 민원이 들어와서 소음도 확인 부탁드립니다.']\n"
        "      analyst: ['{entity} 소음도 측정값 정리해 주세요.']\n",
        encoding="utf-8",
    )
    plan, steps = _single(_NOISE, {"siteName": "시청앞"}, _NOISE_ROW)
    wordings = ("지금 많이 시끄러워?", "소음 민원이 들어와서", "소음도 측정값 정리해")
    monkeypatch.setenv("KOPA_NEEDS_DIRS", str(folder))
    assert any(n.id == "noise.loud" for n in default_needs())
    for seed in range(8):
        used: list[str] = []
        request, answer, facts, _ = compose(plan, steps, random.Random(seed), used=used)
        assert used == ["noise.loud"], used
        assert "'시청앞'" in request and any(w in request for w in wordings), request
        assert [f.value for f in facts] == [63.5] and "63.5" in answer, (answer, facts)
        assert check_answer(answer, [f.fact() for f in facts]).hits == 1
    monkeypatch.delenv("KOPA_NEEDS_DIRS")
    used = []
    request = compose(plan, steps, random.Random(0), used=used)[0]
    assert used == ["field meaning"] and "시끄러워" not in request, request


def test_the_fallback_asks_what_a_field_means_never_an_api_label() -> None:
    """A tool no need covers is asked by a field's plain meaning; fields filed under 코드, 메세지, 서열 or named by
    the API's identifiers never reach the request."""
    tool = _tool(
        "madeup_office_info",
        "민원실 정보 확인",
        {
            "officeNm": "민원실 이름",
            "telno": "전화번호",
            "rbf_tax_type": "직전과세유형메세지",
            "locat_order": "서열",
            "officeCd": "민원실 코드",
            "openHr": "운영 시작 시각 (HHMM)",
        },
        param="officeNm",
    )
    row = {
        "officeNm": "중앙민원실",
        "telno": "02-120-0000",
        "rbf_tax_type": "일반과세자",
        "locat_order": "3",
        "officeCd": "A12",
        "openHr": "0900",
    }
    plan, steps = _single(tool, {"officeNm": "중앙민원실"}, row)
    asked: set[str] = set()
    for seed in range(30):
        used: list[str] = []
        request, answer, facts, _ = compose(plan, steps, random.Random(seed), used=used)
        assert used == ["field meaning"], used
        api = ("메세지", "과세유형", "서열", "코드", "rbf_tax_type", "locat_order", "officeCd", "telno", "openHr")
        assert not any(label in request for label in api), request
        asked.update(w for w in ("전화번호", "운영 시작 시각") if w in request)
        assert facts and check_answer(answer, [f.fact() for f in facts]).hits == len(facts), answer
    assert asked, "the fallback never asked a field by its meaning"


def test_requests_start_from_what_people_ask() -> None:
    """The issue's examples: current weather asked as "지금 밖에 추워?" and a contraindication as "같이 먹으면 안 되는
    약", each answered with exactly the asked facts."""
    from tests.test_language import _ASPIRIN, _catalog_tool

    ncst = _catalog_tool("kma_get_ultra_srt_ncst")
    rows = [
        {"baseDate": "20261015", "baseTime": "1400", "category": c, "nx": 60, "ny": 127, "obsrValue": v}
        for c, v in (("PTY", "0"), ("REH", "55"), ("RN1", "0"), ("T1H", "12.3"), ("WSD", "2.1"))
    ]
    args = {"base_date": "20261015", "base_time": "1400", "nx": 60, "ny": 127}
    plan = Plan(shape="single", steps=[Step(tool=ncst, sources={})], finals=[0])
    prov = {k: {"kind": "clock", "value": v} for k, v in args.items()}
    response = StepResponse(rows=len(rows), items=rows, shown=list(range(len(rows))), selected=False)
    steps = [TrajectoryStep(step=1, tool=ncst.name, arguments=args, provenance=prov, response=response)]
    seen: set[str] = set()
    for seed in range(40):
        used: list[str] = []
        request, answer, facts, _ = compose(plan, steps, random.Random(seed), used=used)
        need = next(n for n in default_needs() if n.id == used[0])
        assert need.time in ("now", "any") and "table" in need.shape, need
        labels = {f.label for f in facts}
        if used[0] == "weather.cold_now":
            assert labels == {"기온"} and "12.3" in answer, (request, answer)
        seen.add(used[0])
    assert "weather.cold_now" in seen and len(seen) >= 3, seen
    taboo = _catalog_tool("mfds_get_usjnt_taboo_info_list03")
    row = {**_ASPIRIN, "MIXTURE_ITEM_NAME": "와파린정2밀리그램", "PROHBT_CONTENT": "출혈 위험 증가"}
    plan, steps = _single(taboo, {"itemName": _ASPIRIN["ITEM_NAME"]}, row)
    for seed in range(6):
        used = []
        request, answer, _, _ = compose(plan, steps, random.Random(seed), used=used)
        assert used == ["drug.not_together"] and ("먹으면 안 되는" in request or "병용" in request), request
        assert "와파린정2밀리그램" in answer, answer


def test_a_final_call_that_answers_nothing_makes_no_record(tmp_path: Path) -> None:
    """Two final steps about one place: the first answers nothing a person asks (codes only) and feeds nothing, so
    its call is pointless (issue 33's reading: a TM coordinate looked up beside a count and never used) and the
    plan makes no record; without it, the second step's question names the place."""
    codes = _tool("madeup_codes", "측정 지점 코드 확인", {"siteCd": "지점 코드", "adminCd": "행정 코드"})
    (tmp_path / "noise.yaml").write_text(
        "needs:\n  - id: noise.loud\n    meaning: [소음도]\n"
        "    wordings:\n      citizen: ['{entity} 지금 시끄러워?']\n",
        encoding="utf-8",
    )
    needs = load_needs([tmp_path])
    plan, first = _single(codes, {"siteName": "시청앞"}, {"siteCd": "S-0042", "adminCd": "1100"})
    _, second = _single(_NOISE, {"siteName": "시청앞"}, _NOISE_ROW)
    plan.steps.append(Step(tool=_NOISE, sources={"siteName": Source("slot", "시청앞")}))
    plan.finals = [0, 1]
    steps = [first[0], second[0].model_copy(update={"step": 2})]
    for seed in range(6):
        used: list[str] = []
        assert compose(plan, steps, random.Random(seed), needs=needs, used=used)[:2] == ("", "")
        alone = Plan("single", plan.steps[1:], [0])
        request = compose(alone, steps[1:], random.Random(seed), needs=needs, used=used)[0]
        assert used == ["noise.loud"] and "'시청앞'" in request, request


def test_a_drug_is_asked_whether_it_needs_a_prescription_and_a_route_what_kind_of_bus() -> None:
    """Needs for documented fields people ask about (more (tool, asked fields) pairs, never API labels):
    whether a medicine is sold without a prescription and its class, answered from the DUR item row and confirmed
    by the judge; a bus route's type asked of the route's own record, never of a stop's list of routes."""
    from tests.test_language import _ASPIRIN, _catalog_tool

    item = _catalog_tool("mfds_get_dur_prdlst_info_list03")
    row = {k: v for k, v in _ASPIRIN.items() if k in {f.name for f in item.fields}}
    row.update(ETC_OTC_NAME="일반의약품", CLASS_NAME="해열.진통.소염제")
    plan, steps = _single(item, {"itemName": _ASPIRIN["ITEM_NAME"]}, row)
    used_by: dict[str, str] = {}
    for seed in range(60):
        used: list[str] = []
        request, answer, facts, _ = compose(plan, steps, random.Random(seed), used=used)
        if used[0] in ("drug.prescription", "drug.class", "drug.class_and_prescription"):
            assert "ETC_OTC_NAME" not in request and "CLASS_NAME" not in request, request
            assert check_answer(answer, [f.fact() for f in facts]).hits == len(facts), answer
            used_by[used[0]] = answer
    assert "일반의약품" in used_by.get("drug.prescription", "일반의약품"), used_by
    assert {"drug.prescription", "drug.class"} & set(used_by), "no DUR item row was asked its class or sale"
    route_type = next(n for n in default_needs() if n.id == "bus.route_type")
    assert route_type.fits_tool(_catalog_tool("tago_get_route_info_iem"))
    assert not route_type.fits_tool(_catalog_tool("tago_get_sttn_thrgh_route_list"))  # a stop's routes: which one?
