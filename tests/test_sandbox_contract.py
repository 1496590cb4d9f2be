"""Every sandbox operation answers its example call in XML and JSON, over a real socket, and every JSON answer
conforms to the operation's OpenAPI document (the contract users register)."""

from __future__ import annotations

from typing import Any

import defusedxml.ElementTree as ET
import httpx
import jsonschema
import pytest

from core.payload import parse_body
from graph.schema_convert import to_json_schema
from sandbox.catalog import doc_id, shipped_documents
from sandbox.examples import example_args
from sandbox.world import get_world
from tests.support.helpers import OPS, call, items_of, pretty, result_code

EXAMPLES = example_args(get_world(20261130))
DOCS = shipped_documents()


def _response_schema(op_id: str) -> dict[str, Any]:
    op = OPS[op_id]
    doc = DOCS[doc_id(op)]
    sub = "/" + op.path.rsplit("/", 1)[1]
    media = doc["paths"][sub][op.method.lower()]["responses"]["200"]["content"]["application/json"]
    return to_json_schema(media["schema"], doc)  # type: ignore[no-any-return]


@pytest.mark.parametrize("op_id", sorted(OPS))
def test_example_call_succeeds_and_conforms(live: httpx.Client, op_id: str) -> None:
    op = OPS[op_id]
    fmt = "json" if "json" in op.provider.formats else None
    resp = call(live, op_id, EXAMPLES[op_id], fmt=fmt)
    assert resp.status_code == 200, resp.text[:300]
    doc = parse_body(resp.content)
    assert result_code(op, doc) == op.provider.success_code, pretty(doc)
    rows = items_of(op, doc)
    assert rows, f"{op_id}: example call returned no rows: {pretty(doc)}"
    jsonschema.validate(doc, _response_schema(op_id))
    declared = {f.name for f in op.fields}
    for row in rows:
        assert set(row) <= declared, f"undeclared fields {set(row) - declared}"


@pytest.mark.parametrize("op_id", sorted(o for o in OPS if "xml" in OPS[o].provider.formats))
def test_xml_example_call_succeeds(live: httpx.Client, op_id: str) -> None:
    op = OPS[op_id]
    resp = call(live, op_id, EXAMPLES[op_id], fmt="xml" if len(op.provider.formats) > 1 else None)
    assert resp.status_code == 200
    assert "xml" in resp.headers["content-type"]
    root = ET.fromstring(resp.content)
    codes = [e.text for e in root.iter("resultCode")] + [e.text for e in root.iter("errorCode")]
    assert codes and codes[0] == op.provider.success_code
    declared = {f.name for f in op.fields}
    leaf_names = {e.tag for e in root.iter() if len(e) == 0}
    assert declared & leaf_names, "no declared field appears in the XML body"


def test_default_format_is_xml_where_real(live: httpx.Client) -> None:
    for op_id in (
        "VilageFcstInfoService_2.0.getVilageFcst",
        "MsrstnInfoInqireSvc.getMsrstnList",
        "KorService2.detailCommon2",
        "StanReginCd.getStanReginCdList",
    ):
        resp = call(live, op_id, EXAMPLES[op_id], fmt=None)
        assert resp.text.startswith("<?xml"), op_id


def test_json_only_services_ignore_the_format(live: httpx.Client) -> None:
    resp = call(
        live,
        "AptListService4.getLegaldongAptList4",
        {**EXAMPLES["AptListService4.getLegaldongAptList4"], "_type": "xml"},
        fmt=None,
    )
    assert resp.json()["response"]["header"]["resultCode"] == "00"
