"""Needs: what a citizen, civil servant or analyst asks of a service, in their words, as data an institution extends
for its own APIs (docs/needs.md). A need says what it asks by what a field means (KMA category codes, field names,
words of a field's documented meaning, graph concepts), never by a tool id alone; which kind of answer it fits
(one row, an observation or forecast table, a set's count, list or extreme, a pair's counterpart); whether it holds
only for data about now or later; and its wordings per persona, with slots for the entity and the time the user
knows. `synthesis.language.compose` picks a matching need per final step and states exactly its facts.

The shipped needs are `synthesis/needs/*.yaml`; folders named in `KOPA_NEEDS_DIRS` (separated by the path
separator) add theirs, and a need there with a shipped need's id replaces it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from graph.concepts import KMA_CATEGORIES, answer_label, concepts_of, norm
from graph.models import ToolRecord
from synthesis.korean import short_description

SHIPPED = Path(__file__).with_name("needs")
PERSONAS = ("citizen", "civil", "analyst")
SHAPES = ("row", "table", "count", "list", "highest", "pair")
TIMES = ("any", "now", "later")
_SLOT = re.compile(r"\{(\w+)(?::([^{}]*))?\}")
SLOTS = ("entity", "when", "span")
_KEYS = {"id", "asks", "meaning", "concepts", "about", "shape", "time", "rank", "wordings", "say"}


class NeedError(ValueError):
    """A needs file that does not load or validate; the message names the file and line."""


@dataclass(frozen=True)
class Need:
    """One need. `asks`: what the answer states, each a KMA category code or a field name, alternatives joined by
    '|' (`RN1|PCP`); `meaning`: words of a field's documented meaning or answer label that match too (another
    API's field for the same thing); `concepts`: graph concepts a field must carry; `about`: words of the tool's
    intent or summary the rows must be about (약국, 병원); `shape`: the answers it fits; `time`: now, later or any;
    `rank`: the field a `highest` need ranks by; `wordings`: per persona the question templates; `say`: optional
    frames of the answer sentence around `{facts}`."""

    id: str
    source: str
    asks: tuple[str, ...] = ()
    meaning: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    shape: tuple[str, ...] = ("row",)
    time: str = "any"
    rank: str = ""
    wordings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    say: tuple[str, ...] = ()

    def fits_tool(self, tool: ToolRecord) -> bool:
        """Whether the tool's rows are what the need is about (`about` words in its intent, summary or
        description) and it documents the fields the need asks or ranks by (any one of `asks` for a set)."""
        text = " ".join((tool.intent, tool.summary, tool.description))
        if self.about and not any(w in text for w in self.about):
            return False
        keys = [*self.asks, *([self.rank] if self.rank else [])]
        if not keys and not self.meaning and not self.concepts:
            return True
        return any(field_keys(tool, k) or category_labels(k) for k in keys) or any(
            matches_meaning(self, f.name, f.description) for f in tool.fields
        )


def field_keys(tool: ToolRecord, ask: str) -> list[str]:
    """The tool's fields an `asks` entry names (by normalised name; KMA category codes name no field)."""
    wanted = {norm(a) for a in ask.split("|")}
    return [f.name for f in tool.fields if norm(f.name) in wanted]


def matches_meaning(need: Need, name: str, description: str) -> bool:
    """A field the need asks by meaning: its documented meaning or answer label holds one of the need's words, or
    it carries one of the need's concepts."""
    if need.meaning:
        text = f"{short_description(description)} {answer_label(name, description) or ''}"
        if any(w in text for w in need.meaning):
            return True
    return bool(need.concepts) and bool(set(need.concepts) & concepts_of(name, description))


def category_labels(ask: str) -> list[str]:
    """The KMA labels an `asks` entry names (`T1H|TMP` -> ['기온']); empty for field names."""
    return list(dict.fromkeys(KMA_CATEGORIES[c][0] for c in ask.split("|") if c in KMA_CATEGORIES))


def _where(path: Path, line: int) -> str:
    return f"{path}:{line}"


def _strings(value: Any, what: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise NeedError(f"{where}: {what} must be a string or a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _wordings(value: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict) or not value:
        raise NeedError(f"{where}: wordings must map personas ({', '.join(PERSONAS)}) to question templates")
    out: dict[str, tuple[str, ...]] = {}
    for persona, texts in value.items():
        if persona not in PERSONAS:
            raise NeedError(f"{where}: unknown persona {persona!r} in wordings (one of {', '.join(PERSONAS)})")
        out[persona] = _strings(texts, f"wordings.{persona}", where)
        for text in out[persona]:
            unknown = [m.group(1) for m in _SLOT.finditer(text) if m.group(1) not in SLOTS]
            if unknown:
                raise NeedError(f"{where}: unknown slot {{{unknown[0]}}} in {text!r} (slots: {', '.join(SLOTS)})")
    return out


def _need(raw: Any, where: str) -> Need:
    if not isinstance(raw, dict):
        raise NeedError(f"{where}: a need is a mapping with id, asks and wordings")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise NeedError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    nid = raw.get("id")
    if not isinstance(nid, str) or not re.fullmatch(r"[\w.-]+", nid):
        raise NeedError(f"{where}: id must be a word such as weather.rain_now")
    shape = _strings(raw.get("shape", "row"), "shape", where)
    bad = [s for s in shape if s not in SHAPES]
    if bad:
        raise NeedError(f"{where}: need {nid}: unknown shape {bad[0]!r} (one of {', '.join(SHAPES)})")
    time = raw.get("time", "any")
    if time not in TIMES:
        raise NeedError(f"{where}: need {nid}: time must be one of {', '.join(TIMES)}")
    asks = _strings(raw["asks"], "asks", where) if "asks" in raw else ()
    meaning = _strings(raw["meaning"], "meaning", where) if "meaning" in raw else ()
    concepts = _strings(raw["concepts"], "concepts", where) if "concepts" in raw else ()
    rank = str(raw.get("rank", ""))
    if not asks and not meaning and not concepts and not rank and "pair" not in shape:
        raise NeedError(f"{where}: need {nid}: say what it asks (asks, meaning, concepts or rank)")
    if "highest" in shape and not rank:
        raise NeedError(f"{where}: need {nid}: a highest need names the field it ranks by (rank)")
    if "wordings" not in raw:
        raise NeedError(f"{where}: need {nid}: wordings missing")
    say = _strings(raw["say"], "say", where) if "say" in raw else ()
    if any("{facts}" not in s for s in say):
        raise NeedError(f"{where}: need {nid}: every say frame holds {{facts}}")
    return Need(
        id=nid,
        source=where,
        asks=asks,
        meaning=meaning,
        concepts=concepts,
        about=_strings(raw["about"], "about", where) if "about" in raw else (),
        shape=shape,
        time=time,
        rank=rank,
        wordings=_wordings(raw["wordings"], where),
        say=say,
    )


def load_file(path: Path) -> list[Need]:
    """The needs of one YAML file (a `needs:` list); NeedError naming the file and line on anything wrong."""
    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as e:
        raise NeedError(f"{path}: cannot read: {e}") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise NeedError(f"{_where(path, line)}: not YAML: {getattr(e, 'problem', e)}") from e
    if node is None or not isinstance(data, dict) or not isinstance(data.get("needs"), list):
        raise NeedError(f"{_where(path, 1)}: a needs file holds a `needs:` list")
    items = next(v for k, v in node.value if k.value == "needs").value
    return [_need(raw, _where(path, n.start_mark.line + 1)) for raw, n in zip(data["needs"], items, strict=True)]


def load_needs(folders: list[Path] | None = None) -> list[Need]:
    """The needs of the shipped folder and then of `folders` (`KOPA_NEEDS_DIRS` when None), by id: a later need
    replaces an earlier one with its id; two needs with one id in one folder are an error."""
    if folders is None:
        folders = [Path(p) for p in os.environ.get("KOPA_NEEDS_DIRS", "").split(os.pathsep) if p]
    out: dict[str, Need] = {}
    for folder in [SHIPPED, *folders]:
        seen: dict[str, str] = {}
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            for need in load_file(path):
                if need.id in seen:
                    raise NeedError(f"{need.source}: need {need.id} again (first at {seen[need.id]})")
                seen[need.id] = need.source
                out[need.id] = need
    return list(out.values())


@lru_cache(maxsize=8)
def _cached(key: str) -> tuple[Need, ...]:
    return tuple(load_needs([Path(p) for p in key.split(os.pathsep) if p]))


def default_needs() -> tuple[Need, ...]:
    """The shipped needs and those of `KOPA_NEEDS_DIRS`, loaded once per value of the variable."""
    return _cached(os.environ.get("KOPA_NEEDS_DIRS", ""))
