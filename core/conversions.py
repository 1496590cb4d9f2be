"""Deterministic coordinate conversions offered to models as tools (the `kopa-convert` local API,
graph/conversions.py): pure functions over core.geo that take a call's arguments and answer rows, or raise
ConversionError with a message that says what to fix.

Korean public APIs each speak one coordinate system: TourAPI/TAGO/HIRA WGS84 degrees, juso UTM-K metres, AirKorea
TM (중부원점) metres, the KMA forecasts their 5 km Lambert grid. A model that must carry a place from one API to
another would otherwise project in its head (and gets it wrong): these tools do it exactly.

Arguments arrive as a model or an executor sends them: numbers as JSON numbers or numeric text ("126.978",
" 37.5665 ", "198,245.05" is refused: a thousands separator is not part of a coordinate).
"""

from __future__ import annotations

import math
import re
from typing import Any

from core.geo import convert, in_kma_grid, kma_grid_to_wgs84, to_kma_grid

#: Coordinate systems a conversion accepts (x = longitude or easting, y = latitude or northing).
CRS = ("WGS84", "UTMK", "TM")
CRS_TEXT = {
    "WGS84": "WGS84 degrees (EPSG:4326)",
    "UTMK": "UTM-K metres (EPSG:5179)",
    "TM": "TM 중부원점 metres (EPSG:5181)",
}
#: Where the projected systems are used: the Korean peninsula and its seas (lon 120-135 E, lat 30-45 N). A UTM-K
#: or TM value that lands outside was given in another system (degrees sent as metres, x and y swapped).
KOREA = (120.0, 135.0, 30.0, 45.0)
#: Decimals an answer keeps: 7 for degrees (about 1 cm), 3 for metres (1 mm), as the source APIs print them.
DECIMALS = {"WGS84": 7, "UTMK": 3, "TM": 3}
NX_RANGE, NY_RANGE = (1, 149), (1, 253)

_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")


class ConversionError(ValueError):
    """A call the conversion cannot answer; `code` names the kind, the message says what to send instead."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


#: The longest numeric text a coordinate is read from (a WGS84 degree with 7 decimals takes 12 characters), and the
#: largest magnitude a number may have (beyond it a float is infinite).
MAX_NUMBER_TEXT = 64
MAX_MAGNITUDE = 1e308


def shown(value: Any, limit: int = 40) -> str:
    """`value` as a message may quote it: bounded, and printable whatever it holds (a lone surrogate is escaped, an
    integer of 5,000 digits is not spelled out, a list or an object is named by its kind and size)."""
    if isinstance(value, str):
        return repr(value[:limit] + ("…" if len(value) > limit else ""))  # repr escapes surrogates
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        if abs(value) > MAX_MAGNITUDE:
            return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
        return repr(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple | dict | set):
        return f"a {type(value).__name__} of {len(value)} item{'s' if len(value) != 1 else ''}"
    return f"a {type(value).__name__}"


def number(args: dict[str, Any], name: str) -> float:
    """A required numeric argument (a JSON number or numeric text)."""
    value = args.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ConversionError("missing_parameter", f"{name} is required")
    must = f"{name} must be a number (a JSON number or numeric text such as 126.978)"
    finite = f"{name} must be a finite number (at most 1e308 in size)"
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ConversionError("not_a_number", f"{must}, got {shown(value)}")
    if isinstance(value, int):
        if abs(value) > MAX_MAGNITUDE:  # exact: float(value) would overflow
            raise ConversionError("not_a_number", f"{finite}, got {shown(value)}")
        out = float(value)
    elif isinstance(value, float):
        out = value
    else:
        text = value.strip()
        if len(text) > MAX_NUMBER_TEXT or not _NUMBER.match(text):
            raise ConversionError("not_a_number", f"{must}, got {shown(value)}")
        out = float(text)
    if not math.isfinite(out) or abs(out) > MAX_MAGNITUDE:
        raise ConversionError("not_a_number", f"{finite}, got {shown(value)}")
    return out


_CRS_ALIASES = {
    "EPSG4326": "WGS84",
    "EPSG:4326": "WGS84",
    "EPSG5179": "UTMK",
    "EPSG:5179": "UTMK",
    "EPSG5181": "TM",
    "EPSG:5181": "TM",
}


def crs(args: dict[str, Any], name: str) -> str:
    """A required coordinate-system argument; a few spellings real documents use are accepted."""
    value = args.get(name)
    if value is None or value == "":
        raise ConversionError("missing_parameter", f"{name} is required (one of {', '.join(CRS)})")
    if not isinstance(value, str) or len(value) > 32:
        raise ConversionError("bad_crs", f"{name} must be one of {', '.join(CRS)} (text), got {shown(value)}")
    raw = value.strip().upper().replace("-", "").replace("_", "").replace(" ", "")
    out = _CRS_ALIASES.get(raw, raw)
    if out not in CRS:
        raise ConversionError("bad_crs", f"{name} must be one of {', '.join(CRS)}, got {shown(value)}")
    return out


def _wgs84(x: float, y: float, src: str) -> tuple[float, float]:
    """The point as (lon, lat), checked to be where its system is defined."""
    if src == "WGS84":
        if not -90 <= y <= 90 or not -180 <= x <= 180:
            hint = (
                " (x is the longitude, y the latitude: were they swapped?)"
                if -90 <= x <= 90 and -180 <= y <= 180
                else ""
            )
            raise ConversionError(
                "out_of_range",
                f"x={x:g}, y={y:g} is not a WGS84 point: x must be a longitude "
                f"in [-180, 180] and y a latitude in [-90, 90]{hint}",
            )
        return x, y
    lon, lat = convert(x, y, src, "WGS84")
    lo_lon, hi_lon, lo_lat, hi_lat = KOREA
    if not (math.isfinite(lon) and math.isfinite(lat) and lo_lon <= lon <= hi_lon and lo_lat <= lat <= hi_lat):
        where = f"lon {lon:.4f}, lat {lat:.4f}" if math.isfinite(lon) and math.isfinite(lat) else "no point on Earth"
        hint = " (these look like WGS84 degrees: send crs WGS84)" if abs(x) <= 180 and abs(y) <= 90 else ""
        raise ConversionError(
            "out_of_range",
            f"x={x:g}, y={y:g} in {CRS_TEXT[src]} is {where}, outside Korea "
            f"(lon {lo_lon:g}-{hi_lon:g}, lat {lo_lat:g}-{hi_lat:g}) where "
            f"{src} is used{hint}",
        )
    return lon, lat


def _in_korea(lon: float, lat: float, dst: str) -> None:
    lo_lon, hi_lon, lo_lat, hi_lat = KOREA
    if dst != "WGS84" and not (lo_lon <= lon <= hi_lon and lo_lat <= lat <= hi_lat):
        raise ConversionError(
            "out_of_range",
            f"lon {lon:.4f}, lat {lat:.4f} is outside Korea (lon {lo_lon:g}-"
            f"{hi_lon:g}, lat {lo_lat:g}-{hi_lat:g}), where {dst} is not defined",
        )


def to_kma_grid_rows(args: dict[str, Any]) -> list[dict[str, Any]]:
    """x, y in `crs` -> the KMA forecast grid cell: [{"nx", "ny", "lon", "lat"}] (lon/lat: the point in WGS84)."""
    x, y, src = number(args, "x"), number(args, "y"), crs(args, "crs")
    lon, lat = _wgs84(x, y, src)
    try:
        nx, ny = to_kma_grid(lon, lat, "WGS84")
    except ValueError:  # the pole opposite the projection's (lat -90) has no cell at all
        raise ConversionError(
            "outside_grid",
            f"lon {lon:.4f}, lat {lat:.4f} lies outside the KMA forecast grid (the Korean peninsula and its seas, "
            f"nx {NX_RANGE[0]}-{NX_RANGE[1]}, ny {NY_RANGE[0]}-{NY_RANGE[1]}); send a point in Korea",
        ) from None
    if not in_kma_grid(nx, ny):
        raise ConversionError(
            "outside_grid",
            f"lon {lon:.4f}, lat {lat:.4f} lies outside the KMA forecast grid "
            f"(nx {NX_RANGE[0]}-{NX_RANGE[1]}, ny {NY_RANGE[0]}-{NY_RANGE[1]}: the "
            f"Korean peninsula and its seas); it gives nx {nx}, ny {ny}",
        )
    return [{"nx": nx, "ny": ny, "lon": round(lon, DECIMALS["WGS84"]), "lat": round(lat, DECIMALS["WGS84"])}]


def convert_rows(args: dict[str, Any]) -> list[dict[str, Any]]:
    """x, y from `from_crs` to `to_crs`: [{"x", "y", "crs"}]."""
    x, y = number(args, "x"), number(args, "y")
    src, dst = crs(args, "from_crs"), crs(args, "to_crs")
    lon, lat = _wgs84(x, y, src)
    _in_korea(lon, lat, dst)
    ox, oy = (x, y) if src == dst else (lon, lat) if dst == "WGS84" else convert(x, y, src, dst)
    return [{"x": round(ox, DECIMALS[dst]), "y": round(oy, DECIMALS[dst]), "crs": dst}]


def from_kma_grid_rows(args: dict[str, Any]) -> list[dict[str, Any]]:
    """A KMA grid cell (nx, ny) -> its centre in WGS84: [{"lon", "lat"}]."""
    nx, ny = number(args, "nx"), number(args, "ny")
    if not (nx.is_integer() and ny.is_integer()):
        raise ConversionError("not_an_integer", f"nx and ny are whole grid cells, got nx={nx:g}, ny={ny:g}")
    if not in_kma_grid(int(nx), int(ny)):
        raise ConversionError(
            "outside_grid",
            f"nx={nx:g}, ny={ny:g} is not a KMA grid cell (nx {NX_RANGE[0]}-"
            f"{NX_RANGE[1]}, ny {NY_RANGE[0]}-{NY_RANGE[1]})",
        )
    lat, lon = kma_grid_to_wgs84(nx, ny)
    return [{"lon": round(lon, DECIMALS["WGS84"]), "lat": round(lat, DECIMALS["WGS84"])}]
