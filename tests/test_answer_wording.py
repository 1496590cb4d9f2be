"""Answer wording a reader checks against the rows (docs/data_reading.md, "Second reading"): a bus arrival in
minutes and seconds with the bus named, an irrelevance reply that answers or declines, a forecast window that the
shown rows cover."""

from __future__ import annotations

import random
from typing import Any

from synthesis.facts import check_answer
from synthesis.language import compose
from tests.test_language import _single


def _arrival(route: str, seconds: int, left: int) -> dict[str, Any]:
    return {
        "arrprevstationcnt": left,
        "arrtime": seconds,
        "nodeid": "DJB8001793",
        "nodenm": "산직역",
        "routeid": "DJB30300004",
        "routeno": route,
        "routetp": "간선버스",
        "vehicletp": "일반차량",
    }


def test_a_bus_arrival_is_said_in_minutes_and_names_the_bus() -> None:
    """`도착 예정 769초입니다.` gave raw seconds and no bus: a field documented in seconds (도착예상시간 (초)) is said
    in minutes and seconds, and the answer names the route (노선번호) the row is about; the judge reads the two
    units as the one figure."""
    rows = [_arrival("송정7", 769, 8), _arrival("103", 1140, 12)]
    plan, steps = _single(
        "tago_get_sttn_accto_arvl_prearnge_info_list", {"cityCode": "25", "nodeId": "DJB8001793"}, rows, True
    )
    for seed in range(8):
        _, answer, facts, _ = compose(plan, steps, random.Random(seed))
        assert "769" not in answer and ("12분 49초" in answer or "8정류장" in answer), answer
        assert "노선 번호 송정7" in answer, answer
        check = check_answer(answer, [f.fact() for f in facts])
        assert check.hits == check.total, (answer, check)


def test_an_irrelevance_reply_answers_what_it_can_and_declines_the_rest() -> None:
    """`…도구를 쓰지 않고 답변드려요.` followed by nothing, even for `123 곱하기 456은 얼마야?`: a request the
    assistant can answer itself gets its answer (the product worked out), one it should decline is declined with
    what the tools cover; never a promise of an answer that does not follow."""
    from synthesis.special_turns import _IRRELEVANT, irrelevance_answer, irrelevant_request

    tools = [_tool_named("tago_get_cty_code_list"), _tool_named("kma_get_vilage_fcst")]
    for seed in range(40):
        request = irrelevant_request(random.Random(seed))
        answer = irrelevance_answer(tools, random.Random(seed), request)
        assert answer and "답변드려요" not in answer, answer
        if dict(_IRRELEVANT)[request] is None:
            assert "수 없어요" in answer and "버스 정보가 제공되는 도시" in answer, answer
    assert "56,088" in irrelevance_answer(tools, random.Random(0), "123 곱하기 456은 얼마야?")
    assert 123 * 456 == 56088


def _tool_named(name: str) -> Any:
    from tests.test_language import _catalog_tool

    return _catalog_tool(name)


def _forecast(category: str, date: str, hour: int, value: str) -> dict[str, Any]:
    return {"baseDate": "20261222", "baseTime": "2030", "category": category, "fcstDate": date,
            "fcstTime": f"{hour:02d}00", "fcstValue": value, "nx": 60, "ny": 127}  # fmt: skip


def test_a_forecast_window_is_the_hours_its_rows_hold() -> None:
    """`9시~14시 사이 하늘 구름많음` from SKY rows at 9 and 10시 only, and `0시~23시` from a table running from
    21시 to 2시 the next day: each category is stated over exactly the hours whose rows the shown table holds for
    it, a window across days names each end's day, and the request asks over the same hours."""
    from synthesis.row_facts import table_facts, windowed

    rows = [_forecast("T1H", "20261222", h, str(10 + h)) for h in range(9, 15)]
    rows += [_forecast("SKY", "20261222", h, "3") for h in (9, 10)]
    facts, _ = table_facts(rows)
    shared, union, phrases = windowed(rows, facts)
    assert (shared, union) == ("", "9시~14시"), (shared, union)
    assert any(p.startswith("9시~10시 하늘") for p in phrases) and any(p.startswith("9시~14시") for p in phrases)
    late = [_forecast("SKY", d, h, "1") for d, h in (("20261222", 21), ("20261222", 23), ("20261223", 0))]
    late += [_forecast("SKY", "20261223", h, "4") for h in (1, 2)]
    facts, span = table_facts(late)
    assert span == "22일 21시~23일 2시", span
    assert windowed(late, facts)[0] == "22일 21시~23일 2시"
    rain = [_forecast("PTY", d, h, "0") for d, h in (("20261222", 23), ("20261223", 0))]
    facts, _ = table_facts(late[:2] + rain)
    assert windowed(late[:2] + rain, facts)[2] == ["22일 21시~23시 하늘 맑음", "22일 23시~23일 0시 강수 형태 없음"]
