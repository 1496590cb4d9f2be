"""Value transforms applied when an output field feeds an input parameter.

A transform is a small JSON object (stored on the link, shown in evidence) such as
`{"kind": "slice", "start": 0, "end": 5}`. `apply` turns one upstream value (plus, for coordinates, the row it
came from) into the downstream argument, or raises TransformError when the value does not fit.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from core.geo import convert, to_kma_grid

Transform = dict[str, Any]
IDENTITY: Transform = {"kind": "identity"}

SIDO_SHORT = {
    "서울특별시": "서울",
    "부산광역시": "부산",
    "대구광역시": "대구",
    "인천광역시": "인천",
    "광주광역시": "광주",
    "대전광역시": "대전",
    "울산광역시": "울산",
    "세종특별자치시": "세종",
    "경기도": "경기",
    "강원특별자치도": "강원",
    "강원도": "강원",
    "충청북도": "충북",
    "충청남도": "충남",
    "전북특별자치도": "전북",
    "전라북도": "전북",
    "전라남도": "전남",
    "경상북도": "경북",
    "경상남도": "경남",
    "제주특별자치도": "제주",
}
#: The current full name of each province's short form (강원 is 강원특별자치도 since 2023-06, 전북 전북특별자치도 since
#: 2024-01: the old names are abolished and return no rows, see the reference's StanReginCd notes).
SIDO_LONG = {short: full for full, short in SIDO_SHORT.items() if full not in ("강원도", "전라북도")}
TABLES: dict[str, dict[str, str]] = {"sido_short": SIDO_SHORT, "sido_long": SIDO_LONG}
#: Date formats Korean APIs use for dates and their parts (KMA tmFc YYYYMMDDHH(MM), RTMS DEAL_YMD YYYYMM, KASI
#: solYear YYYY / solMonth MM, ASOS tm "YYYY-MM-DD HH:MM").
DATE_FORMATS = {
    "YYYYMMDDHHMM": "%Y%m%d%H%M",
    "YYYYMMDDHH": "%Y%m%d%H",
    "YYYYMMDD": "%Y%m%d",
    "YYYYMM": "%Y%m",
    "YYYY-MM-DD HH:MM": "%Y-%m-%d %H:%M",
    "YYYY-MM-DD": "%Y-%m-%d",
    "YYYY-MM": "%Y-%m",
    "YYYY": "%Y",
    "MM": "%m",
    "DD": "%d",
}
#: Formats that name a whole instant or day (a source); YYYY, MM and DD are parts only a parameter takes.
WHOLE_DATES = ("YYYYMMDDHHMM", "YYYYMMDDHH", "YYYYMMDD", "YYYYMM", "YYYY-MM-DD HH:MM", "YYYY-MM-DD", "YYYY-MM")


class TransformError(ValueError):
    pass


def describe(t: Transform) -> str:
    kind = t.get("kind", "identity")
    if kind == "slice":
        return f"[{t.get('start', 0)}:{t.get('end', '')}]"
    if kind == "zfill":
        return f"zero-pad {t['width']}"
    if kind == "coord":
        return f"{t['src']}->{t['dst']}.{t['axis']}"
    if kind == "map":
        return f"map {t['table']}"
    if kind == "date":
        return f"{t['src']}->{t['dst']}"
    if kind == "sgg_level":
        return "시군구 level"
    return str(kind)


def _scalar(value: Any) -> str:
    if value is None:
        raise TransformError("no value")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def apply(t: Transform, value: Any, row: dict[str, Any] | None = None) -> Any:
    """Apply one transform. Raises TransformError when the value cannot be transformed."""
    kind = t.get("kind", "identity")
    if kind == "identity":
        return _scalar(value)
    if kind == "cast":
        text = _scalar(value)
        try:
            return str(int(float(text))) if t.get("to") == "int" else str(float(text))
        except (ValueError, OverflowError) as exc:  # int(float("inf")) overflows
            raise TransformError(f"{text!r} is not a number") from exc
    if kind == "slice":
        text = _scalar(value)
        end = t.get("end")
        if end is not None and len(text) < int(end):
            raise TransformError(f"{text!r} is shorter than {end}")
        return text[int(t.get("start", 0)) : None if end is None else int(end)]
    if kind == "zfill":
        text = _scalar(value)
        if not text.isdigit() or len(text) > int(t["width"]):
            raise TransformError(f"{text!r} cannot be zero-padded to {t['width']}")
        return text.zfill(int(t["width"]))
    if kind == "map":
        text = _scalar(value)
        table = TABLES[t["table"]]
        if text not in table:
            raise TransformError(f"{text!r} not in table {t['table']}")
        return table[text]
    if kind == "wrap_list":
        return [_scalar(value)]
    if kind == "sgg_level":
        # the 시군구 of a 10-digit region code, at the 시군구 level: where two code systems agree (행정동 and 법정동
        # codes are the same for 시도 and 시군구, not for 읍면동)
        text = _scalar(value)
        if not (text.isdigit() and len(text) == 10):
            raise TransformError(f"{text!r} is not a 10-digit region code")
        return text[:5] + "00000"
    if kind == "date":
        text = _scalar(value)
        try:
            parsed = datetime.strptime(text, DATE_FORMATS[t["src"]])
        except ValueError as exc:
            raise TransformError(f"{text!r} is not {t['src']}") from exc
        if parsed.strftime(DATE_FORMATS[t["src"]]) != text:  # strptime reads 20261015 as %Y%m%d%H (day 1, 5 h)
            raise TransformError(f"{text!r} is not {t['src']}")
        return parsed.strftime(DATE_FORMATS[t["dst"]])
    if kind == "coord":
        return _coord(t, value, row or {})
    raise TransformError(f"unknown transform kind {kind!r}")


_NUM = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


def _num(v: Any) -> float:
    text = _scalar(v)
    if not _NUM.match(text):
        raise TransformError(f"{text!r} is not a coordinate")
    return float(text)


def _coord(t: Transform, value: Any, row: dict[str, Any]) -> str:
    pair = row.get(t["pair"])
    if pair is None:
        raise TransformError(f"the paired coordinate {t['pair']!r} is missing")
    x, y = (_num(value), _num(pair)) if t["axis"] == "x" else (_num(pair), _num(value))
    src, dst = t["src"], t["dst"]
    if src == "WGS84" and not (-180 <= x <= 180 and -90 <= y <= 90):
        raise TransformError("not a WGS84 coordinate")
    if dst == "KMA_GRID":
        try:
            nx, ny = to_kma_grid(x, y, src)
        except ValueError as exc:  # a point the grid's projection cannot place (lat -90, an infinite projection)
            raise TransformError(f"({x:g}, {y:g}) in {src} has no KMA grid cell") from exc
        return str(nx if t["axis"] == "x" else ny)
    ox, oy = convert(x, y, src, dst)
    out = ox if t["axis"] == "x" else oy
    return f"{out:.6f}" if dst != "WGS84" else f"{out:.7f}"
