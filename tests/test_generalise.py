"""The engine on APIs it has never seen. Envelopes learnt from responses, every tool reached from its
document, evidence that proves a link (isolation, control calls), candidates from meaning, readable tool names.
Each test failed before the change it covers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
from fastapi import FastAPI, Request

from core.settings import Settings
from execution.judge import judge
from execution.limits import MemoryEconomy
from graph import envelopes, meaning
from graph.candidates import derive_candidates
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_document
from graph.registry import register
from graph.store import all_links
from tests.unseen.harness import SECRET, documents, run_unseen, transport, unseen_settings
from verification.runs import RunProgress, execute_run, new_run, run_progress


def _xml(text: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>{text}'.encode()


# ---------------------------------------------------------------- 1. envelopes learnt, not listed


def test_items_path_is_read_off_responses_of_every_shape() -> None:
    row = {"a": "1", "b": "x"}
    shapes: list[tuple[Any, str]] = [
        ({"result": {"resultCode": "00", "item": [row, row]}}, "result.item[]"),
        ({"response": {"item": [row]}}, "response.item[]"),
        ({"response": {"item": row}}, "response.item"),
        ([row, row], "[]"),
        ({"page": 1, "perPage": 2, "data": [row]}, "data[]"),
        ({"result": {"meta": {"x": "1"}, "data": [row]}}, "result.data[]"),
        ({"header": {"resultCode": "00"}, "body": {"items": [row]}}, "body.items[]"),
        ({"header": {}, "body": {"items": [{"item": row}, {"item": row}]}}, "body.items[].item"),
    ]
    for doc, path in shapes:
        found = envelopes.detect_items(doc)
        assert found is not None and found[0] == path, (doc, found)
        assert found[1][0] == row
    assert envelopes.detect_items({"response": ""}) is None
    assert envelopes.detect_items({"result": {"resultCode": "00", "resultMsg": "ok"}}) is None


def test_judge_uses_the_learnt_path_and_says_which() -> None:
    body = _xml(
        "<result><resultCode>00</resultCode><item><crno>1</crno><corpNm>가</corpNm></item>"
        "<item><crno>2</crno><corpNm>나</corpNm></item></result>"
    )
    v = judge(200, body, "application/xml", envelope="plain", items_path="", declared_fields=set())
    assert v.outcome == "ok" and len(v.items) == 2 and v.items_path == "result.item[]"
    # the document declares another path: the response's own wins, with evidence of it
    v = judge(
        200,
        body,
        "application/xml",
        envelope="plain",
        items_path="response.body.items.item[]",
        declared_fields={"crno"},
    )
    assert v.outcome == "ok" and v.items_path == "result.item[]"
    # no response schema at all is not "hollow": a bare JSON list is rows
    v = judge(
        200,
        orjson.dumps([{"crno": "1", "chgDt": "20200101"}]),
        "application/json",
        envelope="plain",
        items_path="",
        declared_fields=set(),
    )
    assert v.outcome == "ok" and v.items_path == "[]"


def test_headers_of_unknown_envelopes_are_read() -> None:
    refused = _xml("<result><resultCode>11</resultCode><resultMsg>검색조건 중 하나는 필수입니다</resultMsg></result>")
    v = judge(200, refused, "application/xml", envelope="plain", items_path="result.item[]", declared_fields={"a"})
    assert v.outcome == "invalid" and v.code == "11"
    nodata = orjson.dumps({"result": {"error": "No search data"}})
    assert (
        judge(
            200, nodata, "application/json", envelope="plain", items_path="result.data[]", declared_fields={"a"}
        ).outcome
        == "empty"
    )
    badkey = orjson.dumps({"result": {"error": "invalid key"}})
    assert (
        judge(
            200, badkey, "application/json", envelope="plain", items_path="result.data[]", declared_fields={"a"}
        ).outcome
        == "transient"
    )


def test_documents_with_nested_envelopes_expose_their_fields() -> None:
    tools = {t.name: t for d in documents().values() for t in parse_document(d)[1]}
    assert tools["admcode_list_adm_codes"].items_path == "response.item[]"
    assert {f.name for f in tools["corpinfo_search_corp"].fields} >= {"crno", "bzno", "fndnDt", "admCd"}
    assert tools["khoa_list_tide_stations"].items_path == "result.data[]"


# ---------------------------------------------------------------- 6. names


def test_tool_names_are_readable_when_the_title_is_korean() -> None:
    names = sorted(t.name for d in documents().values() for t in parse_document(d)[1])
    assert not any(n.startswith("op_") for n in names), names
    assert "corpinfo_search_corp" in names and "khoa_get_tide_level" in names
    again = sorted(t.name for d in documents().values() for t in parse_document(d)[1])
    assert names == again


# ---------------------------------------------------------------- 4. candidates from meaning


def test_meaning_keys() -> None:
    assert "행정동코드" in meaning.phrases("admCd", "행정동코드 10자리 (시군구 또는 읍면동)")
    assert "행정동코드" in meaning.phrases("행정동코드", "사업장 소재지 행정동코드")
    assert "사업자등록번호" in meaning.phrases("cond[사업자등록번호::EQ]", "검색조건: 사업자등록번호가 같은 사업장")
    assert "시도명" in meaning.phrases("p1", "시도명 (예: 강원특별자치도). 없으면 시도 목록")
    assert meaning.common_prefix(["DT_0012", "DT_0018", "DT_0001"]) == "DT_"
    assert meaning.common_prefix(["0012", "0018"]) is None
    assert meaning.date_format("설립일자(YYYY-MM-DD)", None, None, []) == "YYYY-MM-DD"
    assert meaning.date_format("기준일자", "yyyymmdd", None, []) == "YYYYMMDD"


def test_candidates_from_descriptions_prefixes_and_dates() -> None:
    tools = [t for d in documents().values() for t in parse_document(d)[1]]
    samples = {
        "khoa_list_tide_stations": [
            {"obs_post_id": f"DT_00{i}", "obs_post_name": "x", "obs_lat": "35.1", "obs_lon": "129.1"}
            for i in (12, 18, 25)
        ],
        "corpinfo_search_corp": [
            {
                "crno": "1101111234567",
                "bzno": "1234567890",
                "corpNm": "(주)가람정밀",
                "fndnDt": "2011-03-31",
                "hdofcAddr": "x",
                "admCd": "5101008300",
            }
        ],
        "odcloud_get_pension_workplaces": [
            {"사업장명": "x", "사업자등록번호": "1234567890", "가입자수": "3", "행정동코드": "5101008300"}
        ],
        "admcode_list_adm_codes": [
            {"admCd": "5100000000", "admNm": "강원특별자치도", "lvl": "시도", "sidoNm": "강원특별자치도", "sggNm": ""}
        ],
    }
    links = {
        (lk.source_field, lk.target_tool, lk.target_param.split(":", 1)[1]): lk.transform
        for lk in derive_candidates(tools, samples)
    }
    assert links[("obs_post_id", "nifs_get_sea_temperature", "stnCd")] == {"kind": "slice", "start": 3}
    assert ("obs_post_id", "khoa_get_tide_level", "ObsCode") in links
    assert links[("fndnDt", "corpinfo_get_corp_history", "baseDt")] == {
        "kind": "date",
        "src": "YYYY-MM-DD",
        "dst": "YYYYMMDD",
    }
    assert ("행정동코드", "admcode_get_population", "admCd") in links
    assert ("사업자등록번호", "corpinfo_search_corp", "bzno") in links
    assert ("sidoNm", "admcode_list_adm_codes", "p1") in links  # drill-down into a narrowing filter ("없으면")
    assert ("sggNm", "admcode_list_adm_codes", "p2") not in links  # "p1과 함께": no narrowing of its own


# ---------------------------------------------------------------- 2, 3. reach every tool; evidence


def _run(tmp_path: Path) -> tuple[EmbeddedStore, RunProgress]:
    f = tmp_path / "g.sqlite3"
    settings = unseen_settings(Settings(store="embedded", embedded_path=f))
    store = EmbeddedStore(f)
    for doc in documents().values():
        register(store, settings, doc, RegistrationMeta(auth=AuthConfig(secret=SECRET)))
    run = asyncio.run(execute_run(store, settings, new_run(), transport=transport(), economy=MemoryEconomy()))
    return store, run_progress(store, run)


def test_every_unseen_tool_is_reached_with_isolated_evidence(tmp_path: Path) -> None:
    store, progress = _run(tmp_path)
    try:
        assert progress["unreachable"] == [], progress["unreachable"]
        links = {(lk.source_tool, lk.source_field, lk.target_tool, lk.target_param): lk for lk in all_links(store)}
        # an optional filter that does work: verified, with its control call in the evidence
        bz = links[("odcloud_get_pension_workplaces", "사업자등록번호", "corpinfo_search_corp", "query:bzno")]
        assert bz.status == "verified" and bz.evidence["control"]["same_answer"] is False
        assert "digits10" in bz.reason  # the verdict states which kinds of values worked
        for lk in links.values():  # isolation: no other filter of the OR-combined search in a verification call
            if lk.target_tool == "corpinfo_search_corp":
                other = {"corpNm", "bzno"} - {lk.target_param.split(":", 1)[1]}
                assert not any(k in other for e in lk.evidence["examples"] for k in e["input"]), lk.evidence
        # population works for 시군구/읍면동 rows only: values were drawn across the levels sampled
        pop = links[("admcode_list_adm_codes", "admCd", "admcode_get_population", "query:admCd")]
        assert pop.status == "verified", pop.reason
    finally:
        store.close()


def _ignoring_app() -> Any:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    rows = [{"code": f"A{i}", "name": f"n{i}", "kind": "x" if i % 2 else "y"} for i in range(6)]

    @app.get("/svc/codes")
    def codes() -> dict[str, Any]:
        return {"result": {"data": rows}}

    @app.get("/svc/search")
    def search(request: Request) -> dict[str, Any]:
        q = request.query_params
        kind = q.get("kind")  # honoured
        hits = [r for r in rows if not kind or r["kind"] == kind]
        return {"result": {"data": hits}}  # "code" is documented but ignored

    return app


def test_a_filter_the_provider_ignores_is_vacuous_not_verified(tmp_path: Path) -> None:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "무시 필터", "version": "1"},
        "servers": [{"url": "https://ignore.unseen.example/svc"}],
        "paths": {
            "/codes": {
                "get": {
                    "operationId": "listCodes",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "result": {
                                                "type": "object",
                                                "properties": {
                                                    "data": {
                                                        "type": "array",
                                                        "items": {
                                                            "type": "object",
                                                            "properties": {
                                                                "code": {"type": "string", "description": "코드"},
                                                                "name": {"type": "string"},
                                                                "kind": {"type": "string", "description": "구분"},
                                                            },
                                                        },
                                                    }
                                                },
                                            }
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            },
            "/search": {
                "get": {
                    "operationId": "searchThings",
                    "parameters": [
                        {
                            "name": "code",
                            "in": "query",
                            "required": False,
                            "description": "코드",
                            "schema": {"type": "string"},
                        },
                        {
                            "name": "kind",
                            "in": "query",
                            "required": False,
                            "description": "구분",
                            "schema": {"type": "string", "enum": ["x", "y"]},
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    links = _verify_on(tmp_path, doc, _ignoring_app())
    code = links[("code", "query:code")]
    assert code.status == "refuted" and code.reason.startswith("vacuous"), code.reason
    kind = links[("kind", "query:kind")]
    assert kind.status == "verified", kind.reason
    assert kind.evidence["control"]["same_answer"] is False


def _verify_on(tmp_path: Path, doc: dict[str, Any], app: Any) -> dict[tuple[str, str], Any]:
    """Register `doc` (served by `app` at ignore.unseen.example), verify in process; links by (field, param)."""
    f = tmp_path / "g.sqlite3"
    base = Settings(
        store="embedded",
        embedded_path=f,
        upstream_overrides="ignore.unseen.example=http://ignore.local",
        allowed_hosts=["ignore.unseen.example", "ignore.local"],
    )
    store = EmbeddedStore(f)
    try:
        register(store, base, doc, RegistrationMeta())
        run = asyncio.run(
            execute_run(store, base, new_run(), transport=httpx.ASGITransport(app=app), economy=MemoryEconomy())
        )
        assert run.status == "completed", run.message
        return {(lk.source_field, lk.target_param): lk for lk in all_links(store)}
    finally:
        store.close()


def _required_app() -> Any:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    rows = [{"code": f"A{i}", "name": f"n{i}"} for i in range(6)]

    @app.get("/svc/codes")
    def codes() -> dict[str, Any]:
        return {"result": {"data": rows}}

    @app.get("/svc/stats")
    def stats(request: Request) -> dict[str, Any]:
        if not request.query_params.get("areaCode"):
            return {"result": {"resultCode": "10", "resultMsg": "areaCode is required"}}
        return {"result": {"data": [{"year": "2025", "total": "17"}]}}  # the required code is never read

    @app.get("/svc/detail")
    def detail(request: Request) -> dict[str, Any]:
        code = request.query_params.get("itemCode", "")
        return {"result": {"data": [{"label": f"item {code}", "size": str(len(code) * 7)}]}}

    return app


def test_a_required_parameter_the_provider_ignores_is_vacuous_not_verified(tmp_path: Path) -> None:
    """A required parameter cannot be dropped for a control, but a value of the same shape can be sent: a provider
    that answers the same whatever the code proves no link into it; one whose answer changes does."""
    row = {
        "type": "object",
        "properties": {"code": {"type": "string", "description": "지역 코드"}, "name": {"type": "string"}},
    }
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "필수 무시", "version": "1"},
        "servers": [{"url": "https://ignore.unseen.example/svc"}],
        "paths": {
            "/codes": {
                "get": {
                    "operationId": "listAreaCodes",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "result": {
                                                "type": "object",
                                                "properties": {"data": {"type": "array", "items": row}},
                                            }
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            },
            "/stats": {
                "get": {
                    "operationId": "getAreaStats",
                    "parameters": [
                        {
                            "name": "areaCode",
                            "in": "query",
                            "required": True,
                            "description": "지역 코드",
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/detail": {
                "get": {
                    "operationId": "getItemDetail",
                    "parameters": [
                        {
                            "name": "itemCode",
                            "in": "query",
                            "required": True,
                            "description": "지역 코드",
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    links = _verify_on(tmp_path, doc, _required_app())
    ignored = links[("code", "query:areaCode")]
    assert ignored.status == "refuted" and ignored.reason.startswith("vacuous"), ignored.reason
    assert ignored.evidence["control"]["kind"] == "other_value" and ignored.evidence["control"]["same_answer"]
    honoured = links[("code", "query:itemCode")]
    assert honoured.status == "verified", honoured.reason
    assert honoured.evidence["control"]["kind"] in ("other_value", "values_differ")


def test_unseen_family_score(tmp_path: Path) -> None:
    s = run_unseen(tmp_path / "u.sqlite3").summary()
    assert s["recall"] >= 0.9 and s["unreachable_tools"] == 0, s
    # D05 (obs_post_id -> stnCd as is) shares its scoring key with U10 (the same pair with the prefix strip): the
    # identity link is never proposed (it cannot fit ^[0-9]{4}$), only the harness cannot tell the two apart
    assert set(s["decoys_verified"]) <= {"D05"}, s


# ---------------------------------------------------------------- 5. runs that tell the truth


def test_a_budget_limited_run_counts_the_links_it_left_as_candidates(tmp_path: Path) -> None:
    f = tmp_path / "g.sqlite3"
    settings = unseen_settings(Settings(store="embedded", embedded_path=f))
    store = EmbeddedStore(f)
    try:
        for doc in documents().values():
            register(store, settings, doc, RegistrationMeta(auth=AuthConfig(secret=SECRET)))
        run = asyncio.run(
            execute_run(store, settings, new_run(budget=10), transport=transport(), economy=MemoryEconomy())
        )
        progress = run_progress(store, run)
        assert run.status == "paused"
        left = sum(1 for lk in all_links(store) if lk.status == "candidate")
        assert left > 0 and progress["candidate"] == left and progress["pending"] == left, progress
    finally:
        store.close()
