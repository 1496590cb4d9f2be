"""Declarations of sandbox operations: the one source for both behaviour and the published OpenAPI catalog."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from core.envelope_kinds import Envelope, Gateway
from core.json_types import JsonValue

if TYPE_CHECKING:
    from sandbox.entities import World
    from sandbox.openapi_doc import Schema

#: One row of an answer as a handler returns it (JSON values by name; a row is rendered as XML or JSON).
Row = Mapping[str, JsonValue]
EmptyStyle = Literal["empty_string", "item_list", "absent", "list", "info3", "header_only"]


@dataclass(frozen=True)
class Param:
    name: str
    description: str
    type: Literal["string", "integer", "number"] = "string"
    required: bool = False
    example: str | None = None
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    format: str | None = None
    default: str | None = None


@dataclass(frozen=True)
class Field:
    name: str
    description: str
    type: Literal["string", "integer", "number", "object"] = "string"
    example: str | None = None
    nullable: bool = False


@dataclass(frozen=True)
class Provider:
    key: str
    title: str  # Korean service family title
    org: str
    format_param: str | None  # e.g. "dataType", "_type", "returnType", "type", "resultType"
    #: The defaults are those of the data.go.kr gateway, which most providers answer through.
    host: str = "apis.data.go.kr"
    envelope: Envelope = "datagokr"
    formats: tuple[str, ...] = ("xml", "json")  # the first is the default
    success_code: str = "00"
    success_msg: str = "NORMAL SERVICE."
    empty: EmptyStyle = "empty_string"
    single_as_object: bool = False
    page_numbers_as_strings: bool = False
    key_param: str = "serviceKey"
    gateway: Gateway = "datagokr"
    daily_quota: int = 10_000
    paging: tuple[str, str] = ("pageNo", "numOfRows")
    kma_datatype_in_body: bool = False
    json_content_type: str = "application/json;charset=UTF-8"
    missing_error: tuple[str, str] = ("11", "NO_MANDATORY_REQUEST_PARAMETERS_ERROR")
    invalid_error: tuple[str, str] = ("10", "INVALID_REQUEST_PARAMETER_ERROR")
    #: Handlers validate their own parameters (juso's E-codes, odcloud's HTTP statuses).
    validates_itself: bool = False
    #: JSON output turns digit-only strings into numbers (TAGO).
    digits_as_numbers: bool = False


class ProviderError(Exception):
    """A provider-level error, rendered inside the provider's own envelope (HTTP 200 on data.go.kr)."""

    def __init__(self, code: str, message: str, *, http_status: int = 200) -> None:
        super().__init__(f"{code} {message}")
        self.code = code
        self.message = message
        self.http_status = http_status


@dataclass
class Request:
    params: dict[str, str]
    body: Any
    world: World
    now: datetime
    seed: int


@dataclass
class Result:
    items: Sequence[Row]
    total: int | None = None  # when the handler paginates itself
    extra: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[Request], Result]


@dataclass
class Operation:
    provider: Provider
    service: str
    name: str
    summary: str
    description: str
    params: list[Param]
    fields: list[Field]
    handler: Handler
    method: Literal["GET", "POST"] = "GET"
    path_override: str | None = None
    paged: bool = True
    #: Korean phrase describing what a user wants when this tool is used (for request synthesis).
    intent: str = ""
    #: JSON schema of the request body for POST operations.
    body_schema: Schema | None = None
    #: Services ids whose older versions are retired (answer 12 / 404).
    retired: tuple[str, ...] = ()
    single: bool = False  # returns exactly one item (detail operations)

    @property
    def path(self) -> str:
        if self.path_override:
            return self.path_override
        return f"/{self.provider.key}/{self.service}/{self.name}"

    @property
    def service_path(self) -> str:
        """The server URL suffix under which the real portal publishes the service."""
        if self.path_override:
            return self.path_override.rsplit("/", 1)[0]
        return f"/{self.provider.key}/{self.service}"

    @property
    def op_id(self) -> str:
        return f"{self.service}.{self.name}"


def paging_params(provider: Provider, example_rows: int = 10) -> list[Param]:
    """Page number and page size. The documented default is what the gateway serves when the size is left out (10
    rows, as data.go.kr does); `example_rows` is the size a provider's guide shows in its examples (KMA's 1000)."""
    page, rows = provider.paging
    return [
        Param(page, "페이지번호", "integer", example="1", default="1"),
        Param(rows, "한 페이지 결과 수", "integer", example=str(example_rows), default="10"),
    ]


def format_param(provider: Provider) -> list[Param]:
    if not provider.format_param:
        return []
    values = tuple(v.upper() if provider.format_param == "dataType" else v for v in provider.formats)
    return [
        Param(
            provider.format_param,
            "응답자료형식 (" + "/".join(values) + ")",
            enum=values,
            example=values[-1],
            default=values[0],
        )
    ]
