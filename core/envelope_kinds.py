"""The kinds of envelope Korean public APIs wrap their answers in, as one type the sandbox renders and the engines
read: the sandbox's `Provider.envelope` says how it answers, `graph.providers.HEADERS` where each kind states its
result, and `graph.openapi_items` tells them apart by the document's response schema.

* `datagokr`: `response.header` (resultCode/resultMsg) and `response.body.items.item`, the gateway's standard;
* `airkorea`: the same header, `response.body.items` a bare array (AirKorea's JSON);
* `mfds`: `header` and `body.items` without the `response` wrapper (식품의약품안전처);
* `stanreg`: 행정안전부 StanReginCd's `[{"head": [..., {"RESULT": ...}]}, {"row": [...]}]`;
* `juso`: `results.common` (errorCode/errorMessage) and `results.juso` (도로명주소);
* `odcloud`: flat `{"status_code", "data": [...]}` (api.odcloud.kr, 국세청 사업자등록);
* `molit_json`: MOLIT's JSON-only services, the standard envelope whatever format is asked for.
"""

from __future__ import annotations

from typing import Literal

#: How a provider wraps its answer (the sandbox declares one per provider).
Envelope = Literal["datagokr", "airkorea", "mfds", "stanreg", "juso", "odcloud", "molit_json"]
#: What the engines read off a document: an `Envelope`, the standard one holding a single record under
#: `response.body.item` (`datagokr_single`: detail operations), or `plain` (no known wrapper: learnt from the answer).
EnvelopeKind = Envelope | Literal["datagokr_single", "plain"]
#: The gateway a provider's key and quota belong to.
Gateway = Literal["datagokr", "juso", "odcloud"]
