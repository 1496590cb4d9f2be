"""Candidate links: which output field of one tool may feed which input parameter of another, with the value
transform it needs and a plausibility score. Pure functions; execution decides later.

Scaling: fields are only compared with parameters that share a blocking key (normalised name, a concept tag, a
coordinate axis, a name token). Keys shared by too many parameters are dropped from blocking (they stay in
scoring), so the work grows with the size of the blocks, not with tools squared.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graph import meaning as M
from graph import transforms as T
from graph.concepts import CODE_PARTS, Signals, crs_from_values, signals, value_shape
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord

#: Parameters that steer paging or presentation, never data links.
NON_LINKABLE = {"pageNo", "numOfRows", "currentPage", "countPerPage", "MobileOS", "MobileApp", "arrange", "ver",
                "hstryYn", "firstSort", "addInfoYn", "lDongListYn", "dataTerm", "_type", "dataType", "returnType",
                "resultType", "type"}
WEAK_CONCEPTS = {"date", "year_month"}
#: Blocks larger than these are skipped for blocking (constants, so work stays linear in the number of fields):
#: name tokens are weak evidence, concept and coordinate blocks strong.
MAX_TOKEN_BLOCK = 150
MAX_BLOCK = 2000
MIN_SCORE = 0.4


@dataclass
class FieldRef:
    tool: ToolRecord
    field: FieldRecord
    sig: Signals
    phrases: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    prefix: str | None = None


@dataclass
class ParamRef:
    tool: ToolRecord
    param: ParamRecord
    sig: Signals
    phrases: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    example: str | None = None


def link_id(source_tool: str, field: str, target_tool: str, param_key: str, transform: T.Transform) -> str:
    raw = json.dumps([source_tool, field, target_tool, param_key, transform], sort_keys=True, ensure_ascii=False)
    return "lk_" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def _param_keys(s: Signals) -> set[str]:
    keys = {f"n:{s.norm}"} | {f"c:{c}" for c in s.concepts - WEAK_CONCEPTS} | {f"t:{t}" for t in s.tokens}
    if s.crs and s.axis:
        keys.add(f"xy:{s.axis}")
    for concept in s.concepts & set(CODE_PARTS):
        keys.add("c:bjd_code")  # a part of a 법정동코드 can come from a whole one
        keys.add(f"c:{concept}")
    return keys


def _field_keys(s: Signals) -> set[str]:
    keys = {f"n:{s.norm}"} | {f"c:{c}" for c in s.concepts - WEAK_CONCEPTS} | {f"t:{t}" for t in s.tokens}
    if s.crs and s.axis:
        keys.add(f"xy:{s.axis}")
    return keys


def _fits(value: Any, p: Signals) -> bool:
    if isinstance(value, list):
        return all(_fits(v, p) for v in value) and bool(value)
    text = str(value)
    if p.enum and text not in p.enum:
        return False
    if p.pattern:
        try:
            if not re.fullmatch(p.pattern.strip("^$"), text):
                return False
        except re.error:
            pass
    if p.type == "integer" and not re.fullmatch(r"-?\d+", text):
        return False
    return not (p.type == "number" and not re.fullmatch(r"-?\d+(\.\d+)?", text))


def _fit_ratio(t: T.Transform, f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> float | None:
    if not rows:
        return None
    ok = 0
    for row in rows[:6]:
        with contextlib.suppress(T.TransformError):
            ok += _fits(T.apply(t, row.get(f.field.name), row), p.sig)
    return ok / min(len(rows), 6)


def _pair_field(f: FieldRef, crs: str) -> str | None:
    for other in f.tool.fields:
        if other.name == f.field.name:
            continue
        s = signals(other.name, other.description, other.type)
        if s.axis and s.axis != f.sig.axis and (s.crs == crs or s.crs is None) and s.stem == f.sig.stem:
            return other.name
    return None


def _transforms(f: FieldRef, p: ParamRef, sample_len: int | None) -> list[T.Transform]:
    """Plausible transforms, most specific first."""
    fs, ps = f.sig, p.sig
    out: list[T.Transform] = []
    if ps.is_array and not fs.is_array:
        return [{"kind": "wrap_list"}]
    if fs.crs and ps.crs and fs.axis and ps.axis == fs.axis and fs.crs != "KMA_GRID" and fs.crs != ps.crs:
        pair = _pair_field(f, fs.crs)
        if pair:
            out.append({"kind": "coord", "src": fs.crs, "dst": ps.crs, "axis": fs.axis, "pair": pair})
        return out
    length = sample_len or fs.length
    if ps.length and length and ps.length != length and (f.field.type != "number"):
        if length > ps.length:
            if ps.span and ps.span[1] - ps.span[0] == ps.length:
                out.append({"kind": "slice", "start": ps.span[0], "end": ps.span[1]})
            elif ps.tail:
                out.append({"kind": "slice", "start": length - ps.tail, "end": length})
            elif ps.head:
                out.append({"kind": "slice", "start": 0, "end": ps.head})
            for concept in ps.concepts & set(CODE_PARTS):
                if "bjd_code" in fs.concepts and length == 10:
                    a, b = CODE_PARTS[concept]
                    if b - a == ps.length:
                        out.append({"kind": "slice", "start": a, "end": b})
            out.append({"kind": "slice", "start": 0, "end": ps.length})
        elif ps.pads or {"jibun_main", "jibun_sub"} & fs.concepts & ps.concepts:
            out.append({"kind": "zfill", "width": ps.length})
    if ps.enum and T.SIDO_SHORT.keys() and set(ps.enum) & set(T.SIDO_SHORT.values()):
        out.append({"kind": "map", "table": "sido_short"})
    out.append(dict(T.IDENTITY))
    unique: list[T.Transform] = []
    for t in out:
        if t not in unique:
            unique.append(t)
    return unique


CODE_FAMILY = {"bjd_code", "sgg_code", "sido_code", "sgg3_code", "umd_code", "zip", "road_code"}


def _prior(t: T.Transform, ps: Signals) -> float:
    """How natural a transform is, before looking at values."""
    kind = t.get("kind")
    if kind == "identity":
        return 1.0
    if kind == "slice":
        hinted = (ps.head and t.get("start") == 0 and t.get("end") == ps.head) or (
            ps.span and (t.get("start"), t.get("end")) == ps.span) or (ps.tail and t.get("end", 0) - t.get("start", 0) == ps.tail and t.get("start", 0) > 0)
        part = any(CODE_PARTS[c] == (t.get("start"), t.get("end")) for c in ps.concepts & set(CODE_PARTS))
        return 0.97 if hinted else 0.92 if part else 0.8
    return 0.95


def assess(f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> tuple[float, T.Transform] | None:
    """Score one field -> parameter pair and choose its transform (None when implausible)."""
    fs, ps = f.sig, p.sig
    name = 1.0 if fs.norm == ps.norm else (0.6 * len(fs.tokens & ps.tokens) / len(fs.tokens | ps.tokens)
                                          if fs.tokens and ps.tokens else 0.0)
    shared = (fs.concepts & ps.concepts) - WEAK_CONCEPTS
    concept = min(0.95, 0.85 + 0.05 * (len(shared) - 1)) if shared else 0.0
    if "bjd_code" in fs.concepts and ps.concepts & set(CODE_PARTS) and not (fs.concepts & set(CODE_PARTS)):
        concept = max(concept, 0.8)
    elif not shared and fs.concepts & CODE_FAMILY and ps.concepts & CODE_FAMILY:
        concept *= 0.6
    coord = 0.8 if fs.crs and ps.crs and fs.axis and fs.axis == ps.axis else 0.0
    # meaning: the same leading phrase in both descriptions (or an odcloud column), or shared specific Korean
    # words when the observed codes, stripped of their constant prefix, take the parameter's documented shape
    sense = 0.85 if f.phrases & p.phrases else 0.0
    strip: T.Transform | None = None
    if f.prefix and (p.example or ps.pattern) and (f.words & p.words or f.phrases & p.phrases):
        strip = {"kind": "slice", "start": len(f.prefix)}
        sense = max(sense, 0.7)
    base = max(name, concept, coord, sense)
    if base <= 0:
        return None
    samples = [r.get(f.field.name) for r in rows if r.get(f.field.name) not in (None, "")]
    lengths = [len(str(s)) for s in samples if str(s).isdigit()]
    sample_len = max(set(lengths), key=lengths.count) if lengths else None
    if fs.crs is None and samples and ps.crs:
        guessed = crs_from_values([str(s) for s in samples[:6]])
        if guessed:
            fs.crs, fs.axis = guessed, fs.axis or ps.axis
    best: tuple[float, T.Transform] | None = None
    options = _transforms(f, p, sample_len)
    if strip is not None:
        options.insert(0, strip)
    for rank, t in enumerate(options):
        fit = _fit_ratio(t, f, p, rows)
        if fit == 0.0:
            continue
        quality = 0.75 if fit is None else 0.5 + 0.5 * fit
        score = round(base * quality * _prior(t, ps) - 0.01 * rank, 4)
        if p.example not in (None, "") and samples:
            try:
                out = T.apply(t, samples[0], rows[0])
                if not isinstance(out, list) and value_shape(str(out)) == value_shape(str(p.example)):
                    score = round(min(1.0, score + 0.08), 4)
            except T.TransformError:
                pass
        if best is None or score > best[0]:
            best = (score, t)
    return best


def _drills(p: ParamRef) -> bool:
    """A tool's own output may feed its own filter only where the document says the filter narrows the answer
    ("없으면 시도 목록": a 시도명 out of the 시도 list drills down) or that a filter is needed (a search by a name
    it returns)."""
    if p.param.required:
        return False
    return M.narrows(p.param.description) or (
        not any(q.required for q in p.tool.params) and M.needs_filter(p.tool.summary, p.tool.description))


def derive_candidates(
    tools: list[ToolRecord],
    samples: Mapping[str, list[dict[str, str]]] | None = None,
    *,
    min_score: float = MIN_SCORE,
    stats: dict[str, int] | None = None,
) -> list[LinkRecord]:
    """Propose links between tools. `samples` maps a tool name to rows actually observed in its responses."""
    samples = samples or {}
    params: list[ParamRef] = []
    for t in tools:
        for prm in t.params:
            if prm.name in NON_LINKABLE or (t.format_param and prm.name == t.format_param.split("=")[0]):
                continue
            params.append(ParamRef(t, prm, signals(prm.name, prm.description, prm.type, pattern=prm.pattern,
                                                   enum=prm.enum),
                                   frozenset(M.phrases(prm.name, prm.description)),
                                   frozenset(M.korean_words(prm.description)),
                                   M.example_of(prm.example, prm.description)))
    index: dict[str, list[int]] = defaultdict(list)
    for i, pr in enumerate(params):
        for key in _param_keys(pr.sig) | {f"d:{ph}" for ph in pr.phrases} | {f"w:{w}" for w in pr.words}:
            index[key].append(i)
    comparisons = 0
    out: list[LinkRecord] = []
    for t in tools:
        rows = samples.get(t.name, [])
        for fld in t.fields:
            values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
            fr = FieldRef(t, fld, signals(fld.name, fld.description, fld.type),
                          frozenset(M.phrases(fld.name, fld.description)), frozenset(M.korean_words(fld.description)),
                          M.common_prefix(values))
            seen: set[int] = set()
            keys = _field_keys(fr.sig) | {f"d:{ph}" for ph in fr.phrases}
            if fr.prefix:
                keys |= {f"w:{w}" for w in fr.words}
            for key in keys:
                block = index.get(key, [])
                if (key[:2] in ("t:", "w:") and len(block) > MAX_TOKEN_BLOCK) or (len(block) > MAX_BLOCK and not key.startswith("n:")):
                    continue
                seen.update(block)
            for i in seen:
                pr = params[i]
                if pr.tool.name == t.name and not _drills(pr):
                    continue
                comparisons += 1
                verdict = assess(fr, pr, rows)
                if verdict is None or verdict[0] < min_score:
                    continue
                score, transform = verdict
                out.append(LinkRecord(
                    id=link_id(t.name, fld.name, pr.tool.name, pr.param.key(), transform),
                    source_tool=t.name, source_field=fld.name, target_tool=pr.tool.name,
                    target_param=pr.param.key(), transform=transform, score=score,
                ))
    out.extend(_date_links(tools, samples, out, min_score))
    if stats is not None:
        stats["fields"] = sum(len(t.fields) for t in tools)
        stats["params"] = len(params)
        stats["comparisons"] = comparisons
        stats["candidates"] = len(out)
    out.sort(key=lambda lk: (-lk.score, lk.id))
    return out


#: Date links proposed per (source tool, target tool): a record's own dates only.
MAX_DATE_LINKS = 2


def _date_links(tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]], found: list[LinkRecord],
                min_score: float) -> list[LinkRecord]:
    """A date of a record into a required date parameter of a tool that the same record already feeds through a
    required parameter (a company's founding date as the reference date of that company's history), with the
    format transform. Dates alone are no evidence (any date fits any date parameter), so a date link is proposed
    only beside an entity link from the same source; the pair is then called jointly."""
    by_name = {t.name: t for t in tools}
    feeds: dict[tuple[str, str], set[str]] = defaultdict(set)
    for lk in found:
        target = by_name.get(lk.target_tool)
        param = next((p for p in target.params if p.key() == lk.target_param), None) if target else None
        if param is not None and param.required:
            feeds[(lk.source_tool, lk.target_tool)].add(param.name)
    out: list[LinkRecord] = []
    for (source_name, target_name), fed in sorted(feeds.items()):
        source, target = by_name[source_name], by_name[target_name]
        rows = samples.get(source_name, [])
        dates = []
        for fld in source.fields:
            values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
            fmt = M.date_format(fld.description, None, None, values) if M.is_date(fld.name, fld.description) else None
            if fmt:
                dates.append((fld, fmt))
        for prm in target.params:
            if not prm.required or prm.name in fed or not M.is_date(prm.name, prm.description, prm.format):
                continue
            dst = M.date_format(prm.description, prm.format, prm.pattern, [])
            if dst is None:
                continue
            for fld, src in dates[:MAX_DATE_LINKS]:
                transform: T.Transform = dict(T.IDENTITY) if src == dst else {"kind": "date", "src": src, "dst": dst}
                score = 0.6
                if score < min_score:
                    continue
                out.append(LinkRecord(id=link_id(source_name, fld.name, target_name, prm.key(), transform),
                                      source_tool=source_name, source_field=fld.name, target_tool=target_name,
                                      target_param=prm.key(), transform=transform, score=score))
    return out
