"""A value of one row of a listing said of another row the answer names (`misattributed`): a measured figure, a
code or a telephone number that only other rows of the same listing hold, for the judge
(`synthesis.facts.check_answer`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from synthesis.answer_values import (
    clauses,
    mentions,
    nfkc,
    normalise_name,
    prepare_text,
    squeeze,
)
from synthesis.claims import measured_unit
from synthesis.seen import NOT_MEASURES, Seen, one_figure, row_name


def misattributed(answer: str, seen: Seen) -> str:
    """A measured figure said of one row of a listing (the only row of that result its clause names) that only
    other rows of the same listing hold, and nothing else seen: the value of another entity said of the named one
    (`구도 측정소 미세먼지는 94` where 94 is another station's), or another row's telephone number or address said
    of it. The single rows of several results (a hospital's and a pharmacy's) are read as one listing too, for
    telephone numbers, codes and addresses."""
    listings = [rows[:60] for rows in seen.listings if len(rows) >= 2]
    singles = [rows[0] for rows in seen.listings if len(rows) == 1]
    if len(singles) >= 2:
        listings.append(singles)
    if not listings:
        return ""
    tables = [_listing_table(rows) for rows in listings]
    addresses = [_addresses(rows) for rows in listings]
    every = [_codes(rows) for rows in listings]
    # a name the user wrote, or another result holds, is what was asked about, not what tells these rows apart
    asked = normalise_name(" ".join(seen.user))
    for t, (unique, _) in enumerate(tables):
        elsewhere = {
            n for u, rows in enumerate(listings) if u != t for r in rows for v in r.values() if (n := row_name(v))
        }
        if listings[t] is not singles:
            elsewhere |= {n for r in singles for v in r.values() if (n := row_name(v))}
        for ns in unique:
            ns -= {n for n in ns if n in asked or n in elsewhere}
    text = prepare_text(answer)
    for a, b in clauses(text):
        clause = text[a:b]
        if re.search(r"각각|respectively", clause):
            continue  # values given in the order of the names, not beside each
        squeezed, pos = squeeze(clause)
        for t, ((unique, held), codes) in enumerate(zip(tables, every, strict=True)):
            # each row named in the clause, where: a value belongs to the name written last before it
            where = sorted(
                (pos[m.start()], i)
                for i, ns in enumerate(unique)
                for n in ns
                for m in re.finditer(re.escape(n), squeezed)
                if squeezed[m.end() : m.end() + 1] not in _PLACE_TAILS
            )
            if not where:
                continue
            if w := _address_of_other(squeezed, pos, where, addresses[t], listings[t], unique):
                return w
            phones = [_phones(row) for row in listings[t]]
            claimed = _claimed_values(clause)
            for at, number, kind in claimed:
                before = [(p, i) for p, i in where if p < at]
                if not before or any(before[-1][0] < other < at for other, _, _ in claimed):
                    continue  # no name before it, or another value stands between (`구도 27, 호 47`: 호 is no name)
                row = before[-1][1]
                if kind == "phone":
                    mine, theirs = phones[row], [j for j, ps in enumerate(phones) if number in ps]
                elif kind == "code":
                    mine, theirs = codes[row], [j for j, fs in enumerate(codes) if number in fs]
                else:
                    mine, theirs = held[row], [j for j, fs in enumerate(held) if number in fs]
                if not (held[row] or codes[row] or phones[row]) or number in mine or not theirs:
                    continue
                in_other = any(number in fs for u, (_, h) in enumerate(tables) if u != t for fs in h)
                if kind != "measure" or (not in_other and number not in seen.outside_listings):
                    name = sorted(unique[row])[0]
                    return f"{number:g} is another row's, not {name}'s" if kind != "phone" else f"{name}'s phone"
    return ""


_CODE_FIELD = re.compile(r"(?:cd|code|id|seq|no|num|key)$", re.I)
_PHONE = re.compile(r"(?<!\d)(0\d{1,2})[-) .]?(\d{3,4})[- .]?(\d{4})(?!\d)")


def _phones(row: dict[str, Any]) -> set[float]:
    """The telephone numbers a row holds, as digits (`02-739-8760` -> 27398760)."""
    return {float("".join(m.groups())) for v in row.values() if isinstance(v, str) for m in _PHONE.finditer(v)}


def _claimed_values(clause: str) -> list[tuple[int, float, str]]:
    """(where, value, kind) of what a clause states that a row could hold: telephone numbers, measurements, and
    two-digit-or-more codes written without a unit."""
    out: list[tuple[int, float, str]] = []
    spans = [(m.start(), m.end()) for m in _PHONE.finditer(clause)]
    out += [(m.start(), float("".join(m.groups())), "phone") for m in _PHONE.finditer(clause)]
    for m in mentions(clause):
        if any(a <= m.start < b for a, b in spans):
            continue
        if measured_unit(m.unit):
            out.append((m.start, round(m.value, 9), "measure"))
        elif not m.unit and m.value >= 10 and m.value.is_integer():
            out.append((m.start, m.value, "code"))
    return out


_PLACE_TAILS = set("구동시군로길역읍면리가") - {""}


def _codes(rows: list[dict[str, Any]]) -> list[set[float]]:
    """Per row: the integers its code fields hold (`sidoCd: 30`)."""
    return [
        {
            x
            for k, v in row.items()
            if _CODE_FIELD.search(str(k)) and (x := one_figure(v)) is not None and x.is_integer()
        }
        for row in rows
    ]


def _listing_table(rows: list[dict[str, Any]]) -> tuple[list[set[str]], list[set[float]]]:
    """Per row of a listing: the names only it holds, and its measured figures."""
    names = [{n for v in row.values() if (n := row_name(v))} for row in rows]
    shared = Counter(n for ns in names for n in ns)
    unique = [{n for n in ns if shared[n] == 1} for ns in names]
    held = [
        {round(x, 9) for k, v in row.items() if not NOT_MEASURES.search(str(k)) and (x := one_figure(v)) is not None}
        for row in rows
    ]
    return unique, held


def _addresses(rows: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(row, as written, normalised) of each whole address (`대전 중구 호동 173`, not a road's name `영등포로24길`)
    only one row of the listing holds."""
    normalised = [{normalise_name(v): v for v in row.values() if isinstance(v, str)} for row in rows]
    held = Counter(a for values in normalised for a in values)
    return [
        (j, raw, a)
        for j, values in enumerate(normalised)
        for a, raw in values.items()
        if len(a) >= 6 and held[a] == 1 and re.search(r"[가-힣](?:로|길|동|리|가)\d+$", a)
    ]


def _address_of_other(
    squeezed: str,
    pos: list[int],
    where: list[tuple[int, int]],
    addresses: list[tuple[int, str, str]],
    rows: list[dict[str, Any]],
    unique: list[set[str]],
) -> str:
    """An address only one row holds, written after the name of another row and not with its own row's name
    (`신일 측정소(대전 중구 호동 173)` where 호동 173 is the 호 station's): the row named and the address, or ''."""
    for j, raw, address in addresses:
        at = squeezed.find(address)
        if at < 0 or any(i == j for _, i in where):  # its own row named too
            continue
        before = [i for p, i in where if p < pos[at]]
        if before and before[-1] != j and not any(address in normalise_name(v) for v in rows[before[-1]].values()):
            return f"{raw} is another row's address, not {sorted(unique[before[-1]])[0]}'s"
    return ""


#: A superlative said of one of the entities an answer gives figures to: the highest (`가장 따뜻`, `warmest`) or
#: the lowest (`가장 깨끗`, `coldest`) of them.
_MOST = re.compile(
    r"(?:가장|제일)\s*(?:따뜻|덥|더운|더웠|높|많|비싸|비싼|비쌌|나쁘|나쁜|나빴)"
    r"|\b(?:warmest|hottest|highest|most expensive|worst|dirtiest)\b",
    re.I,
)
_LEAST = re.compile(
    r"(?:가장|제일)\s*(?:춥|추운|추웠|쌀쌀|낮|적(?!합|당|절)|깨끗|맑|싸|싼|쌌|시원)"
    r"|\b(?:coldest|coolest|lowest|cleanest|cheapest|fewest|least)\b",
    re.I,
)
#: The same said as a comparison (`서초구가 더 많았습니다`, `Seocho had fewer`): a superlative where two figures are
#: given, nothing where more are (more than what?).
_MORE = re.compile(
    r"더\s*(?:따뜻|덥|더운|더웠|높|많|비싸|비싼|비쌌|나쁘|나쁜|나빴)|\b(?:warmer|hotter|higher|more expensive|worse)\b",
    re.I,
)
_LESS = re.compile(
    r"더\s*(?:춥|추운|추웠|쌀쌀|낮|적(?!합|당|절)|깨끗|싸|싼|쌌|시원)|\b(?:colder|cooler|lower|cheaper|fewer|cleaner)\b",
    re.I,
)
_NAMED_FIGURE = re.compile(r"([가-힣]{1,10}|[A-Z][a-z]+)\s*(?::\s*|\s)(-?\d+(?:\.\d+)?)(?![\d.])")


def _subject(name: str) -> str:
    return re.sub(r"(?<=[가-힣])(?:이|가|은|는)$", "", name) if len(name) > 2 else name


def wrong_extreme(answer: str) -> str:
    """A superlative said of an entity the same sentence gives a figure to beside others (`강남 61 / 노원 16 /
    은평 14 — 노원이 가장 깨끗해요`, `Daejeon was the warmest` after the three cities' figures) whose figure is not
    the highest (the lowest) of them. Only the one name between the last figure and the superlative is its
    subject. The name, or ''."""
    text = nfkc(answer)
    for sentence in re.split(r"(?<!\d)\.(?!\d)|[!?\n]", text):
        pairs = [(_subject(m.group(1)), float(m.group(2)), m.end()) for m in _NAMED_FIGURE.finditer(sentence)]
        figures: dict[str, float] = {}
        for name, x, _ in pairs:
            figures.setdefault(name, x)
        if len(figures) < 2:
            continue
        said_as = [(_MOST, max), (_LEAST, min)] + ([(_MORE, max), (_LESS, min)] if len(figures) == 2 else [])
        for pattern, pick in said_as:
            for m in pattern.finditer(sentence):
                before = [end for _, _, end in pairs if end <= m.start()]
                if not before:
                    continue
                between = sentence[max(before) : m.start()]
                said = [n for n in figures if re.search(rf"(?<![가-힣A-Za-z]){re.escape(n)}", between)]
                if len(said) == 1 and figures[said[0]] != pick(figures.values()):
                    return said[0]
    return ""


#: A route or line number as a name writes it: letters and a number (`탄방5`, `관평1번`, `마을02`).
_CODED = r"[가-힣]{1,4}\d{1,4}"
_CODED_PAIR = re.compile(
    rf"(?<![가-힣\d])({_CODED})번?\s*(?:과|와|이랑|랑|하고|및|,|·|/|and)\s*({_CODED})번?(?![\d])", re.I
)


def invented_coded_name(answer: str, asked: set[str], seen: Seen) -> str:
    """A route number (letters and a number) listed beside an asked one (`탄방5번과 관평1번`) that no result or user
    turn names: a value made up beside a real one, as `invented_item` finds among words. `asked`: the asked values,
    normalised. The item, or ''."""
    text = nfkc(answer)
    for m in _CODED_PAIR.finditer(text):
        a, b = normalise_name(m.group(1)), normalise_name(m.group(2))
        for mine, other in ((a, b), (b, a)):
            if mine in asked and other not in asked and other not in seen.text:
                return m.group(2) if other == b else m.group(1)
    return ""
