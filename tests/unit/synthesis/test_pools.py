"""The user-value pools synthesis draws places and entities from (synthesis/pools.py): a search's names come from its
own rows, and rows in a 시군구 since reorganised (인천 중구, 동구, 서구) keep an area of their own, so every district of
the world is drawn."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from core.settings import Settings
from graph.models import ParamRecord, ToolRecord
from synthesis.pools import area_first, fill_pools
from synthesis.routes import row_area


def _tool(name: str, param: str) -> ToolRecord:
    params = [ParamRecord(name=param, required=True, description="기관명")]
    return ToolRecord(name=name, api_id="a", op_key=f"GET /{name}", method="GET", url=f"http://t/{name}", params=params)


class _Graph:
    """What fill_pools reads of a verified graph: its tools, links into parameters, roles and settings."""

    def __init__(self, tools: list[ToolRecord]) -> None:
        self.tools = {t.name: t for t in tools}
        self.into: dict[tuple[str, str], list[Any]] = {}
        self.settings = Settings()
        self.pools: dict[tuple[str, str], list[Any]] = {}
        self.pool_areas: dict[tuple[str, str], list[str]] = {}

    def role(self, tool: ToolRecord, p: ParamRecord) -> str:
        return "user"


def test_a_former_incheon_district_is_an_area_of_its_own() -> None:
    assert row_area({"addr": "인천광역시 중구 운서동 2850"}) == "인천광역시 중구"
    assert row_area({"addr": "인천광역시 서구 청라동 12"}) == "인천광역시 서구"
    assert row_area({"addr": "서울특별시 중구 명동2가 3"}) == "서울특별시 중구"
    assert row_area({"sidoName": "인천", "sggName": "동구"}) == "인천광역시 동구"


def test_a_search_draws_its_own_rows_names_before_another_services() -> None:
    pharmacy, hospital = _tool("pharmacies", "yadmNm"), _tool("hospitals", "yadmNm")
    graph = _Graph([pharmacy, hospital])
    rows = {
        "pharmacies": [{"yadmNm": "운서온누리약국", "addr": "인천광역시 중구 운서동 1"}],
        "hospitals": [{"yadmNm": "연희내과의원", "addr": "서울특별시 서대문구 연희동 2"}],
    }
    fill_pools(graph, rows)  # type: ignore[arg-type]
    assert graph.pools[("pharmacies", "yadmNm")] == ["운서온누리약국"]  # a hospital's name finds no pharmacy
    assert graph.pool_areas[("pharmacies", "yadmNm")] == ["인천광역시 중구"]
    assert graph.pools[("hospitals", "yadmNm")] == ["연희내과의원"]
    # a tool whose own rows never state the field still gets another tool's values of that name
    other = _tool("pharmacy_detail", "yadmNm")
    graph = _Graph([other])
    fill_pools(graph, rows)  # type: ignore[arg-type]
    assert sorted(graph.pools[("pharmacy_detail", "yadmNm")]) == ["연희내과의원", "운서온누리약국"]


def test_every_district_with_rows_is_drawn_as_often_as_any_other() -> None:
    values = [(f"동{i}", "서울특별시 종로구") for i in range(30)] + [("운서동", "인천광역시 중구")]
    drawn = Counter(area_first(values, random.Random(k)) == "운서동" for k in range(400))
    assert 150 < drawn[True] < 250  # the one place of a district is drawn half the time, not 1 time in 31
