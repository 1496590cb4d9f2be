"""The unseen family's services of other portals' conventions (tests/unseen/portals.py, and the city portal of
docs/cityopen.json) registered, verified by execution and synthesised over, in process: what
tests/test_portal_unseen.py reads, convention by convention."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from execution.result import CallResult
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, LinkRecord, RegistrationMeta, ToolRecord
from graph.registry import register
from graph.store import all_apis, all_links
from synthesis.engine import synthesize
from tests.unseen import harness, portals
from verification.runs import execute_run, new_run

Schema = dict[str, Any]


def _props(names: dict[str, str]) -> Schema:
    return {"type": "object", "properties": {k: {"type": "string", "description": d} for k, d in names.items()}}


def _op(op_id: str, summary: str, params: list[Schema], schema: Schema, media: str = "application/json") -> Schema:
    ok = {"description": "ok", "content": {media: {"schema": schema}}}
    return {"get": {"operationId": op_id, "summary": summary, "parameters": params, "responses": {"200": ok}}}


def _q(name: str, description: str, *, required: bool = False, kind: str = "string", example: Any = None) -> Schema:
    schema: Schema = {"type": kind}
    if example is not None:
        schema["example"] = example
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


def _doc(title: str, host: str, paths: dict[str, Schema], key: str) -> Schema:
    return {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "servers": [{"url": f"https://{host}"}],
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": key}}},
        "security": [{"key": []}],
        "paths": paths,
    }


def _xml_body(row: Schema) -> Schema:
    header = _props({"resultCode": "결과코드", "resultMsg": "결과메시지"})
    body = {
        "type": "object",
        "properties": {
            "items": {"type": "object", "properties": {"item": {"type": "array", "items": row}}},
            "numOfRows": {"type": "integer"},
            "pageNo": {"type": "integer"},
            "totalCount": {"type": "integer"},
        },
    }
    return {
        "type": "object",
        "properties": {"response": {"type": "object", "properties": {"header": header, "body": body}}},
    }


def _rows_under(name: str, row: Schema, **others: Schema) -> Schema:
    """An answer whose rows are the array `name`, beside `others` (counts, tokens, flags)."""
    return {"type": "object", "properties": {**others, name: {"type": "array", "items": row}}}


def _numbered(size: int) -> list[Schema]:
    """Page number + page size parameters, as data.go.kr-family services document them."""
    return [
        _q("pageNo", "페이지 번호", kind="integer", example=1),
        _q("numOfRows", "한 페이지 결과 수", kind="integer", example=size),
    ]


def museum_doc() -> Schema:
    row = _props({"exhbId": "전시 ID", "exhbNm": "전시명", "sidoNm": "시도명", "opnDe": "개막일"})
    detail = _props({"exhbId": "전시 ID", "exhbNm": "전시명", "admsFee": "관람료(원)", "rstDe": "휴관일"})
    paging = _numbered(5)
    return _doc(
        "전시 정보 (XML)",
        "museum.unseen.example",
        {
            "/exhibit/v1/list": _op(
                "exhibitList",
                "전시 목록",
                [*paging, _q("sidoNm", "시도명 (예: 서울)")],
                _xml_body(row),
                "application/xml",
            ),
            "/exhibit/v1/detail": _op(
                "exhibitDetail",
                "전시 상세",
                [_q("exhbId", "전시 ID (예: EX0001)", required=True)],
                _xml_body(detail),
                "application/xml",
            ),
        },
        "serviceKey",
    )


def offset_doc() -> Schema:
    row = _props({"jurirno": "법인등록번호", "corpNm": "법인명", "indutyNm": "업종명", "fndnDt": "설립일"})
    counts = {n: {"type": "integer"} for n in ("totalCount", "offset", "limit")}
    listing = _rows_under("items", row, **counts)
    detail = _rows_under("items", _props({"jurirno": "법인등록번호", "corpNm": "법인명", "empCnt": "임직원 수"}))
    paging = [
        _q("offset", "건너뛸 행 수", kind="integer", example=0),
        _q("limit", "최대 행 수", kind="integer", example=5),
    ]
    return _doc(
        "법인 목록 (offset)",
        "corp.offset.unseen.example",
        {
            "/v1/corps": _op(
                "corpList",
                "법인 목록",
                [*paging, _q("corpNm", "법인명 (예: 다온건설)"), _q("indutyNm", "업종명 (예: 건설업)")],
                listing,
            ),
            "/v1/corp": _op("corpInfo", "법인 정보", [_q("jurirno", "법인등록번호 13자리", required=True)], detail),
        },
        "apiKey",
    )


def cursor_doc() -> Schema:
    row = _props({"stationId": "정류소 ID", "stationNm": "정류소명"})
    listing = _rows_under(
        "data",
        row,
        cursor={"type": "string", "nullable": True, "description": "이 페이지를 요청한 커서"},
        nextCursor={"type": "string", "nullable": True, "description": "다음 페이지 커서"},
    )
    fields = {"stationId": "정류소 ID", "stationNm": "정류소명", "arsId": "정류소 번호", "routeCnt": "경유 노선 수"}
    detail = _rows_under("data", _props({**fields, "stationTp": "정류소 유형"}))
    return _doc(
        "정류소 (cursor)",
        "bus.unseen.example",
        {
            "/v1/stations": _op("stationList", "정류소 목록", [_q("cursor", "이전 응답의 nextCursor")], listing),
            "/v1/station": _op(
                "stationInfo", "정류소 정보", [_q("stationId", "정류소 ID (예: DT_0012)", required=True)], detail
            ),
        },
        "apiKey",
    )


def has_next_doc() -> Schema:
    row = _props({"admCd": "행정동코드", "admNm": "행정구역명", "lvl": "단계"})
    flag = {"type": "boolean", "description": "다음 페이지 여부"}
    listing = _rows_under("content", row, page={"type": "integer"}, hasNext=flag)
    detail = _rows_under("content", _props({"admCd": "행정동코드", "popltn": "인구", "lvl": "단계"}))
    paging = [
        _q("page", "페이지 번호", kind="integer", example=1),
        _q("size", "페이지 크기", kind="integer", example=5),
    ]
    return _doc(
        "행정구역 (hasNext)",
        "unit.unseen.example",
        {
            "/v1/units": _op("unitList", "행정구역 목록", paging, listing),
            "/v1/unit": _op("unitInfo", "행정구역 인구", [_q("admCd", "행정동코드 10자리", required=True)], detail),
        },
        "serviceKey",
    )


def kosis_doc() -> Schema:
    regions = {"type": "array", "items": _props({"C1": "분류값 ID", "C1_NM": "분류값 명", "LVL": "분류 단계"})}
    data = {
        "type": "array",
        "items": _props({"C1": "분류값 ID", "C1_NM": "분류값 명", "PRD_DE": "수록시점", "DT": "수치값"}),
    }
    return _doc(
        "통계 (KOSIS)",
        "kosis.unseen.example",
        {
            "/openapi/regions.do": _op("regionList", "분류값 목록", [], regions),
            "/openapi/statisticsData.do": _op(
                "statisticsData", "통계자료", [_q("objL1", "분류값 ID 1 (예: 11)", required=True)], data
            ),
        },
        "apiKey",
    )


def highway_doc() -> Schema:
    row = _props({"svarCd": "휴게소 코드", "svarNm": "휴게소명", "routeNm": "노선명"})

    def envelope(item: Schema) -> Schema:
        props = {"code": {"type": "string"}, "message": {"type": "string"}, "count": {"type": "integer"}}
        return {"type": "object", "properties": {**props, "list": {"type": "array", "items": item}}}

    detail = _props({"svarCd": "휴게소 코드", "svarNm": "휴게소명", "oilCompany": "정유사", "parking": "주차면수"})
    paging = _numbered(10)
    return _doc(
        "휴게소 (도로공사)",
        "data.road.unseen.example",
        {
            "/openapi/restinfo/restAreaList": _op(
                "restAreaList", "휴게소 목록", [*paging, _q("svarNm", "휴게소명 (예: 속초휴게소)")], envelope(row)
            ),
            "/openapi/restinfo/restAreaDetail": _op(
                "restAreaDetail",
                "휴게소 상세",
                [_q("svarCd", "휴게소 코드 6자리 (예: 200010)", required=True)],
                envelope(detail),
            ),
        },
        "key",
    )


def documents() -> dict[str, Schema]:
    return {
        "cityopen.json": harness.documents()["cityopen.json"],
        "museum": museum_doc(),
        "offset": offset_doc(),
        "cursor": cursor_doc(),
        "has_next": has_next_doc(),
        "kosis": kosis_doc(),
        "highway": highway_doc(),
    }


@dataclass
class PortalRun:
    """What registration, verification and synthesis made of the portal services."""

    reports: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    tools: list[ToolRecord] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, CallResult] = field(default_factory=dict)
    synthesis: dict[str, Any] = field(default_factory=dict)

    def tool(self, path: str) -> ToolRecord:
        return next(t for t in self.tools if t.url.endswith(path))


def settings_for(graph_file: Path) -> Settings:
    base = harness.unseen_settings(Settings(store="embedded", embedded_path=graph_file))
    overrides = ",".join(f"{h}=http://{harness.LOCAL}" for h in portals.HOSTS)
    return base.model_copy(
        update={
            "upstream_overrides": f"{base.upstream_overrides},{overrides}",
            "allowed_hosts": [*base.allowed_hosts, *portals.HOSTS],
        }
    )


def run_portals(graph_file: Path, probes: dict[str, tuple[str, dict[str, Any]]], count: int = 40) -> PortalRun:
    """Register every portal document, call the `probes` (label -> (path ending, arguments)), verify, then
    synthesise `count` chains over the verified graph."""
    settings = settings_for(graph_file)
    store = EmbeddedStore(graph_file)
    out = PortalRun()
    economy = MemoryEconomy()
    try:
        for name, doc in documents().items():
            reg = register(store, settings, doc, RegistrationMeta(auth=AuthConfig(secret=harness.SECRET)))
            out.reports[name] = json.loads(json.dumps(reg.understood, ensure_ascii=False))
        out.tools = store.all_tools()
        apis = {a.id: a for a in all_apis(store)}

        async def calls() -> None:
            ex = Executor(settings, economy, apis, transport=harness.transport())
            try:
                for label, (path, args) in probes.items():
                    out.calls[label] = await ex.call(out.tool(path), args)
            finally:
                await ex.aclose()

        asyncio.run(calls())
        run = asyncio.run(execute_run(store, settings, new_run(), transport=harness.transport(), economy=economy))
        assert run.status == "completed", run
        out.links = all_links(store)

        async def synth() -> Any:
            ex = Executor(settings, economy, apis, transport=harness.transport())
            try:
                return await synthesize(store, settings, ex, count=count, shapes=("single", "chain"), extras={})
            finally:
                await ex.aclose()

        made: Any = asyncio.run(synth())
        figures = made if isinstance(made, dict) else vars(made)  # a dict, or the SynthesisResult that replaces it
        out.records = [r.to_json() for r in figures["records"]]
        out.synthesis = {k: v for k, v in figures.items() if k != "records"}
    finally:
        store.close()
    return out
