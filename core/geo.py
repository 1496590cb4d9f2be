"""Coordinate systems used by Korean public APIs, and conversions between them.

* WGS84 lon/lat (EPSG:4326): TourAPI mapx/mapy, TAGO gps*, HIRA XPos/YPos.
* UTM-K (EPSG:5179, metres): juso addrCoordApi entX/entY.
* TM 중부원점 (EPSG:5181, metres): AirKorea tmX/tmY.
* KMA DFS grid (Lambert conformal conic, 5 km cells): VilageFcst nx/ny (official KMA constants).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from pyproj import Transformer

CRS_NAMES = {"WGS84": "EPSG:4326", "UTMK": "EPSG:5179", "TM": "EPSG:5181"}

# Official KMA grid constants (km / degrees / grid units).
_RE, _GRID, _SLAT1, _SLAT2, _OLON, _OLAT, _XO, _YO = 6371.00877, 5.0, 30.0, 60.0, 126.0, 38.0, 43.0, 136.0
_DEG = math.pi / 180.0


def _lcc_constants() -> tuple[float, float, float, float]:
    re = _RE / _GRID
    s1, s2, olat = _SLAT1 * _DEG, _SLAT2 * _DEG, _OLAT * _DEG
    sn = math.log(math.cos(s1) / math.cos(s2)) / math.log(
        math.tan(math.pi / 4 + s2 / 2) / math.tan(math.pi / 4 + s1 / 2)
    )
    sf = math.tan(math.pi / 4 + s1 / 2) ** sn * math.cos(s1) / sn
    ro = re * sf / math.tan(math.pi / 4 + olat / 2) ** sn
    return re, sn, sf, ro


_LCC = _lcc_constants()


def wgs84_to_kma_grid(lat: float, lon: float) -> tuple[int, int]:
    """Latitude/longitude to the KMA forecast grid (nx, ny). Seoul City Hall -> (60, 127). Raises ValueError for a
    point the projection cannot place (the south pole, lat -90, lies at infinity; NaN and infinities)."""
    re, sn, sf, ro = _LCC
    t = math.tan(math.pi / 4 + lat * _DEG / 2) if math.isfinite(lat) and math.isfinite(lon) else math.nan
    if not t > 0:  # also NaN
        raise ValueError(f"lat {lat}, lon {lon} has no place on the KMA grid's projection")
    ra = re * sf / t**sn
    theta = lon * _DEG - _OLON * _DEG
    if theta > math.pi:
        theta -= 2 * math.pi
    if theta < -math.pi:
        theta += 2 * math.pi
    theta *= sn
    fx, fy = ra * math.sin(theta) + _XO + 0.5, ro - ra * math.cos(theta) + _YO + 0.5
    if not (math.isfinite(fx) and math.isfinite(fy)):
        raise ValueError(f"lat {lat}, lon {lon} has no place on the KMA grid's projection")
    return math.floor(fx), math.floor(fy)


def kma_grid_to_wgs84(nx: float, ny: float) -> tuple[float, float]:
    """Inverse of wgs84_to_kma_grid for a grid cell centre: returns (lat, lon)."""
    re, sn, sf, ro = _LCC
    xn = nx - _XO
    yn = ro - ny + _YO
    ra = math.copysign(math.sqrt(xn * xn + yn * yn), sn)
    if ra == 0:  # the projection's pole
        return 90.0, _OLON
    alat = 2.0 * math.atan((re * sf / ra) ** (1.0 / sn)) - math.pi / 2
    if abs(xn) <= 0.0:
        theta = 0.0
    elif abs(yn) <= 0.0:
        theta = math.copysign(math.pi / 2, xn)
    else:
        theta = math.atan2(xn, yn)
    alon = theta / sn + _OLON * _DEG
    return alat / _DEG, alon / _DEG


def in_kma_grid(nx: int, ny: int) -> bool:
    return 1 <= nx <= 149 and 1 <= ny <= 253


@lru_cache(maxsize=16)
def _transformer(src: str, dst: str) -> Any:
    return Transformer.from_crs(CRS_NAMES[src], CRS_NAMES[dst], always_xy=True)


def convert(x: float, y: float, src: str, dst: str) -> tuple[float, float]:
    """Convert (x, y) between WGS84 (lon, lat), UTMK and TM; x is always easting/longitude."""
    if src == dst:
        return x, y
    out = _transformer(src, dst).transform(x, y)
    return float(out[0]), float(out[1])


def convert_many(xs: list[float], ys: list[float], src: str, dst: str) -> tuple[list[float], list[float]]:
    if src == dst:
        return list(xs), list(ys)
    ox, oy = _transformer(src, dst).transform(xs, ys)
    return [float(v) for v in ox], [float(v) for v in oy]


def to_kma_grid(x: float, y: float, src: str) -> tuple[int, int]:
    lon, lat = convert(x, y, src, "WGS84")
    return wgs84_to_kma_grid(lat, lon)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r = 6371008.8
    p1, p2 = lat1 * _DEG, lat2 * _DEG
    dp, dl = (lat2 - lat1) * _DEG, (lon2 - lon1) * _DEG
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))
