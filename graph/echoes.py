"""Does the target echo what a link would feed it? A signal about a candidate link read from sampled rows only.

Korean public APIs commonly repeat the query keys in the rows they return: the building register's 표제부 rows carry
`sigunguCd`, `bjdongCd`, `bun`, `ji`; the apartment list carries the `bjdCode` it was asked for; a detail carries
its own `kaptCode` (see the reference of Korean public APIs, sections B3 to B5). Discovery samples every tool once,
so a target's sampled rows show, under such an echo field, values the target answers about. For a candidate link
A.field -> B.param:

* what B is known to answer about for the parameter: the values of B's echo field (a field named like the
  parameter, without regard to case and separators) in its sampled rows, and the value B's sampling call passed
  for the parameter when that call answered rows;
* some of A's values, after the link's transform, are among them: evidence that B knows A's values (`support`);
* none is, and they are of the same form (digits of one length; else which of digits, Latin letters and Hangul
  they hold): evidence against
  (`against`): B answers about other values than A produces (another provider's or another region's identifiers,
  or a field of the same form that means something else);
* nothing known, nothing sampled, values of different forms, quantities (decimal fractions: coordinates and
  measurements are answered near, not equal) or dates (a day A saw need not be one B was sampled for): no signal
  (`none`).

How well it foretells the trials (`python -m perf.echo_signal`, every candidate link of a full verification of the
bundled sandbox): 88% of the links with support verified, 58% of those without a signal, 23% of those against
(docs/crossover.md).

It costs no upstream call, and it decides nothing: verification comes from execution only. The demand-driven
path (synthesis.verified_graph, synthesis.demand) weighs undecided links and their step pairs by `prior`, so the
links it says `against` are proposed last, and asked about only once the draw over the others runs out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from graph import transforms
from graph.concepts import norm
from graph.models import LinkRecord

Verdict = Literal["support", "against", "none"]
#: What each verdict multiplies a pending link's (and its step pair's) weight by. A target known to answer only
#: other values than the link would feed is a much worse bet (never zero: only a trial refutes a link). Support is
#: not weighted up: weighting it up concentrated the draw on fewer links without saving calls (docs/crossover.md).
PRIOR: dict[Verdict, float] = {"support": 1.0, "none": 1.0, "against": 0.05}
#: Rows of each side compared (discovery keeps at most 30 per tool).
MAX_ROWS = 60
_DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+")
_CLASSES = (
    (re.compile(r"[0-9]+"), "9"),
    (re.compile(r"[A-Za-z]+"), "a"),
    (re.compile(r"[가-힣]+"), "가"),
)


@dataclass(frozen=True, slots=True)
class Echo:
    """The signal for one link: the verdict, the echo field it was read from, the distinct values compared on each
    side and how many of the source's were among the target's."""

    verdict: Verdict
    field: str | None = None
    compared: int = 0
    echoed: int = 0
    shared: int = 0


NONE = Echo("none")


def _texts(value: Any) -> list[str]:
    """The texts of a value: a scalar's, or each element's of a list (a list parameter is echoed per element)."""
    if isinstance(value, list):
        return [t for v in value for t in _texts(v) if not isinstance(v, list)]
    if value is None or isinstance(value, dict | bool):
        return []
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = " ".join(str(value).split()).casefold()
    return [text] if text else []


def shape(text: str) -> str:
    """The form of a value: digits only with their count (a 5-digit code and a 10-digit one are different forms),
    else which of digits, Latin letters and Hangul it has (`A10020074` and a base64 key are of one form, two names
    of different length too; punctuation and order do not count)."""
    if text.isdigit():
        return f"9{len(text)}"
    return "".join(mark for pattern, mark in _CLASSES if pattern.search(text))


def is_key(text: str) -> bool:
    """A value that can name a record (a code, a number, a name), not a quantity: a decimal fraction (a coordinate,
    a measurement) is answered near, not equal, so no overlap is expected of it."""
    return _DECIMAL.fullmatch(text) is None


def _keys(values: Iterable[Any]) -> set[str]:
    return {t for v in values for t in _texts(v) if is_key(t)}


def _fed(link: LinkRecord, rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """What the link would feed from the source's rows: each row's field through the link's transform (a value the
    transform refuses is left out)."""
    out: list[Any] = []
    for row in rows[:MAX_ROWS]:
        try:
            out.append(transforms.apply(link.transform, row.get(link.source_field), dict(row)))
        except transforms.TransformError:
            continue
    return _keys(out)


def _fields(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The fields of sampled rows by their normalised names (the first spelling seen)."""
    out: dict[str, str] = {}
    for row in rows[:MAX_ROWS]:
        for key in row:
            out.setdefault(norm(key), key)
    return out


def _param(link: LinkRecord) -> str:
    return link.target_param.split(":", 1)[-1]


def echo_field(link: LinkRecord, target_rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The target's field that echoes the link's parameter: the one named like it (compared without case and
    separators: `xPos` is echoed as `XPos`, `nodeId` as `nodeid`). It holds what the parameter takes, so the
    source's values are compared after the link's transform."""
    return _fields(target_rows).get(norm(_param(link)))


def known(
    link: LinkRecord, target_rows: Sequence[Mapping[str, Any]], target_args: Mapping[str, Any] | None = None
) -> tuple[str | None, set[str]]:
    """The values the target is known to answer about for the link's parameter: those of its echo field in the
    sampled rows, and the value the sampling call passed for the parameter when that call answered rows. Returns
    the echo field (None without one) and the values."""
    field = echo_field(link, target_rows)
    values = _keys(row.get(field) for row in target_rows[:MAX_ROWS]) if field else set()
    if target_args and _param(link) in target_args:
        values |= _keys([target_args[_param(link)]])
    return field, values


def comparable(link: LinkRecord) -> bool:
    """Links whose values are keys a target repeats: not a coordinate projection (a point) and not a date (a day
    the source saw need not be one the target was sampled for)."""
    return link.transform.get("kind") not in ("coord", "date")


def echo_signal(
    link: LinkRecord,
    source_rows: Sequence[Mapping[str, Any]],
    target_rows: Sequence[Mapping[str, Any]],
    target_args: Mapping[str, Any] | None = None,
) -> Echo:
    """The signal for `link` from the source's sampled rows and the target's (with the arguments they answered),
    pure; see the module docstring."""
    if not source_rows or not target_rows or not comparable(link):
        return NONE
    field, theirs = known(link, target_rows, target_args)
    return _compare(field or _param(link), _fed(link, source_rows), theirs)


def _compare(field: str, ours: set[str], theirs: set[str]) -> Echo:
    if not theirs or not ours:
        return NONE
    shared = len(ours & theirs)
    if shared:
        return Echo("support", field, len(ours), len(theirs), shared)
    if {shape(v) for v in ours} & {shape(v) for v in theirs}:
        return Echo("against", field, len(ours), len(theirs), 0)
    return NONE


def signals_for(
    links: Sequence[LinkRecord],
    samples: Mapping[str, Sequence[Mapping[str, Any]]],
    sample_args: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Echo]:
    """The signal of every link whose source and target were sampled (`samples`: tool name -> sampled rows;
    `sample_args`: tool name -> the arguments its rows answered). What the target knows of a parameter, and what
    a source field gives through a transform, are read once for all the links that share them."""
    args = sample_args or {}
    theirs: dict[tuple[str, str], tuple[str | None, set[str]]] = {}
    ours: dict[tuple[str, str, str], set[str]] = {}
    out: dict[str, Echo] = {}
    for lk in links:
        source, target = samples.get(lk.source_tool), samples.get(lk.target_tool)
        if not source or not target:
            continue
        if not comparable(lk):
            out[lk.id] = NONE
            continue
        tkey = (lk.target_tool, lk.target_param)
        if tkey not in theirs:
            theirs[tkey] = known(lk, target, args.get(lk.target_tool))
        skey = (lk.source_tool, lk.source_field, repr(sorted(lk.transform.items())))
        if skey not in ours:
            ours[skey] = _fed(lk, source)
        field, values = theirs[tkey]
        out[lk.id] = _compare(field or _param(lk), ours[skey], values)
    return out


def prior(echo: Echo | None) -> float:
    """What the signal multiplies a pending link's weight by (1 without a signal)."""
    return PRIOR[echo.verdict] if echo is not None else 1.0
