"""Schema honesty: the OpenAPI document states every bound the server
enforces, so each request gets what its schema says. The four requests of the issue: an expiry of `"0D"` (the
pattern allowed it, the server refused it), a document without servers (the schema allowed it, registration
refused it), a `count` above a maximum the schema did not state, and a token name outside the ASCII pattern (the
schema refused it, the server, whose `\\w` is Unicode, accepted it). Each case is checked both ways: against the
served document with a JSON Schema validator, and against the server.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from api.app import create_app
from api.routes.apis import API_ID, MAX_DAILY_QUOTA, MAX_RATE_PER_S, SECRET_NAME
from api.routes.tokens import EXPIRES_IN
from api.security import MAX_EXPIRY, parse_duration
from core.errors import InvalidInput
from core.settings import _ENV_NAME, BatchSettings, Settings
from graph.models import AuthConfig, RegistrationMeta
from sandbox.catalog import shipped_documents

ADMIN = {"Authorization": "Bearer boot-schema-honesty"}
DOC = shipped_documents()["StanReginCd"]
MAX_COUNT = 40

Spec = dict[str, Any]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Spec]]:
    settings = Settings(
        store="embedded",
        embedded_path=tmp_path_factory.mktemp("schema") / "g.sqlite3",
        bootstrap_token=SecretStr("boot-schema-honesty"),
        redis_url=None,
        batches=BatchSettings(max_count=MAX_COUNT, max_concurrent=1000),
    )
    with TestClient(create_app(settings)) as client:
        yield client, client.get("/openapi.json").json()


def _resolve(spec: Spec, schema: Any) -> Any:
    """`schema` with every local $ref replaced by what it names (the documents here have no cycles)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            return _resolve(spec, spec["components"]["schemas"][name])
        return {k: _resolve(spec, v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_resolve(spec, v) for v in schema]
    return schema


def body_schema(spec: Spec, path: str, method: str = "post") -> Any:
    return _resolve(spec, spec["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"])


def param_schema(spec: Spec, path: str, name: str, method: str = "post") -> Any:
    return _resolve(spec, next(p for p in spec["paths"][path][method]["parameters"] if p["name"] == name)["schema"])


def valid(schema: Any, value: Any) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(value))


# -------------------------------------------------------------------------------------------- 1. "0D" and expiry
def test_the_expiry_pattern_is_exactly_what_the_server_mints() -> None:
    """Every N followed by a unit, N from 0 to 99,999 and the 6-digit edges: the documented pattern holds it exactly
    when `parse_duration` gives a positive duration of at most ten years (leading zeros are outside both)."""
    numbers = [*range(100_000), 100_000, 525_600, 999_999]
    for unit in "smhdwSMHDW":
        for n in numbers:
            text = f"{n}{unit}"
            try:
                minted = 0 < parse_duration(text).total_seconds() <= MAX_EXPIRY.total_seconds()
            except InvalidInput:
                minted = False
            assert bool(re.fullmatch(EXPIRES_IN, text)) == minted, text
    for text in ("030d", "00s", "01w", "", " 30d", "30d ", "30", "d", "30x", "1.5d", "+3d", "-3d"):
        assert not re.fullmatch(EXPIRES_IN, text), text


@pytest.mark.parametrize(
    ("expires_in", "status"),
    [
        ("0D", 422),
        ("0d", 422),
        ("000s", 422),
        ("030d", 422),
        ("", 422),
        ("30d ", 422),
        ("1D", 201),
        ("3650d", 201),
        ("3651d", 422),
        ("87600h", 201),
        ("87601h", 422),
        ("521w", 201),
        ("522w", 422),
        ("999999s", 201),
        ("999999M", 201),
    ],
)
def test_expiry_gets_what_its_schema_says(served: tuple[TestClient, Spec], expires_in: str, status: int) -> None:
    client, spec = served
    body = {"role": "reader", "name": "team-expiry", "expires_in": expires_in}
    assert valid(body_schema(spec, "/v1/tokens"), body) == (status == 201), expires_in
    r = client.post("/v1/tokens", json=body, headers=ADMIN)
    assert r.status_code == status, (expires_in, r.text)
    if status == 422:
        detail = r.json()["detail"]
        assert "expiry" in detail and "^(?:" not in detail, detail  # a sentence, never the regular expression
        if expires_in.lower() in ("0d", "000s"):
            assert "zero" in detail


# ------------------------------------------------------------------------------------------------- 2. token names
@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("team-a", True),
        ("Team A_2.0", True),
        ("", True),
        ("팀", False),
        ("équipe", False),
        ("ｔｅａｍ", False),
        ("team\u00a0a", False),
        ("team/a", False),
        ("x" * 101, False),
    ],
)
def test_token_names_get_what_their_schema_says(served: tuple[TestClient, Spec], name: str, ok: bool) -> None:
    client, spec = served
    body = {"role": "reader", "name": name}
    assert valid(body_schema(spec, "/v1/tokens"), body) == ok, name
    r = client.post("/v1/tokens", json=body, headers=ADMIN)
    assert r.status_code == (201 if ok else 422), (name, r.text)


# --------------------------------------------------------------------------------------- 3. a batch's count maximum
def test_the_count_maximum_is_this_servers_setting(served: tuple[TestClient, Spec]) -> None:
    client, spec = served
    schema = body_schema(spec, "/v1/trajectory-batches")
    assert schema["properties"]["count"]["maximum"] == MAX_COUNT
    reader = {
        "Authorization": "Bearer " + client.post("/v1/tokens", json={"role": "reader"}, headers=ADMIN).json()["token"]
    }
    for count, status in ((MAX_COUNT, 202), (MAX_COUNT + 1, 422), (1, 202), (0, 422)):
        body = {"count": count, "source": "pool"}
        assert valid(schema, body) == (status == 202), count
        r = client.post("/v1/trajectory-batches", json=body, headers=reader)
        assert r.status_code == status, (count, r.text)
    default = create_app(Settings(redis_url=None)).openapi()
    assert default["components"]["schemas"]["BatchRequest"]["properties"]["count"]["maximum"] == 2000


# ------------------------------------------------------------------------------------ 4. documents and their server
def _without_server(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out.pop("servers", None)
    return out


def test_a_document_without_a_server_gets_what_its_schema_says(served: tuple[TestClient, Spec]) -> None:
    client, spec = served
    schema = body_schema(spec, "/v1/apis")
    bare = _without_server(DOC)
    base = DOC["servers"][0]["url"]
    cases: list[tuple[str, Any, dict[str, Any], int]] = [
        ("a document without servers", bare, {}, 422),
        ("empty servers", {**bare, "servers": []}, {}, 422),
        ("a server without url", {**bare, "servers": [{"description": "x"}]}, {}, 422),
        ("neither openapi nor swagger", {"info": {}, "paths": {}}, {}, 422),
        ("a wrapper without a server or base_url", {"document": bare}, {}, 422),
        ("a wrapper with metadata.base_url", {"document": bare, "metadata": {"base_url": base}}, {}, 201),
        ("a document with servers", DOC, {"api_id": "stan-schema"}, 201),
        ("a wrapper of a document with servers", {"document": DOC, "metadata": {"api_id": "stan-wrap"}}, {}, 201),
    ]
    for label, body, params, status in cases:
        assert valid(schema, body) == (status == 201), label
        r = client.post("/v1/apis", json=body, params=params, headers=ADMIN)
        assert r.status_code == status or (status == 201 and r.status_code == 200), (label, r.text)
        if status == 422 and "paths" in body:
            assert any(loc["pointer"] in ("/servers", "/") for loc in r.json()["locations"]), (label, r.text)
    # Swagger 2.0: `host` is its server
    swagger = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    assert not valid(schema, swagger) and not valid(schema, {**swagger, "host": "/"})
    assert valid(schema, {**swagger, "host": "apis.data.go.kr"})
    # the one case the JSON Schema cannot tie to the body: base_url as a query parameter (stated in both texts)
    assert "base_url" in spec["paths"]["/v1/apis"]["post"]["requestBody"]["description"]
    assert "needed when the document names none" in param_schema(spec, "/v1/apis", "base_url")["description"]


# -------------------------------------------------------------------------- 5. registration metadata, both ways
@pytest.mark.parametrize(
    ("params", "ok"),
    [
        ({"api_id": "X"}, False),
        ({"api_id": "a"}, False),
        ({"api_id": "stan-meta"}, True),
        ({"rate_limit_per_s": MAX_RATE_PER_S}, True),
        ({"rate_limit_per_s": MAX_RATE_PER_S + 1}, False),
        ({"rate_limit_per_s": 0}, False),
        ({"daily_quota": MAX_DAILY_QUOTA}, True),
        ({"daily_quota": MAX_DAILY_QUOTA + 1}, False),
        ({"daily_quota": 10**20}, False),
        ({"secret_name": ""}, True),
        ({"secret_name": "KOPA_SERVICE_KEY"}, True),
        ({"secret_name": "팀"}, False),
        ({"secret_name": "1KEY"}, False),
    ],
)
def test_registration_parameters_get_what_their_schema_says(
    served: tuple[TestClient, Spec], params: dict[str, Any], ok: bool
) -> None:
    client, spec = served
    for name, value in params.items():
        assert valid(param_schema(spec, "/v1/apis", name), value) == ok, params
    query = {"api_id": "stan-meta", **params}
    r = client.post("/v1/apis", params=query, json=DOC, headers=ADMIN)
    assert (r.status_code in (200, 201)) == ok, (params, r.text)
    # the same bounds in the wrapper's metadata
    wrapper = {"document": DOC, "metadata": {k: v for k, v in query.items() if k != "secret_name"}}
    if params.get("secret_name"):
        wrapper["metadata"]["auth"] = {"secret": params["secret_name"]}
    assert valid(body_schema(spec, "/v1/apis"), wrapper) == ok, wrapper
    r = client.post("/v1/apis", json=wrapper, headers=ADMIN)
    assert (r.status_code in (200, 201)) == ok, (wrapper, r.text)


def test_the_wrapper_metadata_schema_follows_the_models() -> None:
    """The request's inline metadata schema names exactly RegistrationMeta's and AuthConfig's fields and patterns
    (it is written out for the bounds the models leave to the route, so it must not drift from them)."""
    schema = create_app(Settings(redis_url=None)).openapi()
    wrapper = body_schema(schema, "/v1/apis")["oneOf"][1]
    meta = wrapper["properties"]["metadata"]["properties"]
    assert set(meta) == set(RegistrationMeta.model_fields)
    assert set(meta["auth"]["anyOf"][0]["properties"]) == set(AuthConfig.model_fields)
    api_id = RegistrationMeta.model_json_schema()["properties"]["api_id"]["anyOf"][0]["pattern"]
    assert api_id == API_ID == meta["api_id"]["anyOf"][0]["pattern"]
    assert meta["auth"]["anyOf"][0]["properties"]["secret"]["anyOf"][0]["pattern"] == SECRET_NAME
    assert _ENV_NAME.pattern == SECRET_NAME  # the secret policy's own shape of a variable name
