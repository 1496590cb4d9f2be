"""Hostile and valid requests to the API. On both stores: paging bounds (documented `le`, clamped in the stores,
never a 500), empty and malformed `Authorization` headers (401 with a reason), OPTIONS/405 with an honest `Allow`,
and the published OpenAPI document (bearer security scheme, the one error model on every documented error status).
On the embedded store: valid requests are accepted (whole-number floats, a one-day token, an empty `swagger`), and a
Celery run without Redis is refused before anything is queued."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.deps import MAX_OFFSET
from api.security import mint_token
from core.settings import Settings
from graph.embedded_store import EmbeddedStore
from graph.store import GraphStore
from sandbox.catalog import shipped_documents

ADMIN = {"Authorization": "Bearer boot-two"}
PAGED = ["/v1/apis", "/v1/tools", "/v1/links", "/v1/trajectory-batches/tb_none/items"]


@pytest.fixture
def store(any_store: GraphStore) -> GraphStore:
    return any_store


@pytest.fixture
def client(store: GraphStore) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(bootstrap_token=SecretStr("boot-h")), store)) as c:
        c.headers["Authorization"] = "Bearer boot-h"
        yield c


def test_paging_bounds_never_500(client: TestClient, store: GraphStore) -> None:
    for path in PAGED:
        for offset in (2**31, 2**31 + 5, 2**63, 2**64 + 1, 10**30, -1):
            r = client.get(path, params={"offset": offset})
            assert r.status_code == 422, (path, offset, r.status_code, r.text)
            body = r.json()
            assert body["error"] == "invalid_input" and body["locations"], body
            assert any("offset" in loc["pointer"] for loc in body["locations"])
        for limit in (0, 10**6, 2**63):
            assert client.get(path, params={"limit": limit}).status_code == 422, (path, limit)
    for path in PAGED[:3]:
        r = client.get(path, params={"offset": MAX_OFFSET})
        assert r.status_code == 200, (path, r.text)
        assert r.json()["items"] == [] and r.json()["offset"] == MAX_OFFSET
    # the stores themselves take any offset: past what a backend can index is an empty page, with the total
    for offset in (2**31 - 1, 2**31, 2**63, 2**70):
        assert store.list_apis(offset, 50)[0] == []
        assert store.list_tools(offset, 50)[0] == []
        assert store.list_links(offset=offset, limit=50)[0] == []
        assert store.list_trajectories(None, offset, 50)[0] == []
    assert store.list_tools(0, 2**70)[1] == store.list_tools(0, 1)[1]


def test_authorization_headers(client: TestClient, store: GraphStore) -> None:
    cases = {
        "": "missing",
        "Bearer": "empty",
        "Bearer ": "empty",
        "Bearer    ": "empty",
        "bearer\t": "empty",
        "Basic dXNlcjpwYXNz": "scheme",
        "Token abc": "scheme",
        "Bearer a b": "malformed",
        "Bearer " + "x" * 5000: "malformed",
        "Bearer nope": "unknown",
    }
    for header, reason in cases.items():
        for path in ("/v1/apis", "/v1/tools/x", "/v1/trajectory-batches/tb_x", "/v1/tokens"):
            r = client.get(path, headers={"Authorization": header})
            assert r.status_code == 401, (header[:20], path, r.status_code, r.text)
            assert r.json()["error"] == "unauthorized" and reason in r.json()["detail"], (header[:20], r.json())
    # non-ASCII bytes in the header (decoded as Latin-1 by the server): 401, never a 500
    raw = client.get("/v1/apis", headers=[(b"Authorization", "Bearer caf\xe9\xff".encode("latin-1"))])
    assert raw.status_code == 401
    reader = mint_token(store, "reader", "team-h")
    assert client.get("/v1/apis", headers={"Authorization": f"Bearer  {reader} "}).status_code == 200
    assert client.get("/v1/apis", headers={"Authorization": f"bEaReR {reader}"}).status_code == 200
    for empty in ("Bearer ", "Bearer"):  # writes too, on every method
        assert client.post("/v1/verification-runs", json={}, headers={"Authorization": empty}).status_code == 401
        assert client.delete("/v1/apis/x", headers={"Authorization": empty}).status_code == 401


def test_options_and_405_tell_the_truth(client: TestClient) -> None:
    expected = {
        "/v1/apis": "GET, OPTIONS, POST",
        "/v1/apis/some_api": "DELETE, GET, OPTIONS",
        "/v1/tools": "GET, OPTIONS",
        "/v1/verification-runs": "GET, OPTIONS, POST",
        "/v1/trajectory-batches": "OPTIONS, POST",
        "/v1/tokens": "GET, OPTIONS, POST",
        "/v1/tokens/abc": "DELETE, OPTIONS",
    }
    for path, allow in expected.items():
        r = client.options(path)
        assert r.status_code == 204 and r.headers["allow"] == allow, (path, r.status_code, r.headers.get("allow"))
        bad = client.request("PATCH", path)
        assert bad.status_code == 405 and bad.headers["allow"] == allow, (path, bad.status_code)
        assert bad.json()["error"] == "method_not_allowed"
    assert client.put("/v1/tools/x").headers["allow"] == "GET, OPTIONS"


def test_openapi_document_is_honest(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    schemes = doc["components"]["securitySchemes"]
    assert any(s["type"] == "http" and s["scheme"].lower() == "bearer" for s in schemes.values())
    error_schema = doc["components"]["schemas"]["ErrorBody"]
    assert set(error_schema["required"]) == {"error", "detail"} and "locations" in error_schema["properties"]
    for path, item in doc["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, op in item.items():
            where = f"{method.upper()} {path}"
            assert op.get("security"), f"{where} has no security requirement"
            assert not any(
                p["in"] == "header" and p["name"].lower() == "authorization" for p in op.get("parameters", [])
            ), where
            assert "401" in op["responses"] and "503" in op["responses"], where
            for status, resp in op["responses"].items():
                if status.startswith(("4", "5")):
                    schema = resp["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (where, status, schema)
            if method in ("post", "delete") and not path.startswith("/v1/trajectory-batches"):
                assert "403" in op["responses"], where
            if "{" in path:
                assert "404" in op["responses"], where
            if method == "post":
                assert "requestBody" in op and "413" in op["responses"], where
    apis_body = doc["paths"]["/v1/apis"]["post"]["requestBody"]["content"]
    assert {"application/json", "application/yaml"} <= set(apis_body)
    assert "409" in doc["paths"]["/v1/trajectory-batches"]["post"]["responses"]
    offset = next(p for p in doc["paths"]["/v1/tools"]["get"]["parameters"] if p["name"] == "offset")
    assert offset["schema"]["maximum"] == MAX_OFFSET


def test_real_422_bodies_match_the_error_model(client: TestClient) -> None:
    bodies = [
        client.get("/v1/tools", params={"limit": "many"}),
        client.post("/v1/verification-runs", json={"budget": -1}),
        client.post("/v1/apis", content=b"\x00\xff\xfe", headers={"Content-Type": "application/json"}),
        client.post("/v1/apis", json={"document": shipped_documents()["StanReginCd"], "metadata": [1]}),
        client.post("/v1/apis", json={"document": shipped_documents()["StanReginCd"], "metadata": {"auth": "nope"}}),
        client.post("/v1/tokens", json={"role": "reader", "expires_in": "forever"}),
    ]
    for r in bodies:
        assert r.status_code == 422, (r.request.url, r.text)
        body = r.json()
        assert isinstance(body["error"], str) and isinstance(body["detail"], str)
        for loc in body.get("locations") or []:
            assert set(loc) == {"pointer", "message"}


def test_valid_requests_are_accepted(embedded_app: tuple[TestClient, EmbeddedStore]) -> None:
    c, store = embedded_app
    reader = {"Authorization": f"Bearer {mint_token(store, 'reader', 'team-v')}"}
    r = c.post(
        "/v1/trajectory-batches", json={"count": 1, "min_steps": 1.0, "max_steps": 2.0, "seed": 3.0}, headers=reader
    )
    assert r.status_code == 202, r.text
    for bad in ({"min_steps": 1.5}, {"min_steps": "1"}, {"min_steps": True}):
        assert c.post("/v1/trajectory-batches", json={"count": 1, **bad}, headers=reader).status_code == 422, bad
    zero = c.post("/v1/tokens", json={"role": "reader", "expires_in": "0D"}, headers=ADMIN)
    assert zero.status_code == 422 and "zero" in zero.json()["detail"], zero.text
    assert c.post("/v1/tokens", json={"role": "reader", "expires_in": "1D"}, headers=ADMIN).status_code == 201
    doc = {**shipped_documents()["StanReginCd"], "swagger": ""}
    r = c.post("/v1/apis", json=doc, headers=ADMIN)
    assert r.status_code == 201, r.text
    r = c.post("/v1/verification-runs", json={"mode": "celery"}, headers=ADMIN)
    assert r.status_code == 503, r.text
    assert r.json()["error"] == "queue_unavailable" and "KOPA_REDIS_URL" in r.json()["detail"]
    assert store.list_runs() == []  # nothing was queued or saved
    assert c.post("/v1/verification-runs", json={"budget": 5.0, "mode": "inprocess"}, headers=ADMIN).status_code == 202
