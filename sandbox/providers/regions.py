"""행정안전부_법정동코드 (StanReginCd): the shared key of Korean region codes."""

from __future__ import annotations

from core.json_types import JsonObject
from sandbox.spec import (
    Field,
    Operation,
    Param,
    Provider,
    ProviderError,
    Request,
    Result,
    format_param,
    paging_params,
)

MOIS = Provider(
    key="1741000",
    title="행정안전부_법정동코드",
    org="행정안전부",
    envelope="stanreg",
    format_param="type",
    success_code="INFO-0",
    success_msg="NOMAL SERVICE",
    empty="info3",
    missing_error=("ERROR-300", "필수 값이 누락되어 있습니다."),
    invalid_error=("ERROR-310", "요청인자가 올바르지 않습니다."),
)


def _list(req: Request) -> Result:
    name = req.params.get("locatadd_nm", "").strip()
    rows: list[JsonObject] = []
    for r in req.world.regions:
        full = r.full_name
        if name and not full.startswith(name):
            continue
        rows.append(
            {
                "region_cd": r.code,
                "sido_cd": r.code[:2],
                "sgg_cd": r.code[2:5],
                "umd_cd": r.code[5:8],
                "ri_cd": r.code[8:],
                "locatjumin_cd": r.code,
                "locatjijuk_cd": r.code,
                "locatadd_nm": full,
                "locat_order": len(rows) + 1,
                "locat_rm": None,
                "locathigh_cd": r.parent_code,
                "locallow_nm": r.leaf_name,
                "adpt_de": r.created if r.created > "19950101" else None,
            }
        )
    if not rows:
        raise ProviderError("INFO-3", "데이터없음 에러")
    return Result(rows)


OPERATIONS = [
    Operation(
        MOIS,
        "StanReginCd",
        "getStanReginCdList",
        "법정동코드 목록 조회",
        "지역주소명으로 법정동코드(10자리), 시도·시군구·읍면동·리 코드와 상위코드를 조회합니다.",
        [
            *paging_params(MOIS),
            *format_param(MOIS),
            Param("locatadd_nm", "지역주소명 (앞부분 일치 검색, 예: 서울특별시 종로구)", example="서울특별시 종로구"),
        ],
        [
            Field("region_cd", "법정동코드 (10자리: 시도2+시군구3+읍면동3+리2)", example="1111010100"),
            Field("sido_cd", "시도코드 (법정동코드 앞 2자리)", example="11"),
            Field("sgg_cd", "시군구코드 (법정동코드 3~5번째 자리)", example="110"),
            Field("umd_cd", "읍면동코드 (3자리)", example="101"),
            Field("ri_cd", "리코드 (2자리)", example="00"),
            Field("locatjumin_cd", "지역코드_주민", example="1111010100"),
            Field("locatjijuk_cd", "지역코드_지적", example="1111010100"),
            Field("locatadd_nm", "지역주소명 (전체 이름)", example="서울특별시 종로구 청운동"),
            Field("locat_order", "서열", "integer", example="1"),
            Field("locat_rm", "비고", nullable=True),
            Field("locathigh_cd", "상위지역코드", example="1111000000"),
            Field("locallow_nm", "최하위지역명 (읍면동 또는 리 이름)", example="청운동"),
            Field("adpt_de", "생성일 (YYYYMMDD)", nullable=True, example="19880423"),
        ],
        _list,
        intent="{locatadd_nm}의 법정동코드 확인",
    ),
]
