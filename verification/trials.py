"""What one trial of a link is (a value of the source field, the call it was fed to, the judged answer) and what
a set of trials shows beyond success: the entities the values belong to, answers that echo another record
(swapped or coinciding codes), and whether two answers are the same."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.json_types import JsonObject, JsonValue
from execution.result import CallResult
from execution.seeds import PAGE_SIZE_PARAMS
from graph import regions
from graph.concepts import norm, value_concepts, value_shape
from graph.link_scoring import link_id
from graph.models import LinkRecord


def _cell(v: Any) -> Any:
    if v is None or isinstance(v, str | list | dict):
        return "" if v is None else v
    return str(v) if not isinstance(v, float) or not v.is_integer() else str(int(v))


def normalise_rows(items: list[dict[str, Any]], limit: int = 30) -> list[JsonObject]:
    return [{k: _cell(v) for k, v in row.items()} for row in items[:limit]]


def trim(row: Mapping[str, JsonValue], n: int = 8) -> JsonObject:
    out: JsonObject = {}
    for k, v in list(row.items())[:n]:
        out[k] = v[:80] + "…" if isinstance(v, str) and len(v) > 80 else v
    return out


def interleave(groups: list[list[JsonObject]]) -> list[JsonObject]:
    """Rows of several sampling calls, taken in turn, so the first values tried span every call's level."""
    out: list[JsonObject] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def diverse(rows: list[JsonObject], field_name: str) -> list[JsonObject]:
    """Rows reordered so the first values tried differ in kind, level and entity: grouped by value shape and by
    the trailing zeros that mark the level of a hierarchical code (1100000000 시도, 1111000000 시군구, 1111010100
    읍면동 in 법정동/행정동 codes), the groups taken in turn; inside a group the entities (see `entity`) taken in
    turn, each in its sampled order, so two values tried first are never two districts of one province."""
    groups: dict[tuple[str, int], list[JsonObject]] = {}
    for row in rows:
        text = str(row.get(field_name, ""))
        groups.setdefault((value_shape(text), level(text)), []).append(row)
    spread = []
    for group in groups.values():
        by_entity: dict[str, list[JsonObject]] = {}
        for row in group:
            by_entity.setdefault(entity(row.get(field_name)), []).append(row)
        spread.append(interleave(list(by_entity.values())))
    # the finest level first: a 읍면동 code is where two code systems differ, and a 시도 code is the one a
    # district-level target does not take
    levels = [level(str(g[0].get(field_name, ""))) for g in groups.values()]
    return interleave([g for _, g in sorted(zip(levels, spread, strict=True), key=lambda x: x[0])])


def entity(value: Any) -> str:
    """The entity a source value stands for, as far as a link must hold across entities: a region code (five or
    ten digits: 시군구, 법정동 and 행정동 codes) by its two-digit head, the province (codes of one province are
    where two code systems coincide: an agency's own 시도 numbering equals the legal-dong prefix for 서울 only;
    행정동 and 법정동 codes are equal at province and district level); anything else (a company, a date, a
    station, a name) by its value."""
    text = str(value if value is not None else "").strip()
    if text.isdigit() and len(text) in (5, 10) and _as_date(text) is None:
        return text[:2]
    return text


def level(value: Any) -> int:
    """The level of a hierarchical code, read off its trailing zeros in pairs (the parts of 법정동/행정동 codes are
    two or three digits wide, so 1111010100 and 1111011000 are both 읍면동 rows)."""
    text = str(value)
    return (len(text) - len(text.rstrip("0"))) // 2 if text.isdigit() and len(text) >= 5 else 0


def levels_empty(trials: list[Trial]) -> bool:
    return all(t.result.outcome == "empty" for t in trials) and len({level(t.source_value) for t in trials}) > 1


def row_set(rows: list[dict[str, Any]]) -> set[str]:
    return {repr(sorted((k, str(v)) for k, v in r.items())) for r in rows}


def other_values(param: Any, value: Any) -> list[str]:
    """Up to two values of the same shape as `value` that should select something else: the enumeration's other
    members from its end (the first member is often the catch-all, 전국 or 전체), a date a day before and after,
    the digits shifted by one and by five, or the text reversed."""
    text = str(value if value is not None else "")
    if param is not None and param.enum:
        return [str(e) for e in reversed(param.enum) if str(e) != text][:2]
    if not text:
        return []
    day = _as_date(text)
    if day is not None:  # a date: the day before and after (shifted digits would be no date at all)
        fmt = "%Y-%m-%d" if "-" in text else "%Y%m%d"
        return [(day + timedelta(days=n)).strftime(fmt) for n in (-1, 1)]
    if any(c.isdigit() for c in text):
        return ["".join(str((int(c) + n) % 10) if c.isdigit() else c for c in text) for n in (1, 5)]
    flipped = text[::-1]
    return [flipped] if flipped != text else []


def _as_date(text: str) -> datetime | None:
    """A YYYYMMDD or YYYY-MM-DD date, else None."""
    fmt = "%Y%m%d" if len(text) == 8 and text.isdigit() else "%Y-%m-%d" if len(text) == 10 else None
    try:
        return datetime.strptime(text, fmt) if fmt else None
    except ValueError:
        return None


def same_answer(a: CallResult, b: CallResult) -> bool:
    return a.response_hash == b.response_hash or row_set(a.items) == row_set(b.items)


def kinds(trials: list[Trial]) -> str:
    """Which kinds of source values worked: ' (digits10 2/3, hangul 1/1)'."""
    kinds: dict[str, list[int]] = {}
    for t in trials:
        if not t.result.definitive:
            continue
        k = kinds.setdefault(value_shape(str(t.source_value)), [0, 0])
        k[0] += t.result.ok
        k[1] += 1
    return " (" + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(kinds.items())) + ")" if kinds else ""


@dataclass
class Trial:
    source_value: Any
    inputs: dict[str, Any]
    result: CallResult
    #: The source row the value was drawn from (what echo consistency compares the answer with).
    row: dict[str, Any] = field(default_factory=dict)
    #: The source rows (one per distinct value of the linked field) the trial's value was drawn among.
    pool: list[dict[str, Any]] = field(default_factory=list)
    source_field: str = ""


def _echoes(rows: list[dict[str, Any]], inputs: dict[str, Any]) -> dict[str, list[str]]:
    """For each input, the fields of the answer that carry its value in every row (the provider echoing the
    parameter), those named like the parameter first."""
    out: dict[str, list[str]] = {}
    if not rows:
        return out
    for name, value in inputs.items():
        text = str(value).strip()
        if not text or isinstance(value, list | dict):
            continue
        fields = [f for f in rows[0] if all(str(r.get(f, "")).strip() == text for r in rows)]
        if fields:
            out[name] = sorted(fields, key=lambda f: norm(f) != norm(name))
    return out


def _class(value: Any) -> tuple[str, int]:
    text = str(value if value is not None else "")
    return value_shape(text), level(text)


def entities(trials: list[Trial], ok: bool = False) -> int:
    """Distinct entities among the values tried (those that worked, with ok)."""
    return len({entity(t.source_value) for t in trials if t.result.ok or not ok})


def spread(trials: list[Trial]) -> int:
    """How many entities the source offered of the kinds of value that worked (a value's shape and level): one
    where every row is of one province, or only one 시군구 code among 시도 codes the target does not take."""
    first = next((t for t in trials if t.pool), None)
    if first is None:
        return 0
    values = [r.get(first.source_field) for r in first.pool]
    kinds = {_class(t.source_value) for t in trials if t.result.ok}
    return max((len({entity(v) for v in values if _class(v) == k}) for k in kinds), default=0)


def swapped(link: LinkRecord, trial: Trial) -> str | None:
    """A value that lands in another field: the answer echoes the linked parameter as one field and carries the
    source field's own name as the echo of another parameter (`ny` fed into `nx` of a service that echoes both:
    every grid value answers, but the rows say the value was taken as nx, and ny has its own parameter)."""
    pname = link.target_param.split(":", 1)[1]
    src = link.source_field
    rows = trial.result.items
    echoes = _echoes(rows, {k: v for k, v in trial.inputs.items() if k not in PAGE_SIZE_PARAMS})
    mine = echoes.get(pname)
    if not mine or not rows or src not in rows[0]:
        return None
    landed = mine[0]
    if norm(landed) == norm(src):
        return None
    for other, fields in echoes.items():
        if other != pname and norm(other) == norm(src) and src in fields:
            return (
                f"the value of {src} lands in {landed}: the answer echoes {pname} as {landed} and {other} as "
                f"{src}, so {src} feeds {other}, not {pname}"
            )
    return None


_CODE_END = re.compile(r"_?(cd|code|id|no)$", re.IGNORECASE)
_NAME_END = re.compile(r"_?(nm|name)$", re.IGNORECASE)


def _name_of(code_field: str, field_name: str) -> bool:
    """`field_name` names what `code_field` codes, by the standard terms' Cd/Nm pairing (ctprvnCd/ctprvnNm,
    sido_cd/sido_nm, stationCode/stationName)."""
    stem_ = _CODE_END.sub("", code_field)
    return (
        bool(stem_)
        and stem_ != code_field
        and _NAME_END.sub("", field_name).lower() == stem_.lower()
        and (_NAME_END.search(field_name) is not None)
    )


def _dependent_fields(rows: list[dict[str, Any]], field_name: str) -> list[str]:
    """The name fields of the source rows that the linked code names (ctprvnCd 26 → ctprvnNm 부산광역시): one
    value of the code, one value of the name, two values or more."""
    seen: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for row in rows:
        key = str(row.get(field_name, ""))
        if not key:
            continue
        for f, v in row.items():
            if f != field_name and not isinstance(v, list | dict) and str(v).strip():
                seen[f][key].add(str(v).strip())
    out = []
    for f, by_key in seen.items():
        values = set().union(*by_key.values())
        if (
            _name_of(field_name, f)
            and len(by_key) >= 2
            and len(values) >= 2
            and all(len(v) == 1 for v in by_key.values())
        ):
            out.append(f)
    return out


def coincides(link: LinkRecord, trials: list[Trial]) -> str | None:
    """Codes of two systems that coincide for some entities only: the answers carry a field of the source's
    entity (the same name, one value per answer), which agrees with the source row for one entity and names
    another entity for another (a legal-dong 시도 code 11 is 서울 to the statistics agency as well, but 26 is
    부산 in one system and 울산 in the other)."""
    pool = next((t.pool for t in trials if t.pool), [])
    dependent = _dependent_fields(pool, link.source_field)
    if not dependent:
        return None
    inputs = {str(v).strip() for t in trials for v in t.inputs.values()}
    for f in dependent:
        agree: list[str] = []
        differ: list[tuple[str, str, str]] = []
        if value_shape(str(pool[0].get(f, ""))) != "hangul":
            continue  # names are one across systems; codes are what differs between them
        for t in trials:
            if not t.result.ok or f not in t.row or f not in t.result.items[0]:
                continue
            got = {str(r.get(f, "")).strip() for r in t.result.items}
            if len(got) != 1:
                continue
            answer, own = got.pop(), str(t.row[f]).strip()
            if answer in inputs and answer != own:
                continue  # the echo of another input, not a statement about the entity
            if answer == own:
                agree.append(str(t.source_value))
            else:
                differ.append((str(t.source_value), own, answer))
        if agree and differ:
            value, own, answer = differ[0]
            return (
                f"the codes coincide for some entities only: for {link.source_field}={agree[0]} the answer's {f} "
                f"is the source's, for {link.source_field}={value} it is {answer!r} where the source says {own!r}"
            )
    return None


def undocumented(link: LinkRecord, trials: list[Trial], codes: frozenset[str]) -> str | None:
    """Codes of two systems that coincide for some entities only, told apart by the target's own document: it lists
    its codes as a whole table ("권역코드 (31: 수도권, 32: 강원권, ...)"), a value tried that the table does not
    list failed and one it lists worked (an agency's own 시도 numbering equals the legal-dong code for 서울, 11,
    and has no 26 at all). None when the target lists no codes or the values tried tell nothing."""
    if not codes:
        return None
    pname = link.target_param.split(":", 1)[1]
    tried = [t for t in trials if t.result.definitive and pname in t.inputs]
    missing = [t for t in tried if str(t.inputs[pname]) not in codes and not t.result.ok]
    worked = [t for t in tried if str(t.inputs[pname]) in codes and t.result.ok]
    if not (missing and worked):
        return None
    return (
        f"the codes coincide for some entities only: {pname}={worked[0].inputs[pname]} worked, but "
        f"{pname}={missing[0].inputs[pname]} (from {link.source_field}={missing[0].source_value}) is no code the "
        f"target's document lists, and it answered {missing[0].result.outcome}"
    )


#: How levels coincide is said in a refutation's reason; `level_alternative` reads it back.
LEVELS_REASON = "the codes agree at coarser levels only"
#: Failures at the finest level a 10-digit region code was tried at, with none working there, before the code is
#: taken to agree with the target's only at coarser levels.
FINE_FAILURES = 2


def fine_level(trials: list[Trial]) -> bool:
    """Whether the trials so far are those of a 10-digit region code passed as is that failed at its finest level
    (읍면동) and worked at a coarser one (시군구, 시도): one more value of the finest level tells whether the codes
    agree at the coarser levels only (`levels_coincide`)."""
    tried = [t for t in trials if t.result.definitive]
    values = [str(t.source_value) for t in tried]
    if not tried or not all(v.isdigit() and len(v) == 10 for v in values):
        return False
    finest = min(level(v) for v in values)
    fine = [t for t in tried if level(t.source_value) == finest]
    return finest < 2 and not any(t.result.ok for t in fine) and any(t.result.ok for t in tried if t not in fine)


def levels_coincide(link: LinkRecord, trials: list[Trial]) -> str | None:
    """A 10-digit region code passed as is that works for 시도 and 시군구 codes and fails for every 읍면동 code tried
    (at least FINE_FAILURES): the target's codes agree with the source's at the coarser levels only (행정동 codes
    are the 법정동 codes for 시도 and 시군구, not below), so the link does not hold for the
    source's rows. None for any other transform or pattern."""
    if link.transform.get("kind", "identity") != "identity" or not fine_level(trials):
        return None
    tried = [t for t in trials if t.result.definitive]
    finest = min(level(str(t.source_value)) for t in tried)
    fine = [t for t in tried if level(str(t.source_value)) == finest]
    coarse = next(t for t in tried if t.result.ok)
    if len(fine) < FINE_FAILURES:
        return None
    return (
        f"{LEVELS_REASON}: {link.source_field}={coarse.source_value} worked, but "
        f"{', '.join(str(t.source_value) for t in fine[:3])} of the finest level answered "
        f"{fine[0].result.outcome}; the target's codes are not the source's below the 시군구 level"
    )


def level_alternative(verdict: LinkRecord) -> LinkRecord | None:
    """For a link refuted because the codes agree at coarser levels only, the same endpoints with the row's
    시군구-level code (`sgg_level`): the level at which the two systems are one. None for any other verdict."""
    if verdict.status != "refuted" or not verdict.reason.startswith(LEVELS_REASON):
        return None
    transform: dict[str, Any] = {"kind": "sgg_level"}
    target_param = verdict.target_param
    return LinkRecord(
        id=link_id(verdict.source_tool, verdict.source_field, verdict.target_tool, target_param, transform),
        source_tool=verdict.source_tool,
        source_field=verdict.source_field,
        target_tool=verdict.target_tool,
        target_param=target_param,
        transform=transform,
        score=round(verdict.score * 0.95, 4),
    )


def vocabularies(link: LinkRecord, source_values: list[str], target_values: list[str]) -> str | None:
    """Names of one closed vocabulary fed into a parameter whose own values are of another that shares some words:
    every sampled value of the source field is a 시군구 (or full 시도) name, while the values the target's API
    answers under the parameter's name are names of which some are such names and at least two are not (AirKorea
    names its stations after the 구 in Seoul and after the 동 elsewhere; a weather station may carry its city's
    name). The link works where the two vocabularies share a word and nowhere else, so trials of the shared words
    prove nothing. None for a transform other than identity, or when the target's values tell nothing (fewer than
    three, or none shared, or text that is no single name, such as addresses)."""
    if link.transform.get("kind", "identity") != "identity":
        return None
    kind = value_concepts(source_values)
    if kind and not all(value_concepts([v]) >= kind for v in source_values):
        return None  # value_concepts reads the first values only: every one must be a region name
    theirs = list(dict.fromkeys(str(v).strip() for v in target_values if str(v).strip()))
    if not kind or len(theirs) < 3 or any(value_shape(v) != "hangul" or " " in v for v in theirs):
        return None
    shared = [v for v in theirs if value_concepts([v]) >= kind]
    apart = [v for v in theirs if not value_concepts([v]) >= kind]
    if not shared or len(apart) < 2:
        return None
    pname = link.target_param.split(":", 1)[1]
    return (
        f"the vocabularies coincide on some words only: every value of {link.source_field} is a region name "
        f"({', '.join(dict.fromkeys(source_values[:3]))}), but the target's own values of {pname} include "
        f"{', '.join(apart[:3])}, which are none; the two meet on {', '.join(shared[:3])} only"
    )


_ZEROS = re.compile(r"^0{2,}$")
#: Distinct sampled records a zero-padded zero must fill before it is read as the field's blank.
BLANK_RECORDS = 3


def blank_numbering(link: LinkRecord, rows: list[dict[str, Any]], enumerated: bool) -> str | None:
    """A zero-padded number that is zero in every one of several distinct records (roadNmBubun 00000 in every deal):
    the field's blank, "no sub-number", which every numbering writes the same way, so a target of another
    numbering (a lot's sub-number) takes it too and no value of the field can tell the two apart. None when the
    target's parameter is enumerated (0 is then one category among others), or a record has another value."""
    if enumerated:
        return None
    values = [str(r.get(link.source_field, "")).strip() for r in rows if link.source_field in r]
    if len(row_set([r for r in rows if link.source_field in r])) < BLANK_RECORDS or not values:
        return None
    if not all(_ZEROS.match(v) for v in values):
        return None
    return (
        f"no value tells: {link.source_field} is {values[0]} in every one of its {len(values)} sampled records, "
        "the blank of a zero-padded numbering, which every numbering shares"
    )


def elsewhere(link: LinkRecord, worked: Trial, others: list[Trial], names: dict[str, str]) -> str | None:
    """Codes of a source that numbers places its own way, told apart from the target's where they differ: the value
    sampled worked, but the codes the source's own document gives for other places (`names`: code -> place),
    through the same transform, all failed definitively (an agency's 220000 인천 sliced to 22, where the 법정동
    code of 인천 is 28). None when one of them worked, or a call failed transiently (the engine retries it)."""
    if not others or not all(t.result.definitive and not t.result.ok for t in others):
        return None
    pname = link.target_param.split(":", 1)[1]
    tried = ", ".join(
        f"{t.source_value} ({names.get(str(t.source_value), '?')}) as {pname}={t.inputs.get(pname)}: {t.result.outcome}"
        for t in others
    )
    return (
        f"the codes coincide for the sampled place only: {link.source_field}={worked.source_value} "
        f"({names.get(str(worked.source_value), '?')}) worked, but the other places the source's document codes "
        f"answered otherwise ({tried})"
    )


def _sido(word: str) -> str | None:
    """The short form of a 시도 name, full or short, current or former (서울특별시, 서울 → 서울)."""
    if word in regions.SIDO:
        return regions.SIDO[word]
    if word in regions.FORMER_SIDO:
        return regions.FORMER_SIDO[word][0]
    shorts = set(regions.SIDO.values()) | {short for short, _ in regions.FORMER_SIDO.values()}
    return word if word in shorts else None


def place(row: dict[str, Any]) -> tuple[str, str] | None:
    """The (시도, 시군구) a row is about: the first text of it written as an address (a 시도 name, then a 시군구 name:
    "서울특별시 종로구 신교동 526", "인천광역시 남동구 수산로 17-1"). None when no value reads so."""
    for value in row.values():
        if not isinstance(value, str):
            continue
        words = value.split()
        sido = _sido(words[0]) if len(words) >= 2 else None
        if sido and value_concepts([words[1]]) == {"sgg_full"}:
            return sido, words[1]
    return None


def places_named(rows: list[dict[str, Any]]) -> set[str]:
    """The 시도 (short form) and 시군구 names rows are about or list: read off their addresses (`place`), and off
    values that are a place's name (a list of regions: 인천광역시, 남동구)."""
    out: set[str] = set()
    for row in rows:
        out.update(place(row) or ())
        for value in row.values():
            text = value.strip() if isinstance(value, str) else ""
            sido = _sido(text) if text else None
            if sido:
                out.add(sido)
            elif text and " " not in text and value_concepts([text]) == {"sgg_full"}:
                out.add(text)
    return out


def another_place(link: LinkRecord, trials: list[Trial], target_rows: list[dict[str, Any]]) -> str | None:
    """Answers about other places than the one the value came from: the target answers rows of several 시도 (its
    sample), but fed the value of a source row about one place, it answered, for every value that worked, rows
    none of which is about the row's 시군구, nor all about its 시도 (a 읍면동 code's digits read as a 시군구 code:
    10200[2:5] is 200, the 시군구 numbered 200 in each 시도, 서울 성동구, 인천 남동구, 대전 유성구, for a building
    in 서울 종로구). The value selects places in the target's system, and not the source row's. None when one
    value's answer agrees with its row (its 시군구 among the answer's, or a 시도-wide answer in its 시도), or the
    rows or answers name no place."""
    if len({p[0] for r in target_rows if (p := place(r))}) < 2:
        return None
    seen: list[tuple[Trial, tuple[str, str], set[tuple[str, str]]]] = []
    for t in (t for t in trials if t.result.ok):
        mine = place(t.row)
        got = {place(r) for r in t.result.items}
        if mine is None or None in got or not got:
            return None
        answer = {g for g in got if g}
        sidos = {g[0] for g in answer}
        if mine in answer or (sidos == {mine[0]} and len(answer) >= 2):
            return None
        seen.append((t, mine, answer))
    if not seen:
        return None
    t, mine, answer = seen[0]
    pname = link.target_param.split(":", 1)[1]
    return (
        f"the answers are about other places: {link.source_field}={t.source_value} comes from a row about "
        f"{' '.join(mine)}, but {pname}={t.inputs.get(pname)} answered rows about "
        f"{', '.join(' '.join(a) for a in sorted(answer)[:3])} only"
    )
