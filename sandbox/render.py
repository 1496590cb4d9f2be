"""Rendering of success and error bodies in each provider's envelope, XML or JSON, quirks included."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

import orjson

from sandbox.spec import Operation, Provider, Row

XML_DECL = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return escape(str(v))


def _xml_fields(row: Row) -> str:
    return "".join(f"<{k}>{_text(v)}</{k}>" for k, v in row.items())


def _page(provider: Provider, v: int) -> int | str:
    return str(v) if provider.page_numbers_as_strings else v


def render_success(
    op: Operation, items: Sequence[Row], *, fmt: str, page: int, rows: int, total: int
) -> tuple[bytes, str]:
    """Return (body, content type) for a successful call."""
    p = op.provider
    env = p.envelope
    if env == "stanreg":
        return _stanreg(items, fmt=fmt, page=page, rows=rows, total=total)
    if env == "juso":
        return _juso(items, fmt=fmt, page=page, rows=rows, total=total)
    if env == "odcloud":
        return orjson.dumps(items[0] if items else {}), p.json_content_type
    if fmt == "xml":
        body_parts = []
        if p.kma_datatype_in_body:
            body_parts.append("<dataType>XML</dataType>")
        if items:
            body_parts.append("<items>" + "".join(f"<item>{_xml_fields(r)}</item>" for r in items) + "</items>")
        else:
            body_parts.append("<items/>")
        body_parts.append(f"<numOfRows>{rows}</numOfRows><pageNo>{page}</pageNo><totalCount>{total}</totalCount>")
        xml = (
            f"{XML_DECL}<response><header><resultCode>{p.success_code}</resultCode>"
            f"<resultMsg>{escape(p.success_msg)}</resultMsg></header><body>{''.join(body_parts)}</body></response>"
        )
        return xml.encode(), "application/xml;charset=UTF-8"

    header = {"resultCode": p.success_code, "resultMsg": p.success_msg}
    body: dict[str, Any] = {}
    if p.kma_datatype_in_body:
        body["dataType"] = "JSON"
    if env == "airkorea":
        body.update({"totalCount": total, "items": items if items else "", "pageNo": page, "numOfRows": rows})
        return orjson.dumps({"response": {"body": body, "header": header}}), p.json_content_type
    if env == "mfds":
        body.update({"pageNo": page, "totalCount": total, "numOfRows": rows})
        if items:
            body["items"] = items
        return orjson.dumps({"header": header, "body": body}), p.json_content_type
    if env == "molit_json":
        if op.single:
            body["item"] = items[0] if items else {}
        else:
            body.update(
                {"items": items, "numOfRows": _page(p, rows), "pageNo": _page(p, page), "totalCount": _page(p, total)}
            )
        return orjson.dumps({"response": {"header": header, "body": body}}), p.json_content_type
    # standard data.go.kr JSON
    if items:
        item: Any = items[0] if (p.single_as_object and len(items) == 1) else items
        body["items"] = {"item": item}
    else:
        body["items"] = {"item": []} if p.empty == "item_list" else ""
    body.update({"numOfRows": _page(p, rows), "pageNo": _page(p, page), "totalCount": _page(p, total)})
    return orjson.dumps({"response": {"header": header, "body": body}}), p.json_content_type


def render_provider_error(op: Operation, code: str, msg: str, *, fmt: str) -> tuple[bytes, str]:
    p = op.provider
    if p.envelope == "stanreg":
        doc = {"RESULT": {"resultCode": code, "resultMsg": msg}}
        if fmt == "json":
            return orjson.dumps(doc), "text/html;charset=UTF-8"
        return (
            f"{XML_DECL}<RESULT><resultCode>{code}</resultCode><resultMsg>{escape(msg)}</resultMsg></RESULT>".encode(),
            "application/xml;charset=UTF-8",
        )
    if p.envelope == "juso":
        common = {"errorMessage": msg, "countPerPage": "0", "totalCount": "0", "errorCode": code, "currentPage": "0"}
        if fmt == "json":
            return orjson.dumps({"results": {"common": common, "juso": None}}), "application/json;charset=UTF-8"
        xml = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in common.items())
        return f"{XML_DECL}<results><common>{xml}</common></results>".encode(), "application/xml;charset=UTF-8"
    if p.envelope == "odcloud":
        return orjson.dumps({"status_code": code, "message": msg}), p.json_content_type
    header = {"resultCode": code, "resultMsg": msg}
    if fmt == "json":
        if p.envelope == "mfds":
            return orjson.dumps({"header": header}), p.json_content_type
        return orjson.dumps({"response": {"header": header}}), p.json_content_type
    return (
        f"{XML_DECL}<response><header><resultCode>{code}</resultCode><resultMsg>{escape(msg)}</resultMsg>"
        f"</header></response>"
    ).encode(), "application/xml;charset=UTF-8"


GATEWAY_ERRORS: dict[str, tuple[str, str]] = {
    "01": ("APPLICATION_ERROR", "어플리케이션 에러"),
    "04": ("HTTP_ERROR", "허용되지 않은 HTTP 요청"),
    "05": ("SERVICETIMEOUT_ERROR", "서비스 연결실패 또는 응답대기시간 초과"),
    "12": ("NO_OPENAPI_SERVICE_ERROR", "해당 오픈API서비스가 없거나 폐기됨"),
    "20": ("SERVICE_ACCESS_DENIED_ERROR", "서비스 접근거부"),
    "20N": ("SERVICE_KEY_IS_NULL", "인증키 누락"),
    "22": ("LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR", "서비스 요청제한횟수 초과"),
    "23": ("LIMITED_NUMBER_OF_SERVICE_REQUESTS_PER_SECOND_EXCEEDS_ERROR", "초당 요청제한횟수 초과"),
    "30": ("SERVICE_KEY_IS_NOT_REGISTERED_ERROR", "등록되지 않은 서비스키"),
    "31": ("DEADLINE_HAS_EXPIRED_ERROR", "활용기간 만료"),
}
GATEWAY_STATUS_2026 = {
    "01": 500,
    "04": 405,
    "05": 504,
    "12": 404,
    "20": 403,
    "20N": 401,
    "22": 429,
    "23": 429,
    "30": 403,
    "31": 403,
}


def render_gateway_error(code: str, *, mode: str, fmt: str) -> tuple[int, bytes, str]:
    """The data.go.kr gateway envelope (OpenAPI_ServiceResponse), classic or 2026 style."""
    name, korean = GATEWAY_ERRORS[code]
    reason = code.rstrip("N")
    if mode == "classic":
        err, auth, status, fmt = "SERVICE ERROR", name, 200, "xml"
    else:
        err, auth, status = name, korean, GATEWAY_STATUS_2026[code]
    if fmt == "json":
        doc = {
            "OpenAPI_ServiceResponse": {
                "cmmMsgHeader": {"errMsg": err, "returnAuthMsg": auth, "returnReasonCode": reason}
            }
        }
        return status, orjson.dumps(doc), "application/json;charset=UTF-8"
    xml = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<OpenAPI_ServiceResponse>\n<cmmMsgHeader>\n'
        f"  <errMsg>{err}</errMsg>\n  <returnAuthMsg>{escape(auth)}</returnAuthMsg>\n"
        f"  <returnReasonCode>{reason}</returnReasonCode>\n</cmmMsgHeader>\n</OpenAPI_ServiceResponse>"
    )
    return status, xml.encode(), "text/xml;charset=UTF-8"


def _stanreg(items: Sequence[Row], *, fmt: str, page: int, rows: int, total: int) -> tuple[bytes, str]:
    if fmt == "json":
        doc = {
            "StanReginCd": [
                {
                    "head": [
                        {"totalCount": total},
                        {"numOfRows": str(rows), "pageNo": str(page), "type": "JSON"},
                        {"RESULT": {"resultCode": "INFO-0", "resultMsg": "NOMAL SERVICE"}},
                    ]
                },
                {"row": items},
            ]
        }
        return orjson.dumps(doc), "text/html;charset=UTF-8"
    rows_xml = "".join(f"<row>{_xml_fields(r)}</row>" for r in items)
    xml = (
        f"{XML_DECL}<StanReginCd><head><totalCount>{total}</totalCount><numOfRows>{rows}</numOfRows>"
        f"<pageNo>{page}</pageNo><type>XML</type><RESULT><resultCode>INFO-0</resultCode>"
        f"<resultMsg>NOMAL SERVICE</resultMsg></RESULT></head>{rows_xml}</StanReginCd>"
    )
    return xml.encode(), "application/xml;charset=UTF-8"


def _juso(items: Sequence[Row], *, fmt: str, page: int, rows: int, total: int) -> tuple[bytes, str]:
    common = {
        "errorMessage": "정상",
        "countPerPage": str(rows),
        "totalCount": str(total),
        "errorCode": "0",
        "currentPage": str(page),
    }
    if fmt == "json":
        return orjson.dumps({"results": {"common": common, "juso": items}}), "application/json;charset=UTF-8"
    common_xml = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in common.items())
    juso_xml = "".join(f"<juso>{_xml_fields(r)}</juso>" for r in items)
    return (
        f"{XML_DECL}<results><common>{common_xml}</common>{juso_xml}</results>".encode(),
        "application/xml;charset=UTF-8",
    )
