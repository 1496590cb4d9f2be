"""Gateway and provider behaviour, over a real socket: keys, errors in each provider's own format, empty shapes,
pagination, Korean query values, look-back windows."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from sandbox.examples import example_args
from sandbox.keys import DEMO_KEY, LEGACY_KEY, LIMITED_KEY
from sandbox.world import get_world
from tests.support.helpers import OPS, call, items_of

EX = example_args(get_world(20261130))
VF = "VilageFcstInfoService_2.0.getVilageFcst"


def test_unknown_key_is_code_30_with_403_in_2026_mode(live: httpx.Client) -> None:
    r = call(live, VF, EX[VF], fmt="json", key="0" * 64)
    assert r.status_code == 403
    hdr = r.json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]
    assert hdr == {
        "errMsg": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
        "returnAuthMsg": "등록되지 않은 서비스키",
        "returnReasonCode": "30",
    }
    r = call(live, VF, EX[VF], fmt="xml", key="0" * 64)
    assert r.status_code == 403 and "<returnReasonCode>30</returnReasonCode>" in r.text


def test_missing_key(live: httpx.Client) -> None:
    r = call(live, VF, EX[VF], fmt="json", key=None)
    assert r.status_code == 401
    assert r.json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]["errMsg"] == "SERVICE_KEY_IS_NULL"


def test_legacy_key_works_encoded_once_and_fails_double_encoded(live: httpx.Client) -> None:
    assert call(live, VF, EX[VF], key=LEGACY_KEY).json()["response"]["header"]["resultCode"] == "00"
    # a client that pastes the portal's "Encoding" key and lets its HTTP library encode it again
    double = quote(quote(LEGACY_KEY, safe=""), safe="")
    qs = "&".join(f"{k}={quote(str(v))}" for k, v in EX[VF].items())
    r = live.get(f"{OPS[VF].path}?serviceKey={double}&dataType=JSON&{qs}")
    assert r.status_code == 403 and r.json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]["returnReasonCode"] == "30"
    # and the raw '+' sent unencoded turns into a space: also not registered
    r = live.get(f"{OPS[VF].path}?serviceKey={LEGACY_KEY}&dataType=JSON&{qs}")
    assert r.status_code == 403


def test_key_without_application_is_denied_code_20(live: httpx.Client) -> None:
    assert call(live, VF, EX[VF], key=LIMITED_KEY).status_code == 200
    op = "MsrstnInfoInqireSvc.getMsrstnList"
    r = call(live, op, EX[op], key=LIMITED_KEY)
    assert r.status_code == 403
    assert r.json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]["errMsg"] == "SERVICE_ACCESS_DENIED_ERROR"


def test_retired_service_version_answers_12(live: httpx.Client) -> None:
    for path in (
        "/1360000/VilageFcstInfoService/getVilageFcst",
        "/1613000/AptListService3/getLegaldongAptList3",
        "/1471000/MdcinGrnIdntfcInfoService02/getMdcinGrnIdntfcInfoList02",
        "/B551011/KorService1/areaBasedList1",
    ):
        r = live.get(path, params={"serviceKey": DEMO_KEY})
        assert r.status_code == 404 and "<returnReasonCode>12</returnReasonCode>" in r.text, path
    assert live.get("/no/such/path").status_code == 404


def test_provider_errors_come_inside_http_200(live: httpx.Client) -> None:
    args = dict(EX[VF])
    del args["nx"]
    r = call(live, VF, args)
    assert r.status_code == 200 and r.json()["response"]["header"]["resultCode"] == "11"
    r = call(live, VF, {**EX[VF], "nx": "60.5"})
    assert r.json()["response"]["header"]["resultCode"] == "10"
    r = call(live, VF, {**EX[VF], "base_date": "20261001"})
    assert r.json()["response"]["header"] == {"resultCode": "10", "resultMsg": "최근 3일 간의 자료만 제공합니다."}
    r = call(live, VF, {**EX[VF], "base_time": "1700"})  # not issued yet at 14:20
    assert r.json() == {"response": {"header": {"resultCode": "03", "resultMsg": "NO_DATA"}}}
    ncst = "VilageFcstInfoService_2.0.getUltraSrtNcst"
    r = call(live, ncst, {**EX[ncst], "base_date": "20261013"})
    assert r.json()["response"]["header"]["resultMsg"] == "최근 1일 간의 자료만 제공합니다."
    r = call(live, ncst, {**EX[ncst], "base_time": "1400"})  # 14:00 data appears at 14:40
    assert r.json()["response"]["header"]["resultCode"] == "03"


def test_kma_short_forecast_volume_and_numbers(live: httpx.Client) -> None:
    doc = call(live, VF, {**EX[VF], "base_time": "0200", "numOfRows": "1000"}).json()
    body = doc["response"]["body"]
    assert body["dataType"] == "JSON" and isinstance(body["totalCount"], int) and body["totalCount"] > 800
    item = body["items"]["item"][0]
    assert isinstance(item["nx"], int) and isinstance(item["fcstValue"], str)
    cats = {i["category"] for i in body["items"]["item"]}
    assert {"TMP", "SKY", "PTY", "POP", "TMN", "TMX"} <= cats


def test_empty_result_shapes_per_provider(live: httpx.Client) -> None:
    r = call(live, "KorService2.searchKeyword2", {**EX["KorService2.searchKeyword2"], "keyword": "없는관광지"})
    assert r.json()["response"]["body"]["items"] == "" and r.json()["response"]["body"]["totalCount"] == 0
    r = call(live, "MsrstnInfoInqireSvc.getTMStdrCrdnt", {"umdName": "없는동"})
    assert r.json()["response"]["body"]["items"] == ""
    r = call(live, "DrbEasyDrugInfoService.getDrbEasyDrugList", {"itemName": "없는약"})
    assert "items" not in r.json()["body"] and "response" not in r.json()
    r = call(live, "AptListService4.getLegaldongAptList4", {"bjdCode": "9999999999"})
    assert r.json()["response"]["body"]["items"] == []
    r = call(live, "BldRgstHubService.getBrTitleInfo", {"sigunguCd": "11110", "bjdongCd": "99999"})
    body = r.json()["response"]["body"]
    assert body["items"] == {"item": []} and body["totalCount"] == "0"
    r = call(live, "StanReginCd.getStanReginCdList", {"locatadd_nm": "강원도"})
    assert r.json() == {"RESULT": {"resultCode": "INFO-3", "resultMsg": "데이터없음 에러"}}
    r = call(live, "AptBasisInfoServiceV5.getAphusBassInfoV5", {"kaptCode": "A99999999"})
    assert r.json()["response"]["body"]["item"]["kaptCode"] is None


def test_single_item_is_an_object_where_real(live: httpx.Client) -> None:
    doc = call(live, "KorService2.detailCommon2", EX["KorService2.detailCommon2"]).json()
    assert isinstance(doc["response"]["body"]["items"]["item"], dict)
    doc = call(live, "MidFcstInfoService.getMidTa", EX["MidFcstInfoService.getMidTa"]).json()
    assert isinstance(doc["response"]["body"]["items"]["item"], list)  # KMA: always a list


def test_stanregincd_json_is_served_as_text_html(live: httpx.Client) -> None:
    r = call(live, "StanReginCd.getStanReginCdList", {"locatadd_nm": "서울특별시", "numOfRows": "1000"})
    assert r.headers["content-type"].startswith("text/html")
    head = r.json()["StanReginCd"][0]["head"]
    assert head[0]["totalCount"] == 493 and head[2]["RESULT"]["resultMsg"] == "NOMAL SERVICE"


def test_pagination(live: httpx.Client) -> None:
    op = "StanReginCd.getStanReginCdList"
    pages = [
        items_of(OPS[op], call(live, op, {"locatadd_nm": "대전광역시", "numOfRows": "50", "pageNo": str(p)}).json())
        for p in (1, 2, 3, 4, 5)
    ]
    codes = [r["region_cd"] for page in pages for r in page]
    assert len(codes) == len(set(codes)) == 183
    assert pages[-1] == [] or len(pages[3]) == 33
    r = call(live, op, {"locatadd_nm": "대전광역시", "numOfRows": "abc"})
    assert r.json()["RESULT"]["resultCode"] == "ERROR-310"


def test_korean_percent_encoded_and_bad_encoding(live: httpx.Client) -> None:
    op = "KorService2.searchKeyword2"
    r = live.get(
        OPS[op].path
        + "?serviceKey="
        + DEMO_KEY
        + "&MobileOS=ETC&MobileApp="
        + quote("코파")
        + "&_type=json&keyword="
        + quote("경복궁")
    )
    assert items_of(OPS[op], r.json())[0]["contentid"] == "126508"
    r = live.get(OPS[op].path + "?serviceKey=" + DEMO_KEY + "&MobileOS=ETC&MobileApp=x&_type=json&keyword=%B0%E6")
    assert r.status_code == 200 and r.json()["response"]["header"]["resultCode"] == "10"


def test_juso_error_codes(live: httpx.Client) -> None:
    op = "addrlink.addrLinkApi.do"
    cases = {"": "E0005", "가": "E0008", "12345": "E0009", "서울특별시": "E0006", "종로%=": "E0013"}
    for kw, code in cases.items():
        common = call(live, op, {"keyword": kw}).json()["results"]["common"]
        assert common["errorCode"] == code, kw
    assert call(live, op, {"keyword": "종로구"}, key="bad").json()["results"]["common"]["errorCode"] == "E0001"
    coord = call(live, "addrlink.addrCoordApi.do", {"admCd": "1111010100"}).json()
    assert coord["results"]["common"]["errorCode"] == "E0003"


def test_nts_errors(live: httpx.Client) -> None:
    path = "/api/nts-businessman/v1/status"
    assert live.post(path, params={"serviceKey": DEMO_KEY}, content=b"{not json").status_code == 400
    assert live.post(path, params={"serviceKey": DEMO_KEY}, json={"b_no": []}).status_code == 411
    assert live.post(path, params={"serviceKey": DEMO_KEY}, json={"b_no": ["1111111119"] * 101}).status_code == 413
    r = live.post(path, params={"serviceKey": "nope"}, json={"b_no": ["1111111119"]})
    assert r.status_code == 401 and r.json()["code"] == -4
    row = live.post(path, params={"serviceKey": DEMO_KEY}, json={"b_no": ["1111111119"]}).json()["data"][0]
    assert row["tax_type"] == "국세청에 등록되지 않은 사업자등록번호입니다." and row["b_stt_cd"] == ""


def test_wrong_method_is_a_gateway_error(live: httpx.Client) -> None:
    r = live.post(OPS[VF].path, params={"serviceKey": DEMO_KEY})
    assert r.status_code == 405 and "HTTP_ERROR" in r.text


def test_catalog_is_served(live: httpx.Client) -> None:
    idx = live.get("/_catalog").json()
    assert len(idx["services"]) >= 20 and sum(s["operations"] for s in idx["services"]) >= 30
    doc = live.get(idx["services"][0]["openapi"]).json()
    assert doc["openapi"].startswith("3.") and doc["servers"][0]["url"].startswith("https://")
    assert live.get("/_catalog/nope.json").status_code == 404
