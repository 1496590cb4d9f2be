"""The deterministic data behind the unseen family: companies, administrative units (행정동 codes: ten digits
like 법정동 codes but another scheme), a pension register, tide stations with prefixed codes; and, drawn apart so
the first services' data stay as they were, cultural facilities across provinces (legal-dong 시도 codes, full and
short province names, district names, opening dates), a statistics agency's own two-digit province numbering
(통계청 행정구역분류: 서울 11 like the legal-dong prefix, 부산 21 where the legal-dong prefix is 26, 울산 26, ...) and
a calendar of anniversaries."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache


@dataclass(frozen=True)
class Unit:
    adm_cd: str  # 10-digit 행정동 code (its own scheme)
    sido: str
    sgg: str
    emd: str
    level: str  # 시도 | 시군구 | 읍면동
    population: int


@dataclass(frozen=True)
class Company:
    crno: str  # 13-digit 법인등록번호
    bzno: str  # 10-digit 사업자등록번호 with a valid check digit
    name: str
    founded: date
    address: str
    adm_cd: str
    members: int


@dataclass(frozen=True)
class Station:
    code: str  # "DT_0012"
    name: str
    lat: float
    lon: float


def _check_digit(first9: str) -> str:
    weights = [1, 3, 7, 1, 3, 7, 1, 3, 5]
    total = sum(int(d) * w for d, w in zip(first9, weights, strict=True)) + (int(first9[8]) * 5) // 10
    return str((10 - total % 10) % 10)


SIDO = [("강원특별자치도", "51"), ("전북특별자치도", "52"), ("경상남도", "48")]
SGG = {
    "강원특별자치도": ["춘천시", "원주시", "강릉시"],
    "전북특별자치도": ["전주시", "군산시"],
    "경상남도": ["창원시", "진주시", "통영시"],
}
EMD = ["중앙동", "교동", "신흥동", "효자동", "명륜동"]
PREFIX = ["한빛", "새솔", "다온", "푸른", "동해", "가람", "누리", "온새", "미르", "라온"]
SUFFIX = ["정밀", "식품", "물산", "테크", "건설", "해운", "바이오", "에너지"]


@dataclass(frozen=True)
class Region:
    name: str  # 서울특별시
    short: str  # 서울
    legal: str  # 법정동 시도 code (the first two digits of a 법정동코드): 11
    stat: str  # the statistics agency's own province number: 11 for 서울, 21 for 부산


@dataclass(frozen=True)
class Facility:
    fclty_id: str
    name: str
    region: Region
    district: str
    address: str
    opened: date


#: Legal-dong prefixes and 통계청 행정구역분류 numbers as the two systems assign them: equal for 서울 only; 부산's
#: legal 26 is 울산 to the statistics agency and 울산's legal 31 is 경기; 강원 51, 경남 48, 전북 52 are no
#: statistics number at all.
REGIONS = [
    Region("서울특별시", "서울", "11", "11"),
    Region("부산광역시", "부산", "26", "21"),
    Region("울산광역시", "울산", "31", "26"),
    Region("경기도", "경기", "41", "31"),
    Region("강원특별자치도", "강원", "51", "32"),
    Region("전북특별자치도", "전북", "52", "35"),
    Region("경상남도", "경남", "48", "38"),
]
DISTRICTS = {
    "서울특별시": ["종로구", "마포구", "강서구"],
    "부산광역시": ["해운대구", "수영구"],
    "울산광역시": ["남구", "울주군"],
    "강원특별자치도": ["춘천시", "강릉시"],
    "전북특별자치도": ["전주시"],
    "경상남도": ["창원시", "통영시"],
}
KINDS = ["도서관", "문화회관", "미술관"]
ROADS = ["중앙로", "문화로", "새봄길", "푸른길", "강변로"]
ANNIVERSARIES = ["기념의 날", "보호의 날", "사랑의 날", "안전의 날"]


@dataclass
class UnseenWorld:
    units: list[Unit]
    companies: list[Company]
    stations: list[Station]
    facilities: list[Facility]

    def unit(self, adm_cd: str) -> Unit | None:
        return next((u for u in self.units if u.adm_cd == adm_cd), None)


@lru_cache(maxsize=4)
def get_world(seed: int = 3) -> UnseenWorld:
    rnd = random.Random(seed)
    units: list[Unit] = []
    for sido, prefix in SIDO:
        units.append(Unit(f"{prefix}00000000", sido, "", "", "시도", rnd.randint(1_000_000, 3_000_000)))
        for j, sgg in enumerate(SGG[sido], start=1):
            sgg_cd = f"{prefix}{j * 7 + 3:03d}"
            units.append(Unit(f"{sgg_cd}00000", sido, sgg, "", "시군구", rnd.randint(100_000, 900_000)))
            for k, emd in enumerate(rnd.sample(EMD, 3), start=1):
                units.append(Unit(f"{sgg_cd}{k * 11 + 50:03d}00", sido, sgg, emd, "읍면동", rnd.randint(5_000, 60_000)))
    dongs = [u for u in units if u.level == "읍면동"]
    companies: list[Company] = []
    names: set[str] = set()
    while len(companies) < 36:
        name = f"{rnd.choice(PREFIX)}{rnd.choice(SUFFIX)}"
        if name in names:
            continue
        names.add(name)
        first9 = f"{rnd.randint(101, 899)}{rnd.randint(81, 88)}{rnd.randint(1000, 9999)}"
        unit = rnd.choice(dongs)
        founded = date(1985, 1, 1) + timedelta(days=rnd.randint(0, 13_000))
        crno = f"{rnd.choice(['1101', '1301', '1801', '2101'])}{rnd.randint(11, 99)}{rnd.randint(1_000_000, 9_999_999)}"
        companies.append(
            Company(
                crno,
                first9 + _check_digit(first9),
                f"(주){name}",
                founded,
                f"{unit.sido} {unit.sgg} {unit.emd} {rnd.randint(1, 300)}",
                unit.adm_cd,
                rnd.randint(3, 900),
            )
        )
    stations = [
        Station(f"DT_{n:04d}", name, lat, lon)
        for n, name, lat, lon in [
            (12, "속초", 38.2070, 128.5940),
            (18, "묵호", 37.5500, 129.1160),
            (21, "통영", 34.8270, 128.4340),
            (27, "군산", 35.9750, 126.5630),
            (33, "마산", 35.1970, 128.5760),
            (40, "삼척", 37.4330, 129.1880),
        ]
    ]
    return UnseenWorld(units, companies, stations, _facilities(random.Random(seed + 100)))


def _facilities(rnd: random.Random) -> list[Facility]:
    """Every district has a library (so a search by kind spans provinces) and one more facility."""
    out: list[Facility] = []
    for region in REGIONS:
        for district in DISTRICTS.get(region.name, []):
            for kind in ["도서관", rnd.choice(KINDS[1:])]:
                opened = date(1988, 1, 1) + timedelta(days=rnd.randint(0, 12_000))
                out.append(
                    Facility(
                        f"CF{len(out) + 1:04d}",
                        f"{district}립{kind}" if kind == "도서관" else f"{district}{kind}",
                        region,
                        district,
                        f"{region.name} {district} {rnd.choice(ROADS)} {rnd.randint(1, 200)}",
                        opened,
                    )
                )
    return out


def region_by_stat(code: str) -> Region | None:
    return next((r for r in REGIONS if r.stat == code), None)


def anniversaries(year: int, month: int) -> list[tuple[date, str]]:
    """Two anniversaries a month, on days that move with the year (so another year answers differently)."""
    first = 1 + (year * 7 + month * 3) % 13
    return [
        (date(year, month, first), f"{month}월 {ANNIVERSARIES[(year + month) % 4]}"),
        (date(year, month, first + 12), f"{month}월 {ANNIVERSARIES[(year + month + 1) % 4]}"),
    ]
