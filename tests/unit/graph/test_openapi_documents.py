"""A registry that takes real documents: request bodies of every JSON, form and multipart media type (and Swagger 2
formData), output fields read off the resource rather than error or link arrays, percent-encoded `$ref` pointers,
enums that keep their types, protocol-relative servers under a registration base_url, and readable stable names
when neither the title nor an operationId gives one. Each test failed before the change it covers.

The documents are small and hand-written; nothing here needs a service."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import orjson
import pytest

from core.errors import InvalidInput
from execution.judge import judge
from graph.models import ParamRecord, RegistrationMeta, ToolRecord
from graph.openapi import load_document, parse_document
from graph.schema_convert import to_json_schema
from graph.tool_schema import model_schema

ROW = {"type": "object", "properties": {"stationId": {"type": "string"}, "stationNm": {"type": "string"}}}
ORDER = {
    "type": "object",
    "required": ["itemCd"],
    "properties": {"itemCd": {"type": "string", "description": "품목 코드"}, "qty": {"type": "integer"}},
}


def oas3(
    paths: dict[str, Any],
    *,
    server: str = "https://apis.example.kr/svc",
    title: str = "Example Service",
    components: dict[str, Any] | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "servers": [{"url": server}],
        "paths": paths,
    }
    if components is not None:
        doc["components"] = components
    return doc


def ok(schema: Any = None, media: str = "application/json") -> dict[str, Any]:
    if schema is None:
        return {"200": {"description": "ok"}}
    return {"200": {"description": "ok", "content": {media: {"schema": schema}}}}


def one_tool(doc: dict[str, Any], meta: RegistrationMeta | None = None) -> ToolRecord:
    tools = parse_document(doc, meta)[1]
    assert len(tools) == 1, [t.name for t in tools]
    return tools[0]


def body_names(tool: ToolRecord) -> set[str]:
    return {p.name for p in tool.params if p.location == "body"}


# ---------------------------------------------------------------- 1. request bodies of every media type


@pytest.mark.parametrize(
    "media",
    [
        "application/json; charset=utf-8",
        "application/vnd.kopa.order+json",
        "application/problem+json",
        "*/*",
        "text/json",
        "Application/JSON",
    ],
)
def test_json_request_bodies_of_every_json_media_type(media: str) -> None:
    tool = one_tool(
        oas3({"/orders": {"post": {"requestBody": {"content": {media: {"schema": ORDER}}}, "responses": ok()}}})
    )
    assert body_names(tool) == {"itemCd", "qty"}
    assert next(p for p in tool.params if p.name == "itemCd").required
    assert tool.body_media == "application/json"


def test_form_and_multipart_bodies_become_body_params_with_their_encoding() -> None:
    form = one_tool(
        oas3(
            {
                "/orders": {
                    "post": {
                        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": ORDER}}},
                        "responses": ok(),
                    }
                }
            }
        )
    )
    assert body_names(form) == {"itemCd", "qty"} and form.body_media == "application/x-www-form-urlencoded"
    upload = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "file": {"type": "string", "format": "binary"}},
    }
    multi = one_tool(
        oas3(
            {
                "/files": {
                    "post": {"requestBody": {"content": {"multipart/form-data": {"schema": upload}}}, "responses": ok()}
                }
            }
        )
    )
    assert body_names(multi) == {"title", "file"} and multi.body_media == "multipart/form-data"
    assert next(p for p in multi.params if p.name == "file").format == "binary"
    # the encoding is part of what a call depends on
    assert (
        form.spec_hash
        != one_tool(
            oas3(
                {
                    "/orders": {
                        "post": {
                            "requestBody": {"content": {"multipart/form-data": {"schema": ORDER}}},
                            "responses": ok(),
                        }
                    }
                }
            )
        ).spec_hash
    )
    get = one_tool(oas3({"/orders": {"get": {"responses": ok()}}}))
    assert get.body_media is None


def test_a_media_type_with_a_schema_wins_and_json_beats_form_beats_multipart() -> None:
    other = {"type": "object", "properties": {"memo": {"type": "string"}}}
    content = {
        "application/xml": {"schema": other},
        "application/json": {"example": {"itemCd": "A"}},
        "multipart/form-data": {"schema": other},
        "application/x-www-form-urlencoded": {"schema": ORDER},
    }
    tool = one_tool(oas3({"/orders": {"post": {"requestBody": {"content": content}, "responses": ok()}}}))
    assert body_names(tool) == {"itemCd", "qty"} and tool.body_media == "application/x-www-form-urlencoded"
    content = {
        "multipart/form-data": {"schema": other},
        "application/x-www-form-urlencoded": {"schema": other},
        "application/json;charset=UTF-8": {"schema": ORDER},
    }
    tool = one_tool(oas3({"/orders": {"post": {"requestBody": {"content": content}, "responses": ok()}}}))
    assert body_names(tool) == {"itemCd", "qty"} and tool.body_media == "application/json"


def swagger2(paths: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "swagger": "2.0",
        "info": {"title": "Example Service", "version": "1"},
        "host": "apis.example.kr",
        "basePath": "/svc",
        "schemes": ["https"],
        "paths": paths,
        **top,
    }


def test_swagger2_form_data_parameters_are_body_params_encoded_as_consumes_says() -> None:
    fields = [
        {"name": "itemCd", "in": "formData", "type": "string", "required": True, "description": "품목 코드"},
        {"name": "qty", "in": "formData", "type": "integer", "enum": [1, 5, 10]},
        {"name": "serviceKey", "in": "query", "type": "string", "required": True},
    ]
    responses = {"200": {"description": "ok", "schema": {"type": "array", "items": ROW}}}
    doc = swagger2(
        {
            "/orders": {
                "post": {
                    "consumes": ["application/x-www-form-urlencoded"],
                    "parameters": fields,
                    "responses": responses,
                }
            }
        },
        consumes=["application/json"],
    )
    tool = one_tool(doc)
    assert body_names(tool) == {"itemCd", "qty"} and tool.body_media == "application/x-www-form-urlencoded"
    assert next(p for p in tool.params if p.name == "itemCd").required
    assert tool.auth_param == "serviceKey" and "serviceKey" not in tool.json_schema["properties"]
    # a file part, or consumes naming only multipart, makes the form multipart
    upload = copy.deepcopy(doc)
    upload["paths"]["/orders"]["post"]["parameters"].append({"name": "photo", "in": "formData", "type": "file"})
    assert one_tool(upload).body_media == "multipart/form-data"
    only_multipart = copy.deepcopy(doc)
    del only_multipart["paths"]["/orders"]["post"]["consumes"]
    only_multipart["consumes"] = ["multipart/form-data"]
    assert one_tool(only_multipart).body_media == "multipart/form-data"
    # an `in: body` parameter is a JSON body
    json_body = swagger2(
        {
            "/orders": {
                "post": {"parameters": [{"name": "order", "in": "body", "schema": ORDER}], "responses": responses}
            }
        }
    )
    tool = one_tool(json_body)
    assert body_names(tool) == {"itemCd", "qty"} and tool.body_media == "application/json"


def test_response_fields_from_any_json_media_type_that_has_a_schema() -> None:
    rows = {"type": "array", "items": ROW}
    xml_row = {"type": "object", "properties": {"xmlOnly": {"type": "string"}}}
    tool = one_tool(
        oas3(
            {
                "/stations": {
                    "get": {
                        "responses": {
                            "200": {
                                "description": "ok",
                                "content": {
                                    "application/xml": {"schema": {"type": "array", "items": xml_row}},
                                    "application/vnd.example.stations+json; charset=utf-8": {"schema": rows},
                                },
                            }
                        }
                    }
                }
            }
        )
    )
    assert {f.name for f in tool.fields} == {"stationId", "stationNm"} and tool.items_path == "[]"
    tool = one_tool(
        oas3(
            {
                "/stations": {
                    "get": {
                        "responses": {
                            "200": {
                                "description": "ok",
                                "content": {
                                    "application/json": {"example": [{"stationId": "1"}]},
                                    "text/json; charset=utf-8": {"schema": rows},
                                },
                            }
                        }
                    }
                }
            }
        )
    )
    assert {f.name for f in tool.fields} == {"stationId", "stationNm"}


# ---------------------------------------------------------------- 2. output fields from the resource


def fields_of(schema: dict[str, Any]) -> tuple[str, set[str]]:
    tool = one_tool(oas3({"/stations": {"get": {"responses": ok(schema)}}}))
    return tool.items_path, {f.name for f in tool.fields}


def arr(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


ERROR = {"type": "object", "properties": {"code": {"type": "string"}, "detail": {"type": "string"}}}
LINK = {"type": "object", "properties": {"rel": {"type": "string"}, "href": {"type": "string"}}}


def test_output_fields_come_from_the_resource_not_from_error_warning_or_link_arrays() -> None:
    # an error envelope next to a single resource
    single = {
        "type": "object",
        "properties": {"errors": arr(ERROR), "warnings": arr(ERROR), "_links": arr(LINK), "data": ROW},
    }
    assert fields_of(single) == ("data", {"stationId", "stationNm"})
    # link arrays before the rows
    assert fields_of({"type": "object", "properties": {"_links": arr(LINK), "items": arr(ROW)}}) == (
        "items[]",
        {"stationId", "stationNm"},
    )
    # JSON:API: errors and side-loaded resources before the primary data
    jsonapi = {
        "type": "object",
        "properties": {
            "errors": arr(ERROR),
            "included": arr(LINK),
            "data": arr(ROW),
            "meta": {"type": "object", "properties": {"total": {"type": "integer"}}},
            "links": arr(LINK),
        },
    }
    assert fields_of(jsonapi) == ("data[]", {"stationId", "stationNm"})
    # HAL: the resource is under _embedded, whatever else the top level holds
    hal = {
        "type": "object",
        "properties": {
            "messages": arr(ERROR),
            "_links": {"type": "object", "properties": {"self": LINK}},
            "_embedded": {"type": "object", "properties": {"stations": arr(ROW)}},
            "total": {"type": "integer"},
        },
    }
    assert fields_of(hal) == ("_embedded.stations[]", {"stationId", "stationNm"})
    # deeper rows are not outranked by an error array at the top
    nested = {
        "type": "object",
        "properties": {
            "errors": arr(ERROR),
            "result": {"type": "object", "properties": {"resultCode": {"type": "string"}, "list": arr(ROW)}},
        },
    }
    assert fields_of(nested) == ("result.list[]", {"stationId", "stationNm"})
    # one resource with a list inside is that resource, not rows of its list
    tags = {
        "type": "object",
        "properties": {
            "data": {
                "type": "object",
                "properties": {"stationId": {"type": "string"}, "stationNm": {"type": "string"}, "tags": arr(LINK)},
            },
            "meta": {"type": "object", "properties": {"requestId": {"type": "string"}}},
        },
    }
    assert fields_of(tags) == ("data", {"stationId", "stationNm", "tags"})


def test_the_judge_reads_rows_where_the_resource_is() -> None:
    single = {"type": "object", "properties": {"errors": arr(ERROR), "data": ROW}}
    tool = one_tool(oas3({"/stations": {"get": {"responses": ok(single)}}}))
    body = orjson.dumps(
        {"errors": [{"code": "W1", "detail": "deprecated field"}], "data": {"stationId": "108", "stationNm": "서울"}}
    )
    verdict = judge(
        200,
        body,
        "application/json",
        envelope=tool.envelope,
        items_path=tool.items_path,
        declared_fields={f.name for f in tool.fields},
    )
    assert verdict.outcome == "ok" and verdict.items == [{"stationId": "108", "stationNm": "서울"}]


# ---------------------------------------------------------------- 3. RFC 6901 pointers in URI fragments


def test_percent_encoded_ref_pointers_resolve() -> None:
    components = {
        "schemas": {
            "Station Row": ROW,
            "{Envelope}": {
                "type": "object",
                "properties": {"items": {"type": "array", "items": {"$ref": "#/components/schemas/Station%20Row"}}},
            },
            "a/b": {"type": "string", "description": "슬래시가 있는 이름"},
        },
        "parameters": {
            "page No": {"name": "pageNo", "in": "query", "schema": {"$ref": "#/components/schemas/a~1b"}},
            "코드": {"name": "code", "in": "query", "schema": {"$ref": "#/components/schemas/a%7E1b"}},
        },
    }
    doc = oas3(
        {
            "/stations": {
                "get": {
                    "parameters": [
                        {"$ref": "#/components/parameters/page%20No"},
                        {"$ref": "#/components/parameters/%EC%BD%94%EB%93%9C"},
                    ],
                    "responses": ok({"$ref": "#/components/schemas/%7BEnvelope%7D"}),
                }
            }
        },
        components=components,
    )
    tool = one_tool(doc)
    assert tool.items_path == "items[]" and {f.name for f in tool.fields} == {"stationId", "stationNm"}
    assert {p.name: p.description for p in tool.params} == {
        "pageNo": "슬래시가 있는 이름",
        "code": "슬래시가 있는 이름",
    }
    # the JSON Schema converter follows the same pointers
    inlined = to_json_schema({"$ref": "#/components/schemas/%7BEnvelope%7D"}, doc)
    assert inlined["properties"]["items"]["items"] == ROW
    # a percent-encoded pointer to nothing is still a 422 naming where it is used
    broken = copy.deepcopy(doc)
    broken["paths"]["/stations"]["get"]["responses"] = ok({"$ref": "#/components/schemas/No%20Such"})
    with pytest.raises(InvalidInput) as err:
        parse_document(broken)
    assert err.value.locations[0]["pointer"].startswith("/paths/~1stations/get/responses/200")


# ---------------------------------------------------------------- 4. enums keep their types


def test_enums_keep_their_documented_types() -> None:
    props = {"unit": {"type": "integer", "enum": [1, 10, 100]}, "urgent": {"type": "boolean", "enum": [True, False]}}
    doc = oas3(
        {
            "/orders": {
                "post": {
                    "parameters": [
                        {"name": "numOfRows", "in": "query", "schema": {"type": "integer", "enum": [10, 50, 100]}},
                        {"name": "rate", "in": "query", "schema": {"type": "number", "enum": [0.5, 1.5]}},
                        {"name": "onlyOpen", "in": "query", "schema": {"type": "boolean", "enum": [True]}},
                    ],
                    "requestBody": {
                        "content": {"application/json": {"schema": {"type": "object", "properties": props}}}
                    },
                    "responses": ok(),
                }
            }
        }
    )
    params = {p.name: p for p in one_tool(doc).params}
    assert params["numOfRows"].enum == [10, 50, 100] and all(type(v) is int for v in params["numOfRows"].enum)
    assert params["rate"].enum == [0.5, 1.5]
    assert params["onlyOpen"].enum == [True] and type(params["onlyOpen"].enum[0]) is bool
    assert params["unit"].enum == [1, 10, 100] and type(params["unit"].enum[0]) is int
    assert params["urgent"].enum == [True, False] and type(params["urgent"].enum[1]) is bool


def test_model_schema_enums_validate_for_their_declared_type() -> None:
    doc = oas3(
        {
            "/stations": {
                "get": {
                    "parameters": [
                        {"name": "numOfRows", "in": "query", "schema": {"type": "integer", "enum": [10, 50]}},
                        {"name": "onlyOpen", "in": "query", "schema": {"type": "boolean", "enum": [True, False]}},
                        # documents disagree with themselves: the schema still accepts its own enum
                        {"name": "sort", "in": "query", "schema": {"type": "string", "enum": [1, 2, True]}},
                        {
                            "name": "pageSize",
                            "in": "query",
                            "schema": {"type": "integer", "enum": ["20", "40", "many"]},
                        },
                    ],
                    "responses": ok(),
                }
            }
        }
    )
    tool = one_tool(doc)
    schema = tool.json_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    props = schema["properties"]
    assert props["numOfRows"]["enum"] == [10, 50] and props["onlyOpen"]["enum"] == [True, False]
    assert props["sort"]["enum"] == ["1", "2", "true"] and props["pageSize"]["enum"] == [20, 40]
    for p in tool.params:
        for value in props[p.name]["enum"]:
            jsonschema.validate({p.name: value}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"numOfRows": "10"}, schema)
    # and for records built elsewhere (stores, tests)
    built = model_schema("", [ParamRecord(name="level", type="integer", enum=[1, 2, 3])])
    jsonschema.validate({"level": 2}, built)


def test_array_parameters_keep_their_item_enum_and_default() -> None:
    status = {"type": "array", "items": {"type": "string", "enum": ["open", "closed", "planned"], "default": "open"}}
    levels = {"type": "array", "items": {"type": "integer", "enum": [1, 2, 3]}}
    tool = one_tool(
        oas3(
            {
                "/stations": {
                    "get": {
                        "parameters": [
                            {"name": "status", "in": "query", "schema": status},
                            {"name": "level", "in": "query", "schema": levels},
                        ],
                        "responses": ok(),
                    }
                }
            }
        )
    )
    params = {p.name: p for p in tool.params}
    assert params["status"].enum == ["open", "closed", "planned"] and params["status"].default == "open"
    assert params["status"].item_type == "string" and params["level"].item_type == "integer"
    assert params["level"].enum == [1, 2, 3]
    props = tool.json_schema["properties"]
    assert props["status"] == {"type": "array", "items": {"type": "string", "enum": ["open", "closed", "planned"]}}
    assert props["level"]["items"] == {"type": "integer", "enum": [1, 2, 3]}
    jsonschema.validate({"status": ["open", "planned"], "level": [1, 3]}, tool.json_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"status": ["sold"]}, tool.json_schema)
    # Swagger 2 puts the items on the parameter itself
    doc = swagger2(
        {
            "/stations": {
                "get": {
                    "parameters": [
                        {
                            "name": "status",
                            "in": "query",
                            "type": "array",
                            "collectionFormat": "multi",
                            "items": {"type": "string", "enum": ["open", "closed"], "default": "closed"},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        }
    )
    p = one_tool(doc).params[0]
    assert (p.enum, p.default, p.item_type) == (["open", "closed"], "closed", "string")


def test_a_format_switch_is_found_among_enums_that_are_not_text() -> None:
    tool = one_tool(
        oas3(
            {
                "/stations": {
                    "get": {
                        "parameters": [
                            {"name": "type", "in": "query", "schema": {"type": "integer", "enum": [1, 2]}},
                            {"name": "dataType", "in": "query", "schema": {"type": "string", "enum": ["XML", "JSON"]}},
                        ],
                        "responses": ok(),
                    }
                }
            }
        )
    )
    assert tool.format_param == "dataType=JSON"
    assert "type" in tool.json_schema["properties"] and "dataType" not in tool.json_schema["properties"]


def test_enum_members_no_parameter_can_take_are_left_out() -> None:
    yaml_doc = b"""
openapi: 3.0.3
info: {title: Example Service, version: "1"}
servers: [{url: "https://apis.example.kr/svc"}]
paths:
  /stations:
    get:
      parameters:
        - {name: limit, in: query, schema: {type: number, enum: [.inf, .nan, 1.5, {a: 1}, [2]]}}
        - {name: day, in: query, schema: {type: string, enum: [2024-01-01, plain]}}
      responses: {"200": {description: ok}}
"""
    params = {p.name: p for p in one_tool(load_document(yaml_doc)).params}
    assert params["limit"].enum == [1.5]
    assert params["day"].enum == ["2024-01-01", "plain"]


# ---------------------------------------------------------------- 5. protocol-relative servers and base_url


def urls(doc: dict[str, Any], base_url: str | None = None) -> list[str]:
    return [t.url for t in parse_document(doc, RegistrationMeta(base_url=base_url))[1]]


def test_protocol_relative_servers_and_base_url_give_one_scheme_and_one_host() -> None:
    doc = oas3({"/getStation": {"get": {"responses": ok()}}}, server="//apis.example.kr/svc")
    assert urls(doc) == ["https://apis.example.kr/svc/getStation"]
    assert urls(doc, "http://mirror.local:8080") == ["http://mirror.local:8080/svc/getStation"]
    assert urls(doc, "http://mirror.local:8080/") == ["http://mirror.local:8080/svc/getStation"]
    # a base_url that is already the whole server URL is not doubled either
    assert urls(doc, "http://mirror.local:8080/svc") == ["http://mirror.local:8080/svc/getStation"]
    relative = oas3({"/getStation": {"get": {"responses": ok()}}}, server="/svc")
    assert urls(relative, "http://mirror.local:8080") == ["http://mirror.local:8080/svc/getStation"]
    assert urls(relative, "http://mirror.local:8080/svc/") == ["http://mirror.local:8080/svc/getStation"]
    # an absolute server URL is kept as documented
    assert urls(oas3({"/getStation": {"get": {"responses": ok()}}}), "http://mirror.local:8080") == [
        "https://apis.example.kr/svc/getStation"
    ]


def test_swagger2_hosts_and_base_paths_under_a_base_url() -> None:
    responses = {"200": {"description": "ok"}}
    hostless = swagger2({"/getStation": {"get": {"responses": responses}}})
    del hostless["host"]
    assert urls(hostless, "http://mirror.local:8080") == ["http://mirror.local:8080/svc/getStation"]
    assert urls(hostless, "http://mirror.local:8080/svc") == ["http://mirror.local:8080/svc/getStation"]
    url_as_host = swagger2({"/getStation": {"get": {"responses": responses}}}, host="https://apis.example.kr/")
    assert urls(url_as_host) == ["https://apis.example.kr/svc/getStation"]
    protocol_relative = swagger2({"/getStation": {"get": {"responses": responses}}}, host="//apis.example.kr")
    assert urls(protocol_relative) == ["https://apis.example.kr/svc/getStation"]


# ---------------------------------------------------------------- 6. readable, stable names


CROSSROADS = "https://apis.data.go.kr/B553766/CrsrdMapInfoService_2.0"


def names(doc: dict[str, Any]) -> dict[str, str]:
    return {t.op_key: t.name for t in parse_document(doc)[1]}


def test_names_come_from_the_path_when_neither_title_nor_operation_ids_give_one() -> None:
    paths = {
        "/getCrsrdMapInfo": {"get": {"responses": ok()}},
        "/crsrd/{crsrdId}": {"get": {"responses": ok()}, "delete": {"responses": ok()}},
        "/crsrdList.do": {"get": {"operationId": "교차로목록조회", "responses": ok()}},
    }
    doc = oas3(paths, server=CROSSROADS, title="교차로 지도 정보 API")
    assert names(doc) == {
        "GET /getCrsrdMapInfo": "crsrd_map_info_get_crsrd_map_info",
        "GET /crsrd/{crsrdId}": "crsrd_map_info_get_crsrd_by_crsrd_id",
        "DELETE /crsrd/{crsrdId}": "crsrd_map_info_delete_crsrd_by_crsrd_id",
        "GET /crsrdList.do": "crsrd_map_info_get_crsrd_list",
    }
    tool = next(t for t in parse_document(doc)[1] if t.op_key == "GET /getCrsrdMapInfo")
    assert tool.description_en == "Get crsrd map info"


def test_names_are_stable_across_registrations_and_added_operations() -> None:
    paths = {"/getCrsrdMapInfo": {"get": {"responses": ok()}}, "/crsrd/{crsrdId}": {"get": {"responses": ok()}}}
    doc = oas3(paths, server=CROSSROADS, title="교차로 지도 정보")
    first = names(doc)
    assert names(copy.deepcopy(doc)) == first
    grown = oas3(
        {"/area/{crsrdId}": {"get": {"responses": ok()}}, "/v1/{crsrdId}": {"get": {"responses": ok()}}, **paths},
        server=CROSSROADS,
        title="교차로 지도 정보",
    )
    again = names(grown)
    assert {k: again[k] for k in first} == first
    assert len(set(again.values())) == len(again)
