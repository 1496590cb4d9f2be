"""Candidate links: which output field of one tool may feed which input parameter of another, with the value
transform it needs and a plausibility score. Pure functions; execution decides later.

Scaling: fields are only compared with parameters that share a blocking key (normalised name, a concept tag, a
coordinate axis, a name token, a description phrase). Name-token keys shared by too many parameters are dropped
from blocking (they stay in scoring).

Blocks are capped before any pair is scored, so derivation is bounded by the number of parameters, not by the size
of the largest block. In a large vendor document every record has `id`, `name`, `status`, `createdAt`...: such a
name links every operation to every other one (millions of pairs inside one document, nearly all nonsense), and the
size of its block is itself the evidence that the name is generic. A key shared by at most FULL_BLOCK fields and
FULL_BLOCK parameters is compared in full, as before. Past that:

* a name key (the normalised name, its tokens) only pairs a parameter with fields of the same resource of the
  same API: a generic name means something only inside its record, so the plausible links are the CRUD ones (the
  `id` a list or create of /things returns into the `{id}` of /things/{id}, a record's `status` into its own
  update), at most NAME_SHORTLIST of them, entry points (a list, a search: reads callable without a value from
  elsewhere) before the rest and nearest in the document first;
* a meaning key (a concept tag, a coordinate axis, a description's phrase or specific word) may cross documents
  (a 법정동코드 of one provider feeds a region filter of another), but only SHORTLIST fields of the same resource
  and SHORTLIST spread over the other APIs (one field of each API before a second of any), weighted down IDF-like
  by the block's size; a cross-document link through a generic name needs such a shared meaning to be proposed.

Below the cap as above it, a name that ends in `id` (id, userId, user_id) is a key its provider mints for its own
records: it links across documents only with a shared meaning, never by the name alone.

Each parameter then keeps its PER_PARAM best sources, so the candidates are O(parameters x PER_PARAM) and the
comparisons O(parameters x keys x SHORTLIST).
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from graph import meaning as M
from graph import transforms as T
from graph.concepts import CODE_PARTS, Signals, crs_from_values, signals, value_shape
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord, utcnow

#: Parameters that steer paging or presentation, never data links.
NON_LINKABLE = {
    "pageNo",
    "numOfRows",
    "currentPage",
    "countPerPage",
    "MobileOS",
    "MobileApp",
    "arrange",
    "ver",
    "hstryYn",
    "firstSort",
    "addInfoYn",
    "lDongListYn",
    "dataTerm",
    "_type",
    "dataType",
    "returnType",
    "resultType",
    "type",
}
WEAK_CONCEPTS = {"date", "year_month"}
#: Blocks larger than these are skipped for blocking (constants, so work stays linear in the number of fields):
#: name tokens are weak evidence, concept and coordinate blocks strong.
MAX_TOKEN_BLOCK = 150
MAX_BLOCK = 2000
MIN_SCORE = 0.4
#: A key shared by more fields or parameters than this is generic in the registry: its block is capped. The
#: largest block of the sandbox catalog has 36 fields, that of the unseen family 5.
FULL_BLOCK = 64
#: Fields one parameter is compared with through one capped key: of its own resource through a name (the list,
#: the create and the get of /things all return the same `id`; three of them say all there is to say), of its own
#: resource and again as many across APIs through a meaning.
NAME_SHORTLIST = 3
SHORTLIST = 8
#: Weight, inside a capped block, of a source that is no entry point next to one that is. An entry point reads
#: without a value from elsewhere (GET of the list of /things, a search): that is where values come from. GET
#: /things/{id} needs an id first; POST /things creates a record to return one.
ENTRY_WEIGHT = 0.9
#: Candidates kept per target parameter, best first (the busiest parameter of the sandbox catalog has 36 before
#: its tools are sampled, 25 after).
PER_PARAM = 40
#: Keys that carry a meaning beyond the record they appear in: a concept, a coordinate axis, a description's
#: leading phrase, a specific word of it.
MEANING_KEYS = ("c:", "xy:", "d:", "w:")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VERB = re.compile(
    r"^(get|list|search|find|retrieve|fetch|read|create|add|insert|update|patch|replace|put|post|"
    r"delete|remove|set)(?=[A-Z_\-])"
)
_SUFFIX = re.compile(r"(?<=[a-z0-9])(List|Info|Infos|Detail|Details|Search|All|Count)$")


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


def _declared_fit(t: T.Transform, f: FieldRef, p: ParamRef) -> bool:
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


def _fit_ratio(t: T.Transform, f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> float | None:
    if not rows:
        return None if _declared_fit(t, f, p) else 0.0
    ok = 0
    for row in rows[:6]:
        with contextlib.suppress(T.TransformError):
            out = T.apply(t, row.get(f.field.name), row)
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
    wants = name_form(p.example) if p.example else None
    if wants is None and ps.enum:
        wants = (
            "sido_short"
            if set(ps.enum) & set(T.SIDO_LONG)
            else "sido_long"
            if set(ps.enum) & set(T.SIDO_SHORT)
            else None
        )
    if wants is not None:
        # a province name in the form the parameter documents (AirKorea's sidoName takes 서울, not 서울특별시)
        out.append({"kind": "map", "table": wants})
    out.append(dict(T.IDENTITY))
    unique: list[T.Transform] = []
    for t in out:
        if t not in unique:
            unique.append(t)
    return unique


def name_form(value: Any) -> str | None:
    """The table whose values a province name is written in: `sido_short` (서울, 강원) or `sido_long`
    (서울특별시, 강원특별자치도); None for any other value."""
    text = str(value or "").strip()
    if text in T.SIDO_LONG:
        return "sido_short"
    if text in T.SIDO_SHORT:
        return "sido_long"
    return None


CODE_FAMILY = {"bjd_code", "sgg_code", "sido_code", "sgg3_code", "umd_code", "zip", "road_code"}


def _prior(t: T.Transform, ps: Signals) -> float:
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


def assess(f: FieldRef, p: ParamRef, rows: list[dict[str, str]]) -> tuple[float, T.Transform] | None:
    """Score one field -> parameter pair and choose its transform (None when implausible)."""
    fs, ps = f.sig, p.sig
    name = (
        1.0
        if fs.norm == ps.norm
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
    strip: T.Transform | None = None
    if f.prefix and (p.example or ps.pattern) and (f.words & p.words or f.phrases & p.phrases):
        strip = {"kind": "slice", "start": len(f.prefix)}
        sense = max(sense, 0.7)
    base = max(name, concept, coord, sense)
    if base <= 0:
        return None
    lengths = [len(str(s)) for s in samples if str(s).isdigit()]
    sample_len = max(set(lengths), key=lengths.count) if lengths else None
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
                wanted, got = name_form(p.example), name_form(out)
                if wanted and got and wanted != got:
                    score = round(score - 0.2, 4)  # 서울특별시 where the document shows 서울
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
        not any(q.required for q in p.tool.params) and M.needs_filter(p.tool.summary, p.tool.description)
    )


def _segments(tool: ToolRecord) -> list[str]:
    path = tool.op_key.split(" ", 1)[1] if " " in tool.op_key else urlsplit(tool.url).path
    return [s for s in path.split("/") if s]


def _resource_word(segment: str) -> str:
    """The resource a literal path segment names: verbs and list/detail suffixes of RPC-style names dropped,
    lower case, singular ("/users" and "/getUserList" both name "user")."""
    word = _VERB.sub("", segment, count=1) or segment
    word = _SUFFIX.sub("", word, count=1) or word
    word = re.sub(r"[^0-9a-z가-힣]", "", word.lower())
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def tool_resource(tool: ToolRecord) -> str:
    """The resource whose records a tool returns: its last literal path segment (GET /users/{id}/posts → post)."""
    literal = [s for s in _segments(tool) if not s.startswith("{")]
    return _resource_word(literal[-1]) if literal else ""


def param_resource(tool: ToolRecord, param: ParamRecord) -> str:
    """The resource a parameter selects: a path parameter the literal segment before it (/users/{id}/posts:
    `id` selects a user), any other parameter its tool's resource (a filter or a body field of that record)."""
    if param.location == "path":
        before = ""
        for seg in _segments(tool):
            if seg == "{" + param.name + "}":
                return _resource_word(before) if before else ""
            if not seg.startswith("{"):
                before = seg
    return tool_resource(tool)


def names_identifier(name: str) -> bool:
    """A name whose last word is `id` (id, userId, user_id, userID, uuid): a key the provider mints for its own
    records. Another provider's parameter of the same name wants that provider's key, so such a name alone is no
    evidence across documents; a shared concept or description still is."""
    parts = _WORDS.findall(name)
    return bool(parts) and parts[-1].lower() in ("id", "ids", "uuid", "guid")


def _specificity(size: int) -> float:
    """IDF-like weight of evidence shared with `size` fields: 1 up to FULL_BLOCK, then falling slowly."""
    return 1.0 if size <= FULL_BLOCK else max(0.5, (FULL_BLOCK / size) ** 0.25)


class _Block:
    """The fields of one capped blocking key, with the views it is read through: per (API, resource) in document
    order, and spread over APIs (one field of every API before a second of any)."""

    def __init__(self, members: list[int], api: list[str], resource: list[str], position: list[int]) -> None:
        self.members = members
        self.groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        by_api: dict[str, list[int]] = defaultdict(list)
        for i in members:
            self.groups[(api[i], resource[i])].append(i)
            by_api[api[i]].append(i)
        self.positions = {g: [position[i] for i in group] for g, group in self.groups.items()}
        queues = list(by_api.values())
        self.spread: list[int] = []
        for depth in range(2 * SHORTLIST):
            self.spread.extend(q[depth] for q in queues if depth < len(q))

    def nearest(
        self, group: tuple[str, str], at: int, n: int, skip: Callable[[int], bool], entry: list[bool]
    ) -> list[int]:
        """Up to n fields of a group: of the 4n whose tools lie nearest to document position `at`, those of entry
        points (reads callable without a value from elsewhere: a list, a search) first, then the nearest."""
        members, positions = self.groups.get(group, []), self.positions.get(group, [])
        hi = bisect.bisect_left(positions, at)
        lo = hi - 1
        out: list[int] = []
        while len(out) < 4 * n and (lo >= 0 or hi < len(members)):
            if hi < len(members) and (lo < 0 or positions[hi] - at <= at - positions[lo]):
                i, hi = members[hi], hi + 1
            else:
                i, lo = members[lo], lo - 1
            if not skip(i):
                out.append(i)
        return sorted(out, key=lambda i: not entry[i])[:n]  # stable: nearest first among equals

    def across(self, n: int, skip: Callable[[int], bool], taken: set[int]) -> list[int]:
        """Up to n more fields, spread over the APIs of the block."""
        return list(itertools.islice((i for i in self.spread if i not in taken and not skip(i)), n))


def derive_candidates(
    tools: list[ToolRecord],
    samples: Mapping[str, list[dict[str, str]]] | None = None,
    *,
    min_score: float = MIN_SCORE,
    stats: dict[str, int] | None = None,
    full_block: int | None = None,
    per_param: int | None = None,
) -> list[LinkRecord]:
    """Propose links between tools. `samples` maps a tool name to rows actually observed in its responses.

    Work is bounded before any pair is scored: each parameter is compared with every field of a blocking key
    only while the key is shared by at most `full_block` fields and parameters; past that, with a shortlist
    (see the module docstring). Each parameter keeps its `per_param` best sources."""
    samples = samples or {}
    full = FULL_BLOCK if full_block is None else full_block
    keep = PER_PARAM if per_param is None else per_param
    # documents repeat the same schemas in every operation: read each (name, description, type) once; the
    # signals are shared, never changed (assess copies them when values add a coordinate system)
    memo: dict[tuple[Any, ...], Any] = {}

    def once(key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        if key not in memo:
            memo[key] = make()
        return memo[key]

    def param_sig(prm: ParamRecord) -> Signals:
        key = ("p", prm.name, prm.description, prm.type, prm.pattern, None if prm.enum is None else tuple(prm.enum))
        # typed enums (1, true) are compared with sampled values as text, as those values are read
        sig: Signals = once(
            key,
            lambda: signals(
                prm.name,
                prm.description,
                prm.type,
                pattern=prm.pattern,
                enum=None if prm.enum is None else [str(e) for e in prm.enum],
            ),
        )
        return sig

    def field_sig(fld: FieldRecord) -> Signals:
        sig: Signals = once(
            ("f", fld.name, fld.description, fld.type), lambda: signals(fld.name, fld.description, fld.type)
        )
        return sig

    def meaning(name: str, description: str) -> tuple[frozenset[str], frozenset[str]]:
        got: tuple[frozenset[str], frozenset[str]] = once(
            ("m", name, description),
            lambda: (frozenset(M.phrases(name, description)), frozenset(M.korean_words(description))),
        )
        return got

    params: list[ParamRef] = []
    p_api: list[str] = []
    p_res: list[str] = []
    p_pos: list[int] = []
    fields: list[FieldRef] = []
    f_api: list[str] = []
    f_res: list[str] = []
    f_pos: list[int] = []
    f_entry: list[bool] = []
    f_ident: list[bool] = []
    p_index: dict[str, list[int]] = defaultdict(list)
    f_index: dict[str, list[int]] = defaultdict(list)
    for pos, t in enumerate(tools):
        resource = tool_resource(t)
        entry = t.method in ("GET", "HEAD") and not any(q.required for q in t.params if q.name not in NON_LINKABLE)
        for prm in t.params:
            if prm.name in NON_LINKABLE or (t.format_param and prm.name == t.format_param.split("=")[0]):
                continue
            pr = ParamRef(
                t, prm, param_sig(prm), *meaning(prm.name, prm.description), M.example_of(prm.example, prm.description)
            )
            for key in _param_keys(pr.sig) | {f"d:{ph}" for ph in pr.phrases} | {f"w:{w}" for w in pr.words}:
                p_index[key].append(len(params))
            params.append(pr)
            p_api.append(t.api_id)
            p_res.append(param_resource(t, prm))
            p_pos.append(pos)
        rows = samples.get(t.name, [])
        for fld in t.fields:
            values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
            fr = FieldRef(t, fld, field_sig(fld), *meaning(fld.name, fld.description), M.common_prefix(values))
            keys = _field_keys(fr.sig) | {f"d:{ph}" for ph in fr.phrases}
            if fr.prefix:
                keys |= {f"w:{w}" for w in fr.words}
            for key in keys:
                f_index[key].append(len(fields))
            fields.append(fr)
            f_api.append(t.api_id)
            f_res.append(resource)
            f_entry.append(entry)
            f_ident.append(names_identifier(fld.name))
            f_pos.append(pos)

    now = utcnow()
    blocks: dict[str, _Block] = {}
    taken: Counter[str] = Counter()
    capped: set[str] = set()
    comparisons = 0
    out: list[LinkRecord] = []
    for pi, pr in enumerate(params):
        chosen: dict[int, float] = {}  # field -> weight of its best evidence
        ident = names_identifier(pr.param.name)

        own = pr.tool.name if not _drills(pr) else None  # a tool feeds its own filter only where it drills down

        def skip(fi: int, own: str | None = own) -> bool:
            return fields[fi].tool.name == own

        for key in _param_keys(pr.sig) | {f"d:{ph}" for ph in pr.phrases} | {f"w:{w}" for w in pr.words}:
            members = f_index.get(key)
            n_params = len(p_index[key])
            if (
                not members
                or (key[:2] in ("t:", "w:") and n_params > MAX_TOKEN_BLOCK)
                or (n_params > MAX_BLOCK and not key.startswith("n:"))
            ):
                continue
            crosses = key.startswith(MEANING_KEYS)
            if len(members) <= full and (crosses or n_params <= full):
                # a provider's own identifier does not cross to another provider through its name alone
                local = not crosses and (ident or any(f_ident[fi] for fi in members))
                picks = [
                    (fi, 1.0)
                    for fi in members
                    if not skip(fi) and not (local and (ident or f_ident[fi]) and f_api[fi] != p_api[pi])
                ]
            else:
                capped.add(key)
                block = blocks.get(key)
                if block is None:
                    block = blocks[key] = _Block(members, f_api, f_res, f_pos)
                group = (p_api[pi], p_res[pi])
                near = block.nearest(group, p_pos[pi], SHORTLIST if crosses else NAME_SHORTLIST, skip, f_entry)
                weight = _specificity(len(block.groups.get(group, ())))
                picks = [(fi, weight * (1.0 if f_entry[fi] else ENTRY_WEIGHT)) for fi in near]
                if crosses:  # a shared meaning may cross documents; a shared generic name may not
                    weight = _specificity(len(members))
                    picks += [(fi, weight) for fi in block.across(SHORTLIST, skip, set(near))]
            taken[key] += len(picks)
            for fi, weight in picks:
                if weight > chosen.get(fi, 0.0):
                    chosen[fi] = weight
        found: list[tuple[float, str, FieldRef, T.Transform]] = []
        for fi, weight in chosen.items():
            fr = fields[fi]
            comparisons += 1
            verdict = assess(fr, pr, samples.get(fr.tool.name, []))
            if verdict is None:
                continue
            score = round(verdict[0] * weight, 4)
            if score < min_score:
                continue
            found.append(
                (score, link_id(fr.tool.name, fr.field.name, pr.tool.name, pr.param.key(), verdict[1]), fr, verdict[1])
            )
        found.sort(key=lambda c: (-c[0], c[1]))
        for score, lid, fr, transform in found[:keep]:
            out.append(
                LinkRecord(
                    id=lid,
                    source_tool=fr.tool.name,
                    source_field=fr.field.name,
                    target_tool=pr.tool.name,
                    target_param=pr.param.key(),
                    transform=transform,
                    score=score,
                    updated_at=now,
                )
            )
    out.extend(_date_links(tools, samples, out, min_score))
    if stats is not None:
        biggest = max(((len(f_index[k]) * len(p_index[k]), k) for k in taken), default=(0, ""))
        stats["fields"] = len(fields)
        stats["params"] = len(params)
        stats["comparisons"] = comparisons
        stats["candidates"] = len(out)
        stats["capped_blocks"] = len(capped)
        stats["largest_block"] = biggest[0]
        stats["largest_block_assessed"] = taken[biggest[1]] if biggest[1] else 0
    out.sort(key=lambda lk: (-lk.score, lk.id))
    return out


#: Date links proposed per (source tool, target tool): a record's own dates only.
MAX_DATE_LINKS = 2
#: Source tools proposed per date parameter of a tool that a date alone answers (a calendar by year and month).
MAX_DATE_SOURCES = 12
#: How fine a date format is: a source may feed a parameter of its own granularity or a coarser one (a day gives
#: its month and year), never a finer one (a month is no day).
GRANULARITY = {
    "YYYYMMDDHHMM": 5,
    "YYYY-MM-DD HH:MM": 5,
    "YYYYMMDDHH": 4,
    "YYYYMMDD": 3,
    "YYYY-MM-DD": 3,
    "YYYYMM": 2,
    "YYYY-MM": 2,
    "YYYY": 1,
    "MM": 2,
    "DD": 3,
}


def date_transform(src: str, dst: str) -> T.Transform | None:
    """The transform from a date of format `src` to a parameter of format `dst` (a part: YYYY, MM, DD), None
    when the source is coarser than the parameter."""
    if src not in T.WHOLE_DATES or dst not in GRANULARITY or GRANULARITY[src] < GRANULARITY[dst]:
        return None
    return dict(T.IDENTITY) if src == dst else {"kind": "date", "src": src, "dst": dst}


def _date_links(
    tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]], found: list[LinkRecord], min_score: float
) -> list[LinkRecord]:
    """Dates into date parameters, with the format transform (formats read off descriptions, schema formats and
    patterns, and observed values; parts by name: solYear takes YYYY, solMonth MM).

    Dates alone are no evidence (any date fits any date parameter), so a date link is proposed
    * into a required date parameter of a tool that names a record through other required parameters only beside
      an entity link from the same source into that tool (a company's founding date as the reference date of
      that company's history, a facility's opening date as the month of its programmes); the pair is then called
      jointly;
    * into the date parameters of a tool that a date alone answers (every required parameter a date: a calendar
      by year and month, a daily statistic), from the dates of other tools, at most MAX_DATE_SOURCES of them."""
    by_name = {t.name: t for t in tools}
    first: dict[tuple[str, str], ParamRecord] = {}
    for t in tools:
        for p in t.params:
            first.setdefault((t.name, p.key()), p)
    required = {k: p.name for k, p in first.items() if p.required}
    feeds: dict[tuple[str, str], set[str]] = defaultdict(set)
    for lk in found:
        name = required.get((lk.target_tool, lk.target_param))
        if name is not None:
            feeds[(lk.source_tool, lk.target_tool)].add(name)
    dates_of: dict[str, list[tuple[FieldRecord, str]]] = {}
    for t in tools:
        rows = samples.get(t.name, [])
        dates_of[t.name] = []
        for fld in t.fields:
            values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
            if not M.is_date(fld.name, fld.description) and not values:
                continue
            fmt = M.date_format(fld.description, None, None, values, fld.name)
            if fmt in T.WHOLE_DATES and (values or M.is_date(fld.name, fld.description)):
                dates_of[t.name].append((fld, fmt))
    params_of: dict[str, list[tuple[ParamRecord, str]]] = {}
    alone: set[str] = set()  # tools a date alone answers
    for t in tools:
        params_of[t.name] = []
        for prm in t.params:
            if prm.name in NON_LINKABLE or prm.enum or not M.is_date(prm.name, prm.description, prm.format):
                continue
            dst = M.date_format(prm.description, prm.format, prm.pattern, [], prm.name)
            if dst is not None:
                params_of[t.name].append((prm, dst))
        dated = {p.name for p, _ in params_of[t.name]}
        needed = [p for p in t.params if p.required and p.name not in NON_LINKABLE]
        if dated and all(p.name in dated for p in needed) and any(p.required for p, _ in params_of[t.name]):
            alone.add(t.name)
    out: list[LinkRecord] = []

    def add(
        source_name: str, fld: FieldRecord, target_name: str, prm: ParamRecord, transform: T.Transform, score: float
    ) -> None:
        if score >= min_score:
            out.append(
                LinkRecord(
                    id=link_id(source_name, fld.name, target_name, prm.key(), transform),
                    source_tool=source_name,
                    source_field=fld.name,
                    target_tool=target_name,
                    target_param=prm.key(),
                    transform=transform,
                    score=score,
                )
            )

    for (source_name, target_name), fed in sorted(feeds.items()):
        if target_name in alone:
            continue
        for prm, dst in params_of[target_name]:
            if not prm.required or prm.name in fed:
                continue
            for fld, src in dates_of[source_name][:MAX_DATE_LINKS]:
                transform = date_transform(src, dst)
                if transform is not None:
                    add(source_name, fld, target_name, prm, transform, 0.6)
    for target_name in sorted(alone):
        for prm, dst in params_of[target_name]:
            n = 0
            for t in tools:
                if t.name == target_name or n >= MAX_DATE_SOURCES or by_name[t.name].method not in ("GET", "POST"):
                    continue
                links = [
                    (fld, tr)
                    for fld, src in dates_of[t.name][:MAX_DATE_LINKS]
                    if (tr := date_transform(src, dst)) is not None
                ]
                for fld, transform in links:
                    add(t.name, fld, target_name, prm, transform, 0.55 if prm.required else 0.5)
                n += bool(links)
    return out
