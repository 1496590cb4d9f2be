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
import itertools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from graph import meaning
from graph.concepts import CODE_PARTS, Signals, filtered_norm, norm, signals, value_concepts
from graph.date_links import date_links
from graph.date_links import date_transform as date_transform
from graph.link_scoring import MIN_TABLE, WEAK_CONCEPTS, FieldRef, ParamRef, assess, listed
from graph.link_scoring import NON_LINKABLE as NON_LINKABLE
from graph.link_scoring import link_id as link_id
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord, utcnow

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
MEANING_KEYS = ("c:", "xy:", "d:", "w:", "v:")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VERB = re.compile(
    r"^(get|list|search|find|retrieve|fetch|read|create|add|insert|update|patch|replace|put|post|"
    r"delete|remove|set)(?=[A-Z_\-])"
)
_SUFFIX = re.compile(r"(?<=[a-z0-9])(List|Info|Infos|Detail|Details|Search|All|Count)$")


def _param_keys(s: Signals) -> set[str]:
    keys = {f"n:{s.norm}"} | {f"c:{c}" for c in s.concepts - WEAK_CONCEPTS} | {f"t:{t}" for t in s.tokens}
    searched = filtered_norm(s.name)
    if searched:
        keys.add(f"n:{searched}")  # likeItemCd searches itemCd
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


def _drills(p: ParamRef) -> bool:
    """A tool's own output may feed its own filter only where the document says the filter narrows the answer
    ("없으면 시도 목록": a 시도명 out of the 시도 list drills down) or that a filter is needed (a search by a name
    it returns)."""
    if p.param.required:
        return False
    return meaning.narrows(p.param.description) or (
        not any(q.required for q in p.tool.params) and meaning.needs_filter(p.tool.summary, p.tool.description)
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


@dataclass(frozen=True, slots=True)
class _Param:
    """A parameter that may take a link, with where it sits: its API, the resource it selects, its tool's position
    in the document, and the blocking keys it is compared through."""

    ref: ParamRef
    api: str
    resource: str
    position: int
    keys: set[str]


@dataclass(frozen=True, slots=True)
class _Field:
    """A field that may feed a link, with where it sits and what its tool is: an entry point (a read callable
    without a value from elsewhere) or not; whether its name names a provider's own identifier."""

    ref: FieldRef
    tool: str  # its tool's name
    api: str
    resource: str
    position: int
    entry: bool
    ident: bool


class _Reader:
    """Signals and meanings of names and descriptions, read once: documents repeat the same schemas in every
    operation. The signals are shared, never changed (assess copies them when values add a coordinate system)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}

    def _once(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def _meaning(self, name: str, description: str) -> tuple[frozenset[str], frozenset[str]]:
        got: tuple[frozenset[str], frozenset[str]] = self._once(
            ("m", name, description),
            lambda: (frozenset(meaning.phrases(name, description)), frozenset(meaning.korean_words(description))),
        )
        return got

    def param(self, tool: ToolRecord, prm: ParamRecord, rows: list[dict[str, str]]) -> ParamRef:
        key = ("p", prm.name, prm.description, prm.type, prm.pattern, None if prm.enum is None else tuple(prm.enum))
        # typed enums (1, true) are compared with sampled values as text, as those values are read
        sig: Signals = self._once(
            key,
            lambda: signals(
                prm.name,
                prm.description,
                prm.type,
                pattern=prm.pattern,
                enum=None if prm.enum is None else [str(e) for e in prm.enum],
            ),
        )
        example = meaning.example_of(prm.example, prm.description)
        if example is None and not prm.enum:
            example = _echo(tool, prm, rows)
        shown = [str(e) for e in prm.enum or []] or ([example] if example else [])
        codes: frozenset[str] = self._once(
            ("t", prm.description), lambda: frozenset(meaning.code_table(prm.description) or ())
        )
        return ParamRef(tool, prm, _with_values(sig, shown), *self._meaning(prm.name, prm.description), example, codes)

    def field(self, tool: ToolRecord, fld: FieldRecord, rows: list[dict[str, str]]) -> FieldRef:
        sig: Signals = self._once(
            ("f", fld.name, fld.description, fld.type), lambda: signals(fld.name, fld.description, fld.type)
        )
        values = [str(r.get(fld.name)) for r in rows if r.get(fld.name) not in (None, "")]
        return FieldRef(
            tool,
            fld,
            _with_values(sig, values),
            *self._meaning(fld.name, fld.description),
            meaning.common_prefix(values),
        )


def _echo(tool: ToolRecord, prm: ParamRecord, rows: list[dict[str, str]]) -> str | None:
    """A value of the field a parameter selects on, as the tool's own sampled rows show it (its `crno` filter
    selects rows by their `crno`, its `likeItemCd` searches their `itemCd`): the form the parameter takes, where
    the document gives no example."""
    wanted = {norm(prm.name), filtered_norm(prm.name)} - {None, ""}
    for fld in tool.fields:
        if norm(fld.name) in wanted:
            for row in rows:
                value = row.get(fld.name)
                if value not in (None, "") and not isinstance(value, list | dict):
                    return str(value)
    return None


def _with_values(sig: Signals, values: list[str]) -> Signals:
    """The signals with the concepts the values show (a full 시도 name, a 시군구 name: `value_concepts`), a copy
    when they add any (signals are shared between the tools of one schema)."""
    extra = value_concepts(values) - sig.concepts
    return replace(sig, concepts=sig.concepts | extra) if extra else sig


@dataclass
class _Registry:
    """Every linkable parameter and field of the tools, each indexed by its blocking keys."""

    params: list[_Param]
    fields: list[_Field]
    p_index: dict[str, list[int]]
    f_index: dict[str, list[int]]

    @classmethod
    def read(cls, tools: list[ToolRecord], samples: Mapping[str, list[dict[str, str]]]) -> _Registry:
        reader = _Reader()
        reg = cls([], [], defaultdict(list), defaultdict(list))
        for pos, t in enumerate(tools):
            resource = tool_resource(t)
            entry = t.method in ("GET", "HEAD") and not any(q.required for q in t.params if q.name not in NON_LINKABLE)
            rows = samples.get(t.name, [])
            for prm in t.params:
                if prm.name in NON_LINKABLE or prm.name == t.format_name:
                    continue
                pr = reader.param(t, prm, rows)
                keys = _param_keys(pr.sig) | {f"d:{ph}" for ph in pr.phrases} | {f"w:{w}" for w in pr.words}
                for key in keys:
                    reg.p_index[key].append(len(reg.params))
                reg.params.append(_Param(pr, t.api_id, param_resource(t, prm), pos, keys))
            for fld in t.fields:
                fr = reader.field(t, fld, rows)
                keys = _field_keys(fr.sig) | {f"d:{ph}" for ph in fr.phrases}
                if fr.prefix:
                    keys |= {f"w:{w}" for w in fr.words}
                for key in keys:
                    reg.f_index[key].append(len(reg.fields))
                reg.fields.append(_Field(fr, t.name, t.api_id, resource, pos, entry, names_identifier(fld.name)))
        reg._block_listed(samples)
        return reg

    def _block_listed(self, samples: Mapping[str, list[dict[str, str]]]) -> None:
        """A field whose observed codes are all listed in a parameter's documented code table is compared with
        that parameter (`listed`): the evidence is in the values, whatever the names say."""
        tables: dict[frozenset[str], str] = {}
        for p in self.params:
            if len(p.ref.codes) >= MIN_TABLE and p.ref.codes not in tables:
                tables[p.ref.codes] = "v:" + ",".join(sorted(p.ref.codes))
        if not tables:
            return
        for i, p in enumerate(self.params):
            if p.ref.codes in tables:
                p.keys.add(tables[p.ref.codes])
                self.p_index[tables[p.ref.codes]].append(i)
        for i, f in enumerate(self.fields):
            rows = samples.get(f.tool, [])
            values = [r.get(f.ref.field.name) for r in rows if r.get(f.ref.field.name) not in (None, "")]
            for codes, key in tables.items():
                if listed(codes, values):
                    self.f_index[key].append(i)


class _Block:
    """The fields of one capped blocking key, with the views it is read through: per (API, resource) in document
    order, and spread over APIs (one field of every API before a second of any)."""

    def __init__(self, members: list[int], fields: list[_Field]) -> None:
        self.members = members
        self.fields = fields
        self.groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        by_api: dict[str, list[int]] = defaultdict(list)
        for i in members:
            self.groups[(fields[i].api, fields[i].resource)].append(i)
            by_api[fields[i].api].append(i)
        self.positions = {g: [fields[i].position for i in group] for g, group in self.groups.items()}
        queues = list(by_api.values())
        self.spread: list[int] = []
        for depth in range(2 * SHORTLIST):
            self.spread.extend(q[depth] for q in queues if depth < len(q))

    def nearest(self, group: tuple[str, str], at: int, n: int, skip: Callable[[int], bool]) -> list[int]:
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
        return sorted(out, key=lambda i: not self.fields[i].entry)[:n]  # stable: nearest first among equals

    def across(self, n: int, skip: Callable[[int], bool], taken: set[int]) -> list[int]:
        """Up to n more fields, spread over the APIs of the block."""
        return list(itertools.islice((i for i in self.spread if i not in taken and not skip(i)), n))


class _Blocking:
    """Which fields each parameter is compared with, and how much each comparison weighs: every field of a key
    shared by at most `full` fields and parameters, a shortlist of a capped one (see the module docstring)."""

    def __init__(self, reg: _Registry, full: int) -> None:
        self.reg = reg
        self.full = full
        self.blocks: dict[str, _Block] = {}
        self.taken: Counter[str] = Counter()  # fields picked per key, over all parameters
        self.capped: set[str] = set()

    def sources(self, p: _Param) -> dict[int, float]:
        """The fields a parameter is compared with, each with the weight of its best evidence."""
        ident = names_identifier(p.ref.param.name)
        own = p.ref.tool.name if not _drills(p.ref) else None  # a tool feeds its own filter only where it drills down
        fields = self.reg.fields

        def skip(fi: int) -> bool:
            return fields[fi].tool == own

        chosen: dict[int, float] = {}
        for key in p.keys:
            picks = self._picks(key, p, ident, skip)
            if picks is None:
                continue
            self.taken[key] += len(picks)
            for fi, weight in picks:
                if weight > chosen.get(fi, 0.0):
                    chosen[fi] = weight
        return chosen

    def _picks(self, key: str, p: _Param, ident: bool, skip: Callable[[int], bool]) -> list[tuple[int, float]] | None:
        """The weighted fields of one key for a parameter; None when the key is too common to block on."""
        members = self.reg.f_index.get(key)
        n_params = len(self.reg.p_index[key])
        if (
            not members
            or (key[:2] in ("t:", "w:") and n_params > MAX_TOKEN_BLOCK)
            or (n_params > MAX_BLOCK and not key.startswith("n:"))
        ):
            return None
        fields = self.reg.fields
        crosses = key.startswith(MEANING_KEYS)
        if len(members) <= self.full and (crosses or n_params <= self.full):
            # a provider's own identifier does not cross to another provider through its name alone
            local = not crosses and (ident or any(fields[fi].ident for fi in members))
            return [
                (fi, 1.0)
                for fi in members
                if not skip(fi) and not (local and (ident or fields[fi].ident) and fields[fi].api != p.api)
            ]
        self.capped.add(key)
        block = self.blocks.get(key)
        if block is None:
            block = self.blocks[key] = _Block(members, fields)
        group = (p.api, p.resource)
        near = block.nearest(group, p.position, SHORTLIST if crosses else NAME_SHORTLIST, skip)
        weight = _specificity(len(block.groups.get(group, ())))
        picks = [(fi, weight * (1.0 if fields[fi].entry else ENTRY_WEIGHT)) for fi in near]
        if crosses:  # a shared meaning may cross documents; a shared generic name may not
            weight = _specificity(len(members))
            picks += [(fi, weight) for fi in block.across(SHORTLIST, skip, set(near))]
        return picks

    def stats(self) -> dict[str, int]:
        """The largest block compared through (fields x parameters) and how many of its fields were picked."""
        reg = self.reg
        biggest = max(((len(reg.f_index[k]) * len(reg.p_index[k]), k) for k in self.taken), default=(0, ""))
        return {
            "capped_blocks": len(self.capped),
            "largest_block": biggest[0],
            "largest_block_assessed": self.taken[biggest[1]] if biggest[1] else 0,
        }


def _best_links(
    p: _Param,
    sources: list[tuple[FieldRef, float]],
    samples: Mapping[str, list[dict[str, str]]],
    min_score: float,
    keep: int,
    now: str,
) -> list[LinkRecord]:
    """A parameter's `keep` best links out of the fields it is compared with (`sources`, each with the weight of
    its evidence), scored by assess and weighted."""
    pr = p.ref
    found = []
    for fr, weight in sources:
        verdict = assess(fr, pr, samples.get(fr.tool.name, []))
        if verdict is None:
            continue
        score = round(verdict[0] * weight, 4)
        if score < min_score:
            continue
        found.append(
            (score, link_id(fr.tool.name, fr.field.name, pr.tool.name, pr.param.key(), verdict[1]), fr, verdict[1])
        )
    # best first; among equals a service's own sources first (copies of one document tie everywhere else)
    found.sort(key=lambda c: (-c[0], c[2].tool.api_id != pr.tool.api_id, c[1]))
    return [
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
        for score, lid, fr, transform in found[:keep]
    ]


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
    keep = PER_PARAM if per_param is None else per_param
    reg = _Registry.read(tools, samples)
    blocking = _Blocking(reg, FULL_BLOCK if full_block is None else full_block)
    now = utcnow()
    comparisons = 0
    out: list[LinkRecord] = []
    for p in reg.params:
        chosen = blocking.sources(p)
        comparisons += len(chosen)
        sources = [(reg.fields[fi].ref, weight) for fi, weight in chosen.items()]
        out.extend(_best_links(p, sources, samples, min_score, keep, now))
    out.extend(date_links(tools, samples, out, min_score))
    if stats is not None:
        stats.update(fields=len(reg.fields), params=len(reg.params), comparisons=comparisons, candidates=len(out))
        stats.update(blocking.stats())
    out.sort(key=lambda lk: (-lk.score, lk.id))
    return out
