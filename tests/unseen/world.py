"""The deterministic data behind the unseen family: companies, administrative units (행정동 codes: ten digits
like 법정동 codes but another scheme), a pension register, tide stations with prefixed codes."""

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
SGG = {"강원특별자치도": ["춘천시", "원주시", "강릉시"], "전북특별자치도": ["전주시", "군산시"], "경상남도": ["창원시", "진주시", "통영시"]}
EMD = ["중앙동", "교동", "신흥동", "효자동", "명륜동"]
PREFIX = ["한빛", "새솔", "다온", "푸른", "동해", "가람", "누리", "온새", "미르", "라온"]
SUFFIX = ["정밀", "식품", "물산", "테크", "건설", "해운", "바이오", "에너지"]


@dataclass
class UnseenWorld:
    units: list[Unit]
    companies: list[Company]
    stations: list[Station]

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
        companies.append(Company(crno, first9 + _check_digit(first9), f"(주){name}", founded,
                                 f"{unit.sido} {unit.sgg} {unit.emd} {rnd.randint(1, 300)}", unit.adm_cd,
                                 rnd.randint(3, 900)))
    stations = [Station(f"DT_{n:04d}", name, lat, lon) for n, name, lat, lon in [
        (12, "속초", 38.2070, 128.5940), (18, "묵호", 37.5500, 129.1160), (21, "통영", 34.8270, 128.4340),
        (27, "군산", 35.9750, 126.5630), (33, "마산", 35.1970, 128.5760), (40, "삼척", 37.4330, 129.1880)]]
    return UnseenWorld(units, companies, stations)
