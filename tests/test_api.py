"""The REST registry over HTTP, against both store backends: registration, re-registration, deletion, auth,
the host allow-list, pagination, and fuzzed malformed documents (never a 500, nothing half-written)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from api.app import create_app
from api.security import mint_token
from core.settings import Settings
from graph.store import GraphStore
from sandbox.catalog import shipped_documents, shipped_swagger2

DOCS = shipped_documents()
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def backend(any_store: GraphStore) -> Iterator[GraphStore]:
    """Each store in turn, emptied before and after."""
    any_store.reset()
    yield any_store
    any_store.reset()


@pytest.fixture
def client(backend: GraphStore) -> Iterator[TestClient]:
    # the fixture documents name https://127.0.0.1: a local upstream must be named explicitly
    settings = Settings(
        bootstrap_token=SecretStr("boot-admin"), allowed_hosts=["127.0.0.1"], local_upstreams=["127.0.0.1:443"]
    )
    with TestClient(create_app(settings, backend)) as c:
        c.headers["Authorization"] = "Bearer boot-admin"
        yield c


def test_auth_roles(client: TestClient, backend: GraphStore) -> None:
    reader = mint_token(backend, "reader", "team-a")
    admin = mint_token(backend, "admin")
    anon = client.get("/v1/apis", headers={"Authorization": ""})
    assert anon.status_code == 401 and anon.json()["error"] == "unauthorized"
    assert client.get("/v1/apis", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/v1/apis", headers={"Authorization": f"Bearer {reader}"}).status_code == 200
    denied = client.post("/v1/apis", json=DOCS["StanReginCd"], headers={"Authorization": f"Bearer {reader}"})
    assert denied.status_code == 403 and denied.json()["error"] == "forbidden"
    assert (
        client.post("/v1/apis", json=DOCS["StanReginCd"], headers={"Authorization": f"Bearer {admin}"}).status_code
        == 201
    )
    assert backend.find_token(reader) is None  # only hashes are stored


def test_register_the_whole_catalog_and_browse(client: TestClient) -> None:
    total = 0
    for doc in DOCS.values():
        r = client.post("/v1/apis", json=doc)
        assert r.status_code == 201, r.text
        total += len(r.json()["tools"])
    page = client.get("/v1/tools", params={"limit": 10}).json()
    assert page["total"] == total and len(page["items"]) == 10
    names = set()
    offset = 0
    while offset < total:
        names |= {t["name"] for t in client.get("/v1/tools", params={"offset": offset, "limit": 20}).json()["items"]}
        offset += 20
    assert len(names) == total
    tool = client.get("/v1/tools/kma_get_vilage_fcst").json()
    assert tool["function"]["function"]["name"] == "kma_get_vilage_fcst"
    assert tool["json_schema"]["properties"]["nx"]["type"] == "integer"
    assert client.get("/v1/tools/nope").status_code == 404
    apis = client.get("/v1/apis", params={"limit": 5}).json()
    assert apis["total"] == len(DOCS) and len(apis["items"]) == 5
    one = client.get(f"/v1/apis/{apis['items'][0]['id']}").json()
    assert one["tools"] and one["api"]["tool_count"] == len(one["tools"])


def test_yaml_swagger2_and_third_party_openapi31(client: TestClient) -> None:
    sw = yaml.safe_dump(shipped_swagger2()["KorService2"], allow_unicode=True)
    r = client.post("/v1/apis", content=sw.encode(), headers={"Content-Type": "application/yaml"})
    assert r.status_code == 201 and len(r.json()["tools"]) == 6
    lib = (FIXTURES / "library_openapi31.yaml").read_bytes()
    r = client.post(
        "/v1/apis",
        content=lib,
        headers={"Content-Type": "application/yaml"},
        params={"secret_name": "LIBRARY_SERVICE_KEY"},
    )
    assert r.status_code == 201, r.text
    api = r.json()["api"]
    assert api["auth"] == {"scheme": "query_key", "param": "apiKey", "secret": "LIBRARY_SERVICE_KEY"}
    books = client.get("/v1/tools/city_library_api_list_books").json()
    assert {p["name"]: p["location"] for p in books["params"]} == {"libraryId": "path", "q": "query", "limit": "query"}
    assert {f["name"] for f in books["fields"]} == {"id", "updated", "isbn", "title", "pages"}
    assert next(f for f in books["fields"] if f["name"] == "pages")["nullable"] is True
    branch = client.get("/v1/tools/city_library_api_get_branch").json()
    assert {f["name"] for f in branch["fields"]} == {"branchCode", "name", "closed"}
    loan = client.get("/v1/tools/city_library_api_create_loan").json()
    assert loan["json_schema"]["required"] == ["isbn", "member"]
    assert {p["location"] for p in loan["params"]} == {"body"}


def test_reregister_and_delete(client: TestClient) -> None:
    doc = copy.deepcopy(DOCS["KorService2"])
    assert client.post("/v1/apis", json=doc).status_code == 201
    doc["paths"].pop("/detailIntro2")
    doc["paths"]["/searchKeyword2"]["get"]["parameters"].append(
        {"name": "extra", "in": "query", "required": False, "description": "추가", "schema": {"type": "string"}}
    )
    r = client.post("/v1/apis", json={"document": doc, "metadata": {"rate_limit_per_s": 5}})
    assert r.status_code == 200
    body = r.json()
    assert body["retired"] == ["tour_detail_intro2"] and body["api"]["rate_limit_per_s"] == 5
    assert {t["name"]: t["change"] for t in body["tools"]}["tour_search_keyword2"] == "changed"
    retired = client.get("/v1/tools", params={"status": "retired"}).json()
    assert [t["name"] for t in retired["items"]] == ["tour_detail_intro2"]
    api_id = body["api"]["id"]
    assert client.delete(f"/v1/apis/{api_id}").json() == {"deleted": api_id, "tools_removed": 6}
    assert client.get(f"/v1/apis/{api_id}").status_code == 404
    assert client.delete(f"/v1/apis/{api_id}").status_code == 404


def test_allow_list_and_malformed(client: TestClient) -> None:
    evil = copy.deepcopy(DOCS["StanReginCd"])
    evil["servers"] = [{"url": "http://192.168.0.10/admin"}]
    r = client.post("/v1/apis", json=evil)
    assert r.status_code == 422 and r.json()["error"] == "host_not_allowed"
    r = client.post("/v1/apis", json=DOCS["StanReginCd"], params={"base_url": "http://metadata.internal/"})
    assert r.status_code == 422 and "allow-list" in r.json()["detail"]
    r = client.post("/v1/apis", content=b"openapi: [", headers={"Content-Type": "application/yaml"})
    assert r.status_code == 422 and r.json()["locations"][0]["pointer"] == "/"
    bad = {
        "openapi": "3.0.0",
        "info": {"title": "t"},
        "servers": [{"url": "https://127.0.0.1"}],
        "paths": {
            "nope": {},
            "/x": {
                "get": {
                    "parameters": [{"name": "a", "in": "moon"}],
                    "responses": {"200": {"$ref": "#/components/responses/missing"}},
                }
            },
        },
    }
    r = client.post("/v1/apis", json=bad)
    pointers = {loc["pointer"] for loc in r.json()["locations"]}
    assert (
        r.status_code == 422
        and {"/paths/nope", "/paths/~1x/get/parameters/0/in", "/paths/~1x/get/responses/200"} <= pointers
    )
    r = client.post("/v1/apis", json=DOCS["StanReginCd"], params={"rate_limit_per_s": -1})
    assert r.status_code == 422
    assert client.get("/v1/apis").json()["total"] == 0


def test_health_readiness_metrics_browser(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready"
    client.get("/v1/apis")
    metrics = client.get("/metrics").text
    assert 'kopa_http_requests_total{method="GET",route="/v1/apis",status="200"}' in metrics
    assert "relationship.VERIFIED" in client.get("/browser/kopa.grass").text
    assert client.get("/browser/guide.html").headers["access-control-allow-origin"] == "*"
    docs = client.get("/openapi.json").json()
    assert "/v1/apis" in docs["paths"] and "/v1/tools/{name}" in docs["paths"]


def _counts(client: TestClient) -> tuple[int, int]:
    return client.get("/v1/apis").json()["total"], client.get("/v1/tools", params={"status": "all"}).json()["total"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=12,
)


@st.composite
def broken_documents(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(DOCS[draw(st.sampled_from(sorted(DOCS)))])
    for _ in range(draw(st.integers(1, 3))):
        node: Any = doc
        path = []
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            path.append(key)
            node = node[key]
        if not path:
            doc = draw(json_values)  # type: ignore[arg-type]
            break
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            parent[path[-1]] = draw(json_values)
        elif isinstance(parent, dict):
            del parent[path[-1]]
    return doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=broken_documents())
def test_fuzzed_documents_never_500_and_never_half_write(client: TestClient, doc: Any) -> None:
    before = _counts(client)
    r = client.post("/v1/apis", content=json.dumps(doc).encode(), headers={"Content-Type": "application/json"})
    assert r.status_code in (200, 201, 413, 422), r.text
    body = r.json()
    assert "error" in body or "api" in body
    if r.status_code == 422:
        assert _counts(client) == before
        assert all(loc["pointer"].startswith("/") for loc in body.get("locations", []))
    else:
        api_id = body["api"]["id"]
        client.delete(f"/v1/apis/{api_id}")
