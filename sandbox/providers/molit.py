"""국토교통부: 실거래가 (RTMS), 건축HUB 건축물대장, 공동주택 단지 목록 / 기본 정보."""

from __future__ import annotations

from core.json_types import JsonObject
from sandbox.entities import Building, Complex
from sandbox.spec import (
    Field,
    Operation,
    Param,
    Provider,
    Request,
    Result,
    format_param,
    paging_params,
)

RTMS = Provider(
    key="1613000",
    title="국토교통부_아파트 실거래가 자료",
    org="국토교통부",
    format_param=None,
    formats=("xml",),
    success_code="000",
    success_msg="OK",
    missing_error=("011", "NO_MANDATORY_REQUEST_PARAMETERS_ERROR"),
    invalid_error=("010", "INVALID_REQUEST_PARAMETER_ERROR"),
)
BLD = Provider(
    key="1613000",
    title="국토교통부_건축HUB_건축물대장정보 서비스",
    org="국토교통부",
    format_param="_type",
    success_msg="NORMAL SERVICE",
    empty="item_list",
    single_as_object=True,
    page_numbers_as_strings=True,
)
APT = Provider(
    key="1613000",
    title="국토교통부_공동주택 정보제공 서비스",
    org="국토교통부",
    envelope="molit_json",
    format_param=None,
    formats=("json",),
    success_msg="NORMAL SERVICE",
    empty="list",
)

_LAWD = Param(
    "LAWD_CD",
    "지역코드 (법정동코드 10자리 중 앞 5자리, 예: 11110 종로구)",
    required=True,
    example="11110",
    pattern="^[0-9]{5}$",
)
_YMD = Param(
    "DEAL_YMD", "계약년월 (YYYYMM 6자리)", required=True, example="202610", pattern="^[0-9]{6}$", format="yyyymm"
)

_COMMON_DEAL_FIELDS = [
    Field("sggCd", "법정동시군구코드 (5자리)", example="11110"),
    Field("umdCd", "법정동읍면동코드 (5자리)", example="17400"),
    Field("landCd", "법정동지번코드"),
    Field("bonbun", "법정동본번코드 (4자리)", example="0574"),
    Field("bubun", "법정동부번코드 (4자리)", example="0000"),
    Field("roadNm", "도로명"),
    Field("roadNmSggCd", "도로명시군구코드"),
    Field("roadNmCd", "도로명코드"),
    Field("roadNmSeq", "도로명일련번호코드"),
    Field("roadNmbCd", "도로명지상지하코드"),
    Field("roadNmBonbun", "도로명건물본번호코드"),
    Field("roadNmBubun", "도로명건물부번호코드"),
    Field("umdNm", "법정동", example="사직동"),
    Field("aptNm", "단지명"),
    Field("jibun", "지번 (본번-부번)", example="574-1"),
    Field("excluUseAr", "전용면적 (㎡)", example="84.97"),
    Field("dealYear", "계약년도"),
    Field("dealMonth", "계약월"),
    Field("dealDay", "계약일"),
    Field("floor", "층"),
    Field("buildYear", "건축년도"),
    Field("aptSeq", "단지 일련번호 (시군구코드-일련번호)", example="11710-8865"),
    Field("aptDong", "아파트 동명"),
]
_TRADE_FIELDS = [
    Field("dealAmount", "거래금액 (만원, 천단위 쉼표)", example="82,500"),
    Field("cdealType", "해제여부 (O)"),
    Field("cdealDay", "해제사유발생일 (YY.MM.DD)"),
    Field("dealingGbn", "거래유형 (중개거래/직거래)"),
    Field("estateAgentSggNm", "중개사소재지"),
    Field("rgstDate", "등기일자"),
    Field("slerGbn", "거래주체정보_매도자"),
    Field("buyerGbn", "거래주체정보_매수자"),
    Field("landLeaseholdGbn", "토지임대부 아파트 여부"),
]
_RENT_FIELDS = [
    Field("deposit", "보증금액 (만원)"),
    Field("monthlyRent", "월세금액 (만원)"),
    Field("contractTerm", "계약기간"),
    Field("contractType", "계약구분 (신규/갱신)"),
    Field("useRRRight", "갱신요구권사용"),
    Field("preDeposit", "종전계약보증금"),
    Field("preMonthlyRent", "종전계약월세"),
]


def _trade(req: Request) -> Result:
    return Result(req.world.deals(req.params["LAWD_CD"], req.params["DEAL_YMD"], req.now.date()))


_SIMPLE_KEEP = {
    "sggCd",
    "umdCd",
    "umdNm",
    "aptNm",
    "jibun",
    "excluUseAr",
    "dealYear",
    "dealMonth",
    "dealDay",
    "dealAmount",
    "floor",
    "buildYear",
    "aptSeq",
    "cdealType",
    "cdealDay",
    "dealingGbn",
    "estateAgentSggNm",
    "rgstDate",
    "slerGbn",
    "buyerGbn",
    "landLeaseholdGbn",
    "aptDong",
}


def _trade_simple(req: Request) -> Result:
    rows = req.world.deals(req.params["LAWD_CD"], req.params["DEAL_YMD"], req.now.date())
    return Result([{k: v for k, v in r.items() if k in _SIMPLE_KEEP} for r in rows])


def _rent(req: Request) -> Result:
    return Result(req.world.rents(req.params["LAWD_CD"], req.params["DEAL_YMD"], req.now.date()))


def _buildings(req: Request) -> list[Building]:
    p = req.params
    code = p["sigunguCd"] + p["bjdongCd"]
    out = []
    for b in req.world.buildings_by_umd.get(code, []):
        if p.get("platGbCd") and p["platGbCd"] != b.mt_yn:
            continue
        if p.get("bun") and p["bun"] != f"{b.lnbr_mnnm:04d}":
            continue
        if p.get("ji") and p["ji"] != f"{b.lnbr_slno:04d}":
            continue
        out.append(b)
    return out


def _title_row(b: Building, n: int) -> JsonObject:
    return {
        "rnum": n,
        "platPlc": b.jibun_addr,
        "sigunguCd": b.adm_cd[:5],
        "bjdongCd": b.adm_cd[5:],
        "platGbCd": b.mt_yn,
        "bun": f"{b.lnbr_mnnm:04d}",
        "ji": f"{b.lnbr_slno:04d}",
        "mgmBldrgstPk": b.mgm_pk,
        "regstrGbCd": "1",
        "regstrGbCdNm": "일반",
        "regstrKindCd": "2",
        "regstrKindCdNm": "일반건축물",
        "newPlatPlc": b.road_addr,
        "bldNm": b.bd_nm or " ",
        "dongNm": " ",
        "mainAtchGbCd": "0",
        "mainAtchGbCdNm": "주건축물",
        "platArea": b.plat_area,
        "archArea": b.arch_area,
        "bcRat": round(100 * b.arch_area / b.plat_area, 2),
        "totArea": b.tot_area,
        "vlRat": round(100 * b.tot_area / b.plat_area, 2),
        "strctCdNm": "철근콘크리트구조",
        "mainPurpsCdNm": b.main_purps,
        "etcPurps": b.main_purps,
        "roofCdNm": "(철근)콘크리트",
        "hhldCnt": b.hhld_cnt,
        "fmlyCnt": 0,
        "heit": round(b.grnd_flr * 3.1, 1),
        "grndFlrCnt": b.grnd_flr,
        "ugrndFlrCnt": b.ugrnd_flr,
        "rideUseElvtCnt": 2 if b.grnd_flr > 5 else 0,
        "useAprDay": b.use_apr_day,
        "pmsDay": b.use_apr_day[:4] + "0101",
        "stcnsDay": " ",
        "crtnDay": "20240101",
        "naRoadCd": b.rn_mgt_sn,
        "naMainBun": b.buld_mnnm,
        "naSubBun": b.buld_slno,
    }


def _title(req: Request) -> Result:
    return Result([_title_row(b, i + 1) for i, b in enumerate(_buildings(req))])


#: The 표제부 fields the 기본개요 repeats, in its order.
_BASIS_KEEP = (
    "rnum",
    "platPlc",
    "sigunguCd",
    "bjdongCd",
    "platGbCd",
    "bun",
    "ji",
    "mgmBldrgstPk",
    "regstrGbCd",
    "regstrGbCdNm",
    "regstrKindCd",
    "regstrKindCdNm",
    "newPlatPlc",
    "bldNm",
    "crtnDay",
)


def _basis(req: Request) -> Result:
    rows = []
    for i, b in enumerate(_buildings(req)):
        t = _title_row(b, i + 1)
        row = {k: t[k] for k in _BASIS_KEEP}
        row.update({"mgmUpBldrgstPk": " ", "jiyukCdNm": "제2종일반주거지역", "jiguCdNm": " ", "guyukCdNm": " "})
        rows.append(row)
    return Result(rows)


def _apt_row(c: Complex) -> JsonObject:
    r = c.building.region
    return {
        "kaptCode": c.kapt_code,
        "kaptName": c.name,
        "bjdCode": c.building.adm_cd,
        "as1": r.sido_nm,
        "as2": r.sgg_nm,
        "as3": r.umd_nm,
        "as4": r.ri_nm or None,
    }


def _legaldong_list(req: Request) -> Result:
    code = req.params["bjdCode"]
    return Result([_apt_row(c) for c in req.world.complexes if c.building.adm_cd == code])


def _sigungu_list(req: Request) -> Result:
    code = req.params["sigunguCode"]
    return Result([_apt_row(c) for c in req.world.complexes_by_sgg.get(code, [])])


_BASIS_FIELDS = [
    "kaptCode",
    "kaptName",
    "kaptAddr",
    "doroJuso",
    "codeSaleNm",
    "codeHeatNm",
    "kaptTarea",
    "kaptDongCnt",
    "kaptdaCnt",
    "hoCnt",
    "kaptUsedate",
    "bjdCode",
    "zipcode",
    "kaptTel",
    "kaptUrl",
    "codeAptNm",
    "codeMgrNm",
    "codeHallNm",
]


def _aphus_basis(req: Request) -> Result:
    c = req.world.complex_by_code.get(req.params["kaptCode"])
    if c is None:
        return Result([dict.fromkeys(_BASIS_FIELDS)])
    b = c.building
    return Result(
        [
            {
                "kaptCode": c.kapt_code,
                "kaptName": c.name,
                "kaptAddr": f"{b.jibun_addr} {c.name}",
                "doroJuso": b.road_addr,
                "codeSaleNm": c.sale,
                "codeHeatNm": c.heat,
                "kaptTarea": c.total_area,
                "kaptDongCnt": str(c.dong_cnt),
                "kaptdaCnt": float(c.households),
                "hoCnt": c.households,
                "kaptUsedate": c.use_date,
                "bjdCode": b.adm_cd,
                "zipcode": b.zip_no,
                "kaptTel": "02-000-0000",
                "kaptUrl": None,
                "codeAptNm": "아파트",
                "codeMgrNm": "위탁관리",
                "codeHallNm": "계단식",
            }
        ]
    )


_TITLE_FIELDS = [
    Field("rnum", "순번", "integer"),
    Field("platPlc", "대지위치 (지번주소)"),
    Field("sigunguCd", "시군구코드"),
    Field("bjdongCd", "법정동코드 (읍면동 5자리)"),
    Field("platGbCd", "대지구분코드 (0 대지, 1 산, 2 블록)"),
    Field("bun", "번 (4자리)"),
    Field("ji", "지 (4자리)"),
    Field("mgmBldrgstPk", "관리건축물대장PK"),
    Field("regstrGbCd", "대장구분코드"),
    Field("regstrGbCdNm", "대장구분코드명"),
    Field("regstrKindCd", "대장종류코드"),
    Field("regstrKindCdNm", "대장종류코드명"),
    Field("newPlatPlc", "도로명대지위치"),
    Field("bldNm", "건물명"),
    Field("dongNm", "동명칭"),
    Field("mainAtchGbCd", "주부속구분코드"),
    Field("mainAtchGbCdNm", "주부속구분코드명"),
    Field("platArea", "대지면적 (㎡)", "number"),
    Field("archArea", "건축면적 (㎡)", "number"),
    Field("bcRat", "건폐율 (%)", "number"),
    Field("totArea", "연면적 (㎡)", "number"),
    Field("vlRat", "용적률 (%)", "number"),
    Field("strctCdNm", "구조코드명"),
    Field("mainPurpsCdNm", "주용도코드명"),
    Field("etcPurps", "기타용도"),
    Field("roofCdNm", "지붕코드명"),
    Field("hhldCnt", "세대수", "integer"),
    Field("fmlyCnt", "가구수", "integer"),
    Field("heit", "높이 (m)", "number"),
    Field("grndFlrCnt", "지상층수", "integer"),
    Field("ugrndFlrCnt", "지하층수", "integer"),
    Field("rideUseElvtCnt", "승용승강기수", "integer"),
    Field("useAprDay", "사용승인일 (YYYYMMDD)"),
    Field("pmsDay", "허가일"),
    Field("stcnsDay", "착공일"),
    Field("crtnDay", "생성일자"),
    Field("naRoadCd", "새주소도로코드"),
    Field("naMainBun", "새주소본번", "integer"),
    Field("naSubBun", "새주소부번", "integer"),
]
_BLD_PARAMS = [
    Param("sigunguCd", "시군구코드 (법정동코드 앞 5자리)", required=True, example="11680", pattern="^[0-9]{5}$"),
    Param("bjdongCd", "법정동코드 (법정동코드 뒤 5자리)", required=True, example="10300", pattern="^[0-9]{5}$"),
    Param("platGbCd", "대지구분코드 (0:대지 1:산 2:블록)", enum=("0", "1", "2")),
    Param("bun", "번 (4자리, 앞을 0으로 채움)", example="0012", pattern="^[0-9]{4}$"),
    Param("ji", "지 (4자리, 앞을 0으로 채움)", example="0000", pattern="^[0-9]{4}$"),
    Param("startDate", "검색시작일 (YYYYMMDD)", pattern="^[0-9]{8}$", format="yyyymmdd"),
    Param("endDate", "검색종료일 (YYYYMMDD)", pattern="^[0-9]{8}$", format="yyyymmdd"),
]
_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)

OPERATIONS = [
    Operation(
        RTMS,
        "RTMSDataSvcAptTrade",
        "getRTMSDataSvcAptTrade",
        "아파트 매매 실거래가 자료 조회",
        "지역코드(법정동코드 앞 5자리)와 계약년월로 아파트 매매 신고 자료를 조회합니다.",
        [_KEY, _LAWD, _YMD, *paging_params(RTMS)],
        [f for f in [*_COMMON_DEAL_FIELDS, *_TRADE_FIELDS] if f.name in _SIMPLE_KEEP],
        _trade_simple,
        intent="{LAWD_CD} 지역의 {DEAL_YMD} 아파트 매매 실거래가 조회",
    ),
    Operation(
        RTMS,
        "RTMSDataSvcAptTradeDev",
        "getRTMSDataSvcAptTradeDev",
        "아파트 매매 실거래가 상세 자료 조회",
        "지역코드(법정동코드 앞 5자리)와 계약년월로 아파트 매매 상세 "
        "자료(법정동 코드, 본번·부번, 도로명 포함)를 조회합니다.",
        [_KEY, _LAWD, _YMD, *paging_params(RTMS)],
        [*_COMMON_DEAL_FIELDS, *_TRADE_FIELDS],
        _trade,
        intent="{LAWD_CD} 지역 {DEAL_YMD} 아파트 매매 상세 내역 조회",
    ),
    Operation(
        RTMS,
        "RTMSDataSvcAptRent",
        "getRTMSDataSvcAptRent",
        "아파트 전월세 실거래가 자료 조회",
        "지역코드(법정동코드 앞 5자리)와 계약년월로 아파트 전월세 신고 자료를 조회합니다.",
        [_KEY, _LAWD, _YMD, *paging_params(RTMS)],
        [*_COMMON_DEAL_FIELDS, *_RENT_FIELDS],
        _rent,
        intent="{LAWD_CD} 지역 {DEAL_YMD} 아파트 전월세 실거래가 조회",
    ),
    Operation(
        BLD,
        "BldRgstHubService",
        "getBrTitleInfo",
        "건축물대장 표제부 조회",
        "시군구코드, 법정동코드, 번, 지로 건축물대장 표제부(구조, 용도, 면적, 층수, 사용승인일)를 조회합니다.",
        [_KEY, *_BLD_PARAMS, *paging_params(BLD), *format_param(BLD)],
        _TITLE_FIELDS,
        _title,
        intent="건물의 건축물대장 표제부 확인",
        retired=("BldRgstService_v2",),
    ),
    Operation(
        BLD,
        "BldRgstHubService",
        "getBrBasisOulnInfo",
        "건축물대장 기본개요 조회",
        "시군구코드, 법정동코드, 번, 지로 건축물대장 기본개요를 조회합니다.",
        [_KEY, *_BLD_PARAMS, *paging_params(BLD), *format_param(BLD)],
        [f for f in _TITLE_FIELDS if f.name in _BASIS_KEEP]
        + [
            Field("mgmUpBldrgstPk", "관리상위건축물대장PK"),
            Field("jiyukCdNm", "지역코드명"),
            Field("jiguCdNm", "지구코드명"),
            Field("guyukCdNm", "구역코드명"),
        ],
        _basis,
        intent="건물의 건축물대장 기본개요 확인",
    ),
    Operation(
        APT,
        "AptListService4",
        "getLegaldongAptList4",
        "법정동 공동주택 단지 목록 조회",
        "법정동코드(10자리)로 해당 법정동의 공동주택 단지코드(kaptCode)와 단지명을 조회합니다.",
        [
            _KEY,
            Param("bjdCode", "법정동코드 (10자리)", required=True, example="1171010100", pattern="^[0-9]{10}$"),
            *paging_params(APT),
        ],
        [
            Field("kaptCode", "단지코드", example="A10020074"),
            Field("kaptName", "단지명"),
            Field("bjdCode", "법정동코드"),
            Field("as1", "시도"),
            Field("as2", "시군구"),
            Field("as3", "읍면동"),
            Field("as4", "리", nullable=True),
        ],
        _legaldong_list,
        intent="법정동의 아파트 단지 목록 조회",
        retired=("AptListService3", "AptListService2"),
    ),
    Operation(
        APT,
        "AptListService4",
        "getSigunguAptList4",
        "시군구 공동주택 단지 목록 조회",
        "시군구코드(5자리)로 공동주택 단지코드와 단지명을 조회합니다.",
        [
            _KEY,
            Param("sigunguCode", "시군구코드 (5자리)", required=True, example="11710", pattern="^[0-9]{5}$"),
            *paging_params(APT),
        ],
        [
            Field("kaptCode", "단지코드"),
            Field("kaptName", "단지명"),
            Field("bjdCode", "법정동코드"),
            Field("as1", "시도"),
            Field("as2", "시군구"),
            Field("as3", "읍면동"),
            Field("as4", "리", nullable=True),
        ],
        _sigungu_list,
        intent="시군구의 아파트 단지 목록 조회",
    ),
    Operation(
        APT,
        "AptBasisInfoServiceV5",
        "getAphusBassInfoV5",
        "공동주택 기본 정보 조회",
        "단지코드(kaptCode)로 공동주택 단지의 주소, 세대수, 동수, 사용승인일, 난방방식을 조회합니다.",
        [_KEY, Param("kaptCode", "단지코드", required=True, example="A10020074", pattern="^A[0-9]{8}$")],
        [
            Field("kaptCode", "단지코드", nullable=True),
            Field("kaptName", "단지명", nullable=True),
            Field("kaptAddr", "법정동주소", nullable=True),
            Field("doroJuso", "도로명주소", nullable=True),
            Field("codeSaleNm", "분양형태", nullable=True),
            Field("codeHeatNm", "난방방식", nullable=True),
            Field("kaptTarea", "건축물대장상 연면적", "number", nullable=True),
            Field("kaptDongCnt", "동수", nullable=True),
            Field("kaptdaCnt", "세대수", "number", nullable=True),
            Field("hoCnt", "호수", "integer", nullable=True),
            Field("kaptUsedate", "사용승인일", nullable=True),
            Field("bjdCode", "법정동코드", nullable=True),
            Field("zipcode", "우편번호", nullable=True),
            Field("kaptTel", "관리사무소연락처", nullable=True),
            Field("kaptUrl", "홈페이지주소", nullable=True),
            Field("codeAptNm", "단지분류", nullable=True),
            Field("codeMgrNm", "관리방식", nullable=True),
            Field("codeHallNm", "복도유형", nullable=True),
        ],
        _aphus_basis,
        paged=False,
        single=True,
        intent="아파트 단지 기본 정보 확인",
        retired=("AptBasisInfoServiceV4", "AptBasisInfoService"),
    ),
]
