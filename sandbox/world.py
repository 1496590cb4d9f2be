"""One coherent synthetic country behind every sandbox API, deterministic from a seed.

Real 법정동 codes and names (Seoul, Incheon, Daejeon) anchor everything: addresses sit in real 동, their UTM-K and
WGS84 coordinates agree, KMA grid cells come from the official LCC conversion, AirKorea stations, bus stops,
tourist sites, hospitals and pharmacies sit near those addresses, drug makers are businesses that NTS knows, and
apartment complexes are the ones that trade in MOLIT's records. Bulky time series (deals, forecasts,
measurements) are computed on demand from hashes, so they are the same on every call and every machine.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import cached_property, lru_cache
from importlib import resources

from core.geo import convert_many, haversine_m

# Approximate centroids (lat, lon) of each 시군구 office; 동 are placed around them.
SGG_CENTROIDS: dict[str, tuple[float, float, float]] = {
    # code: (lat, lon, spread_km)
    "11110": (37.5730, 126.9794, 1.6),
    "11140": (37.5641, 126.9979, 1.3),
    "11170": (37.5326, 126.9905, 1.6),
    "11200": (37.5634, 127.0369, 1.5),
    "11215": (37.5385, 127.0823, 1.5),
    "11230": (37.5744, 127.0400, 1.5),
    "11260": (37.6066, 127.0927, 1.5),
    "11290": (37.5894, 127.0167, 1.7),
    "11305": (37.6396, 127.0257, 1.5),
    "11320": (37.6688, 127.0471, 1.5),
    "11350": (37.6542, 127.0568, 1.7),
    "11380": (37.6027, 126.9291, 1.8),
    "11410": (37.5791, 126.9368, 1.5),
    "11440": (37.5663, 126.9019, 1.8),
    "11470": (37.5170, 126.8665, 1.4),
    "11500": (37.5509, 126.8495, 2.0),
    "11530": (37.4954, 126.8874, 1.6),
    "11545": (37.4569, 126.8955, 1.4),
    "11560": (37.5264, 126.8962, 1.6),
    "11590": (37.5124, 126.9393, 1.5),
    "11620": (37.4784, 126.9516, 1.6),
    "11650": (37.4837, 127.0324, 2.2),
    "11680": (37.5172, 127.0473, 2.0),
    "11710": (37.5145, 127.1059, 2.0),
    "11740": (37.5301, 127.1238, 1.6),
    "28110": (37.4738, 126.6216, 2.0),
    "28115": (37.4920, 126.4930, 3.0),
    "28116": (37.4440, 126.4000, 3.0),
    "28140": (37.4739, 126.6432, 1.2),
    "28177": (37.4635, 126.6503, 1.6),
    "28185": (37.4102, 126.6783, 2.2),
    "28200": (37.4475, 126.7313, 2.0),
    "28237": (37.5070, 126.7219, 1.6),
    "28245": (37.5372, 126.7376, 1.8),
    "28260": (37.5456, 126.6760, 2.4),
    "28265": (37.5970, 126.6720, 2.0),
    "28710": (37.7465, 126.4880, 6.0),
    "28720": (37.2310, 126.1500, 8.0),
    "30110": (36.3120, 127.4548, 2.2),
    "30140": (36.3256, 127.4213, 1.8),
    "30170": (36.3554, 127.3838, 2.0),
    "30200": (36.3623, 127.3563, 3.0),
    "30230": (36.3466, 127.4156, 2.2),
}
SIDO_SHORT = {"11": "서울", "28": "인천", "30": "대전"}
HIRA_SIDO = {"11": "110000", "28": "220000", "30": "250000"}
TOUR_LEGACY_AREA = {"11": "1", "28": "2", "30": "3"}
TAGO_CITY = {"28": ("23", "인천광역시", "ICB"), "30": ("25", "대전광역시", "DJB")}
ASOS_STATIONS = {
    "108": ("서울", "11"),
    "112": ("인천", "28"),
    "133": ("대전", "30"),
    "119": ("수원", ""),
    "143": ("대구", ""),
    "156": ("광주", ""),
    "159": ("부산", ""),
    "184": ("제주", ""),
}
MID_TA_REGIONS = {
    "11B10101": ("서울", "11"),
    "11B20201": ("인천", "28"),
    "11C20401": ("대전", "30"),
    "11B20601": ("수원", ""),
    "11H20201": ("부산", ""),
}
APT_BRANDS = [
    "래미안",
    "자이",
    "힐스테이트",
    "푸르지오",
    "e편한세상",
    "아이파크",
    "롯데캐슬",
    "더샵",
    "센트레빌",
    "한신",
    "현대",
    "삼성",
    "우성",
    "극동",
    "벽산",
    "한양",
    "주공",
]
SURNAMES = ["김", "이", "박", "최", "정", "강", "조", "윤", "장", "임", "한", "오", "서", "신", "권", "황"]
GIVEN = ["민준", "서연", "도윤", "지우", "하준", "서윤", "시우", "하은", "주원", "지호", "수아", "예준"]
HOSP_KINDS = [
    ("31", "의원", "내과의원"),
    ("31", "의원", "가정의학과의원"),
    ("31", "의원", "소아청소년과의원"),
    ("21", "병원", "병원"),
    ("11", "종합병원", "종합병원"),
    ("51", "치과의원", "치과의원"),
    ("93", "한의원", "한의원"),
    ("31", "의원", "이비인후과의원"),
    ("31", "의원", "정형외과의원"),
]
DGSBJT = [
    ("01", "내과"),
    ("23", "가정의학과"),
    ("11", "소아청소년과"),
    ("13", "이비인후과"),
    ("05", "정형외과"),
    ("12", "안과"),
    ("14", "피부과"),
    ("49", "치과"),
    ("80", "한방내과"),
]
PHARMACY_NAMES = ["온누리약국", "행복약국", "건강약국", "우리약국", "새봄약국", "늘푸른약국", "하나약국", "보람약국"]
DRUG_MAKERS = [
    "한빛제약",
    "새봄약품",
    "푸른바이오",
    "대한메디팜",
    "누리제약",
    "가온약품",
    "다온헬스케어",
    "온빛제약",
    "미르제약",
    "솔빛약품",
]
# (ingredient code, Korean ingredient, English stem, typical strength mg, OTC?)
INGREDIENTS = [
    ("D000419", "아세트아미노펜", "acetaminophen", 500, True),
    ("D000027", "이부프로펜", "ibuprofen", 200, True),
    ("D000762", "나프록센", "naproxen", 250, True),
    ("D000893", "로라타딘", "loratadine", 10, True),
    ("D001241", "세티리진염산염", "cetirizine", 10, True),
    ("D000151", "덱스트로메토르판", "dextromethorphan", 15, True),
    ("D000523", "파모티딘", "famotidine", 10, True),
    ("D000982", "메트포르민염산염", "metformin", 500, False),
    ("D001322", "암로디핀베실산염", "amlodipine", 5, False),
    ("D000641", "아토르바스타틴칼슘", "atorvastatin", 10, False),
    ("D000245", "와파린나트륨", "warfarin", 2, False),
    ("D000778", "클라리스로마이신", "clarithromycin", 250, False),
    ("D001105", "심바스타틴", "simvastatin", 20, False),
    ("D000360", "아스피린", "aspirin", 100, True),
    ("D000931", "오메프라졸", "omeprazole", 20, False),
    ("D000304", "플루코나졸", "fluconazole", 150, False),
]
# Pairs of ingredients that must not be taken together (DUR 병용금기), by code.
TABOO_PAIRS = [
    ("D000245", "D000360", "출혈 위험 증가"),
    ("D001105", "D000778", "횡문근융해증 위험 증가"),
    ("D000641", "D000778", "근병증 위험 증가"),
    ("D000245", "D000304", "와파린 혈중농도 증가"),
    ("D000027", "D000360", "아스피린의 항혈소판 효과 감소"),
]
FORMS = [
    ("정", "정제", "원형"),
    ("캡슐", "경질캡슐제", "장방형"),
    ("연질캡슐", "연질캡슐제", "타원형"),
    ("서방정", "서방성필름코팅정", "장방형"),
]
COLORS = ["하양", "노랑", "분홍", "주황", "연두", "파랑"]
TOUR_TYPES = {12: "관광지", 14: "문화시설", 15: "행사/공연/축제", 28: "레포츠", 32: "숙박", 38: "쇼핑", 39: "음식점"}
TOUR_LCLS = {
    12: ("NA", "NA04", "NA040500"),
    14: ("VE", "VE01", "VE010100"),
    15: ("EV", "EV01", "EV010200"),
    28: ("EX", "EX03", "EX030100"),
    32: ("AC", "AC01", "AC010100"),
    38: ("SH", "SH02", "SH020300"),
    39: ("FD", "FD01", "FD010100"),
}
TOUR_SUFFIX = {
    12: ["공원", "근린공원", "생태공원", "전망대"],
    14: ["미술관", "도서관", "문화센터", "역사관"],
    15: ["문화축제", "거리축제", "음악회"],
    28: ["체육공원", "수영장", "자전거길"],
    32: ["호텔", "게스트하우스", "한옥스테이"],
    38: ["전통시장", "상점가"],
    39: ["칼국수", "한정식", "국밥"],
}
ROAD_SUFFIX = ["로", "대로", "길", "로"]


def _h(*parts: object) -> int:
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rng_for(*parts: object) -> random.Random:
    return random.Random(_h(*parts))


def brn_check_digit(first9: str) -> int:
    weights = [1, 3, 7, 1, 3, 7, 1, 3, 5]
    s = sum(int(d) * w for d, w in zip(first9, weights, strict=True)) + (int(first9[8]) * 5) // 10
    return (10 - s % 10) % 10


def brn_is_valid(b_no: str) -> bool:
    return len(b_no) == 10 and b_no.isdigit() and brn_check_digit(b_no[:9]) == int(b_no[9])


def _stem(name: str) -> str:
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
            apt_nm = f"{_stem(umd_nm)}맨션"
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
            "roadNmCd": f"{_h(road) % 10**7:07d}",
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


def _load_regions() -> list[Region]:
    text = resources.files("sandbox").joinpath("data/bdong.csv").read_text(encoding="utf-8")
    reader = csv.DictReader(text.splitlines())
    return [Region(r["region_cd"], r["sido_nm"], r["sgg_nm"], r["umd_nm"], r["ri_nm"], r["created"]) for r in reader]


def _jitter(rnd: random.Random, lat: float, lon: float, km: float) -> tuple[float, float]:
    ang = rnd.uniform(0, 2 * math.pi)
    dist = km * math.sqrt(rnd.random())
    dlat = dist * math.cos(ang) / 111.0
    dlon = dist * math.sin(ang) / (111.0 * math.cos(math.radians(lat)))
    return round(lat + dlat, 7), round(lon + dlon, 7)


def _tel(region_code: str, rr: random.Random) -> str:
    """A landline in the region's area code (02 Seoul, 032 Incheon, 042 Daejeon)."""
    area = 2 if region_code[:2] == "11" else 32 if region_code[:2] == "28" else 42
    return f"0{area}-{rr.randint(200, 999)}-{rr.randint(1000, 9999)}"


def _ykiho(rnd: random.Random, serial: int) -> str:
    raw = (
        f"$4{serial:06d}#{rnd.randint(11, 99)}#$1#${rnd.randint(1, 9)}#${rnd.randint(10, 99)}$"
        f"{rnd.randint(100, 999)}#{rnd.randint(10, 99)}{rnd.randint(1000, 9999)}#"
    )
    enc = base64.b64encode(raw.encode() + bytes([rnd.randint(0, 255) for _ in range(rnd.randint(0, 4))]))
    return enc.decode()


@dataclass
class Geography:
    """The regions with their coordinates, and the leaf areas (리, or 동 without 리) that hold the
    buildings."""

    regions: list[Region]
    by_code: dict[str, Region]
    leaves: list[Region]

    def offices(self) -> list[Region]:
        """The 시군구 that have their own office (not the 출장소)."""
        return [r for r in self.regions if r.level == "sgg" and "출장" not in r.sgg_nm]


@dataclass
class Built:
    buildings: list[Building]
    complexes: list[Complex]


@dataclass
class BusNetwork:
    stops: list[BusStop]
    routes: list[BusRoute]


@dataclass
class Registry:  # NTS
    businesses: list[Business]
    makers: list[Business]  # the drug makers, businesses too


def build_world(seed: int) -> World:
    """Generate the world. Takes well under a second; the result is cached per seed by `get_world`."""
    geo = _geography(seed)
    w = World(seed=seed, regions=geo.regions, by_code=geo.by_code)
    built = _buildings(seed, geo.leaves)
    w.buildings, w.complexes = built.buildings, built.complexes
    w.stations = _stations(seed, geo)
    buses = _bus_network(seed, geo.leaves)
    w.bus_stops, w.bus_routes = buses.stops, buses.routes
    w.tour_sites = _tour_sites(seed, geo, w.buildings)
    registry = _businesses(seed)
    w.businesses = registry.businesses
    w.drugs = _drugs(seed, registry.makers)
    w.facilities = _facilities(seed, geo, w.buildings, w.hira_sggu)
    return w


# --- coordinates of every region ---------------------------------------------------------------------------


def _geography(seed: int) -> Geography:
    regions = _load_regions()
    by_code = {r.code: r for r in regions}
    _place_regions(seed, regions, by_code)
    xs, ys = convert_many([r.lon for r in regions], [r.lat for r in regions], "WGS84", "TM")
    for r, x, y in zip(regions, xs, ys, strict=True):
        r.tm_x, r.tm_y = round(x, 2), round(y, 2)
    ri_parents = {r.code[:8] for r in regions if r.level == "ri"}
    leaves = [r for r in regions if r.level == "ri" or (r.level == "umd" and r.code[:8] not in ri_parents)]
    return Geography(regions, by_code, leaves)


def _place_regions(seed: int, regions: list[Region], by_code: dict[str, Region]) -> None:
    """시군구 at their office, 동 around it, 리 around their 동, each 시도 at the mean of its places."""
    sido_acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in regions:
        sgg = r.code[:5]
        if r.level == "sido":
            continue
        lat0, lon0, spread = SGG_CENTROIDS[sgg]
        if r.level == "sgg":
            r.lat, r.lon = lat0, lon0
        elif r.level == "umd":
            r.lat, r.lon = _jitter(rng_for(seed, "umd", r.code), lat0, lon0, spread)
        else:
            parent = by_code.get(r.parent_code)
            plat, plon = (parent.lat, parent.lon) if parent and parent.lat else (lat0, lon0)
            r.lat, r.lon = _jitter(rng_for(seed, "ri", r.code), plat, plon, 1.2)
        sido_acc[r.code[:2]].append((r.lat, r.lon))
    for r in regions:
        if r.level == "sido":
            pts = sido_acc[r.code[:2]]
            r.lat = round(sum(p[0] for p in pts) / len(pts), 7)
            r.lon = round(sum(p[1] for p in pts) / len(pts), 7)


# --- roads and buildings -----------------------------------------------------------------------------------


def _buildings(seed: int, leaves: list[Region]) -> Built:
    """A few buildings on a few roads in every leaf area; the first building of some 동 is an apartment
    complex."""
    buildings: list[Building] = []
    complexes: list[Complex] = []
    road_serial: dict[str, int] = defaultdict(int)
    for r in leaves:
        rr = rng_for(seed, "bld", r.code)
        n = 3 if r.code[:2] == "11" else 2
        stem = _stem(r.umd_nm or r.sgg_nm)
        for i in range(n):
            road_serial[r.code[:5]] += 1
            b = _building(seed, rr, r, stem, i, road_serial[r.code[:5]])
            buildings.append(b)
            if i == 0 and rr.random() < (0.55 if r.code[:2] == "11" else 0.35) and r.level == "umd":
                complexes.append(_complex(seed, rr, r, stem, b))
    xs, ys = convert_many([b.lon for b in buildings], [b.lat for b in buildings], "WGS84", "UTMK")
    for b, x, y in zip(buildings, xs, ys, strict=True):
        b.ent_x, b.ent_y = round(x, 6), round(y, 6)
    return Built(buildings, complexes)


ZIP_BASE = {"11": 1000, "28": 21000, "30": 34000}


def _building(seed: int, rr: random.Random, r: Region, stem: str, i: int, road_serial: int) -> Building:
    road = f"{stem}{rr.choice(ROAD_SUFFIX)}" if i == 0 else f"{stem}로{rr.randint(1, 40)}길"
    lat, lon = _jitter(rr, r.lat, r.lon, 0.45)
    mt = "1" if rr.random() < 0.04 else "0"
    lnbr, slno = rr.randint(1, 980), (rr.randint(1, 30) if rr.random() < 0.45 else 0)
    b = Building(
        adm_cd=r.code,
        region=r,
        road_name=road,
        rn_mgt_sn=f"{r.code[:5]}{3000000 + road_serial * 7 + i:07d}",
        bd_mgt_sn=f"{r.code}{mt}{lnbr:04d}{slno:04d}{rr.randint(0, 999999):06d}",
        buld_mnnm=rr.randint(1, 320),
        buld_slno=rr.choice([0, 0, 0, 1, 2, 5, 11]),
        udrt_yn="0",
        mt_yn=mt,
        lnbr_mnnm=lnbr,
        lnbr_slno=slno,
        zip_no=f"{ZIP_BASE[r.code[:2]] + _h(seed, 'zip', r.code[:8]) % 900:05d}",
        bd_nm="",
        bd_kdcd="0",
        lat=lat,
        lon=lon,
        main_purps=rr.choice(["단독주택", "제1종근린생활시설", "제2종근린생활시설", "업무시설", "다가구주택"]),
        grnd_flr=rr.randint(1, 6),
        ugrnd_flr=rr.choice([0, 0, 1]),
        use_apr_day=f"{rr.randint(1975, 2023)}{rr.randint(1, 12):02d}{rr.randint(1, 28):02d}",
        plat_area=round(rr.uniform(90, 900), 2),
    )
    b.arch_area = round(b.plat_area * rr.uniform(0.4, 0.6), 2)
    b.tot_area = round(b.arch_area * b.grnd_flr, 2)
    b.mgm_pk = f"{r.code[:5]}-{100000 + _h(seed, 'pk', b.bd_mgt_sn) % 900000}"
    return b


def _complex(seed: int, rr: random.Random, r: Region, stem: str, b: Building) -> Complex:
    """Turn building `b` into an apartment complex (공동주택) and describe the complex."""
    brand = rr.choice(APT_BRANDS)
    name = f"{stem}{brand}" if rr.random() < 0.7 else f"{brand}{stem}{rr.randint(1, 3)}차"
    b.bd_nm, b.bd_kdcd, b.main_purps = name, "1", "공동주택"
    b.grnd_flr, b.ugrnd_flr = rr.randint(12, 35), rr.randint(1, 3)
    households = rr.randint(120, 3200)
    b.hhld_cnt = households
    kapt = f"A{10000000 + _h(seed, 'kapt', r.code) % 89999999:08d}"
    return Complex(
        kapt_code=kapt,
        name=name,
        building=b,
        households=households,
        dong_cnt=max(1, households // 180),
        use_date=b.use_apr_day,
        sale=rr.choice(["분양", "분양", "임대", "혼합"]),
        heat=rr.choice(["개별난방", "지역난방", "중앙난방"]),
        total_area=round(households * rr.uniform(85, 130), 2),
        apt_seq=f"{r.code[:5]}-{1000 + _h(seed, 'aptseq', kapt) % 9000}",
    )


# --- AirKorea stations: Seoul names them by 구, Incheon and Daejeon by 동 -------------------------------------


def _stations(seed: int, geo: Geography) -> list[Station]:
    stations: list[Station] = []
    for r in geo.offices():
        rr = rng_for(seed, "station", r.code)
        children = [c for c in geo.leaves if c.code[:5] == r.code[:5] and c.level == "umd"] or [r]
        anchor = rr.choice(children)
        name = r.sgg_nm if r.code[:2] == "11" else _stem(anchor.umd_nm or r.sgg_nm)
        lat, lon = _jitter(rr, r.lat, r.lon, 0.8)
        stations.append(
            Station(
                name=name,
                addr=f"{SIDO_SHORT[r.code[:2]]} {r.sgg_nm} {anchor.umd_nm} {rr.randint(1, 300)}",
                lat=lat,
                lon=lon,
                tm_x=0.0,
                tm_y=0.0,
                mang_name="도시대기",
                year=str(rr.randint(1995, 2018)),
                sido_short=SIDO_SHORT[r.code[:2]],
            )
        )
    for name, sgg, mang in (
        ("종로", "11110", "도로변대기"),
        ("도산대로", "11680", "도로변대기"),
        ("송도", "28185", "도시대기"),
        ("노은동", "30200", "도시대기"),
    ):
        lat0, lon0, _ = SGG_CENTROIDS[sgg]
        lat, lon = _jitter(rng_for(seed, "station-extra", name), lat0, lon0, 1.2)
        stations.append(
            Station(
                name,
                f"{SIDO_SHORT[sgg[:2]]} {geo.by_code[sgg + '00000'].sgg_nm} {name}",
                lat,
                lon,
                0.0,
                0.0,
                mang,
                "2010",
                SIDO_SHORT[sgg[:2]],
            )
        )
    xs, ys = convert_many([s.lon for s in stations], [s.lat for s in stations], "WGS84", "TM")
    for s, x, y in zip(stations, xs, ys, strict=True):
        s.tm_x, s.tm_y = round(x, 6), round(y, 6)
    return stations


# --- TAGO bus stops and routes (Incheon and Daejeon; Seoul runs its own bus API) ----------------------------


def _bus_network(seed: int, leaves: list[Region]) -> BusNetwork:
    network = BusNetwork([], [])
    for sido, (city, _cname, prefix) in TAGO_CITY.items():
        rr = rng_for(seed, "tago", city)
        city_leaves = [u for u in leaves if u.code[:2] == sido and u.code[:5] not in ("28710", "28720")]
        stops = _bus_stops(rr, city, prefix, city_leaves)
        routes = [_bus_route(rr, city, prefix, stops, k) for k in range(14)]
        served = {s.node_id for r in routes for s in r.stops}
        for stop in stops:  # every stop is served by at least one route
            if stop.node_id not in served:
                best = min(routes, key=lambda r, s=stop: haversine_m(r.stops[-1].lat, r.stops[-1].lon, s.lat, s.lon))  # type: ignore[misc]
                best.stops.append(stop)
        network.stops.extend(stops)
        network.routes.extend(routes)
    return network


def _bus_stops(rr: random.Random, city: str, prefix: str, city_leaves: list[Region]) -> list[BusStop]:
    stops: list[BusStop] = []
    for u in city_leaves:
        for j in range(2):
            lat, lon = _jitter(rr, u.lat, u.lon, 0.35)
            suffix = ["주민센터", "입구", "사거리", "역", "시장"][(j + len(stops)) % 5]
            stops.append(
                BusStop(
                    city,
                    f"{prefix}{8000000 + len(stops) * 37 + rr.randint(0, 30)}",
                    f"{_stem(u.umd_nm or u.sgg_nm)}{suffix}",
                    10000 + len(stops) * 3 + j,
                    lat,
                    lon,
                )
            )
    return stops


def _bus_route(rr: random.Random, city: str, prefix: str, stops: list[BusStop], k: int) -> BusRoute:
    """Route `k` of a city: the stops nearest a random first stop, in a shuffled order after the first."""
    start = rr.choice(stops)
    path = sorted(stops, key=lambda stop, st=start: haversine_m(st.lat, st.lon, stop.lat, stop.lon))  # type: ignore[misc]
    chosen = path[: rr.randint(10, 18)]
    rr.shuffle(chosen[1:])
    tp = rr.choice(["간선버스", "지선버스", "마을버스", "광역버스", "좌석버스"])
    no: str = (
        str(rr.choice([2, 5, 6, 102, 103, 301, 511, 606, 701, 911]))
        if tp != "마을버스"
        else f"{chosen[0].node_nm[:2]}{k % 9 + 1}"
    )
    if tp == "광역버스":
        no = f"M{6400 + k}"
    return BusRoute(
        city,
        f"{prefix}{30300000 + k * 13:08d}",
        no,
        tp,
        chosen,
        f"{rr.randint(5, 6):02d}{rr.choice([0, 20, 30]):02d}",
        f"{rr.randint(22, 23)}{rr.choice([0, 30]):02d}",
        rr.choice([8, 10, 12, 15, 20]),
    )


# --- tourist sites ------------------------------------------------------------------------------------------


def _tour_sites(seed: int, geo: Geography, buildings: list[Building]) -> list[TourSite]:
    sites: list[TourSite] = []
    seq = 0
    for r in geo.offices():
        rr = rng_for(seed, "tour", r.code)
        blds = [b for b in buildings if b.sgg_cd == r.code[:5]]
        for j in range(rr.randint(3, 5)):
            ctype = rr.choice(list(TOUR_TYPES))
            b = rr.choice(blds)
            seq += 1
            title = f"{_stem(b.region.umd_nm or r.sgg_nm)}{rr.choice(TOUR_SUFFIX[ctype])}"
            lat, lon = _jitter(rr, b.lat, b.lon, 0.15)
            created = datetime(2008 + rr.randint(0, 15), rr.randint(1, 12), rr.randint(1, 28), rr.randint(0, 23))
            sites.append(
                TourSite(
                    content_id=str(2600000 + seq * 17 + j),
                    content_type_id=ctype,
                    title=title,
                    building=b,
                    lon=round(lon, 10),
                    lat=round(lat, 10),
                    created=created.strftime("%Y%m%d%H%M%S"),
                    modified=(created + timedelta(days=rr.randint(10, 900))).strftime("%Y%m%d%H%M%S"),
                    tel=_tel(r.code, rr),
                    legacy_sigungu=str(sorted(k for k in SGG_CENTROIDS if k[:2] == r.code[:2]).index(r.code[:5]) + 1),
                )
            )
    # the real anchor: 경복궁
    gb = next(b for b in buildings if b.region.code == "1111011500") if "1111011500" in geo.by_code else buildings[0]
    sites.insert(
        0,
        TourSite(
            "126508",
            12,
            "경복궁",
            gb,
            126.9769930325,
            37.578822235,
            "20021021090000",
            "20250312101010",
            "02-3700-3900",
            "23",
        ),
    )
    return sites


# --- businesses (NTS) and drugs -----------------------------------------------------------------------------


def _businesses(seed: int) -> Registry:
    known: dict[str, Business] = {}  # by 사업자등록번호, in the order of registration
    rr = rng_for(seed, "biz")
    makers = [_new_business(known, f"(주){m}", rr, True) for m in DRUG_MAKERS]
    for m in makers:
        m.status, m.end_dt = "01", ""
    for _ in range(120):
        _new_business(
            known,
            f"{rr.choice(SURNAMES)}{rr.choice(['상사', '식당', '부동산', '약국', '의원', '정보통신'])}",
            rr,
            False,
        )
    return Registry(list(known.values()), makers)


def _new_business(known: dict[str, Business], name: str, rr: random.Random, corp: bool) -> Business:
    while True:
        head = rr.randint(101, 899)
        kind = rr.choice(["81", "86", "87", "88"]) if corp else f"{rr.randint(1, 79):02d}"
        first9 = f"{head}{kind}{rr.randint(0, 9999):04d}"
        b_no = first9 + str(brn_check_digit(first9))
        if b_no not in known:
            break
    status = "01" if rr.random() < 0.9 else rr.choice(["02", "03"])
    biz = Business(
        b_no,
        name,
        f"{rr.choice(SURNAMES)}{rr.choice(GIVEN)}",
        f"{rr.randint(1980, 2022)}{rr.randint(1, 12):02d}{rr.randint(1, 28):02d}",
        status,
        rr.choice(["01", "01", "01", "02", "04"]) if not corp else "01",
        f"2025{rr.randint(1, 12):02d}{rr.randint(1, 28):02d}" if status == "03" else "",
    )
    known[b_no] = biz
    return biz


def _drugs(seed: int, makers: list[Business]) -> list[Drug]:
    """Four products of every ingredient, each made by one of the makers."""
    drugs: list[Drug] = []
    rr = rng_for(seed, "drugs")
    seqs: set[str] = set()
    for idx, (ingr_code, ingr, _en, mg, otc) in enumerate(INGREDIENTS):
        for k in range(4):
            maker = makers[(idx * 3 + k) % len(makers)]
            form = FORMS[(idx + k) % len(FORMS)]
            strength = mg * (1 if k < 2 else 2)
            while True:
                item_seq = f"{rr.randint(1985, 2023)}{rr.randint(0, 99999):05d}"
                if item_seq not in seqs:
                    seqs.add(item_seq)
                    break
            brand = maker.name.replace("(주)", "")[:2]
            drugs.append(
                Drug(
                    item_seq=item_seq,
                    item_name=f"{brand}{ingr.split('염')[0]}{form[0]}{strength}밀리그램({ingr})",
                    maker=maker,
                    ingr_code=ingr_code,
                    ingr_name=ingr,
                    otc=otc and k != 3,
                    edi_code=f"6{rr.randint(10000000, 99999999)}",
                    form=form,
                    color=rr.choice(COLORS),
                    print_front=f"{brand[:1]}{strength}",
                    class_no=["01140", "02190", "03990", "02120"][idx % 4],
                    class_name=[
                        "해열.진통.소염제",
                        "기타의 순환계용약",
                        "따로 분류되지 않는 대사성 의약품",
                        "혈압강하제",
                    ][idx % 4],
                    open_de=f"{2010 + k}-0{1 + idx % 9}-1{k} 00:00:00",
                    update_de=f"2026{1 + idx % 9:02d}{10 + k}",
                )
            )
    return drugs


# --- HIRA hospitals and pharmacies: a clinic in every 동, a pharmacy in most, larger hospitals per 구 ---------


def _facilities(
    seed: int, geo: Geography, buildings: list[Building], hira_sggu: dict[str, tuple[str, str]]
) -> list[Facility]:
    facilities: list[Facility] = []
    for r in geo.offices():
        rr = rng_for(seed, "hira", r.code)
        sggu = hira_sggu[r.code[:5]]
        blds = [b for b in buildings if b.sgg_cd == r.code[:5] and b.bd_kdcd == "0"]
        for b, pharmacy, big in _facility_plan(rr, blds):
            facilities.append(_facility(rr, len(facilities) + 1, r, sggu, b, pharmacy, big))
    return facilities


def _facility_plan(rr: random.Random, blds: list[Building]) -> list[tuple[Building, bool, bool]]:
    """Where the facilities of one 구 are: (building, pharmacy?, big hospital?)."""
    by_umd: dict[str, list[Building]] = defaultdict(list)
    for b in blds:
        by_umd[b.adm_cd].append(b)
    plan: list[tuple[Building, bool, bool]] = []
    for code in sorted(by_umd):
        plan.append((rr.choice(by_umd[code]), False, False))
        if rr.random() < 0.6:
            plan.append((rr.choice(by_umd[code]), True, False))
    plan.extend((rr.choice(blds), False, True) for _ in range(rr.randint(1, 2)))
    return plan


def _facility(
    rr: random.Random, serial: int, r: Region, sggu: tuple[str, str], b: Building, pharmacy: bool, big: bool
) -> Facility:
    if pharmacy:
        cl_cd, cl_nm, name = "81", "약국", f"{_stem(b.region.umd_nm)}{rr.choice(PHARMACY_NAMES)}"
        subjects: list[tuple[str, str]] = []
        doctors = 0
    else:
        cl_cd, cl_nm, suffix = rr.choice(HOSP_KINDS[3:5] if big else HOSP_KINDS[:3] + HOSP_KINDS[5:])
        prefix = rr.choice(
            [
                _stem(b.region.umd_nm),
                rr.choice(SURNAMES) + rr.choice(GIVEN[:6]),
                SIDO_SHORT[r.code[:2]] + ("" if big else "참"),
            ]
        )
        name = f"{prefix}{suffix}"
        subjects = rr.sample(DGSBJT, k=rr.randint(1, 4) if not big else 6)
        doctors = rr.randint(1, 4) if not big else rr.randint(8, 120)
    return Facility(
        ykiho=_ykiho(rr, serial),
        name=name,
        cl_cd=cl_cd,
        cl_nm=cl_nm,
        building=b,
        sggu_cd=sggu[0],
        sggu_nm=sggu[1],
        tel=_tel(r.code, rr),
        estb=f"{rr.randint(1985, 2024)}{rr.randint(1, 12):02d}{rr.randint(1, 28):02d}",
        doctors=doctors,
        subjects=subjects,
        is_pharmacy=pharmacy,
    )


@lru_cache(maxsize=8)
def get_world(seed: int) -> World:
    return build_world(seed)


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
