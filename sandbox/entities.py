"""The things of the sandbox's country (regions, buildings, stations, stops, sites, facilities, businesses, drugs)
and the World that holds them, with its indexes and the time series computed on demand from hashes (deals,
weather), so they are the same on every call and every machine. Built by sandbox.world."""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property, lru_cache

from core.geo import haversine_m
from sandbox.world_tables import HIRA_SIDO, SIDO_SHORT


def hash_of(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rng_for(*parts: object) -> random.Random:
    return random.Random(hash_of(*parts))


def brn_check_digit(first9: str) -> int:
    weights = [1, 3, 7, 1, 3, 7, 1, 3, 5]
    s = sum(int(d) * w for d, w in zip(first9, weights, strict=True)) + (int(first9[8]) * 5) // 10
    return (10 - s % 10) % 10


def brn_is_valid(b_no: str) -> bool:
    return len(b_no) == 10 and b_no.isdigit() and brn_check_digit(b_no[:9]) == int(b_no[9])


def name_stem(name: str) -> str:
    """청운동 -> 청운, 종로1가 -> 종로1, 강화읍 -> 강화."""
    for suffix in ("동", "가", "읍", "면", "리"):
        if name.endswith(suffix) and len(name) > 1:
            return name[: -len(suffix)]
    return name


@dataclass
class Region:
    code: str
    sido_nm: str
    sgg_nm: str
    umd_nm: str
    ri_nm: str
    created: str
    lat: float = 0.0
    lon: float = 0.0
    tm_x: float = 0.0
    tm_y: float = 0.0

    @property
    def level(self) -> str:
        if self.code[2:] == "00000000":
            return "sido"
        if self.code[5:] == "00000":
            return "sgg"
        if self.code[8:] == "00":
            return "umd"
        return "ri"

    @property
    def full_name(self) -> str:
        return " ".join(p for p in (self.sido_nm, self.sgg_nm, self.umd_nm, self.ri_nm) if p)

    @property
    def leaf_name(self) -> str:
        return self.ri_nm or self.umd_nm or self.sgg_nm or self.sido_nm

    @property
    def parent_code(self) -> str:
        lvl = self.level
        if lvl == "sido":
            return "0000000000"
        if lvl == "sgg":
            return self.code[:2] + "00000000"
        if lvl == "umd":
            return self.code[:5] + "00000"
        return self.code[:8] + "00"


@dataclass
class Building:
    adm_cd: str
    region: Region
    road_name: str
    rn_mgt_sn: str
    bd_mgt_sn: str
    buld_mnnm: int
    buld_slno: int
    udrt_yn: str
    mt_yn: str
    lnbr_mnnm: int
    lnbr_slno: int
    zip_no: str
    bd_nm: str
    bd_kdcd: str
    lat: float
    lon: float
    ent_x: float = 0.0
    ent_y: float = 0.0
    # Building-register facts (건축HUB 표제부)
    main_purps: str = "단독주택"
    grnd_flr: int = 2
    ugrnd_flr: int = 0
    use_apr_day: str = "19950101"
    plat_area: float = 100.0
    arch_area: float = 60.0
    tot_area: float = 120.0
    hhld_cnt: int = 1
    mgm_pk: str = ""

    @property
    def sgg_cd(self) -> str:
        return self.adm_cd[:5]

    @property
    def road_addr(self) -> str:
        slno = f"-{self.buld_slno}" if self.buld_slno else ""
        under = "지하 " if self.udrt_yn == "1" else ""
        parts = [self.region.sido_nm, self.region.sgg_nm, self.road_name, f"{under}{self.buld_mnnm}{slno}"]
        return " ".join(p for p in parts if p)

    @property
    def jibun(self) -> str:
        return f"{self.lnbr_mnnm}-{self.lnbr_slno}" if self.lnbr_slno else str(self.lnbr_mnnm)

    @property
    def jibun_addr(self) -> str:
        mt = "산" if self.mt_yn == "1" else ""
        return f"{self.region.full_name} {mt}{self.jibun}"


@dataclass
class Complex:
    kapt_code: str
    name: str
    building: Building
    households: int
    dong_cnt: int
    use_date: str
    sale: str
    heat: str
    total_area: float
    apt_seq: str


@dataclass
class Station:  # AirKorea
    name: str
    addr: str
    lat: float
    lon: float
    tm_x: float
    tm_y: float
    mang_name: str
    year: str
    sido_short: str


@dataclass
class BusStop:
    city_code: str
    node_id: str
    node_nm: str
    node_no: int
    lat: float
    lon: float


@dataclass
class BusRoute:
    city_code: str
    route_id: str
    route_no: str
    route_tp: str
    stops: list[BusStop]
    start_time: str
    end_time: str
    interval: int


@dataclass
class TourSite:
    content_id: str
    content_type_id: int
    title: str
    building: Building
    lon: float
    lat: float
    created: str
    modified: str
    tel: str
    legacy_sigungu: str


@dataclass
class Facility:  # HIRA hospital or pharmacy
    ykiho: str
    name: str
    cl_cd: str
    cl_nm: str
    building: Building
    sggu_cd: str
    sggu_nm: str
    tel: str
    estb: str
    doctors: int
    subjects: list[tuple[str, str]]
    is_pharmacy: bool


@dataclass
class Business:
    b_no: str
    name: str
    rep: str
    start_dt: str
    status: str  # 01 계속, 02 휴업, 03 폐업
    tax_type_cd: str
    end_dt: str


@dataclass
class Drug:
    item_seq: str
    item_name: str
    maker: Business
    ingr_code: str
    ingr_name: str
    otc: bool
    edi_code: str
    form: tuple[str, str, str]
    color: str
    print_front: str
    class_no: str
    class_name: str
    open_de: str
    update_de: str


@dataclass(eq=False)
class World:
    seed: int
    regions: list[Region] = field(default_factory=list)
    by_code: dict[str, Region] = field(default_factory=dict)
    buildings: list[Building] = field(default_factory=list)
    complexes: list[Complex] = field(default_factory=list)
    stations: list[Station] = field(default_factory=list)
    bus_stops: list[BusStop] = field(default_factory=list)
    bus_routes: list[BusRoute] = field(default_factory=list)
    tour_sites: list[TourSite] = field(default_factory=list)
    facilities: list[Facility] = field(default_factory=list)
    businesses: list[Business] = field(default_factory=list)
    drugs: list[Drug] = field(default_factory=list)

    # ----- indexes -------------------------------------------------------------------------------------
    @cached_property
    def buildings_by_umd(self) -> dict[str, list[Building]]:
        out: dict[str, list[Building]] = defaultdict(list)
        for b in self.buildings:
            out[b.adm_cd].append(b)
        return out

    @cached_property
    def complexes_by_sgg(self) -> dict[str, list[Complex]]:
        out: dict[str, list[Complex]] = defaultdict(list)
        for c in self.complexes:
            out[c.building.sgg_cd].append(c)
        return out

    @cached_property
    def complex_by_code(self) -> dict[str, Complex]:
        return {c.kapt_code: c for c in self.complexes}

    @cached_property
    def sgg_codes(self) -> list[str]:
        return sorted({r.code[:5] for r in self.regions if r.level in ("sgg", "umd", "ri")})

    @cached_property
    def facility_by_ykiho(self) -> dict[str, Facility]:
        return {f.ykiho: f for f in self.facilities}

    @cached_property
    def tour_by_id(self) -> dict[str, TourSite]:
        return {t.content_id: t for t in self.tour_sites}

    @cached_property
    def business_by_no(self) -> dict[str, Business]:
        return {b.b_no: b for b in self.businesses}

    @cached_property
    def stops_by_id(self) -> dict[str, BusStop]:
        return {s.node_id: s for s in self.bus_stops}

    @cached_property
    def routes_by_stop(self) -> dict[str, list[BusRoute]]:
        out: dict[str, list[BusRoute]] = defaultdict(list)
        for r in self.bus_routes:
            for s in r.stops:
                if r not in out[s.node_id]:
                    out[s.node_id].append(r)
        return out

    @cached_property
    def route_by_id(self) -> dict[str, BusRoute]:
        return {r.route_id: r for r in self.bus_routes}

    @cached_property
    def hira_sggu(self) -> dict[str, tuple[str, str]]:
        """법정동 시군구 code -> (HIRA sgguCd, name). HIRA numbers 구 in its own order."""
        out: dict[str, tuple[str, str]] = {}
        counters: dict[str, int] = defaultdict(int)
        for r in self.regions:
            if r.level == "sgg" and "출장" not in r.sgg_nm:
                sido = r.code[:2]
                counters[sido] += 1
                out[r.code[:5]] = (f"{HIRA_SIDO[sido][:2]}{counters[sido] * 3 + 1:04d}", r.sgg_nm)
        return out

    # ----- time series (computed on demand) ------------------------------------------------------------
    def deals(self, lawd: str, ym: str, today: date) -> list[dict[str, str]]:
        return list(_deals(self, lawd, ym, today.isoformat(), "trade"))

    def rents(self, lawd: str, ym: str, today: date) -> list[dict[str, str]]:
        return list(_deals(self, lawd, ym, today.isoformat(), "rent"))

    def nearest_stations(
        self, lat: float, lon: float, limit: int = 3, max_km: float = 50.0
    ) -> list[tuple[Station, float]]:
        scored = sorted(((s, haversine_m(lat, lon, s.lat, s.lon) / 1000.0) for s in self.stations), key=lambda t: t[1])
        return [(s, d) for s, d in scored[:limit] if d <= max_km]


def _money(v: int) -> str:
    return f"{v:,}"


@lru_cache(maxsize=4096)
def _deals(world: World, lawd: str, ym: str, today_iso: str, kind: str) -> tuple[dict[str, str], ...]:
    """Apartment deals of one 시군구 and contract month; none for months after `today`."""
    if lawd not in world.sgg_codes or len(ym) != 6:
        return ()
    year, month = int(ym[:4]), int(ym[4:])
    today = date.fromisoformat(today_iso)
    if (year, month) > (today.year, today.month) or year < 2006:
        return ()
    last_day = today.day if (year, month) == (today.year, today.month) else 28
    rnd = rng_for(world.seed, "deals", kind, lawd, ym)
    complexes = world.complexes_by_sgg.get(lawd, [])
    n = rnd.randint(3, 14) if complexes else rnd.randint(1, 4)
    rows: list[dict[str, str]] = []
    for i in range(n):
        if complexes:
            cx = rnd.choice(complexes)
            b = cx.building
            apt_nm, umd_cd, umd_nm = cx.name, b.adm_cd[5:], b.region.umd_nm
            bonbun, bubun, build_year, apt_seq = b.lnbr_mnnm, b.lnbr_slno, cx.use_date[:4], cx.apt_seq
            road = b.road_name
        else:
            umd_cd, umd_nm = "10100", world.by_code.get(lawd + "00000", world.regions[0]).sgg_nm
            apt_nm = f"{name_stem(umd_nm)}맨션"
            bonbun, bubun, build_year, apt_seq, road = 100 + i, 0, "1998", f"{lawd}-{9000 + i}", ""
        area = rnd.choice([39.6, 59.97, 84.97, 84.99, 101.9, 114.8, 134.5])
        day = rnd.randint(1, max(1, last_day))
        base = {"11": 1400, "28": 520, "30": 430}.get(lawd[:2], 500)
        price = int(base * area * rnd.uniform(0.7, 1.4) / 10) * 10
        row = {
            "sggCd": lawd,
            "umdCd": umd_cd,
            "landCd": "1",
            "bonbun": f"{bonbun:04d}",
            "bubun": f"{bubun:04d}",
            "roadNm": road or " ",
            "roadNmSggCd": lawd,
            "roadNmCd": f"{hash_of(road) % 10**7:07d}",
            "roadNmSeq": "01",
            "roadNmbCd": "0",
            "roadNmBonbun": f"{(bonbun % 300) + 1:05d}",
            "roadNmBubun": "00000",
            "umdNm": umd_nm,
            "aptNm": apt_nm,
            "jibun": f"{bonbun}-{bubun}" if bubun else str(bonbun),
            "excluUseAr": f"{area}",
            "dealYear": str(year),
            "dealMonth": str(month),
            "dealDay": str(day),
            "floor": str(rnd.choice([-1, 1, 2, 3, 5, 7, 9, 12, 15, 18, 21])),
            "buildYear": build_year,
            "aptSeq": apt_seq,
            "aptDong": rnd.choice([" ", "101", "102", "103동", " "]),
        }
        if kind == "trade":
            cancelled = rnd.random() < 0.04
            row.update(
                {
                    "dealAmount": rnd.choice(["", " ", "  "]) + _money(price),
                    "cdealType": "O" if cancelled else " ",
                    "cdealDay": f"{str(year)[2:]}.{month:02d}.{min(28, day + 3):02d}" if cancelled else " ",
                    "dealingGbn": rnd.choice(["중개거래", "중개거래", "직거래"]) if year >= 2022 else " ",
                    "estateAgentSggNm": f"{SIDO_SHORT.get(lawd[:2], '')} {world.by_code[lawd + '00000'].sgg_nm}"
                    if lawd + "00000" in world.by_code
                    else " ",
                    "rgstDate": " ",
                    "slerGbn": rnd.choice(["개인", "개인", "법인"]),
                    "buyerGbn": rnd.choice(["개인", "개인", "개인", "법인"]),
                    "landLeaseholdGbn": "N",
                }
            )
        else:
            monthly = rnd.choice([0, 0, 50, 80, 120, 200])
            deposit = int(price * (0.55 if monthly == 0 else 0.15))
            row.update(
                {
                    "deposit": _money(deposit),
                    "monthlyRent": str(monthly),
                    "contractTerm": f"{year}{month:02d}~{year + 2}{month:02d}",
                    "contractType": rnd.choice(["신규", "갱신", " "]),
                    "useRRRight": rnd.choice([" ", "사용"]),
                    "preDeposit": " ",
                    "preMonthlyRent": " ",
                }
            )
        rows.append(row)
    rows.sort(key=lambda r: (int(r["dealDay"]), r["aptNm"]))
    return tuple(rows)


def kma_cell_weather(seed: int, nx: int, ny: int, when: datetime) -> dict[str, float]:
    """Deterministic 'true' weather of one grid cell at one hour (temperature, humidity, wind, rain)."""
    rnd = rng_for(seed, "wx", nx, ny, when.strftime("%Y%m%d%H"))
    day_of_year = when.timetuple().tm_yday
    seasonal = 12.5 - 14.0 * math.cos(2 * math.pi * (day_of_year - 15) / 365.0)
    diurnal = 4.5 * math.sin(2 * math.pi * (when.hour - 9) / 24.0)
    lat_effect = (ny - 127) * 0.03
    temp = round(seasonal + diurnal + lat_effect + rnd.uniform(-1.2, 1.2), 1)
    wet = rng_for(seed, "wet", nx // 8, ny // 8, when.strftime("%Y%m%d")).random() < 0.25
    rain = round(rnd.uniform(0.2, 6.0), 1) if wet and rnd.random() < 0.6 else 0.0
    return {
        "T": temp,
        "REH": float(rnd.randint(35, 95) if not wet else rnd.randint(70, 99)),
        "WSD": round(rnd.uniform(0.3, 6.5), 1),
        "VEC": float(rnd.randint(0, 359)),
        "UUU": round(rnd.uniform(-4, 4), 1),
        "VVV": round(rnd.uniform(-4, 4), 1),
        "RN": rain,
        "SKY": float(4 if wet else rnd.choice([1, 1, 3, 4])),
        "PTY": float((3 if temp < 0 else 1) if rain > 0 else 0),
        "POP": float(rnd.choice([60, 70, 80]) if wet else rnd.choice([0, 10, 20, 30])),
    }
