"""A provider's quirks have one home, `graph.providers`: a made-up response-format switch (`respType`) and a made-up
result-code convention (`rsltCd`/`rsltMsg`, success `S00`, no data `E20`) added there at test time, as a contributor
adds one entry, are read by every engine that asks: the registry's format switch, the sampling filters, the
parameters never linked and the view's filters for the first; where a header is found, what its code says and
whether a refusal asks for a filter for the second. Each check first shows the names read as data without the entry,
so none passes by accident."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from execution import sampling
from execution.judge import code_verdict, judge
from execution.result import Outcome
from execution.view import narrowing
from graph import envelopes, providers
from graph.link_scoring import NON_LINKABLE
from graph.models import ToolRecord
from graph.openapi import parse_document

ROW = {"type": "object", "properties": {"stationName": {"type": "string"}, "pm10": {"type": "string"}}}
DOC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Quirk Air", "version": "1"},
    "servers": [{"url": "https://quirk.unseen.example/air"}],
    "paths": {
        "/stations": {
            "get": {
                "operationId": "getStations",
                "parameters": [
                    {"name": "respType", "in": "query", "schema": {"type": "string", "enum": ["xml", "json"]}},
                    {"name": "stationName", "in": "query", "description": "측정소 이름", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "array", "items": ROW}}},
                    }
                },
            }
        }
    },
}


def _tool() -> ToolRecord:
    return parse_document(DOC)[1][0]


def _as_shown(tool: ToolRecord) -> ToolRecord:
    """The tool with its format switch left in the schema a model sees, as a registry before the entry showed it."""
    props = {p.name: {"type": p.type} for p in tool.params}
    return tool.model_copy(update={"json_schema": {"type": "object", "properties": props}, "format_param": None})


def _format_read() -> dict[str, Any]:
    tool = _tool()
    return {
        "format switch": tool.format_param,
        "shown to a model": sorted(tool.json_schema.get("properties") or {}),
        "sampling filters": [p.name for p in sampling.filters(_as_shown(tool))],
        "never linked": "respType" in NON_LINKABLE and "RESPTYPE" in NON_LINKABLE,
        "view filters": narrowing(_as_shown(tool))[0],
    }


def test_without_the_entry_a_format_switch_reads_as_a_filter() -> None:
    assert _format_read() == {
        "format switch": None,
        "shown to a model": ["respType", "stationName"],
        "sampling filters": ["respType", "stationName"],
        "never linked": False,
        "view filters": ["respType", "stationName"],
    }


def test_one_format_entry_makes_every_engine_treat_it_as_presentation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "FORMAT_NAMES", (*providers.FORMAT_NAMES, "respType"))
    assert _format_read() == {
        "format switch": "respType=json",  # always sent, hidden from the model
        "shown to a model": ["stationName"],
        "sampling filters": ["stationName"],
        "never linked": True,
        "view filters": ["stationName"],
    }


def test_the_portals_presentation_names_keep_their_readings() -> None:
    """The names the sampler, the link scorer and the view each listed before they had one home, in any case."""
    for name in ("dataType", "_type", "returnType", "resultType", "type", "ResultType", "Type", "MobileOS"):
        assert providers.presentation(name) and name in NON_LINKABLE
    for name in ("arrange", "ver", "hstryYn", "firstSort", "addInfoYn", "lDongListYn", "callback", "format"):
        assert providers.presentation(name) and name in NON_LINKABLE
    assert "dataTerm" in NON_LINKABLE and not providers.presentation("dataTerm")  # it filters, by a fixed vocabulary
    assert all(providers.key_name(n) for n in ("serviceKey", "ServiceKey", "confmKey", "crtfc_key", "KEY", "keyId"))
    assert not any(providers.presentation(n) or providers.key_name(n) for n in ("stationName", "keyword", "sidoName"))


OK_ANSWER = {"header": {"rsltCd": "S00", "rsltMsg": "정상"}, "items": [{"stationName": "종로구", "pm10": "30"}]}
REFUSED = {"header": {"rsltCd": "E10", "rsltMsg": "요청 변수 오류"}}
NOTHING = {"header": {"rsltCd": "E20", "rsltMsg": "해당 자료 없음"}}


def _judged(answer: dict[str, Any]) -> Outcome:
    body = orjson.dumps(answer)
    return judge(200, body, "application/json", envelope="plain", items_path="", declared_fields={"pm10"}).outcome


def _codes_read() -> dict[str, Any]:
    return {
        "header": envelopes.detect_header(REFUSED),
        "ok answer": _judged(OK_ANSWER),
        "refused": _judged(REFUSED),
        "nothing": _judged(NOTHING),
        "asks a filter": sampling.refused_for_filter("E10", "요청 변수 오류"),
    }


def test_without_the_entries_a_result_code_reads_as_data() -> None:
    assert _codes_read() == {
        "header": None,
        "ok answer": Outcome.OK,
        "refused": Outcome.EMPTY,  # a refusal read as an answer without rows: wrong, the names are unknown
        "nothing": Outcome.EMPTY,
        "asks a filter": False,
    }


def test_the_code_names_alone_read_the_header_but_not_what_its_codes_mean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "CODE_NAMES", (*providers.CODE_NAMES, "rsltCd"))
    monkeypatch.setattr(providers, "MSG_NAMES", (*providers.MSG_NAMES, "rsltMsg"))
    read = _codes_read()
    assert read["header"] == ("E10", "요청 변수 오류")
    assert read["refused"] is Outcome.INVALID
    assert read["ok answer"] is Outcome.INVALID  # `S00` is no success code anyone knows yet
    assert read["nothing"] is Outcome.INVALID  # `E20` is no known no-data code, `자료 없음` no known no-data words


def test_one_entry_per_code_convention_makes_the_judge_and_sampler_follow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "CODE_NAMES", (*providers.CODE_NAMES, "rsltCd"))
    monkeypatch.setattr(providers, "MSG_NAMES", (*providers.MSG_NAMES, "rsltMsg"))
    monkeypatch.setattr(providers, "SUCCESS_CODES", (*providers.SUCCESS_CODES, "S00"))
    monkeypatch.setattr(providers, "NO_DATA_CODES", (*providers.NO_DATA_CODES, "E20"))
    monkeypatch.setattr(providers, "NEEDS_FILTER_CODES", (*providers.NEEDS_FILTER_CODES, "E10"))
    assert _codes_read() == {
        "header": ("E10", "요청 변수 오류"),
        "ok answer": Outcome.OK,
        "refused": Outcome.INVALID,
        "nothing": Outcome.EMPTY,
        "asks a filter": True,
    }
    verdict = code_verdict("E20", "해당 자료 없음")
    assert verdict is not None and verdict.outcome is Outcome.EMPTY and verdict.code == "E20"


def test_each_envelope_kind_states_its_result_where_the_profile_says() -> None:
    """The kinds the sandbox renders (`core.envelope_kinds.Envelope`) read through `graph.providers.HEADERS`."""
    error = {"resultCode": "10", "resultMsg": "INVALID_REQUEST_PARAMETER_ERROR"}
    answers = {
        "datagokr": {"response": {"header": error}},
        "airkorea": {"response": {"header": error}},
        "mfds": {"header": error},
        "stanreg": {"RESULT": error},
        "juso": {"results": {"common": {"errorCode": "10", "errorMessage": "x"}, "juso": []}},
        "odcloud": {"status_code": "10", "message": "x"},
    }
    for kind, answer in answers.items():
        assert providers.header_places(kind), kind
        got = judge(200, orjson.dumps(answer), "application/json", envelope=kind, items_path="", declared_fields=set())
        assert (got.outcome, got.code) == (Outcome.INVALID, "10"), kind
    assert providers.header_places("plain") == ()
