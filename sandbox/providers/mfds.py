"""식품의약품안전처: e약은요, 의약품 낱알식별, DUR 품목정보 (JSON without the `response` wrapper)."""

from __future__ import annotations

from core.json_types import JsonObject
from sandbox.entities import Drug
from sandbox.spec import Field, Operation, Param, Provider, Request, Result, format_param, paging_params
from sandbox.world_tables import TABOO_PAIRS

MFDS = Provider(
    key="1471000",
    title="식품의약품안전처_의약품정보",
    org="식품의약품안전처",
    envelope="mfds",
    format_param="type",
    empty="absent",
    missing_error=("11", "NO_MANDATORY_REQUEST__PARAMETER_ERROR"),
)


def _match(d: Drug, p: dict[str, str], name_key: str, seq_key: str, entp_key: str) -> bool:
    if p.get(name_key) and p[name_key] not in d.item_name:
        return False
    if p.get(seq_key) and p[seq_key] != d.item_seq:
        return False
    if p.get(entp_key) and p[entp_key] not in d.maker.name:
        return False
    return not (p.get("bizrno") and p["bizrno"] != d.maker.b_no)


def _easy(req: Request) -> Result:
    rows = []
    for d in req.world.drugs:
        if not d.otc or not _match(d, req.params, "itemName", "itemSeq", "entpName"):
            continue
        rows.append(
            {
                "entpName": d.maker.name,
                "itemName": d.item_name,
                "itemSeq": d.item_seq,
                "efcyQesitm": f"이 약은 {d.class_name.split('.')[0]} 증상의 완화에 사용합니다.",
                "useMethodQesitm": "성인 1회 1정, 1일 3회 식후에 복용합니다.",
                "atpnWarnQesitm": None,
                "atpnQesitm": "이 약을 복용하기 전에 의사 또는 약사와 상의하십시오.",
                "intrcQesitm": "다른 약과 함께 복용할 때는 의사 또는 약사와 상의하십시오.",
                "seQesitm": "발진, 구역 등이 나타나는 경우 복용을 즉각 중지하십시오.",
                "depositMethodQesitm": "실온에서 보관하십시오.",
                "openDe": d.open_de,
                "updateDe": d.update_de,
                "itemImage": f"https://nedrug.mfds.go.kr/pbp/cmn/itemImageDownload/{d.item_seq}{d.edi_code}",
                "bizrno": d.maker.b_no,
            }
        )
    return Result(rows)


def _pill(req: Request) -> Result:
    p = req.params
    rows = []
    for d in req.world.drugs:
        if not _match(d, p, "item_name", "item_seq", "entp_name"):
            continue
        if p.get("edi_code") and p["edi_code"] != d.edi_code:
            continue
        rows.append(
            {
                "ITEM_SEQ": d.item_seq,
                "ITEM_NAME": d.item_name,
                "ENTP_SEQ": d.maker.b_no[3:],
                "ENTP_NAME": d.maker.name,
                "CHART": f"{d.color}색의 {d.form[2]} {d.form[1]}",
                "ITEM_IMAGE": f"https://nedrug.mfds.go.kr/pbp/cmn/itemImageDownload/{d.item_seq}",
                "PRINT_FRONT": d.print_front,
                "PRINT_BACK": None,
                "DRUG_SHAPE": d.form[2],
                "COLOR_CLASS1": d.color,
                "LINE_FRONT": None,
                "LENG_LONG": "10.5",
                "LENG_SHORT": "5.2",
                "THICK": "4.1",
                "IMG_REGIST_TS": "20230515",
                "CLASS_NO": d.class_no,
                "CLASS_NAME": d.class_name,
                "ETC_OTC_NAME": "일반의약품" if d.otc else "전문의약품",
                "FORM_CODE_NAME": d.form[1],
                "EDI_CODE": d.edi_code,
                "BIZRNO": d.maker.b_no,
            }
        )
    return Result(rows)


def _dur_row(d: Drug) -> JsonObject:
    return {
        "ITEM_SEQ": d.item_seq,
        "ITEM_NAME": d.item_name,
        "ENTP_NAME": d.maker.name,
        "INGR_CODE": d.ingr_code,
        "INGR_KOR_NAME": d.ingr_name,
        "CLASS_NAME": d.class_name,
        "ETC_OTC_NAME": "일반의약품" if d.otc else "전문의약품",
        "FORM_NAME": d.form[1],
        "BIZRNO": d.maker.b_no,
        "CHANGE_DATE": d.update_de,
    }


def _dur(req: Request) -> Result:
    p = req.params
    return Result(
        [
            _dur_row(d)
            for d in req.world.drugs
            if _match(d, p, "itemName", "itemSeq", "entpName")
            and (not p.get("ingrCode") or p["ingrCode"] == d.ingr_code)
        ]
    )


def _taboo(req: Request) -> Result:
    p = req.params
    partners: dict[str, list[tuple[str, str]]] = {}
    for a, b, why in TABOO_PAIRS:
        partners.setdefault(a, []).append((b, why))
        partners.setdefault(b, []).append((a, why))
    rows = []
    for d in req.world.drugs:
        if not _match(d, p, "itemName", "itemSeq", "entpName") or (p.get("ingrCode") and p["ingrCode"] != d.ingr_code):
            continue
        for other_code, why in partners.get(d.ingr_code, []):
            other = next(x for x in req.world.drugs if x.ingr_code == other_code)
            rows.append(
                {
                    **_dur_row(d),
                    "TYPE_NAME": "병용금기",
                    "MIXTURE_INGR_CODE": other.ingr_code,
                    "MIXTURE_INGR_KOR_NAME": other.ingr_name,
                    "MIXTURE_ITEM_SEQ": other.item_seq,
                    "MIXTURE_ITEM_NAME": other.item_name,
                    "PROHBT_CONTENT": why,
                }
            )
    return Result(rows)


_KEY = Param("serviceKey", "공공데이터포털에서 발급받은 인증키", required=True)
_COMMON = [_KEY, *paging_params(MFDS), *format_param(MFDS)]
_DUR_PARAMS = [
    Param("itemName", "품목명", example="아세트아미노펜"),
    Param("itemSeq", "품목기준코드 (9자리)", example="202106092", pattern="^[0-9]{9}$"),
    Param("entpName", "업체명"),
    Param("ingrCode", "DUR성분코드 (예: D000419)", pattern="^D[0-9]{6}$"),
    Param("bizrno", "사업자등록번호", pattern="^[0-9]{10}$"),
    Param("typeName", "DUR유형"),
    Param("start_change_date", "변경일자 시작 (YYYYMMDD)"),
    Param("end_change_date", "변경일자 종료 (YYYYMMDD)"),
]
_DUR_FIELDS = [
    Field("ITEM_SEQ", "품목기준코드"),
    Field("ITEM_NAME", "품목명"),
    Field("ENTP_NAME", "업체명"),
    Field("INGR_CODE", "DUR성분코드"),
    Field("INGR_KOR_NAME", "DUR성분명"),
    Field("CLASS_NAME", "약효분류"),
    Field("ETC_OTC_NAME", "전문/일반 구분"),
    Field("FORM_NAME", "제형"),
    Field("BIZRNO", "사업자등록번호"),
    Field("CHANGE_DATE", "변경일자"),
]

OPERATIONS = [
    Operation(
        MFDS,
        "DrbEasyDrugInfoService",
        "getDrbEasyDrugList",
        "의약품개요정보(e약은요) 조회",
        "제품명, 품목기준코드, 업체명으로 일반의약품의 효능, 사용법, 주의사항, 부작용, 보관법을 조회합니다.",
        [
            *_COMMON,
            Param("entpName", "업체명"),
            Param("itemName", "제품명 (일부 일치)", example="아세트아미노펜"),
            Param("itemSeq", "품목기준코드", pattern="^[0-9]{9}$"),
            Param("efcyQesitm", "이 약의 효능은 무엇입니까?"),
            Param("openDe", "공개일자"),
            Param("updateDe", "수정일자"),
            Param("bizrno", "사업자등록번호", pattern="^[0-9]{10}$"),
        ],
        [
            Field("entpName", "업체명"),
            Field("itemName", "제품명"),
            Field("itemSeq", "품목기준코드 (9자리)"),
            Field("efcyQesitm", "이 약의 효능은 무엇입니까?"),
            Field("useMethodQesitm", "이 약은 어떻게 사용합니까?"),
            Field("atpnWarnQesitm", "이 약을 사용하기 전에 반드시 알아야 할 내용은 무엇입니까?", nullable=True),
            Field("atpnQesitm", "이 약의 사용상 주의사항은 무엇입니까?"),
            Field("intrcQesitm", "이 약을 사용하는 동안 주의해야 할 약 또는 음식은 무엇입니까?"),
            Field("seQesitm", "이 약은 어떤 이상반응이 나타날 수 있습니까?"),
            Field("depositMethodQesitm", "이 약은 어떻게 보관해야 합니까?"),
            Field("openDe", "공개일자"),
            Field("updateDe", "수정일자"),
            Field("itemImage", "낱알이미지"),
            Field("bizrno", "사업자등록번호"),
        ],
        _easy,
        intent="'{itemName}' 약의 효능과 복용법 확인",
        retired=("DrbEasyDrugInfoService01",),
    ),
    Operation(
        MFDS,
        "MdcinGrnIdntfcInfoService03",
        "getMdcinGrnIdntfcInfoList03",
        "의약품 낱알식별 목록 조회",
        "품목명, 품목일련번호(item_seq), 업체명, 보험코드로 의약품의 "
        "모양, 색상, 각인, 보험코드(EDI_CODE)를 조회합니다.",
        [
            *_COMMON,
            Param("item_name", "품목명"),
            Param("entp_name", "업체명"),
            Param("item_seq", "품목일련번호 (9자리)", pattern="^[0-9]{9}$"),
            Param("img_regist_ts", "약학정보원 이미지 생성일"),
            Param("edi_code", "보험코드"),
            Param("bizrno", "사업자등록번호", pattern="^[0-9]{10}$"),
        ],
        [
            Field("ITEM_SEQ", "품목일련번호"),
            Field("ITEM_NAME", "품목명"),
            Field("ENTP_SEQ", "업체일련번호"),
            Field("ENTP_NAME", "업체명"),
            Field("CHART", "성상"),
            Field("ITEM_IMAGE", "큰제품이미지"),
            Field("PRINT_FRONT", "표시(앞)"),
            Field("PRINT_BACK", "표시(뒤)", nullable=True),
            Field("DRUG_SHAPE", "의약품제형"),
            Field("COLOR_CLASS1", "색상(앞)"),
            Field("LINE_FRONT", "분할선(앞)", nullable=True),
            Field("LENG_LONG", "크기(장축)"),
            Field("LENG_SHORT", "크기(단축)"),
            Field("THICK", "크기(두께)"),
            Field("IMG_REGIST_TS", "이미지 생성일"),
            Field("CLASS_NO", "분류번호"),
            Field("CLASS_NAME", "분류명"),
            Field("ETC_OTC_NAME", "전문일반구분"),
            Field("FORM_CODE_NAME", "제형코드이름"),
            Field("EDI_CODE", "보험코드"),
            Field("BIZRNO", "사업자등록번호"),
        ],
        _pill,
        intent="약의 모양과 식별 정보 확인",
        retired=("MdcinGrnIdntfcInfoService02", "MdcinGrnIdntfcInfoService01"),
    ),
    Operation(
        MFDS,
        "DURPrdlstInfoService03",
        "getDurPrdlstInfoList03",
        "DUR 품목정보 조회",
        "품목명, 품목기준코드(itemSeq), 성분코드로 DUR 품목정보(성분, 업체, 전문/일반 구분)를 조회합니다.",
        [*_COMMON, *_DUR_PARAMS],
        _DUR_FIELDS,
        _dur,
        intent="약의 DUR 성분 정보 확인",
        retired=("DURPrdlstInfoService02",),
    ),
    Operation(
        MFDS,
        "DURPrdlstInfoService03",
        "getUsjntTabooInfoList03",
        "DUR 병용금기 정보 조회",
        "품목명, 품목기준코드 또는 DUR성분코드(ingrCode)로 함께 복용하면 안 되는 약(병용금기)을 조회합니다.",
        [*_COMMON, *_DUR_PARAMS],
        [
            *_DUR_FIELDS,
            Field("TYPE_NAME", "DUR유형"),
            Field("MIXTURE_INGR_CODE", "병용금기 DUR성분코드"),
            Field("MIXTURE_INGR_KOR_NAME", "병용금기 성분명"),
            Field("MIXTURE_ITEM_SEQ", "병용금기 품목기준코드"),
            Field("MIXTURE_ITEM_NAME", "병용금기 품목명"),
            Field("PROHBT_CONTENT", "금기내용"),
        ],
        _taboo,
        intent="함께 먹으면 안 되는 약 확인",
    ),
]
