"""Korean wording: particles, value formats, and the optional on-premise paraphraser (a local fake server)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from synthesis.language import fmt_value, has_batchim, josa, verb
from synthesis.paraphrase import paraphrase


def test_particles_and_forms() -> None:
    assert josa("조회", "을", "를") == "조회를" and josa("확인", "을", "를") == "확인을"
    assert has_batchim("2026년") and not has_batchim("서울시 2") and has_batchim("3")
    assert verb("근처 약국 찾기", "req") == "근처 약국 찾아 줘" and verb("날씨 확인", "then") == "날씨 확인한 다음"
    assert fmt_value("base_date", "20261015") == "2026년 10월 15일" and fmt_value("DEAL_YMD", "202609") == "2026년 9월"


class Fake(BaseHTTPRequestHandler):
    reply = ""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][-1]["content"]
        out = json.dumps({"choices": [{"message": {"content": Fake.reply.format(text=text)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def llm() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_paraphrase_keeps_values_or_falls_back(llm: str) -> None:
    Fake.reply = "혹시 {text}"
    assert paraphrase("종로구 날씨 알려줘", llm, must_keep=["종로구"]) == "혹시 종로구 날씨 알려줘"
    Fake.reply = "날씨를 알려주세요"  # dropped the value: keep the deterministic text
    assert paraphrase("종로구 날씨 알려줘", llm, must_keep=["종로구"]) == "종로구 날씨 알려줘"
    assert paraphrase("그대로", "http://127.0.0.1:9", must_keep=[]) == "그대로"


# ---------------------------------------------------------------------------------------------- composed answers


def _catalog_tool(name: str) -> Any:
    from graph.openapi import parse_document
    from sandbox.catalog import shipped_documents

    return next(t for doc in shipped_documents().values() for t in parse_document(doc)[1] if t.name == name)


def _single(tool_name: str, args: dict[str, Any], items: list[dict[str, Any]], selected: bool) -> tuple[Any, Any]:
    from synthesis.records import Plan, Source, Step, StepResponse, TrajectoryStep

    tool = _catalog_tool(tool_name)
    plan = Plan(
        shape="single", steps=[Step(tool=tool, sources={k: Source("slot", v) for k, v in args.items()})], finals=[0]
    )
    response = StepResponse(rows=len(items), items=items, shown=list(range(len(items))), selected=selected)
    prov = {k: {"kind": "slot", "value": v} for k, v in args.items()}
    return plan, [TrajectoryStep(step=1, tool=tool_name, arguments=args, provenance=prov, response=response)]


_ASPIRIN = {
    "ITEM_SEQ": "200696140",
    "ITEM_NAME": "아스피린캡슐100밀리그램",
    "ENTP_NAME": "(주)가나약품",
    "INGR_CODE": "D000360",
    "INGR_KOR_NAME": "아스피린",
    "TYPE_NAME": "병용금기",
}


def test_a_contraindication_answer_names_the_other_drug_and_why() -> None:
    """A DUR 병용금기 row holds the queried product and the one it must not be taken with: the answer lists the
    latter with the row's 금기 내용, never the queried product the user typed (issue: the answer listed it twice)."""
    import random

    from synthesis.facts import check_answer
    from synthesis.language import compose

    rows = [
        {
            **_ASPIRIN,
            "MIXTURE_INGR_KOR_NAME": "와파린",
            "MIXTURE_ITEM_SEQ": "200672937",
            "MIXTURE_ITEM_NAME": "와파린정2밀리그램",
            "PROHBT_CONTENT": "출혈 위험 증가",
        },
        {
            **_ASPIRIN,
            "MIXTURE_INGR_KOR_NAME": "이부프로펜",
            "MIXTURE_ITEM_SEQ": "201552354",
            "MIXTURE_ITEM_NAME": "이부프로펜캡슐200밀리그램",
            "PROHBT_CONTENT": "항혈소판 효과 감소",
        },
    ]
    for items, selected in ((rows, False), (rows[:1], True)):
        plan, steps = _single("mfds_get_usjnt_taboo_info_list03", {"itemName": _ASPIRIN["ITEM_NAME"]}, items, selected)
        for seed in range(6):
            _, answer, facts, _ = compose(plan, steps, random.Random(seed))
            values = [f.value for f in facts]
            assert _ASPIRIN["ITEM_NAME"] not in values, (answer, values)
            for row in items:
                assert row["MIXTURE_ITEM_NAME"] in values and row["PROHBT_CONTENT"] in values, values
                assert row["MIXTURE_ITEM_NAME"] in answer and row["PROHBT_CONTENT"] in answer, answer
            check = check_answer(answer, [f.fact() for f in facts])
            assert check.hits == check.total, (answer, check)


def test_a_value_that_ends_a_sentence_takes_no_copula_and_an_empty_list_is_left_out() -> None:
    """ "…복용합니다입니다" (a sentence value given 입니다) and "표제부 건수 3건이고, 입니다." (a list of nothing) never
    come out of the answer templates."""
    import random

    from synthesis.korean import sentences
    from synthesis.language import compose

    assert (
        sentences(["업체명 (주)가나약품", "복용법 1일 3회 복용합니다"])
        == "업체명 (주)가나약품, 복용법 1일 3회 복용합니다."
    )
    assert sentences(["효능 통증에 사용합니다", "업체명 가나", ""]) == "효능 통증에 사용합니다. 업체명 가나입니다."
    row = {
        "entpName": "(주)가나약품",
        "itemName": "가나정",
        "efcyQesitm": "이 약은 통증의 완화에 사용합니다.",
        "useMethodQesitm": "성인 1회 1정, 1일 3회 식후에 복용합니다.",
    }
    plan, steps = _single("mfds_get_drb_easy_drug_list", {"itemName": "가나정"}, [row], True)
    titles = [
        {"platPlc": f"서울특별시 마포구 도화동 {n}", "bldNm": " ", "mainPurpsCdNm": "단독주택"} for n in (1, 2, 3)
    ]
    plan2, steps2 = _single("molit_get_br_title_info", {"sigunguCd": "11440", "bjdongCd": "10400"}, titles, False)
    for seed in range(12):
        for p, s in ((plan, steps), (plan2, steps2)):
            answer = compose(p, s, random.Random(seed))[1]
            assert answer and not re.search(r"(다|요|오)\.?입니다|이고, ?입니다|, ?입니다", answer), answer


def test_a_set_over_a_whole_district_is_said_to_be_that_districts_and_an_area_is_wide() -> None:
    """Trades queried by a 시군구 code (LAWD_CD) cover the whole 구, not the 동 the user named: the answer says so
    ("서울특별시 동대문구 전체 …"); the largest 전용면적 is the 넓은 one, never the 높은 one."""
    import random

    from synthesis.answer_scope import area_name
    from synthesis.language import compose
    from synthesis.records import Plan, Source, Step, StepResponse, TrajectoryStep

    region = _catalog_tool("mois_get_stan_regin_cd_list")
    trade = _catalog_tool("molit_get_rtms_data_svc_apt_trade")
    place = "서울특별시 동대문구 전농동"
    plan = Plan(
        shape="chain",
        steps=[
            Step(tool=region, sources={"locatadd_nm": Source("slot", place)}),
            Step(tool=trade, sources={"LAWD_CD": Source("link"), "DEAL_YMD": Source("slot", "202604")}, depends_on=[0]),
        ],
        finals=[1],
    )
    region_row = {"region_cd": "1123010500", "locatadd_nm": place, "locallow_nm": "전농동"}
    deals = [
        {"aptNm": name, "umdNm": dong, "excluUseAr": area, "dealAmount": amount, "floor": "3"}
        for name, dong, area, amount in (("가람", "회기동", "84.9", "90,000"), ("나래", "이문동", "114.8", "120,000"))
    ]
    steps = [
        TrajectoryStep(
            step=1,
            tool=region.name,
            arguments={"locatadd_nm": place},
            provenance={"locatadd_nm": {"kind": "slot", "value": place}},
            response=StepResponse(rows=1, items=[region_row]),
        ),
        TrajectoryStep(
            step=2,
            tool=trade.name,
            arguments={"LAWD_CD": "11230", "DEAL_YMD": "202604"},
            provenance={
                "LAWD_CD": {"kind": "link", "link": "lk", "from_step": 0, "field": "region_cd"},
                "DEAL_YMD": {"kind": "slot", "value": "202604"},
            },
            depends_on=[1],
            response=StepResponse(rows=2, items=deals, shown=[0, 1], selected=False),
        ),
    ]
    highest = 0
    for seed in range(16):
        answer = compose(plan, steps, random.Random(seed))[1]
        assert "서울특별시 동대문구 전체" in answer and "전용면적이 가장 높은" not in answer, answer
        highest += "전용면적이 가장 넓은" in answer or "거래금액이 가장 높은" in answer
    assert highest, "no draw asked for the largest 전용면적"
    # data still names a 시군구 by its former name (인천 서구 before 2026-07-01), a 시도 by its short form
    assert area_name(["'약국'", "인천광역시 서구 경서동 12"], "sgg") == "인천광역시 서구"
    assert area_name(["서울"], "sido") == "서울특별시" and area_name(["성수동2가"], "sgg") == ""


def test_openings_fit_the_question() -> None:
    """ "오늘 나가 보려고 하는데" opens a question about today's weather, air or bus, never one about a drug leaflet;
    a report or analysis never asks when a bus arrives."""
    from synthesis.language import _openings
    from synthesis.records import Plan, Step

    def plan(name: str) -> Plan:
        return Plan(shape="single", steps=[Step(tool=_catalog_tool(name), sources={})], finals=[0])

    outing = "오늘 나가 보려고 하는데 "
    assert all(outing not in _openings(p, plan("mfds_get_drb_easy_drug_list")) for p in ("citizen", "civil"))
    assert outing in _openings("citizen", plan("kma_get_ultra_srt_fcst"))
    assert outing in _openings("citizen", plan("airkorea_get_ctprvn_rltm_mesure_dnsty"))
    assert _openings("analyst", plan("tago_get_sttn_accto_arvl_prearnge_info_list")) == [""]
