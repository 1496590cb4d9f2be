"""The pure fact checker shared by KOPA-Bench and the training rewards: numbers with tolerance and units, Korean
and ISO dates, normalised names, counts and literal text."""

from __future__ import annotations

from datetime import date

from synthesis.facts import Fact, FactCheck, check_answer, dates_in, normalise_name, numbers_in, render_fact


def test_numbers_in_reads_thousands_decimals_negatives_and_korean_amounts() -> None:
    assert numbers_in("기온 -3.5도, 거래 1,234건, 12억 5,000만원") == [-3.5, 1234.0, 12.0, 5000.0, 125000.0]
    assert numbers_in("값 없음") == []


def test_numbers_with_tolerance() -> None:
    fact = Fact("number", 14.9, tolerance=0.5)
    assert check_answer("내일 15시 기온은 15.2도입니다", [fact]).hits == 1
    assert check_answer("내일 오후 기온은 15.5도입니다", [fact]).hits == 0
    assert check_answer("기온은 14.9", [Fact("number", "14.9")]).score == 1.0
    assert check_answer("기온은 14.95", [Fact("number", 14.9)]).score == 0.0  # exact by default


def test_units_must_follow_the_number_in_any_common_spelling() -> None:
    pm = Fact("number", 85, unit="㎍/㎥")
    assert check_answer("미세먼지 85㎍/㎥", [pm]).hits == 1
    assert check_answer("미세먼지 85 µg/m³", [pm]).hits == 1
    assert check_answer("미세먼지 85 ug/m3 입니다", [pm]).hits == 1
    assert check_answer("미세먼지 85%", [pm]).hits == 0
    temp = Fact("number", 14.9, tolerance=0.1, unit="℃")
    assert check_answer("14.9℃", [temp]).hits == 1
    assert check_answer("14.9 도", [temp]).hits == 1
    assert check_answer("14.9 °C", [temp]).hits == 1
    assert check_answer("14.9 mm", [temp]).hits == 0
    assert check_answer("강수확률 60퍼센트", [Fact("number", 60, unit="%")]).hits == 1


def test_dates_in_korean_and_iso_forms() -> None:
    d = date(2026, 10, 15)
    for text in ("2026-10-15", "2026.10.15", "2026/10/15", "20261015", "2026년 10월 15일", "2026. 10. 15."):
        assert d in dates_in(text), text
    assert dates_in("10월 15일") == set()
    assert dates_in("10월 15일", default_year=2026) == {d}
    assert dates_in("2026-13-45") == set()
    fact = Fact("date", "20261015")
    assert check_answer("조회 기준일은 10월 15일입니다.", [fact]).hits == 1  # the fact's year is assumed
    assert check_answer("조회 기준일은 2026년 10월 16일입니다.", [fact]).hits == 0
    assert check_answer("기준일 2026-10-15", [Fact("date", date(2026, 10, 15))]).hits == 1


def test_names_are_normalised() -> None:
    assert normalise_name("서울특별시 종로구 세종대로 110") == normalise_name("서울 종로구 세종대로110")
    assert normalise_name("(주)한빛제약") == normalise_name("한빛 제약")
    assert normalise_name("대전광역시") == "대전"
    fact = Fact("name", "서울특별시 종로구")
    assert check_answer("서울 종로구에 있습니다", [fact]).hits == 1
    assert check_answer("서울 중구에 있습니다", [fact]).hits == 0


def test_counts_text_and_the_score() -> None:
    facts = [Fact("count", 3), Fact("text", "확인할 수 없"), Fact("name", "청운행복약국")]
    ok = check_answer("약국은 3곳이고 청운 행복 약국이 가장 가깝습니다. 나머지는 확인할 수 없습니다.", facts)
    assert isinstance(ok, FactCheck) and (ok.hits, ok.total, ok.score, ok.missing) == (3, 3, 1.0, [])
    part = check_answer("약국은 4곳입니다.", facts)
    assert part.hits == 0 and part.total == 3 and part.score == 0.0 and len(part.missing) == 3
    half = check_answer("3곳", facts[:2])
    assert half.score == 0.5 and half.missing == [facts[1]]
    assert check_answer("anything", []).score == 1.0
    assert check_answer("", [Fact("text", "")]).hits == 0  # an empty literal never matches


def test_rendered_facts_check_as_hits() -> None:
    facts = [Fact("number", 14.9, 0.1, "℃", "기온"), Fact("count", 7), Fact("date", "2026-10-15"),
             Fact("name", "서울특별시 종로구"), Fact("number", 82500.0, unit="만원")]
    answer = " / ".join(render_fact(f) for f in facts)
    assert check_answer(answer, facts).score == 1.0
