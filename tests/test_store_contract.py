"""One contract suite, two backends: the embedded SQLite store and real Neo4j must behave the same (registration,
re-registration, paging, names across APIs: one document under three API ids moves no tool)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import DisallowedHost, InvalidInput, NotFound
from core.settings import Neo4jSettings, Settings
from graph.models import LinkRecord, RegistrationMeta, TokenRecord
from graph.openapi import parse_document
from graph.registry import register, unregister
from graph.store import GraphStore
from sandbox.catalog import shipped_documents, shipped_swagger2

DOCS = shipped_documents()


@pytest.fixture(params=["embedded", "neo4j"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "embedded":
        from graph.embedded_store import EmbeddedStore

        s: GraphStore = EmbeddedStore(tmp_path / "graph.sqlite3")
    else:
        from graph.neo4j_store import Neo4jStore

        uri = request.getfixturevalue("neo4j_uri")
        s = Neo4jStore(Neo4jSettings(uri=uri))
        s.init_schema()
        s.reset()
    yield s
    s.reset()
    s.close()


SETTINGS = Settings(allowed_hosts=["127.0.0.1"], local_upstreams=["127.0.0.1:443"])  # fixtures name https://127.0.0.1


def test_every_catalog_document_registers(store: GraphStore) -> None:
    total = 0
    for doc in DOCS.values():
        result = register(store, SETTINGS, doc)
        assert result.created and all(t["change"] == "new" for t in result.tools)
        total += len(result.tools)
    apis, n = store.list_apis(limit=100)
    assert n == len(DOCS) == len(apis)
    tools, count = store.list_tools(limit=1000)
    assert count == total == len(tools) >= 30
    assert len({t.name for t in tools}) == total
    vf = store.get_tool("kma_get_vilage_fcst")
    assert vf is not None and vf.envelope == "datagokr" and vf.format_param == "dataType=JSON"
    assert [p.name for p in vf.params][:2] == ["pageNo", "numOfRows"]
    assert {"base_date", "base_time", "nx", "ny"} <= set(vf.json_schema["required"])
    assert "serviceKey" not in vf.json_schema["properties"] and "dataType" not in vf.json_schema["properties"]
    reg = store.get_tool("mois_get_stan_regin_cd_list")
    assert reg is not None and reg.envelope == "stanreg"
    assert next(f for f in reg.fields if f.name == "region_cd").path == "StanReginCd[].row[].region_cd"


def test_swagger2_renditions_register_as_the_same_tools(store: GraphStore) -> None:
    register(store, SETTINGS, DOCS["VilageFcstInfoService_2.0"])
    result = register(store, SETTINGS, shipped_swagger2()["VilageFcstInfoService_2.0"])
    assert not result.created  # same server and title: the same API
    tool = store.get_tool("kma_get_vilage_fcst")
    assert tool is not None and {"nx", "ny"} <= {p.name for p in tool.params}


def test_reregistration_updates_retires_and_flags_links(store: GraphStore) -> None:
    doc = copy.deepcopy(DOCS["StanReginCd"])
    register(store, SETTINGS, doc)
    register(store, SETTINGS, DOCS["RTMSDataSvcAptTrade"])
    link = LinkRecord(
        id="L1",
        source_tool="mois_get_stan_regin_cd_list",
        source_field="region_cd",
        target_tool="molit_get_rtms_data_svc_apt_trade",
        target_param="query:LAWD_CD",
        transform={"kind": "slice", "start": 0, "end": 5},
        score=0.9,
    )
    assert store.upsert_candidates([link]) == 1
    # unchanged re-registration
    again = register(store, SETTINGS, doc)
    assert {t["change"] for t in again.tools} == {"unchanged"} and again.flagged_links == 0
    # change the output field region_cd (rename) -> the link touching it is flagged
    item = doc["components"]["schemas"]["getStanReginCdListItem"]["properties"]
    item["regionCd"] = item.pop("region_cd")
    changed = register(store, SETTINGS, doc)
    assert changed.tools[0]["change"] == "changed" and changed.flagged_links == 1
    stored = store.get_link("L1")
    assert stored is not None and stored.needs_reverify
    # remove the operation -> retired, kept
    doc["paths"]["/getExtra"] = doc["paths"].pop("/getStanReginCdList")
    doc["paths"]["/getExtra"]["get"]["operationId"] = "getExtra"
    result = register(store, SETTINGS, doc)
    assert result.retired == ["mois_get_stan_regin_cd_list"]
    retired = store.get_tool("mois_get_stan_regin_cd_list")
    assert retired is not None and retired.status == "retired"
    active, _ = store.list_tools(api_id=result.api.id)
    assert [t.name for t in active] == ["mois_get_extra"]
    _everything, n = store.list_tools(api_id=result.api.id, status=None)
    assert n == 2


def test_pagination_filters_and_delete(store: GraphStore) -> None:
    for name in ("KorService2", "VilageFcstInfoService_2.0"):
        register(store, SETTINGS, DOCS[name])
    page1, total = store.list_tools(limit=4)
    page2, _ = store.list_tools(offset=4, limit=4)
    assert total == 9 and len(page1) == 4 and not {t.name for t in page1} & {t.name for t in page2}
    kma, n = store.list_tools(q="vilage")
    assert n == 1 and kma[0].name == "kma_get_vilage_fcst"
    _korean, n = store.list_tools(q="관광정보")
    assert n >= 3
    api_id = kma[0].api_id
    assert unregister(store, api_id) == 3
    assert store.get_tool("kma_get_vilage_fcst") is None and store.get_api(api_id) is None
    with pytest.raises(NotFound):
        unregister(store, api_id)


def test_name_collisions_across_apis_get_suffixes(store: GraphStore) -> None:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://127.0.0.1/a"}],
        "paths": {"/pets": {"get": {"operationId": "listPets", "responses": {"200": {"description": "ok"}}}}},
    }
    first = register(store, SETTINGS, doc)
    other = copy.deepcopy(doc)
    other["servers"][0]["url"] = "https://127.0.0.1/b"
    second = register(store, SETTINGS, other)
    # the second API's tool gets an API-scoped name (a digest of its API id and operation), never the first's
    assert first.tools[0]["name"] == "pets_list_pets" and second.tools[0]["name"].startswith("pets_list_pets_")
    assert second.tools[0]["name"] != first.tools[0]["name"]
    owned = store.get_tool(second.tools[0]["name"])
    assert owned is not None and owned.api_id == second.api.id


def test_links_and_tokens(store: GraphStore) -> None:
    register(store, SETTINGS, DOCS["StanReginCd"])
    register(store, SETTINGS, DOCS["RTMSDataSvcAptTrade"])
    link = LinkRecord(
        id="L2",
        source_tool="mois_get_stan_regin_cd_list",
        source_field="region_cd",
        target_tool="molit_get_rtms_data_svc_apt_trade",
        target_param="query:LAWD_CD",
        score=0.5,
    )
    store.upsert_candidates([link])
    verified = link.model_copy(update={"status": "verified", "evidence": {"trials": 3, "successes": 3}})
    store.save_link(verified)
    store.upsert_candidates([link.model_copy(update={"score": 0.7})])  # re-proposing keeps the verdict
    got = store.get_link("L2")
    assert got is not None and got.status == "verified" and got.score == 0.7 and got.evidence["trials"] == 3
    links, n = store.list_links(status="verified", tool="molit_get_rtms_data_svc_apt_trade")
    assert n == 1 and links[0].id == "L2"
    assert store.list_links(status="refuted")[1] == 0
    assert store.stats()["links"] == {"verified": 1}
    store.add_token(TokenRecord(id="t1", name="ci", role="reader", token_hash="abc"))
    tok = store.find_token("abc")
    assert tok is not None and tok.role == "reader"
    assert store.find_token("nope") is None


def test_bad_documents_and_hosts_write_nothing(store: GraphStore) -> None:
    bad: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": "x"},
        "servers": [{"url": "https://apis.data.go.kr/x"}],
        "paths": {"/a": {"get": {"parameters": [{"in": "query"}], "responses": {}}}},
    }
    with pytest.raises(InvalidInput) as err:
        register(store, SETTINGS, bad)
    assert err.value.locations[0]["pointer"] == "/paths/~1a/get/parameters/0/name"
    internal = copy.deepcopy(DOCS["StanReginCd"])
    internal["servers"] = [{"url": "http://10.0.0.5/internal"}]
    with pytest.raises(DisallowedHost):
        register(store, SETTINGS, internal)
    with pytest.raises(DisallowedHost):
        register(store, SETTINGS, DOCS["StanReginCd"], RegistrationMeta(base_url="http://169.254.169.254/latest"))
    assert store.stats()["apis"] == 0 and store.stats()["tools"] == 0


def test_one_document_under_three_api_ids_moves_no_tool(any_store: GraphStore) -> None:
    settings = Settings()
    doc = DOCS["StanReginCd"]
    ids = ["takeover-a", "takeover-b", "takeover-c"]
    for api_id in ids:
        any_store.delete_api(api_id)
    try:
        n = len(parse_document(doc, RegistrationMeta())[1])
        names: dict[str, set[str]] = {}
        for api_id in ids:
            register(any_store, settings, copy.deepcopy(doc), RegistrationMeta(api_id=api_id))
            for earlier in names:  # registering another API never takes a tool away
                assert {t.name for t in any_store.tools_of_api(earlier)} == names[earlier], (api_id, earlier)
            names[api_id] = {t.name for t in any_store.tools_of_api(api_id)}
            assert len(names[api_id]) == n, (api_id, names[api_id])
        assert not (names[ids[0]] & names[ids[1]]) and not (names[ids[1]] & names[ids[2]])
        assert not (names[ids[0]] & names[ids[2]])
        for api_id in ids:
            for name in names[api_id]:
                tool = any_store.get_tool(name)
                assert tool is not None and tool.api_id == api_id, (name, tool and tool.api_id)
        # re-registering keeps every name (stable), in any order
        for api_id in reversed(ids):
            result = register(any_store, settings, copy.deepcopy(doc), RegistrationMeta(api_id=api_id))
            assert {t["name"] for t in result.tools} == names[api_id]
            assert all(t["change"] == "unchanged" for t in result.tools)
    finally:
        for api_id in ids:
            any_store.delete_api(api_id)
