"""The shipped catalog: valid OpenAPI 3 and Swagger 2.0 documents, identical to what the declarations generate."""

from __future__ import annotations

import json

import pytest
from openapi_spec_validator import validate

from sandbox.catalog import build_catalog, shipped_documents, shipped_swagger2

SHIPPED, SWAGGER2 = shipped_documents(), shipped_swagger2()


def test_shipped_files_match_the_declarations() -> None:
    cat = build_catalog()
    assert json.loads(json.dumps(cat["openapi"], ensure_ascii=False)) == SHIPPED, (
        "run `kopa sandbox catalog --write` after changing operations"
    )
    assert json.loads(json.dumps(cat["swagger2"], ensure_ascii=False)) == SWAGGER2


def test_counts() -> None:
    assert sum(len(d["paths"]) for d in SHIPPED.values()) >= 30
    assert len({d["info"]["x-provider-service"] for d in SHIPPED.values()}) >= 9
    assert len(SWAGGER2) >= 3


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_openapi3_documents_are_valid(name: str) -> None:
    doc = SHIPPED[name]
    validate(doc)
    for methods in doc["paths"].values():
        for op in methods.values():
            for p in op["parameters"]:
                assert p["description"] and "type" in p["schema"], (name, p["name"])
                assert any("\uac00" <= ch <= "\ud7a3" for ch in p["description"]), "Korean description expected"


@pytest.mark.parametrize("name", sorted(SWAGGER2))
def test_swagger2_documents_are_valid(name: str) -> None:
    validate(SWAGGER2[name])
    assert SWAGGER2[name]["host"] == "apis.data.go.kr"
