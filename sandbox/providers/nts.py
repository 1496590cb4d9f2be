"""국세청 사업자등록정보 진위확인 및 상태조회 (odcloud: POST JSON, flat envelope, HTTP status errors)."""

from __future__ import annotations

from typing import Any

from core.json_types import JsonObject, JsonValue
from sandbox.entities import Business
from sandbox.spec import Field, Operation, Param, Provider, ProviderError, Request, Result

NTS = Provider(
    key="nts",
    title="국세청_사업자등록정보 진위확인 및 상태조회 서비스",
    org="국세청",
    host="api.odcloud.kr",
    envelope="odcloud",
    format_param="returnType",
    formats=("json",),
    success_code="OK",
    success_msg="OK",
    gateway="odcloud",
    daily_quota=1_000_000,
    validates_itself=True,
)
STATUS_NAMES = {"01": "계속사업자", "02": "휴업자", "03": "폐업자"}
TAX_TYPES = {"01": "부가가치세 일반과세자", "02": "부가가치세 간이과세자", "04": "부가가치세 면세사업자"}
UNKNOWN = "국세청에 등록되지 않은 사업자등록번호입니다."


def status_row(b_no: str, biz: Business | None) -> JsonObject:
    if biz is None:
        return {
            "b_no": b_no,
            "b_stt": "",
            "b_stt_cd": "",
            "tax_type": UNKNOWN,
            "tax_type_cd": "",
            "end_dt": "",
            "utcc_yn": "",
            "tax_type_change_dt": "",
            "invoice_apply_dt": "",
            "rbf_tax_type": "",
            "rbf_tax_type_cd": "",
        }
    return {
        "b_no": b_no,
        "b_stt": STATUS_NAMES[biz.status],
        "b_stt_cd": biz.status,
        "tax_type": TAX_TYPES[biz.tax_type_cd],
        "tax_type_cd": biz.tax_type_cd,
        "end_dt": biz.end_dt,
        "utcc_yn": "N",
        "tax_type_change_dt": "",
        "invoice_apply_dt": "",
        "rbf_tax_type": "해당없음",
        "rbf_tax_type_cd": "99",
    }


def _body_list(req: Request, key: str) -> list[Any]:
    if not isinstance(req.body, dict):
        raise ProviderError("BAD_JSON_REQUEST", "JSON 포맷에 적합하지 않는 요청", http_status=400)
    items = req.body.get(key)
    if not isinstance(items, list) or not items:
        raise ProviderError("REQUEST_DATA_MALFORMED", "필수 요청 파라미터 누락", http_status=411)
    if len(items) > 100:
        raise ProviderError("TOO_LARGE_REQUEST", "요청 사업자번호 100개 초과", http_status=413)
    return items


def _status(req: Request) -> Result:
    numbers = _body_list(req, "b_no")
    rows: list[JsonValue] = []
    for raw in numbers:
        if not isinstance(raw, str):
            raise ProviderError("BAD_JSON_REQUEST", "JSON 포맷에 적합하지 않는 요청", http_status=400)
        b_no = raw.replace("-", "")
        rows.append(status_row(b_no, req.world.business_by_no.get(b_no)))
    matched = sum(1 for r in rows if isinstance(r, dict) and r["b_stt_cd"])
    return Result([{"request_cnt": len(rows), "match_cnt": matched, "status_code": "OK", "data": rows}])


def _validate(req: Request) -> Result:
    entries = _body_list(req, "businesses")
    rows: list[JsonValue] = []
    valid = 0
    for e in entries:
        if not isinstance(e, dict) or not all(
            isinstance(e.get(k), str) and e.get(k) for k in ("b_no", "start_dt", "p_nm")
        ):
            raise ProviderError("REQUEST_DATA_MALFORMED", "필수 요청 파라미터 누락", http_status=411)
        biz = req.world.business_by_no.get(e["b_no"].replace("-", ""))
        ok = biz is not None and biz.start_dt == e["start_dt"] and biz.rep == e["p_nm"]
        row: JsonObject = {"b_no": e["b_no"], "valid": "01" if ok else "02", "request_param": e}
        if ok:
            row["status"] = status_row(e["b_no"], biz)
        else:
            row["valid_msg"] = "확인할 수 없습니다."
        rows.append(row)
        valid += ok
    return Result(
        [
            {
                "request_cnt": len(rows),
                "valid_cnt": valid,
                "status_code": "OK",
                "data": rows,
            }
        ]
    )


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_FMT = Param("returnType", "응답 형식", enum=("JSON", "XML"), default="JSON")

OPERATIONS = [
    Operation(
        NTS,
        "nts-businessman",
        "status",
        "사업자등록 상태조회",
        "사업자등록번호(10자리, 최대 100개)로 납세자 상태(계속/휴업/폐업)와 과세유형을 조회합니다.",
        [_KEY, _FMT],
        [
            Field("b_no", "사업자등록번호"),
            Field("b_stt", "납세자상태 (계속사업자/휴업자/폐업자)"),
            Field("b_stt_cd", "납세자상태 코드 (01 계속, 02 휴업, 03 폐업)"),
            Field("tax_type", "과세유형메세지"),
            Field("tax_type_cd", "과세유형메세지 코드"),
            Field("end_dt", "폐업일 (YYYYMMDD)"),
            Field("utcc_yn", "단위과세전환폐업여부"),
            Field("tax_type_change_dt", "최근과세유형전환일자"),
            Field("invoice_apply_dt", "세금계산서적용일자"),
            Field("rbf_tax_type", "직전과세유형메세지"),
            Field("rbf_tax_type_cd", "직전과세유형메세지 코드"),
        ],
        _status,
        method="POST",
        path_override="/api/nts-businessman/v1/status",
        paged=False,
        intent="사업자등록번호 {b_no}의 휴폐업 상태 확인",
        body_schema={
            "type": "object",
            "required": ["b_no"],
            "properties": {
                "b_no": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 100,
                    "description": "사업자등록번호 목록 (10자리, '-' 제외)",
                    "items": {"type": "string", "pattern": "^[0-9]{10}$", "example": "2208657343"},
                }
            },
        },
    ),
    Operation(
        NTS,
        "nts-businessman",
        "validate",
        "사업자등록정보 진위확인",
        "사업자등록번호, 개업일자, 대표자성명으로 사업자등록정보의 진위를 확인합니다.",
        [_KEY, _FMT],
        [
            Field("b_no", "사업자등록번호"),
            Field("valid", "진위확인 결과 (01 일치, 02 불일치)"),
            Field("valid_msg", "진위확인 결과 메세지"),
            Field("request_param", "요청한 사업자 정보", "object"),
            Field("status", "사업자 상태 (일치할 때, 상태조회 결과와 같은 항목)", "object"),
        ],
        _validate,
        method="POST",
        path_override="/api/nts-businessman/v1/validate",
        paged=False,
        intent="사업자등록정보 진위 확인",
        body_schema={
            "type": "object",
            "required": ["businesses"],
            "properties": {
                "businesses": {
                    "type": "array",
                    "description": "진위확인할 사업자 목록 (최대 100개). 각 항목은 문자열이 아니라 객체입니다: "
                    '{"b_no": 사업자등록번호 10자리(\'-\' 제외), "start_dt": 개업일자 YYYYMMDD, '
                    '"p_nm": 대표자성명} (필수 세 항목; 선택: p_nm2, b_nm, corp_no, b_sector, b_type, b_adr)',
                    "minItems": 1,
                    "maxItems": 100,
                    "items": {
                        "type": "object",
                        "required": ["b_no", "start_dt", "p_nm"],
                        "properties": {
                            "b_no": {"type": "string", "pattern": "^[0-9]{10}$", "description": "사업자등록번호"},
                            "start_dt": {
                                "type": "string",
                                "pattern": "^[0-9]{8}$",
                                "description": "개업일자 (YYYYMMDD)",
                            },
                            "p_nm": {"type": "string", "description": "대표자성명"},
                            "p_nm2": {"type": "string"},
                            "b_nm": {"type": "string"},
                            "corp_no": {"type": "string"},
                            "b_sector": {"type": "string"},
                            "b_type": {"type": "string"},
                            "b_adr": {"type": "string"},
                        },
                    },
                }
            },
        },
    ),
]
