"""The provider profile: what the engines know about how Korean public APIs name their parameters, state their
result and wrap their rows, as named data in one home. Each entry says which providers behave so (the reference is
/work/shared/reference/korean_public_apis.md and the providers' guides); the engines read the entries when they ask,
so a provider's quirk added here (and to the sandbox provider that emulates it, `sandbox/spec.py`) is one line.

Who reads what:

* parameters: the format switch a tool always sends (`graph.openapi`), the sampling filters
  (`execution.sampling.filters`), the parameters never linked (`graph.link_scoring.NON_LINKABLE`) and the filters a
  model is told about (`execution.view.narrowing`) all ask `presentation`; the key a tool is called with
  (`graph.openapi`) and the view ask `key_name`;
* result codes: `execution.judge` (what a code says, the gateway's and KOSIS's error objects),
  `graph.envelopes.detect_header` (where a code and its message sit) and `execution.sampling.refused_for_filter`;
* envelopes: `HEADERS`, where each kind of envelope (`core.envelope_kinds`) states its result code;
* tool-name prefixes: `graph.openapi_names.tool_prefix`.

The paging names (`PagePair` and the offset, limit, cursor and index-range names) live beside their readers in
`graph.envelopes`, one line each as well (CONTRIBUTING.md).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from core.envelope_kinds import EnvelopeKind

# ---------------------------------------------------------------------- parameters that shape the answer

#: Response-format switches (with an enum holding `json`, the tool always sends the JSON value and hides the
#: switch): KMA and NPS `dataType`, MOLIT 건축HUB, TAGO, TourAPI, KASI and HIRA `_type`, AirKorea and NTS
#: `returnType`, FSC and juso `resultType`, MFDS and 행안부 StanReginCd `type` (NEIS writes `Type`), and the
#: `format`/`output` of other portals and of REST APIs at large.
FORMAT_NAMES = ("dataType", "_type", "returnType", "resultType", "type", "format", "output")
#: The calling app's identity, mandatory on TourAPI (`MobileOS=ETC`, `MobileApp=AppTest`), and a JSONP callback.
APP_NAMES = ("MobileOS", "MobileApp", "callback")
#: Flags that order the rows or choose which columns and which version of the answer come back, never which rows:
#: TourAPI `arrange` (sort order) and `lDongListYn` (code list or full list), AirKorea `ver` (response version),
#: juso `hstryYn`, `firstSort` and `addInfoYn` (history rows, sort priority, extra columns).
SHAPING_NAMES = ("arrange", "ver", "lDongListYn", "hstryYn", "firstSort", "addInfoYn")
#: Parameters that narrow the answer from a provider's own fixed vocabulary that no other tool's field holds, so
#: never the target of a data link though they filter: AirKorea `dataTerm` (DAILY, MONTH, 3MONTH).
VOCABULARY_NAMES = ("dataTerm",)


def presentation(name: str) -> bool:
    """Whether a parameter of this name (any case) formats the answer, names the calling app or shapes which
    columns come back and in what order (`FORMAT_NAMES`, `APP_NAMES`, `SHAPING_NAMES`): never a filter, never
    linked, never a way a model narrows a search."""
    low = name.lower()
    return any(low == n.lower() for n in (*FORMAT_NAMES, *APP_NAMES, *SHAPING_NAMES))


def format_name(name: str) -> bool:
    """Whether a parameter of this name (any case) is a response-format switch (`FORMAT_NAMES`)."""
    return name.lower() in (n.lower() for n in FORMAT_NAMES)


def never_linked(name: str) -> bool:
    """Whether a parameter of this name (any case) is presentation or a provider's own vocabulary, never the value
    of another tool's field (`presentation`, `VOCABULARY_NAMES`); paging names are asked of `graph.envelopes`."""
    return presentation(name) or name.lower() in (n.lower() for n in VOCABULARY_NAMES)


# ---------------------------------------------------------------------- the key a call is made with

#: Query parameters that carry the key: the data.go.kr gateway's `serviceKey` (some guides spell it `ServiceKey`),
#: juso `confmKey`, the Seoul and NEIS portals' `authKey`/`KEY`-style names, OpenDART `crtfc_key`, and `apiKey`.
KEY_NAMES = ("serviceKey", "ServiceKey", "confmKey", "authKey", "apiKey", "api_key", "crtfc_key")
#: Path segments that are the key by name alone (서울 열린데이터광장 `/{KEY}/json/...`, 식품안전나라 `keyId`),
#: lower case.
PATH_KEY_NAMES = ("key", "apikey", "api_key", "servicekey", "service_key", "authkey", "auth_key", "keyid", "key_id")
#: Words of a path parameter's description that make it the key.
PATH_KEY_WORDS = (
    "인증키",
    "인증 키",
    "서비스키",
    "서비스 키",
    "api key",
    "apikey",
    "service key",
    "authentication key",
)


def key_name(name: str) -> bool:
    """Whether a parameter of this name (any case) carries the caller's key, in the query or the path (`KEY_NAMES`,
    `PATH_KEY_NAMES`): filled with the credential, never a filter."""
    low = name.lower()
    return low in PATH_KEY_NAMES or any(low == n.lower() for n in KEY_NAMES)


# ---------------------------------------------------------------------- result codes and messages

#: Names of a result code and of its message, matched exactly first and then in any case: the gateway's
#: `resultCode`/`resultMsg`, its error header's `returnReasonCode`/`errMsg`/`returnAuthMsg`, juso
#: `errorCode`/`errorMessage`, odcloud `status_code`/`message`, NEIS and the Seoul portal `CODE`/`MESSAGE`.
CODE_NAMES = ("resultCode", "returnReasonCode", "errorCode", "status_code", "code", "resultcode", "result_code")
MSG_NAMES = ("resultMsg", "returnAuthMsg", "errMsg", "errorMessage", "message", "msg", "resultmsg", "result_msg")
#: Code names specific enough to be a result without a message beside them (`code` alone is often a row's).
SPECIFIC_CODES = ("resultCode", "returnReasonCode", "errorCode", "status_code", "result_code")

#: Success codes: data.go.kr `00` (MOLIT's new host `000`, TourAPI `0000`, StanReginCd `INFO-0`), AirKorea's CAI
#: operation `200`, odcloud `OK`, AirKorea's `NORMAL_CODE`.
SUCCESS_CODES = ("00", "000", "0000", "0", "INFO-0", "OK", "200", "NORMAL_CODE")
#: Success said in words or in a portal's own numbering: 한국도로공사 `SUCCESS`, `NORMAL SERVICE`.
SUCCESS_WORDS = ("SUCCESS", "SUCCEED", "SUCCEEDED", "OK", "NORMAL", "NORMAL_SERVICE", "NORMAL SERVICE")
#: Any run of zeros (`0`, `00`, 서울 열린데이터광장 / 식품안전나라 / NEIS `INFO-000`) is the common "no error".
ZERO_CODE = re.compile(r"^(?:INFO-?)?0+$")
#: No rows for these inputs: data.go.kr `03` NODATA_ERROR, the Seoul portal and NEIS `INFO-200`, `INFO-3`.
NO_DATA_CODES = ("03", "003", "INFO-3", "NODATA_ERROR", "INFO-200")
#: The key refused, said by a body code on HTTP 200 (서울 열린데이터광장 and 식품안전나라 `INFO-100`, NEIS `ERROR-290`).
KEY_CODES = ("INFO-100", "ERROR-290")
#: Failures that say nothing of the inputs, worth a retry later: the gateway's 01-05 (application, DB, HTTP,
#: timeout), 20-23 and 30-33 (access denied, quota, key not registered or expired), 99; juso `E0001` (key) and
#: `E0007` (quota), odcloud `-999`, and the executor's own `INTERNAL_ERROR`/`HTTP_ERROR`.
TRANSIENT_CODES = (
    *("01", "02", "04", "05", "20", "21", "22", "23", "30", "31", "32", "33", "99"),
    *("001", "022", "023", "030", "E0001", "E0007", "-999", "INTERNAL_ERROR", "HTTP_ERROR"),
)
#: The daily quota spent (the gateway's 22 LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS, 23, juso `E0007`).
QUOTA_CODES = ("22", "23", "022", "023", "E0007")
#: The data.go.kr family's refusals of the inputs (10 a bad parameter, 11 a missing one, 12 no such service),
#: whatever their message names (`INVALID_REQUEST_PARAMETER_ERROR(serviceKey)` is a parameter error, not a key).
INVALID_CODES = ("10", "11", "12")
#: The gateway's "a parameter is missing", which a provider also answers when none of its optional filters is given.
NEEDS_FILTER_CODES = ("11", "011")
#: Server-side failures in the portals' numbering (`ERROR-500` 서버오류, `ERROR-600`/`ERROR-601` 데이터베이스 오류).
SERVER_CODE = re.compile(r"^(?:ERROR-?)?(?:5\d\d|60\d)$")

#: KOSIS (국가통계포털) answers its rows as a bare JSON list and an error as `{"err": "<code>", "errMsg": "..."}` on
#: HTTP 200, in its own numbering (not data.go.kr's): 10/11 the key missing or expired, 20/21 a parameter missing or
#: wrong, 30 no data, 31 an answer over its cell limit, 40-42 call limits, 50 a server error. What each code says:
#: `key` (refused), `empty` (no rows), `quota` (a call limit), `server`; a code not here is an error of the inputs.
STAT_ERRORS = {"10": "key", "11": "key", "30": "empty", "40": "quota", "41": "quota", "42": "quota", "50": "server"}

#: Words of a message that say no rows matched (a code of its own numbering beside them).
NO_DATA_WORDS = (
    "no data",
    "nodata",
    "no search data",
    "no_data",
    "데이터없음",
    "데이터 없음",
    "조회된 데이터가 없",
    "데이터가 없",
    "결과가 없",
    "자료가 없",
)
#: Words of a message beside a code that name the key itself (stricter than "key": `keyword` is a parameter that a
#: message of a refused input names too).
KEY_WORDS = ("인증키", "인증 키", "서비스키", "서비스 키", "api key", "apikey", "service key", "servicekey", "unauthor")
#: Words of an error text that comes without any code (`{"error": "..."}`) that make it about credentials: with no
#: code to go by, any mention of a key or of authorisation counts.
AUTH_WORDS = ("key", "인증키", "서비스키", "unauthor", "auth")


# ---------------------------------------------------------------------- envelopes


class HeaderAt(NamedTuple):
    """Where an envelope states its result: the path from the top (member names, list positions) to the record
    holding the code, and the code's and message's names there."""

    path: tuple[str | int, ...]
    code: str
    msg: str


_STANDARD = (HeaderAt(("response", "header"), "resultCode", "resultMsg"),)
#: Where each kind of envelope states its result code, in the order tried (`core.envelope_kinds`); a kind not here
#: (`plain`) has its header found wherever it sits (`graph.envelopes.detect_header`).
HEADERS: dict[EnvelopeKind, tuple[HeaderAt, ...]] = {
    "datagokr": _STANDARD,
    "airkorea": _STANDARD,
    "datagokr_single": _STANDARD,
    "mfds": (HeaderAt(("header",), "resultCode", "resultMsg"),),
    #: An error comes as a bare `RESULT`; a success inside the `head` list's third record.
    "stanreg": (
        HeaderAt(("RESULT",), "resultCode", "resultMsg"),
        HeaderAt(("StanReginCd", 0, "head", 2, "RESULT"), "resultCode", "resultMsg"),
    ),
    "juso": (HeaderAt(("results", "common"), "errorCode", "errorMessage"),),
    "odcloud": (HeaderAt((), "status_code", "message"),),
}


#: The data.go.kr gateway's own error envelope (key, quota and permission problems; reference 1.4), in XML or JSON,
#: classically on HTTP 200 and since 2025 on 403: `OpenAPI_ServiceResponse.cmmMsgHeader` with `returnReasonCode`,
#: `errMsg` (the code's name since 2025) and `returnAuthMsg` (its description).
GATEWAY_ERROR = HeaderAt(("OpenAPI_ServiceResponse", "cmmMsgHeader"), "returnReasonCode", "errMsg")
GATEWAY_DETAIL = "returnAuthMsg"
#: The gateway's 12 NO_OPENAPI_SERVICE_ERROR: the service retired or a wrong URL, an error of the inputs.
RETIRED_CODES = ("12",)
#: KOSIS's error object, `{"err": "<code>", "errMsg": "..."}` on HTTP 200 (its numbering: `STAT_ERRORS`).
STAT_ERROR = HeaderAt((), "err", "errMsg")


def header_places(kind: str) -> tuple[HeaderAt, ...]:
    """Where an envelope of this kind (a tool's `envelope`) states its result; () for a kind not in `HEADERS`."""
    return next((places for k, places in HEADERS.items() if k == kind), ())


# ---------------------------------------------------------------------- tool-name prefixes

#: data.go.kr provider codes (the first path segment) -> the prefix of their tools' names (reference 1.1).
ORG_PREFIX = {
    "1360000": "kma",
    "B552584": "airkorea",
    "1613000": "molit",
    "B551011": "tour",
    "B551182": "hira",
    "1471000": "mfds",
    "1741000": "mois",
    "B090041": "kasi",
    "1160100": "fsc",
    "B552015": "nps",
    "1230000": "customs",
    "B553077": "semas",
}
#: Services of a provider code whose tools take a prefix of their own, by the start of the service's name: MOLIT's
#: 1613000 also serves TAGO (국가대중교통정보센터) `BusRouteInfoInqireService`, `ArvlInfoInqireService`, ...
SERVICE_PREFIX = (("1613000", ("Bus", "Arvl"), "tago"),)
#: Hosts outside the gateway -> the prefix of their tools' names (국세청 on odcloud, 도로명주소 on juso).
HOST_PREFIX = {"api.odcloud.kr": "nts", "business.juso.go.kr": "juso", "www.juso.go.kr": "juso"}
