"""Two code systems that coincide on some values are told apart where they differ, on made-up services.

A sample taken where every row is about one place (the first page of a list ordered by region code) shows each link
one value, and a value two systems share proves nothing: an agency's own province numbering sliced to the legal
code's two digits (110000 -> 11 is 서울 in both, 210000 -> 21 is no legal code), district names fed as the names of
measuring points (some points are named after their 구, others not), a zero-padded blank sub-number fed as another
numbering's sub-number, and the digits of a 읍면동 code read as a 시군구 code (an answer about other places)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

from execution.result import CallResult, Outcome
from graph import meaning
from graph.embedded_store import EmbeddedStore
from graph.link_scoring import link_id
from graph.models import LinkRecord
from tests.support.made_up import query_param, response_schema, verify_made_up
from verification.trials import (
    Trial,
    another_place,
    blank_numbering,
    elsewhere,
    place,
    places_named,
    vocabularies,
)


def _link(
    field: str, param: str, transform: dict[str, Any] | None = None, source: str = "src", target: str = "dst"
) -> LinkRecord:
    t = transform or {"kind": "identity"}
    return LinkRecord(
        id=link_id(source, field, target, f"query:{param}", t),
        source_tool=source,
        source_field=field,
        target_tool=target,
        target_param=f"query:{param}",
        transform=t,
        score=0.9,
    )


def _trial(value: str, param: str, outcome: Outcome, row: dict[str, Any], items: list[dict[str, Any]]) -> Trial:
    return Trial(value, {param: value}, CallResult(outcome, items=items), row)


# ---------------------------------------------------------------- the rules, one by one


def test_codes_a_description_gives_with_their_places_are_read_and_nothing_else() -> None:
    assert meaning.place_codes("권역코드 (기관 자체 6자리, 예: 110000 서울, 210000 부산, 220000 대구)") == {
        "110000": "서울",
        "210000": "부산",
        "220000": "대구",
    }
    assert meaning.place_codes("지역 (예: 11110 종로구)") == {}  # one place: no other to try
    assert meaning.place_codes("종별코드 (01 상급종합, 11 종합병원, 21 병원)") == {}  # categories, not places
    assert meaning.place_codes("") == {}


def test_region_names_into_a_parameter_whose_own_names_are_of_another_vocabulary_are_refuted() -> None:
    points = ["종로구", "중구", "가람", "나루", "버들"]
    why = vocabularies(_link("guNm", "pointNm"), ["종로구"], points)
    assert why and "가람" in why and "종로구" in why
    # the source's names are not all region names: the target's own list of them
    assert vocabularies(_link("pointNm", "pointNm"), ["종로구", "가람"], points) is None
    # the target's names are all region names, or share none, or are addresses: nothing to tell
    assert vocabularies(_link("guNm", "guName"), ["종로구"], ["종로구", "중구", "강남구"]) is None
    assert vocabularies(_link("guNm", "pointNm"), ["종로구"], ["가람", "나루", "버들"]) is None
    assert vocabularies(_link("guNm", "addr"), ["종로구"], ["서울 종로구 1", "부산 중구 2", "가람 3"]) is None
    assert vocabularies(_link("guNm", "pointNm", {"kind": "slice", "start": 0, "end": 2}), ["종로구"], points) is None


def test_a_zero_padded_blank_in_every_record_tells_no_numbering_from_another() -> None:
    rows = [{"bldNm": n, "subNo": "0000"} for n in ("가동", "나동", "다동")]
    why = blank_numbering(_link("subNo", "lotSub"), rows, enumerated=False)
    assert why and "0000" in why and "3" in why
    assert blank_numbering(_link("subNo", "lotSub"), rows, enumerated=True) is None  # 0 is then a category
    assert blank_numbering(_link("subNo", "lotSub"), rows[:2], enumerated=False) is None  # too few records
    mixed = [*rows, {"bldNm": "라동", "subNo": "0007"}]
    assert blank_numbering(_link("subNo", "lotSub"), mixed, enumerated=False) is None
    single = [{"bldNm": n, "kind": "0"} for n in ("가동", "나동", "다동")]
    assert blank_numbering(_link("kind", "lotSub"), single, enumerated=False) is None  # a bare 0 is no padding


SEOUL_ROW = {"dongPart": "10200", "addr": "서울특별시 종로구 신교동 1"}
WIDE = [{"addr": "서울특별시 종로구 청운동 3"}, {"addr": "부산광역시 중구 영주동 5"}]


def test_an_answer_about_other_places_than_the_values_row_refutes_the_link() -> None:
    link = _link("dongPart", "sggCode", {"kind": "slice", "start": 2, "end": 5})
    other = [{"addr": "서울특별시 성동구 행당동 1"}, {"addr": "부산광역시 영도구 남항동 2"}]
    why = another_place(link, [_trial("10200", "sggCode", Outcome.OK, SEOUL_ROW, other)], WIDE)
    assert why and "서울 종로구" in why and "성동구" in why
    # the row's own 시군구 among the answer's, or an answer across the row's 시도: the value agrees
    own = [*other, {"addr": "서울특별시 종로구 청운동 3"}]
    assert another_place(link, [_trial("10200", "sggCode", Outcome.OK, SEOUL_ROW, own)], WIDE) is None
    province = [{"addr": "서울특별시 강남구 역삼동 1"}, {"addr": "서울특별시 마포구 합정동 2"}]
    assert another_place(link, [_trial("10200", "sggCode", Outcome.OK, SEOUL_ROW, province)], WIDE) is None
    # a target that answers one 시도 anyway, or rows that name no place: nothing to tell
    assert another_place(link, [_trial("10200", "sggCode", Outcome.OK, SEOUL_ROW, other)], WIDE[:1]) is None
    assert another_place(link, [_trial("10200", "sggCode", Outcome.OK, {"dongPart": "10200"}, other)], WIDE) is None
    assert place({"x": 3, "addr": "인천광역시 남동구 구월동 1"}) == ("인천", "남동구")
    assert place({"addr": "가람마을 1"}) is None


def test_codes_the_source_documents_for_other_places_that_fail_refute_the_sampled_one() -> None:
    link = _link("areaCd", "provCode", {"kind": "slice", "start": 0, "end": 2})
    names = {"110000": "서울", "210000": "부산", "220000": "대구"}
    worked = _trial("110000", "provCode", Outcome.OK, {}, [{"a": "1"}])
    failed = [_trial(c, "provCode", Outcome.EMPTY, {}, []) for c in ("210000", "220000")]
    why = elsewhere(link, worked, failed, names)
    assert why and "부산" in why and "110000" in why
    works = _trial("220000", "provCode", Outcome.OK, {}, [{"a": "2"}])
    assert elsewhere(link, worked, [failed[0], works], names) is None
    lost = _trial("220000", "provCode", Outcome.TRANSIENT, {}, [])
    assert elsewhere(link, worked, [failed[0], lost], names) is None  # a fault never refutes
    assert elsewhere(link, worked, [], names) is None


def test_the_places_a_target_has_data_for_are_read_off_its_addresses_and_its_lists_of_regions() -> None:
    # a list of regions names them; an address is about one; other text names none
    assert places_named([{"code": "28", "name": "인천광역시"}, {"code": "26", "name": "부산"}]) == {"인천", "부산"}
    assert places_named([{"addr": "서울특별시 종로구 청운동 3"}, {"gu": "남동구"}]) == {"서울", "종로구", "남동구"}
    assert places_named([{"name": "가람", "addr": "가람마을 1", "n": 3}]) == set()


# ---------------------------------------------------------------- end to end, on a made-up service

HOST = "coincide.unseen.example"
#: (legal 시군구 code, address) of the spots the guide lists: 시군구 codes repeat across 시도 (110 and 200 in both).
SPOTS = [
    ("11110", "서울특별시 종로구 청운동 3"),
    ("11200", "서울특별시 성동구 행당동 9"),
    ("26110", "부산광역시 중구 영주동 5"),
    ("26200", "부산광역시 영도구 남항동 2"),
]
#: The clinic registry's own province numbering: 110000 서울 (its head is the legal code), 210000 부산 (legal 26).
CLINIC_AREAS = {"110000": ("서울", "종로구", "서울특별시 종로구"), "210000": ("부산", "중구", "부산광역시 중구")}
POINTS = ["종로구", "중구", "가람", "나루", "버들"]


def _op(op_id: str, summary: str, params: list[dict[str, Any]], props: dict[str, str]) -> dict[str, Any]:
    return {
        "get": {"operationId": op_id, "summary": summary, "parameters": params, "responses": response_schema(props)}
    }


def _document() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "코드 체계 시험 서비스", "version": "1"},
        "servers": [{"url": f"https://{HOST}/svc"}],
        "paths": {
            "/clinics": _op(
                "listClinics",
                "의원 목록 조회",
                [query_param("areaCd", "권역코드 (기관 자체 6자리, 예: 110000 서울, 210000 부산, 220000 대구)")],
                {"clinicNm": "의원명", "areaCd": "권역코드", "guNm": "시군구명", "addr": "주소"},
            ),
            "/buildings": _op(
                "listBuildings",
                "건물 목록 조회",
                [],
                {
                    "bldNm": "건물명",
                    "sggPart": "시군구코드 (법정동코드 앞 5자리)",
                    "dongPart": "읍면동코드 (법정동코드 뒤 5자리)",
                    "subNo": "건물 부번호 (4자리)",
                    "addr": "대지위치",
                },
            ),
            "/spots": _op(
                "listSpots",
                "명소 목록 조회",
                [
                    query_param("provCode", "법정동 시도코드 (2자리)"),
                    query_param("sggCode", "법정동 시군구코드 (3자리)"),
                ],
                {"spotNm": "명소명", "addr": "주소"},
            ),
            "/lots": _op(
                "listLots",
                "필지 목록 조회",
                [query_param("lotSub", "지번 부번 (4자리, 앞을 0으로 채움)")],
                {"lotNo": "지번", "lotSub": "부번"},
            ),
            "/points": _op("listPoints", "측정지점 목록", [], {"pointNm": "측정지점명", "kind": "지점 종류"}),
            "/readings": _op(
                "getReadings",
                "측정지점별 측정값 조회",
                [query_param("pointNm", "측정지점명", required=True, example="가람")],
                {"pointNm": "측정지점명", "level": "측정값"},
            ),
        },
    }


def _app() -> Any:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    def data(rows: list[dict[str, str]]) -> dict[str, Any]:
        return {"result": {"data": rows}}

    @app.get("/svc/clinics")
    def clinics(request: Request) -> dict[str, Any]:
        # ordered by region: the first page is 서울 종로구 only
        code = request.query_params.get("areaCd", "110000")
        if code not in CLINIC_AREAS:
            return data([])
        _, gu, where = CLINIC_AREAS[code]
        rows = [{"clinicNm": f"{n}의원", "areaCd": code, "guNm": gu, "addr": f"{where} {n}로 1"} for n in "가나다"]
        return data(rows)

    @app.get("/svc/buildings")
    def buildings() -> dict[str, Any]:
        rows = [
            {"bldNm": f"{n}빌딩", "sggPart": "11110", "dongPart": "10200", "subNo": "0000", "addr": f"{where} {i}"}
            for i, n in enumerate("가나다", 1)
            for where in ["서울특별시 종로구 신교동"]
        ]
        return data(rows)

    @app.get("/svc/spots")
    def spots(request: Request) -> dict[str, Any]:
        prov, sgg = request.query_params.get("provCode"), request.query_params.get("sggCode")
        picked = [(c, a) for c, a in SPOTS if (not prov or c[:2] == prov) and (not sgg or c[2:] == sgg)]
        return data([{"spotNm": f"명소{c}", "addr": a} for c, a in picked])

    @app.get("/svc/lots")
    def lots(request: Request) -> dict[str, Any]:
        rows = [{"lotNo": f"{n}-{s.lstrip('0')}", "lotSub": s} for n, s in (("12", "0000"), ("15", "0007"))]
        sub = request.query_params.get("lotSub")
        return data([r for r in rows if not sub or r["lotSub"] == sub])

    @app.get("/svc/points")
    def points() -> dict[str, Any]:
        return data([{"pointNm": p, "kind": "도시"} for p in POINTS])

    @app.get("/svc/readings")
    def readings(request: Request) -> dict[str, Any]:
        name = request.query_params.get("pointNm", "")
        return data([{"pointNm": name, "level": str(len(name) * 7 + ord(name[0]) % 5)}] if name in POINTS else [])

    return app


#: (source operation, field, target operation, parameter, transform) -> whether the link is true.
CANDIDATES: list[tuple[str, str, str, str, dict[str, Any], bool]] = [
    ("/clinics", "areaCd", "/spots", "provCode", {"kind": "slice", "start": 0, "end": 2}, False),
    ("/buildings", "sggPart", "/spots", "provCode", {"kind": "slice", "start": 0, "end": 2}, True),
    ("/buildings", "dongPart", "/spots", "sggCode", {"kind": "slice", "start": 2, "end": 5}, False),
    ("/buildings", "sggPart", "/spots", "sggCode", {"kind": "slice", "start": 2, "end": 5}, True),
    ("/clinics", "guNm", "/readings", "pointNm", {"kind": "identity"}, False),
    ("/points", "pointNm", "/readings", "pointNm", {"kind": "identity"}, True),
    ("/buildings", "subNo", "/lots", "lotSub", {"kind": "identity"}, False),
]


def _decided(tmp_path: Path) -> dict[tuple[str, str, str, str], LinkRecord]:
    """The candidates of CANDIDATES, added to the registered document's own, decided by one verification run."""
    ids: dict[str, tuple[str, str, str, str]] = {}

    def add(store: EmbeddedStore) -> None:
        by_op = {t.op_key.split(" ", 1)[1]: t.name for t in store.all_tools()}
        wanted = []
        for src, field, dst, param, transform, _ in CANDIDATES:
            wanted.append(_link(field, param, transform, by_op[src], by_op[dst]))
            ids[wanted[-1].id] = (src, field, dst, param)
        store.upsert_candidates(wanted)

    links = verify_made_up(tmp_path, HOST, _document(), _app(), before=add)
    return {ids[lk.id]: lk for lk in links if lk.id in ids}


def test_on_a_service_coinciding_systems_are_refuted_where_they_differ_and_true_links_verified(
    tmp_path: Path,
) -> None:
    links = _decided(tmp_path)
    assert len(links) == len(CANDIDATES)
    for src, field, dst, param, _, true in CANDIDATES:
        lk = links[(src, field, dst, param)]
        assert lk.status == ("verified" if true else "refuted"), (src, field, dst, param, lk.status, lk.reason)
    # each refutation says where the systems differ
    clinic = links[("/clinics", "areaCd", "/spots", "provCode")]
    assert "coincide for the sampled place only" in clinic.reason and "210000" in clinic.reason, clinic.reason
    assert clinic.evidence["trials"] >= 2  # the other places were tried, not assumed
    dong = links[("/buildings", "dongPart", "/spots", "sggCode")]
    assert "about other places" in dong.reason, dong.reason
    names = links[("/clinics", "guNm", "/readings", "pointNm")]
    assert "vocabularies coincide" in names.reason and "가람" in names.reason, names.reason
    blank = links[("/buildings", "subNo", "/lots", "lotSub")]
    assert "no value tells" in blank.reason, blank.reason
