"""One field -> parameter pair assessed: the transforms that could carry the field's value into the parameter, how
well sampled (or, before any sample, documented) values fit it, and the plausibility score of the best one.
Pure functions; blocking (which pairs are compared at all) lives in graph.candidates."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Container
from dataclasses import dataclass, replace
from typing import Any

from graph import envelopes, providers, transforms
from graph.concepts import CODE_PARTS, Signals, crs_from_values, filtered_norm, signals, value_shape
from graph.models import FieldRecord, ParamRecord, ToolRecord


class _NotLinkable(Container[str]):
    """Parameter names that steer paging or presentation, never data links: the providers' presentation and own
    vocabularies (`graph.providers.never_linked`) and paging names (`graph.envelopes.paging_name`), each read at
    each look-up, so a name added there counts here."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (providers.never_linked(name) or envelopes.paging_name(name))


NON_LINKABLE: Container[str] = _NotLinkable()
#: Concepts too common to be evidence of a link on their own (every record has a date).
WEAK_CONCEPTS = {"date", "year_month"}


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
    #: The codes its description lists as a whole table ("31: 수도권, 32: 강원권, ..."), empty when none.
    codes: frozenset[str] = frozenset()


def link_id(source_tool: str, field: str, target_tool: str, param_key: str, transform: transforms.Transform) -> str:
    raw = json.dumps([source_tool, field, target_tool, param_key, transform], sort_keys=True, ensure_ascii=False)
    return "lk_" + hashlib.sha256(raw.encode()).hexdigest()[:16]


#: A documented code table and observed codes count as evidence of one code system only from this many codes in
#: the table and this many distinct values observed (two codes out of a table of two are no evidence).
MIN_TABLE = 4
MIN_LISTED = 2


def listed(codes: frozenset[str], samples: list[Any]) -> bool:
    """Whether the observed values are several distinct codes, every one listed in a documented table of several
    codes (one agency's region numbers 31 and 34 are in another's table "31: 수도권, 32: 강원권, ..., 34: 호남권"):
    two agencies that number regions alike."""
    values = {str(v).strip() for v in samples if str(v).strip()}
    return len(codes) >= MIN_TABLE and len(values) >= MIN_LISTED and values <= codes


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


_CODE_NAME = re.compile(r"(id|cd|code|ids)$", re.IGNORECASE)


def _kind_fits(value: Any, p: ParamRef) -> bool:
    """What a document says of a parameter's values beyond its schema: a length in digits ("2자리" takes no
    ten-digit code), a code name (`fcltyId`, `ctprvnCd`) takes no Korean name, and an example in Korean script
    (시설명, 예: 도서관) takes no code."""
    if isinstance(value, list):
        return True
    text = str(value).strip()
    shape = value_shape(text)
    if p.sig.length and text.isdigit() and len(text) != p.sig.length:
        return False
    if shape == "hangul" and (_CODE_NAME.search(p.param.name) or (p.sig.length and not p.example)):
        return False
    if p.example not in (None, ""):
        want = value_shape(str(p.example))
        if (want == "hangul") != (shape == "hangul"):
            return False
    return True


_NAME_NAME = re.compile(r"(nm|name)$", re.IGNORECASE)


def _declared_fit(t: transforms.Transform, f: FieldRef, p: ParamRef) -> bool:
    """Before any value is seen, what the documents say: a field of ten digits ("10자리") passed as is does not
    fit a two-digit parameter; an identifier or code (`fcltyId`) does not fit a parameter whose example is a name
    in Korean script; a name (`ctprvnNm`) does not fit a code parameter."""
    if t.get("kind") != "identity":
        return True
    if f.sig.length and p.sig.length and f.sig.length != p.sig.length:
        return False
    example_hangul = p.example not in (None, "") and value_shape(str(p.example)) == "hangul"
    if _CODE_NAME.search(f.field.name) and example_hangul:
        return False
    return not (_NAME_NAME.search(f.field.name) and _CODE_NAME.search(p.param.name) and not example_hangul)


def _fit_ratio(t: transforms.Transform, f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> float | None:
    if not rows:
        return None if _declared_fit(t, f, p) else 0.0
    ok = 0
    for row in rows[:6]:
        with contextlib.suppress(transforms.TransformError):
            out = transforms.apply(t, row.get(f.field.name), row)
            ok += _fits(out, p.sig) and _kind_fits(out, p)
    return ok / min(len(rows), 6)


def _pair_field(f: FieldRef, crs: str) -> str | None:
    for other in f.tool.fields:
        if other.name == f.field.name:
            continue
        s = signals(other.name, other.description, other.type)
        if s.axis and s.axis != f.sig.axis and (s.crs == crs or s.crs is None) and s.stem == f.sig.stem:
            return other.name
    return None


def _transforms(f: FieldRef, p: ParamRef, sample_len: int | None) -> list[transforms.Transform]:
    """Plausible transforms, most specific first."""
    fs, ps = f.sig, p.sig
    out: list[transforms.Transform] = []
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
    wants = name_form(p.example) if p.example else None
    if wants is None and ps.enum:
        wants = (
            "sido_short"
            if set(ps.enum) & set(transforms.SIDO_LONG)
            else "sido_long"
            if set(ps.enum) & set(transforms.SIDO_SHORT)
            else None
        )
    if wants is not None:
        # a province name in the form the parameter documents (AirKorea's sidoName takes 서울, not 서울특별시)
        out.append({"kind": "map", "table": wants})
    out.append(dict(transforms.IDENTITY))
    unique: list[transforms.Transform] = []
    for t in out:
        if t not in unique:
            unique.append(t)
    return unique


def name_form(value: Any) -> str | None:
    """The table whose values a province name is written in: `sido_short` (서울, 강원) or `sido_long`
    (서울특별시, 강원특별자치도); None for any other value."""
    text = str(value or "").strip()
    if text in transforms.SIDO_LONG:
        return "sido_short"
    if text in transforms.SIDO_SHORT:
        return "sido_long"
    return None


CODE_FAMILY = {"bjd_code", "sgg_code", "sido_code", "sgg3_code", "umd_code", "zip", "road_code"}


def _prior(t: transforms.Transform, ps: Signals) -> float:
    """How natural a transform is, before looking at values."""
    kind = t.get("kind")
    if kind == "identity":
        return 1.0
    if kind == "slice":
        hinted = (
            (ps.head and t.get("start") == 0 and t.get("end") == ps.head)
            or (ps.span and (t.get("start"), t.get("end")) == ps.span)
            or (ps.tail and t.get("end", 0) - t.get("start", 0) == ps.tail and t.get("start", 0) > 0)
        )
        part = any(CODE_PARTS[c] == (t.get("start"), t.get("end")) for c in ps.concepts & set(CODE_PARTS))
        return 0.97 if hinted else 0.92 if part else 0.8
    return 0.95


def assess(f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> tuple[float, transforms.Transform] | None:
    """Score one field -> parameter pair and choose its transform (None when implausible)."""
    fs, ps = f.sig, p.sig
    name = (
        1.0
        if fs.norm in (ps.norm, filtered_norm(ps.name))
        else (0.6 * len(fs.tokens & ps.tokens) / len(fs.tokens | ps.tokens) if fs.tokens and ps.tokens else 0.0)
    )
    shared = (fs.concepts & ps.concepts) - WEAK_CONCEPTS
    concept = min(0.95, 0.85 + 0.05 * (len(shared) - 1)) if shared else 0.0
    if "bjd_code" in fs.concepts and ps.concepts & set(CODE_PARTS) and not (fs.concepts & set(CODE_PARTS)):
        concept = max(concept, 0.8)
    elif not shared and fs.concepts & CODE_FAMILY and ps.concepts & CODE_FAMILY:
        concept *= 0.6
    samples = [r.get(f.field.name) for r in rows if r.get(f.field.name) not in (None, "")]
    if fs.crs is None and samples and ps.crs:
        guessed = crs_from_values([str(s) for s in samples[:6]])
        if guessed:  # for this pair only: field signals are shared between the parameters a field is compared with
            fs = replace(fs, crs=guessed, axis=fs.axis or ps.axis)
            f = replace(f, sig=fs)
    coord = 0.8 if fs.crs and ps.crs and fs.axis and fs.axis == ps.axis else 0.0
    # meaning: the same leading phrase in both descriptions (or an odcloud column), or shared specific Korean
    # words when the observed codes, stripped of their constant prefix, take the parameter's documented shape
    sense = 0.85 if f.phrases & p.phrases else 0.0
    strip: transforms.Transform | None = None
    if f.prefix and (p.example or ps.pattern) and (f.words & p.words or f.phrases & p.phrases or name == 1.0):
        strip = {"kind": "slice", "start": len(f.prefix)}
        sense = max(sense, 0.7)
    if listed(p.codes, samples):
        sense = max(sense, 0.8)  # every observed code is one the target's table documents (and there are several)
    base = max(name, concept, coord, sense)
    if base <= 0:
        return None
    lengths = [len(str(s)) for s in samples if str(s).isdigit()]
    sample_len = max(set(lengths), key=lengths.count) if lengths else None
    options = _transforms(f, p, sample_len)
    if strip is not None:
        options.insert(0, strip)
    scored: list[tuple[float, transforms.Transform, bool]] = []
    for rank, t in enumerate(options):
        fit = _fit_ratio(t, f, p, rows)
        if fit == 0.0:
            continue
        quality = 0.75 if fit is None else 0.5 + 0.5 * fit
        # a constant prefix the values show is as good a hint as a documented slice
        prior = 0.97 if t is strip else _prior(t, ps)
        score = round(base * quality * prior - 0.01 * rank, 4)
        shaped = False
        if p.example not in (None, "") and samples:
            try:
                out = transforms.apply(t, samples[0], rows[0])
                shaped = not isinstance(out, list) and value_shape(str(out)) == value_shape(str(p.example))
                if shaped:
                    score = round(min(1.0, score + 0.08), 4)
                wanted, got = name_form(p.example), name_form(out)
                if wanted and got and wanted != got:
                    score = round(score - 0.2, 4)  # 서울특별시 where the document shows 서울
            except transforms.TransformError:
                pass
        scored.append((score, t, shaped))
    if any(shaped for _, _, shaped in scored):
        # where one transform gives the parameter's documented (or echoed) form, the others do not: K123456
        # where the target's own rows show 123456
        scored = [(s if shaped else round(s - 0.1, 4), t, shaped) for s, t, shaped in scored]
    best: tuple[float, transforms.Transform] | None = None
    for score, t, _ in scored:
        if best is None or score > best[0]:
            best = (score, t)
    return best
