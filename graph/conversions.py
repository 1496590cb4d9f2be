"""The built-in local API `kopa-convert`: coordinate conversions as real tools of the registry.

Its OpenAPI document (below) is parsed by the same parser as any API, so its tools have parameters, fields, JSON
Schemas and function specs like the others; `register_conversions` writes it into a store (idempotent: an
unchanged document changes nothing). Calls never leave the process: the executor (execution/executor.py) answers
a tool of this API with `answer`, the pure handlers of core.conversions, and the benchmark's replay computes the
same answer without a recording. The server URL is under `.invalid` (RFC 2606), so no call can ever go out to it.

Conversion tools are utilities, not links to discover: verification leaves them out (they are correct by
construction), and synthesis puts a conversion step where a verified link needs a projection
(synthesis/conversions.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from core.conversions import CRS, ConversionError, convert_rows, from_kma_grid_rows, shown, to_kma_grid_rows
from core.errors import Conflict
from core.json_types import JsonObject, JsonValue
from core.settings import Settings
from graph.models import RegistrationMeta, RegistrationResult, ToolRecord
from graph.openapi import parse_document
from graph.store import GraphStore

API_ID = "kopa-convert"
SERVER_URL = "https://convert.kopa.invalid/v1"
TO_KMA_GRID = "kopa_convert_to_kma_grid"
CONVERT = "kopa_convert_coordinates"
FROM_KMA_GRID = "kopa_convert_from_kma_grid"

_X = (
    "x 좌표: WGS84는 경도(longitude, 예 126.9779692), UTMK·TM은 동쪽 좌표(easting, 미터). 앞선 도구 결과의 값을 "
    "그대로 (mapx, gpslong, XPos, entX, tmX)"
)
_Y = (
    "y 좌표: WGS84는 위도(latitude, 예 37.5662952), UTMK·TM은 북쪽 좌표(northing, 미터). 앞선 도구 결과의 값을 "
    "그대로 (mapy, gpslati, YPos, entY, tmY)"
)
_CRS = (
    "WGS84 (위경도: TourAPI mapx/mapy, TAGO, 심평원 XPos/YPos), UTMK (UTM-K 미터, EPSG:5179: 도로명주소 "
    "entX/entY), TM (중부원점 TM 미터, EPSG:5181: 에어코리아 tmX/tmY)"
)


def _query(
    name: str, type_: str, description: str, example: JsonValue, enum: tuple[str, ...] | None = None
) -> JsonObject:
    schema: JsonObject = {"type": type_}
    if enum:
        schema["enum"] = list(enum)
    return {
        "name": name,
        "in": "query",
        "required": True,
        "description": description,
        "example": example,
        "schema": schema,
    }


def _rows(props: dict[str, tuple[str, str]]) -> JsonObject:
    row: JsonObject = {
        "type": "object",
        "properties": {k: {"type": t, "description": d} for k, (t, d) in props.items()},
    }
    return {
        "200": {
            "description": "변환 결과 (한 행)",
            "content": {
                "application/json": {
                    "schema": {"type": "object", "properties": {"items": {"type": "array", "items": row}}}
                }
            },
        },
        "400": {"description": '잘못된 입력: 숫자가 아닌 값, 좌표계 밖의 점, 격자 밖의 점 ({"error", "message"})'},
    }


#: The point to convert, as the two coordinate operations take it.
_XY = (_query("x", "number", _X, 126.9779692), _query("y", "number", _Y, 37.5662952))


def _get(
    op_id: str, summary: str, description: str, intent: str, params: list[JsonValue], rows: dict[str, tuple[str, str]]
) -> JsonObject:
    """One GET operation of the document, answering one row of `rows` (name -> (type, description))."""
    op: JsonObject = {
        "operationId": op_id,
        "summary": summary,
        "description": description,
        "x-kopa-intent": intent,
        "parameters": params,
        "responses": _rows(rows),
    }
    return {"get": op}


DOCUMENT: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {
        "title": "KOPA convert",
        "version": "1.0",
        "description": "좌표 변환 도구 (로컬 계산, 외부 호출 없음): WGS84, UTM-K, TM 중부원점, 기상청 격자",
    },
    "servers": [{"url": SERVER_URL}],
    "paths": {
        "/to-kma-grid": _get(
            "toKmaGrid",
            "좌표를 기상청 격자(nx, ny)로 변환",
            (
                "위경도(WGS84)·UTM-K·TM 좌표를 기상청 예보 격자(5 km, nx 1-149, ny 1-253)로 변환합니다. "
                "단기예보·초단기실황의 nx, ny에 그대로 넣으세요."
            ),
            "위치 주변의 기상청 예보 격자 변환",
            [
                *_XY,
                _query("crs", "string", "x, y의 좌표계: " + _CRS, "WGS84", CRS),
            ],
            {
                "nx": ("integer", "예보지점 X 좌표 (기상청 격자)"),
                "ny": ("integer", "예보지점 Y 좌표 (기상청 격자)"),
                "lon": ("number", "입력 지점의 WGS84 경도"),
                "lat": ("number", "입력 지점의 WGS84 위도"),
            },
        ),
        "/coordinates": _get(
            "coordinates",
            "좌표계 변환 (WGS84, UTM-K, TM)",
            (
                "x, y를 from_crs에서 to_crs 좌표계로 변환합니다 (예: 위경도 → 에어코리아 근접측정소 tmX, tmY). "
                "WGS84는 소수 7자리, 미터는 3자리로 답합니다."
            ),
            "위치 주변의 좌표 변환",
            [
                *_XY,
                _query("from_crs", "string", "입력 x, y의 좌표계: " + _CRS, "WGS84", CRS),
                _query("to_crs", "string", "결과 x, y의 좌표계", "TM", CRS),
            ],
            {
                "x": ("number", "변환된 x 좌표 (WGS84 경도, 또는 미터 단위 easting)"),
                "y": ("number", "변환된 y 좌표 (WGS84 위도, 또는 미터 단위 northing)"),
                "crs": ("string", "결과 좌표계 (to_crs)"),
            },
        ),
        "/from-kma-grid": _get(
            "fromKmaGrid",
            "기상청 격자(nx, ny)를 위경도로 변환",
            "기상청 격자 한 칸(nx, ny)의 중심점을 WGS84 위경도로 변환합니다.",
            "기상청 격자 위치 변환",
            [
                _query("nx", "integer", "예보지점 X 좌표 (기상청 격자, 1-149)", 60),
                _query("ny", "integer", "예보지점 Y 좌표 (기상청 격자, 1-253)", 127),
            ],
            {"lon": ("number", "격자 중심의 WGS84 경도"), "lat": ("number", "격자 중심의 WGS84 위도")},
        ),
    },
}

HANDLERS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    TO_KMA_GRID: to_kma_grid_rows,
    CONVERT: convert_rows,
    FROM_KMA_GRID: from_kma_grid_rows,
}
TOOL_NAMES = frozenset(HANDLERS)


def conversion_tools() -> list[ToolRecord]:
    """The tools of the document, parsed like any registration (names, schemas, spec hashes)."""
    _, tools = parse_document(DOCUMENT, RegistrationMeta(api_id=API_ID))
    assert {t.name for t in tools} == TOOL_NAMES, sorted(t.name for t in tools)
    return tools


def is_conversion(tool: ToolRecord) -> bool:
    """A tool of the local API (its id, its name and its `.invalid` URL all agree): answered in process."""
    return tool.api_id == API_ID and tool.name in HANDLERS and tool.url.startswith(SERVER_URL + "/")


def register_conversions(store: GraphStore, settings: Settings | None = None) -> RegistrationResult:
    """Write the local API into `store` (no host check: nothing is ever called over the network). Re-running it
    changes nothing unless the document changed. `settings` is accepted for symmetry with graph.registry.register."""
    del settings
    api, tools = parse_document(DOCUMENT, RegistrationMeta(api_id=API_ID))
    owners = store.tool_owners([t.name for t in tools])
    taken = sorted(n for n, owner in owners.items() if owner != API_ID)
    if taken:
        raise Conflict(f"tool names {taken} of the built-in conversion API are taken by another API")
    existing = {t.op_key: t for t in store.tools_of_api(API_ID)}
    previous = store.get_api(API_ID)
    if previous is not None:
        api.created_at = previous.created_at
    upsert, report = [], []
    for t in tools:
        old = existing.get(t.op_key)
        change = (
            "new"
            if old is None
            else "changed"
            if old.spec_hash != t.spec_hash or old.status != "active"
            else "unchanged"
        )
        if change != "unchanged":
            upsert.append(t)
        report.append({"name": t.name, "op": t.op_key, "change": change})
    retire = [t.name for k, t in existing.items() if k not in {t.op_key for t in tools} and t.status == "active"]
    if upsert or retire or previous is None or previous.doc_hash != api.doc_hash:
        store.apply_registration(api, upsert, retire, {})
    return RegistrationResult(api=api, created=previous is None, tools=report, retired=retire, flagged_links=0)


@dataclass
class Answer:
    """A local tool's answer, shaped like a judged API response: `ok` with rows, or `invalid` (HTTP 400) with the
    reason and an error code."""

    outcome: str
    items: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    code: str = ""
    status: int = 200


def answer(name: str, args: dict[str, Any]) -> Answer:
    """Answer a call of the conversion tool `name` (deterministic, no I/O). Whatever the arguments hold (NaN, a
    5,000-digit integer, lists, lone surrogates, the pole), the answer is `ok` or `invalid` with what to fix, never
    an exception."""
    handler = HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return Answer("invalid", reason=f"unknown conversion tool {shown(name)}", code="unknown_tool", status=404)
    known = _params()[name]
    takes = f"{name} takes {', '.join(sorted(known))}"
    if not isinstance(args, dict):
        return Answer(
            "invalid",
            reason=f"the arguments must be an object of parameter names and values, got {shown(args)}; {takes}",
            code="bad_arguments",
            status=400,
        )
    extra = sorted(_name(k) for k, v in args.items() if k not in known and v is not None)
    if extra:
        listed = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        return Answer("invalid", reason=f"unknown parameter(s) {listed}; {takes}", code="unknown_parameter", status=400)
    try:
        return Answer("ok", handler(args))
    except ConversionError as exc:
        return Answer("invalid", reason=exc.message, code=exc.code, status=400)
    except (ArithmeticError, ValueError) as exc:  # a point the projections cannot compute: still an answer
        return Answer(
            "invalid",
            reason=f"these coordinates cannot be converted ({type(exc).__name__}); send a point in Korea in the "
            f"coordinate system named; {takes}",
            code="out_of_range",
            status=400,
        )


def _name(key: Any) -> str:
    """A parameter name as a reason may quote it: as written when it is a plain name, else escaped and bounded."""
    return key if isinstance(key, str) and key.isascii() and key.isidentifier() and len(key) <= 40 else shown(key)


@lru_cache(maxsize=1)
def _params() -> dict[str, frozenset[str]]:
    """Parameter names of each conversion tool, read off the parsed document."""
    return {t.name: frozenset(p.name for p in t.params) for t in conversion_tools()}
