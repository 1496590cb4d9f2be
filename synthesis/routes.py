"""How a careful agent routes a question: what kind of thing each tool's rows are, which links carry a place
(coordinates, area codes and names) rather than an entity's identity, and which row of a response is the user's.

Row kinds (`row_kind`):
* `place`  — the rows are places: an address lookup, an area list, a place's coordinates (juso, 법정동 lists,
  TM coordinates of a 읍면동). Their coordinates and codes are the place's own.
* `entity` — the rows are named things at a place: a hospital, pharmacy, bus stop, tourist site, apartment complex,
  company, measuring station. A route may go through one only when the question is about it (its identity feeds
  the next call: ykiho, contentId, stationName) or the user named it; taking only its coordinates or area codes
  to answer about the place borrows an entity nobody asked about.
* `table`  — the rows are the categories of one observation or forecast (a `category` and a value per row).
* `data`   — other records (transactions, measurements, registers).

These rules read field names and descriptions as real Korean public APIs write them (…Nm/…Name/명 for names,
sido/sgg/umd/emd/dong for areas, 주소/addr for addresses); they are checked on the sandbox catalog and on the
unseen family in tests/unseen/.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from graph.concepts import concepts_of, norm
from graph.models import LinkRecord, ToolRecord
from graph.regions import FORMER_SIGUNGU, SIDO, SIGUNGU

#: Concepts of a target parameter that locate a place rather than identify an entity.
PLACE_CONCEPTS = {
    "bjd_code",
    "sgg_code",
    "sido_code",
    "sgg3_code",
    "umd_code",
    "umd_name",
    "sido_name",
    "sgg_name",
    "jibun_main",
    "jibun_sub",
    "plat_kind",
    "road_code",
    "building_main",
    "building_sub",
    "underground",
    "zip",
}
_AREA = re.compile(
    r"^(sido|sgg|sggu|sigungu|signgu|umd|emd|emdong|dong|city|ctprvn|si|li|rn|locat|locallow|regn|"
    r"region|adm|area|ldong|bjd|plat|newplat|lvl|road)"
)
_CATEGORY = re.compile(r"(cdnm|cd_nm|typename|tpnm|gbnm|gbn|clsnm|classname|kindnm|formname|shape|otcname)$")
_NAME = re.compile(r"(nm|name|title|명)$")
_ADDRESS = re.compile(r"(roadaddr|jibunaddr|addr|juso|주소|소재지)")
_DISTANCE = ("거리", "distance")


def _fold(text: Any) -> str:
    return re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", str(text)).lower())


def is_area_field(name: str, description: str = "") -> bool:
    n = norm(name)
    return (
        bool(_AREA.match(n))
        or bool(concepts_of(name, description) & {"umd_name", "sido_name", "sgg_name"})
        or ("행정구역" in description or "시도" in description[:3] or "시군구" in description[:4])
    )


def entity_name_fields(tool: ToolRecord) -> list[str]:
    """Fields that name a row's entity (not its area, category or address)."""
    out = []
    for f in tool.fields:
        n = norm(f.name)
        if not _NAME.search(n) and not _NAME.search(f.description.strip()[-1:] or "x") and "이름" not in f.description:
            continue
        if (
            is_area_field(f.name, f.description)
            or _CATEGORY.search(n)
            or _ADDRESS.search(n)
            or n.startswith(("code", "mang"))
            or n.endswith(("mnnm", "slno"))
            or "지역" in f.description
        ):
            continue
        if "코드" in f.description and "명" not in f.description:
            continue
        out.append(f.name)
    return out


def counterpart_fields(tool: ToolRecord) -> dict[str, str]:
    """A tool whose rows each describe a pair of things of one kind (a DUR 병용금기 row: the queried product and
    the product it must not be taken with): per field of the first member, the same field of the counterpart,
    named with one prefix (ITEM_NAME → MIXTURE_ITEM_NAME, itemName → mixtureItemName). A prefix marks a
    counterpart only over two fields or more, one of them naming an entity on both sides: a road-name form of a
    lot number (roadNmBonbun) or a previous value (preDeposit, rbf_tax_type) is the same thing again, not another
    one."""
    names = [f.name for f in tool.fields]
    entity = set(entity_name_fields(tool))
    by_prefix: dict[str, dict[str, str]] = {}
    for a in names:
        na = norm(a)
        for b in names:
            nb = norm(b)
            if nb != na and len(na) >= 4 and nb.endswith(na):
                by_prefix.setdefault(nb[: -len(na)], {})[a] = b
    out: dict[str, str] = {}
    for pairs in by_prefix.values():
        if len(pairs) >= 2 and any(a in entity and b in entity for a, b in pairs.items()):
            out.update(pairs)
    return out


def row_kind(tool: ToolRecord) -> str:
    names = {norm(f.name) for f in tool.fields}
    if "category" in names and names & {"fcstvalue", "obsrvalue"}:
        return "table"
    named = [f for f in entity_name_fields(tool) if not re.search(r"(bdnm|bldnm|detbdnm)", norm(f))]
    if named:
        return "entity"
    # an address record names its building (bdNm) but is a place
    if any(
        is_area_field(f.name, f.description)
        or _ADDRESS.search(norm(f.name))
        or concepts_of(f.name, f.description) & PLACE_CONCEPTS
        for f in tool.fields
    ):
        return "place"
    return "data"


def carries_place(link: LinkRecord, target: ToolRecord) -> bool:
    """A link that carries where something is (coordinates, area codes or names), not which thing it is."""
    if link.transform.get("kind") == "coord":
        return True
    pname = link.target_param.split(":", 1)[-1]
    p = next((p for p in target.params if p.name == pname), None)
    desc = p.description if p is not None else ""
    if concepts_of(pname, desc) & PLACE_CONCEPTS:
        return True
    text = f"{pname} {desc}".lower()
    return any(w in text for w in ("좌표", "위도", "경도", "gps", "mapx", "mapy", "행정구역", "지역코드"))


def distance_field(tool: ToolRecord) -> str | None:
    """A field that orders rows by distance from the point asked (the first row is then the nearest)."""
    for f in tool.fields:
        if any(w in f.description.lower() for w in _DISTANCE) or norm(f.name) in ("distance", "dist"):
            return f.name
    return None


def nearest_first(tool: ToolRecord, rows: list[dict[str, Any]]) -> bool:
    name = distance_field(tool)
    if name is None or len(rows) < 2:
        return False
    try:
        values = [float(str(r.get(name)).replace(",", "")) for r in rows]
    except ValueError:
        return False
    return values == sorted(values)


def _match(row: dict[str, Any], words: list[str]) -> int:
    """How well a row matches the user's words: 3 a field equals one, 2 a field contains one, 0 none."""
    best = 0
    for w in words:
        fw = _fold(w)
        if len(fw) < 2:
            continue
        for v in row.values():
            if isinstance(v, dict | list) or v is None:
                continue
            fv = _fold(v)
            if not fv:
                continue
            if fv == fw:
                best = max(best, 3)
            elif fw in fv:
                best = max(best, 2)
    return best


def user_row(rows: list[dict[str, Any]], shown: int, words: list[str], tool: ToolRecord | None = None) -> int | None:
    """The row the user's words single out among the first `shown` rows (the rows the one view shows, in the
    provider's order), or None when none or several do. With one row it is that row; rows the provider orders by
    distance from the asked point give the nearest."""
    if len(rows) == 1:
        return 0
    if not rows:
        return None
    window = rows[:shown]
    scores = [_match(r, words) for r in window]
    top = max(scores)
    if top > 0 and scores.count(top) == 1:
        return scores.index(top)
    if tool is not None and nearest_first(tool, rows) and not words:
        return 0
    if top == 0 and latest_first(rows):
        return 0
    return None


_WHEN = re.compile(r"(datatime|datetime|time|date|dt|dtm|ymd)$")


def latest_first(rows: list[dict[str, Any]]) -> bool:
    """Rows of one series the provider lists newest first (hourly measurements): the first is the latest, which
    is what "now" asks for."""
    keys = [k for k in rows[0] if _WHEN.search(norm(k)) and isinstance(rows[0][k], str)]
    for k in keys:
        values = [str(r.get(k, "")) for r in rows]
        if (
            all(re.fullmatch(r"[0-9 :\-./]{8,19}", v) for v in values)
            and len(set(values)) == len(values)
            and values == sorted(values, reverse=True)
        ):
            return True
    return False


def row_entity_names(row: dict[str, Any]) -> list[str]:
    """The values of a row's fields that name an entity (by field name alone: readers of a record have the rows,
    not the documents)."""
    out = []
    for k, v in row.items():
        n = norm(k)
        if not isinstance(v, str) or not v.strip() or not _NAME.search(n):
            continue
        if (
            _AREA.match(n)
            or _CATEGORY.search(n)
            or _ADDRESS.search(n)
            or n.startswith(("code", "mang"))
            or n.endswith(("mnnm", "slno"))
            or re.search(r"(bdnm|bldnm|detbdnm)", n)
        ):
            continue
        out.append(v)
    return out


def mentioned(value: str, text: str) -> bool:
    fv, ft = _fold(value), _fold(text)
    return bool(fv) and (fv in ft)


def row_identified(row: dict[str, Any], said: str) -> bool:
    """The user's words carry one of the row's own values (not its area or address): an identifier they know."""
    for k, v in row.items():
        if isinstance(v, dict | list) or v is None or len(str(v)) < 4:
            continue
        if is_area_field(k) or _ADDRESS.search(norm(k)):
            continue
        if mentioned(str(v), said):
            return True
    return False


def row_area(row: dict[str, Any]) -> str:
    """The 시도 and 시군구 a row is in ("서울특별시 종로구"): read from its address text, else from its area fields
    (a 시도 name in one field, a 시군구 of it in another); empty when it states none. A 시군구 since merged or
    split (인천 중구, 동구, 서구 before 2026-07) is an area of its own: addresses and data still name it."""
    words = [w for v in row.values() if isinstance(v, str) for w in v.split()]
    found = ""
    for i, w in enumerate(words):
        sido = w if w in SIGUNGU else next((k for k, short in SIDO.items() if short == w), None)
        if sido is None:
            continue
        units = (*SIGUNGU.get(sido, ()), *FORMER_SIGUNGU.get(sido, {}))
        if i + 1 < len(words) and words[i + 1] in units:
            return f"{sido} {words[i + 1]}"  # an address: the 시군구 right after its 시도
        sgg = next((x for x in words if x in units), None)
        if sgg is not None and not found:
            found = f"{sido} {sgg}"
    return found
