"""Judging responses: every error class of every envelope, emptiness, and hostile bodies."""

from __future__ import annotations

import json

import orjson
import pytest

from core.payload import MAX_BODY
from execution.judge import judge
from execution.result import CallResult, Outcome

DATAGOKR = dict(envelope="datagokr", items_path="response.body.items.item[]", declared_fields={"a", "b"})


def j(status: int, doc: object, **kw: object) -> str:
    body = doc if isinstance(doc, bytes) else orjson.dumps(doc)
    return judge(status, body, "application/json", **{**DATAGOKR, **kw}).outcome  # type: ignore[arg-type]


def ok_doc(items: object) -> dict[str, object]:
    return {"response": {"header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE"}, "body": {"items": items}}}


def test_success_single_and_list() -> None:
    assert j(200, ok_doc({"item": {"a": "1", "b": "2"}})) == "ok"
    assert j(200, ok_doc({"item": [{"a": "1", "b": "2"}]})) == "ok"


@pytest.mark.parametrize(
    "doc", [ok_doc(""), ok_doc({"item": []}), {"response": {"header": {"resultCode": "03", "resultMsg": "NO_DATA"}}}]
)
def test_empty_shapes(doc: object) -> None:
    assert j(200, doc) == "empty"


@pytest.mark.parametrize(
    "code,outcome",
    [
        ("10", "invalid"),
        ("11", "invalid"),
        ("01", "transient"),
        ("99", "transient"),
        ("22", "transient"),
        ("30", "transient"),
    ],
)
def test_provider_codes_inside_http_200(code: str, outcome: str) -> None:
    assert j(200, {"response": {"header": {"resultCode": code, "resultMsg": "x"}}}) == outcome


def test_gateway_envelopes() -> None:
    gw = {"OpenAPI_ServiceResponse": {"cmmMsgHeader": {"errMsg": "E", "returnAuthMsg": "m", "returnReasonCode": "22"}}}
    v = judge(429, orjson.dumps(gw), "application/json", **DATAGOKR)  # type: ignore[arg-type]
    assert v.outcome == "transient" and v.quota
    xml = (
        b"<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg><returnAuthMsg>x</returnAuthMsg>"
        b"<returnReasonCode>12</returnReasonCode></cmmMsgHeader></OpenAPI_ServiceResponse>"
    )
    assert judge(200, xml, "text/xml", **DATAGOKR).outcome == "invalid"  # type: ignore[arg-type]
    assert j(503, b"<html>503</html>") == "transient"


def test_hollow_rows_are_empty() -> None:
    row = {"b_no": "1111111119", "b_stt": "", "b_stt_cd": "", "tax_type": "등록되지 않은", "end_dt": "", "x": ""}
    doc = {"status_code": "OK", "data": [row]}
    assert (
        j(200, doc, envelope="odcloud", items_path="data[]", declared_fields=set(row), inputs={"1111111119"}) == "empty"
    )


def test_schema_mismatch_is_invalid() -> None:
    assert j(200, ok_doc({"item": [{"zzz": "1"}]})) == "invalid"


def test_hostile_bodies_are_rejected_safely() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        b"<response><header><resultCode>00</resultCode></header><body><items><item><a>&lol2;</a></item></items>"
        b"</body></response>"
    )
    v = judge(200, bomb, "application/xml", **DATAGOKR)  # type: ignore[arg-type]
    assert v.outcome == "hostile" and "refused XML" in v.reason
    huge = b'{"x": "' + b"a" * (MAX_BODY + 10) + b'"}'
    assert judge(200, huge, "application/json", **DATAGOKR).outcome == "hostile"  # type: ignore[arg-type]
    assert judge(200, b"\xff\xfe<\x00{{", "application/json", **DATAGOKR).outcome == "transient"  # type: ignore[arg-type]
    assert judge(200, b'{"response": {"head', "application/json", **DATAGOKR).outcome == "transient"  # type: ignore[arg-type]


def test_the_verdict_is_the_one_call_result_and_reads_back_from_json() -> None:
    """The judge returns the CallResult the executor and the benchmark pass on: its outcome an enum that compares
    and serialises as its text, and JSON read back (cache entries, snapshots) gives the enum again."""
    body = orjson.dumps(ok_doc({"item": {"a": "1", "b": "2"}}))
    v = judge(
        200,
        body,
        "application/json",
        envelope="datagokr",
        items_path="response.body.items.item[]",
        declared_fields={"a"},
    )
    assert isinstance(v, CallResult) and v.outcome == "ok" and v.outcome is Outcome.OK and v.ok and v.definitive
    doc = json.loads(json.dumps(v.to_json()))
    assert doc["outcome"] == "ok" and type(doc["outcome"]) is str
    back = CallResult(**doc)
    assert back == v and back.outcome is Outcome.OK
    assert f"{back.outcome}: {back.reason}" == "ok: "
    assert [o for o in Outcome if CallResult(o).definitive] == ["ok", "empty", "invalid", "hostile"]
    with pytest.raises(ValueError):
        CallResult("okay")  # type: ignore[arg-type]
