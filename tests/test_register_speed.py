"""Registration into Neo4j at scale: a 20 MB document in one registration, large registrations written in tool
chunks with the same outcome as one transaction, typed enum values kept, dropped properties gone.

Tests that write to the shared Neo4j use names of their own (a random suffix) and delete their API afterwards;
they never reset the store."""

from __future__ import annotations

import copy
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from core.settings import Neo4jSettings, Settings
from graph import neo4j_store, queries
from graph.models import ApiRecord, LinkRecord, ParamRecord, RegistrationMeta, ToolRecord
from graph.neo4j_props import tool_from
from graph.neo4j_store import Neo4jStore
from graph.openapi import parse_document
from graph.registry import register
from graph.store import GraphStore
from perf.register_20mb import _operation, build_document

SETTINGS = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=["127.0.0.1:443"])
#: The goal is under 15 s on the 2-core machine; the bound leaves room for a busy CI machine, and the code before
#: this test could not do it at all (its one transaction ran the Neo4j heap out of memory).
REGISTER_20MB_BOUND_S = 30.0


def _uid() -> str:
    return uuid.uuid4().hex[:8]


def _document(uid: str, operations: int) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": f"Chunks {uid}", "version": "1"},
        "servers": [{"url": f"https://127.0.0.1/chunks{uid}"}],
        "paths": {f"/op{i:03d}": _operation(i) for i in range(operations)},
    }
    # typed enum, example and default values travel through the parser and the store
    doc["paths"]["/op000"]["get"]["parameters"][0]["schema"] = {
        "type": "integer",
        "enum": [1, 2, 3],
        "example": 2,
        "default": 1,
    }
    return doc


def _dump(tool: ToolRecord) -> dict[str, Any]:
    return tool.model_dump(exclude={"updated_at"})


@pytest.fixture(params=["one transaction", "chunks"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Neo4j writes a registration in one transaction, or (forced here with tiny limits) in chunks of two tools,
    two transactions at a time; the embedded store ignores it."""
    if request.param == "chunks":
        monkeypatch.setattr(neo4j_store, "SINGLE_TX_ROWS", 60)
        monkeypatch.setattr(neo4j_store, "CHUNK_ROWS", 50)  # 25 rows a tool: two tools a chunk
        monkeypatch.setattr(neo4j_store, "WRITERS", 2)
    return str(request.param)


def test_registration_diffs_updates_retires_and_flags_in_every_write_mode(any_store: GraphStore, mode: str) -> None:
    uid = _uid()
    meta = RegistrationMeta(api_id=f"chunks-{uid}")
    doc = _document(uid, 12)
    first = register(any_store, SETTINGS, doc, meta)
    try:
        assert first.created and [t["change"] for t in first.tools] == ["new"] * 12
        names = {t["op"]: t["name"] for t in first.tools}
        _, parsed = parse_document(copy.deepcopy(doc), meta)
        for tool in parsed:
            stored = any_store.get_tool(names[tool.op_key])
            assert stored is not None and _dump(stored) == _dump(tool)
        typed = next(p for p in parsed[0].params if p.name == "param0")
        assert typed.enum == [1, 2, 3] and typed.example == 2 and typed.default == 1
        assert {t.name for t in any_store.tools_of_api(meta.api_id or "")} == set(names.values())

        t0, t2, t3, t11 = (any_store.get_tool(names[f"GET /op{i:03d}"]) for i in (0, 2, 3, 11))
        assert t0 is not None and t2 is not None and t3 is not None and t11 is not None
        links = [  # L1 crosses chunks (first tool -> last tool), L2 goes between neighbours
            LinkRecord(
                id=f"L1-{uid}",
                source_tool=t0.name,
                source_field=t0.fields[0].name,
                target_tool=t11.name,
                target_param=t11.params[0].key(),
            ),
            LinkRecord(
                id=f"L2-{uid}",
                source_tool=t2.name,
                source_field=t2.fields[1].name,
                target_tool=t3.name,
                target_param=t3.params[1].key(),
            ),
        ]
        assert any_store.upsert_candidates(links) == 2

        again = register(any_store, SETTINGS, doc, meta)
        assert not again.created and {t["change"] for t in again.tools} == {"unchanged"}
        assert again.flagged_links == 0 and again.retired == []

        # rename the field L1 starts from (op 0), retype the param L2 ends at (op 3): both links flagged
        props = doc["paths"]["/op000"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        item = props["properties"]["response"]["properties"]["body"]["properties"]["items"]["properties"]["item"]
        fields = item["items"]["properties"]
        fields["renamedNm"] = fields.pop("field0Nm")
        doc["paths"]["/op003"]["get"]["parameters"][1]["schema"] = {"type": "integer"}
        changed = register(any_store, SETTINGS, doc, meta)
        assert {t["op"] for t in changed.tools if t["change"] == "changed"} == {"GET /op000", "GET /op003"}
        assert changed.flagged_links == 2
        for link in links:
            stored_link = any_store.get_link(link.id)
            assert stored_link is not None and stored_link.needs_reverify
        _, reparsed = parse_document(copy.deepcopy(doc), meta)
        for tool in reparsed:
            if tool.op_key in ("GET /op000", "GET /op003"):
                stored = any_store.get_tool(names[tool.op_key])
                assert stored is not None and _dump(stored) == _dump(tool)  # the renamed field's old one is gone

        # remove the operations at the ends of the links: retired, kept, their links flagged once each
        del doc["paths"]["/op011"], doc["paths"]["/op002"]
        retired = register(any_store, SETTINGS, doc, meta)
        assert sorted(retired.retired) == sorted([t11.name, t2.name]) and retired.flagged_links == 2
        active, n_active = any_store.list_tools(api_id=meta.api_id, limit=100)
        _, n_all = any_store.list_tools(api_id=meta.api_id, status=None, limit=100)
        assert (n_active, n_all) == (10, 12) and t11.name not in {t.name for t in active}
        gone = any_store.get_tool(t11.name)
        assert gone is not None and gone.status == "retired"

        final = register(any_store, SETTINGS, doc, meta)
        assert {t["change"] for t in final.tools} == {"unchanged"} and final.flagged_links == 0
        assert final.retired == []
    finally:
        any_store.delete_api(meta.api_id or "")


def test_typed_enum_values_round_trip(any_store: GraphStore) -> None:
    """Neo4j keeps only homogeneous lists of primitives: enums are stored as JSON and read back with their types."""
    uid = _uid()
    api = ApiRecord(id=f"enums-{uid}", title="typed enums", server_url="https://127.0.0.1/enums")
    enums: dict[str, list[Any] | None] = {
        "ints": [1, 2, 3],
        "flags": [True, False],
        "mixed": ["A", 1],
        "strings": ["x", "y"],
        "empty": [],
        "none": None,
    }
    tool = ToolRecord(
        name=f"enums_{uid}",
        api_id=api.id,
        op_key="GET /enums",
        method="GET",
        url="https://127.0.0.1/enums",
        params=[ParamRecord(name=k, enum=v) for k, v in enums.items()],
    )
    any_store.apply_registration(api, [tool], [], {})
    try:
        stored = any_store.get_tool(tool.name)
        listed = any_store.tools_of_api(api.id)
        assert stored is not None and [t.name for t in listed] == [tool.name]
        for got in (stored, listed[0]):
            values = {p.name: p.enum for p in got.params}
            assert values == enums
            assert [type(v) for v in values["ints"] or []] == [int, int, int]
            assert [type(v) for v in values["flags"] or []] == [bool, bool]
            assert [type(v) for v in values["mixed"] or []] == [str, int]
    finally:
        any_store.delete_api(api.id)


def test_enums_stored_as_lists_before_still_read() -> None:
    """Params written before enums were JSON hold a list of strings (and "null" text for a missing example)."""
    tool = tool_from(
        {
            "name": "old_tool",
            "api_id": "old",
            "op_key": "GET /x",
            "method": "GET",
            "url": "https://h/x",
            "json_schema": "{}",
        },
        [
            {
                "id": "old_tool|query:a",
                "tool": "old_tool",
                "key": "query:a",
                "hash": "h",
                "removed": False,
                "name": "a",
                "location": "query",
                "enum": ["1", "2"],
                "example": "null",
                "default": "null",
            },
            {
                "id": "old_tool|query:b",
                "tool": "old_tool",
                "key": "query:b",
                "hash": "h",
                "removed": False,
                "name": "b",
                "location": "query",
                "enum": '[1, "two"]',
                "example": "3",
            },
        ],
        [],
    )
    assert [(p.enum, p.example, p.default) for p in tool.params] == [(["1", "2"], None, None), ([1, "two"], 3, None)]


def test_a_property_the_new_record_lacks_is_gone(any_store: GraphStore) -> None:
    """Re-registering replaces the API, tool and param properties (as the embedded store replaces its records):
    a pattern, format or base URL the document no longer has does not survive from the previous registration."""
    uid = _uid()
    api = ApiRecord(
        id=f"stale-{uid}",
        title="stale",
        server_url="https://127.0.0.1/stale",
        base_url="https://127.0.0.1/override",
        rate_limit_per_s=5,
        created_at="2026-01-01T00:00:00+00:00",
    )
    tool = ToolRecord(
        name=f"stale_{uid}",
        api_id=api.id,
        op_key="GET /s",
        method="GET",
        url="https://127.0.0.1/s",
        format_param="dataType=JSON",
        params=[ParamRecord(name="a", pattern="^[0-9]+$", format="date", example="20260101")],
    )
    any_store.apply_registration(api, [tool], [], {})
    try:
        later = api.model_copy(
            update={"base_url": None, "rate_limit_per_s": None, "created_at": "2026-06-01T00:00:00+00:00"}
        )
        plain = tool.model_copy(update={"format_param": None, "params": [ParamRecord(name="a")]})
        any_store.apply_registration(later, [plain], [], {})
        stored = any_store.get_tool(tool.name)
        assert stored is not None and _dump(stored) == _dump(plain)
        stored_api = any_store.get_api(api.id)
        assert stored_api is not None and stored_api.base_url is None and stored_api.rate_limit_per_s is None
        assert stored_api.created_at == api.created_at  # the first registration's
    finally:
        any_store.delete_api(api.id)


@pytest.fixture
def neo4j(neo4j_uri: str) -> Iterator[Neo4jStore]:
    store = Neo4jStore(Neo4jSettings(uri=neo4j_uri))
    store.init_schema()
    yield store
    store.close()


def test_tools_another_registration_created_meanwhile_are_merged(
    neo4j: Neo4jStore, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """New tools are CREATEd; when one exists after all (created between the check and the write), the uniqueness
    constraint fails the CREATE and the chunk is written again with MERGE: same outcome, no duplicate."""
    uid = _uid()
    meta = RegistrationMeta(api_id=f"merged-{uid}")
    doc = _document(uid, 6)
    first = register(neo4j, SETTINGS, doc, meta)
    try:
        monkeypatch.setattr(queries, "EXISTING_TOOLS", "UNWIND $names AS name WITH name WHERE false RETURN name")
        doc["paths"]["/op001"]["get"]["parameters"][2]["schema"] = {"type": "integer"}
        doc["paths"]["/op004"]["get"]["parameters"][2]["schema"] = {"type": "integer"}
        changed = register(neo4j, SETTINGS, doc, meta)
        assert {t["op"] for t in changed.tools if t["change"] == "changed"} == {"GET /op001", "GET /op004"}
        _, parsed = parse_document(copy.deepcopy(doc), meta)
        names = {t["op"]: t["name"] for t in first.tools}
        for tool in parsed:
            stored = neo4j.get_tool(names[tool.op_key])
            assert stored is not None and _dump(stored) == _dump(tool)
        assert neo4j.list_tools(api_id=meta.api_id, limit=100)[1] == 6
    finally:
        neo4j.delete_api(meta.api_id or "")


@pytest.mark.slow
def test_a_20mb_document_registers_into_neo4j(neo4j: Neo4jStore) -> None:
    uid = _uid()
    doc = build_document(20 * 1024 * 1024)
    doc["info"]["title"] = f"Speed {uid}"
    doc["servers"] = [{"url": f"https://127.0.0.1/speed{uid}"}]
    meta = RegistrationMeta(api_id=f"speed-{uid}")
    t0 = time.perf_counter()
    try:
        result = register(neo4j, SETTINGS, doc, meta)
        elapsed = time.perf_counter() - t0
        assert result.created and len(result.tools) > 4500
        assert elapsed < REGISTER_20MB_BOUND_S, f"registering 20 MB took {elapsed:.1f} s"
        _, total = neo4j.list_tools(api_id=meta.api_id, limit=1)
        assert total == len(result.tools)
        last = neo4j.get_tool(result.tools[-1]["name"])
        assert last is not None and (len(last.params), len(last.fields)) == (8, 16)
    finally:
        neo4j.delete_api(meta.api_id or "")
