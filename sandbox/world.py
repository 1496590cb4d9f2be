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
import math
import random
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from importlib import resources

from core.geo import convert_many, haversine_m
from sandbox.entities import (
    Building,
    Business,
    BusRoute,
    BusStop,
    Complex,
    Drug,
    Facility,
    Region,
    Station,
    TourSite,
    World,
    brn_check_digit,
    hash_of,
    name_stem,
    rng_for,
)
from sandbox.world_tables import (
    APT_BRANDS,
    COLORS,
    DGSBJT,
    DRUG_MAKERS,
    FORMS,
    GIVEN,
    HOSP_KINDS,
    INGREDIENTS,
    PHARMACY_NAMES,
    ROAD_SUFFIX,
    SGG_CENTROIDS,
    SIDO_SHORT,
    SURNAMES,
    TAGO_CITY,
    TOUR_SUFFIX,
    TOUR_TYPES,
    ZIP_BASE,
)


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
        stem = name_stem(r.umd_nm or r.sgg_nm)
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
        zip_no=f"{ZIP_BASE[r.code[:2]] + hash_of(seed, 'zip', r.code[:8]) % 900:05d}",
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
    b.mgm_pk = f"{r.code[:5]}-{100000 + hash_of(seed, 'pk', b.bd_mgt_sn) % 900000}"
    return b


def _complex(seed: int, rr: random.Random, r: Region, stem: str, b: Building) -> Complex:
    """Turn building `b` into an apartment complex (공동주택) and describe the complex."""
    brand = rr.choice(APT_BRANDS)
    name = f"{stem}{brand}" if rr.random() < 0.7 else f"{brand}{stem}{rr.randint(1, 3)}차"
    b.bd_nm, b.bd_kdcd, b.main_purps = name, "1", "공동주택"
    b.grnd_flr, b.ugrnd_flr = rr.randint(12, 35), rr.randint(1, 3)
    households = rr.randint(120, 3200)
    b.hhld_cnt = households
    kapt = f"A{10000000 + hash_of(seed, 'kapt', r.code) % 89999999:08d}"
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
        apt_seq=f"{r.code[:5]}-{1000 + hash_of(seed, 'aptseq', kapt) % 9000}",
    )


# --- AirKorea stations: Seoul names them by 구, Incheon and Daejeon by 동 -------------------------------------


def _stations(seed: int, geo: Geography) -> list[Station]:
    stations: list[Station] = []
    for r in geo.offices():
        rr = rng_for(seed, "station", r.code)
        children = [c for c in geo.leaves if c.code[:5] == r.code[:5] and c.level == "umd"] or [r]
        anchor = rr.choice(children)
        name = r.sgg_nm if r.code[:2] == "11" else name_stem(anchor.umd_nm or r.sgg_nm)
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
                    f"{name_stem(u.umd_nm or u.sgg_nm)}{suffix}",
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
            title = f"{name_stem(b.region.umd_nm or r.sgg_nm)}{rr.choice(TOUR_SUFFIX[ctype])}"
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
        cl_cd, cl_nm, name = "81", "약국", f"{name_stem(b.region.umd_nm)}{rr.choice(PHARMACY_NAMES)}"
        subjects: list[tuple[str, str]] = []
        doctors = 0
    else:
        cl_cd, cl_nm, suffix = rr.choice(HOSP_KINDS[3:5] if big else HOSP_KINDS[:3] + HOSP_KINDS[5:])
        prefix = rr.choice(
            [
                name_stem(b.region.umd_nm),
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
