"""The area an answer covers when only a 시군구 or a 시도 confines a final step's query (`area_scope`: a count or list
of that whole area, said as such since the user may have named a narrower place), and the word for "more" of a
quantity by what it measures (`more_word`)."""

from __future__ import annotations

import re

from graph.concepts import concepts_of
from graph.regions import FORMER_SIDO, FORMER_SIGUNGU, SIDO, SIGUNGU
from synthesis.fact_terms import Fact
from synthesis.korean import fmt_value as fmt_value
from synthesis.korean import has_batchim as has_batchim
from synthesis.korean import josa as josa
from synthesis.korean import verb as verb
from synthesis.records import Plan, TrajectoryStep

#: Concepts of a query parameter by the area they confine the rows to, finest first.
AREA_LEVELS = (
    ("umd", {"bjd_code", "umd_code", "umd_name"}),
    ("sgg", {"sgg_code", "sgg_name", "sgg3_code"}),
    ("sido", {"sido_code", "sido_name"}),
)


#: The word for an area's level that leads a goal ("시군구의 아파트 단지"), left out where the area is named.
LEVEL_WORD = re.compile(r"^(시군구|시도)의?\s*")


def area_name(texts: list[str], level: str) -> str:
    """The 시도 (`sido`) or 시군구 (`sgg`, with its 시도) that the first of `texts` to name one names, as it names
    it (data still writes a 시도 or 시군구 by its former name)."""
    for text in texts:
        words = text.split()
        for k, w in enumerate(words):
            if w in SIGUNGU or w in FORMER_SIDO:
                written, sido = w, FORMER_SIDO[w][1] if w in FORMER_SIDO else w
            else:
                full = next((f for f, short in SIDO.items() if short == w), None)
                if full is None:
                    continue
                written, sido = full, full
            if level == "sido":
                return written
            sggs = {*SIGUNGU.get(sido, ()), *FORMER_SIGUNGU.get(sido, {})}
            sgg = next((x for x in words[k + 1 :] if x in sggs), None)
            if sgg is not None:
                return f"{written} {sgg}"
    return ""


def area_scope(plan: Plan, steps: list[TrajectoryStep], i: int) -> str:
    """The area a final step's set covers when only a 시군구 or a 시도 confines its query (an area code or name,
    besides dates and constants): a count or list of that whole area, which an answer states as such, since the
    user may have named a narrower place (a 동, an address, a clinic in it). Empty when a finer place, another
    filter or nothing of the kind confines it, or the area's name is nowhere in what the user or the steps said."""
    step, tool = steps[i], plan.steps[i].tool
    desc = {p.name: p.description for p in tool.params}
    levels: set[str] = set()
    for name, prov in step.provenance.items():
        if prov.get("kind") not in ("slot", "link", "mention"):
            continue
        found = concepts_of(name, desc.get(name, ""))
        matched = [lv for lv, cs in AREA_LEVELS if found & cs]
        value = str(step.arguments.get(name, ""))
        if len(matched) > 1 and value.isdigit():  # a code read as several: its length tells (LAWD_CD: 5 digits)
            matched = ["sido" if len(value) <= 2 else "sgg" if len(value) <= 5 else "umd"]
        level = matched[0] if matched else None
        if level is None and not found & {"date", "year_month"}:
            return ""  # a name, a point or another filter narrows the set: the area is not its scope
        if level is not None:
            levels.add(level)
    if not levels or "umd" in levels:
        return ""
    level = "sgg" if "sgg" in levels else "sido"
    texts = [str(v) for v in step.arguments.values() if isinstance(v, str)]
    texts += [str(v["value"]) for st in steps for v in st.provenance.values() if v["kind"] == "slot"]
    texts += [str(v) for st in steps for v in st.mentions.values()]
    for st in steps[:i]:
        if st.response.items:
            row = st.response.items[min(st.response.chosen, len(st.response.items) - 1)]
            texts.append(" ".join(str(v) for v in row.values() if isinstance(v, str)))
    return area_name(texts, level)


def more_word(fact: Fact) -> str:
    """The word for "more" of a quantity by what it measures: an area is 넓은, a number of things 많은, else 높은."""
    unit = fact.unit or ""
    if unit in ("㎡", "m²", "m2", "평") or "면적" in fact.label:
        return "넓은"
    if unit in ("세대", "명", "대", "개", "건", "곳") or re.search(r"(수|대수)$", fact.label):
        return "많은"
    return "높은"
