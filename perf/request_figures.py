"""Request figures of a `kopa demo` (or `kopa synth`) folder (issue 33, item 2): distinct request frames, the share
of final steps asked by a need (synthesis/needs) against the field-meaning fallback and conditional frames, requests
that name the first three labels of a final row, requests with API labels, (tool, asked facts) pairs and the judge
gate.

    .venv/bin/kopa demo --workdir /tmp/demo && python -m perf.request_figures /tmp/demo
    KOPA_STORE=embedded KOPA_EMBEDDED_PATH=/tmp/demo/graph.sqlite3 kopa synth --sandbox --count 3000 --out /tmp/s3k \
        && python -m perf.request_figures /tmp/s3k --graph /tmp/demo/graph.sqlite3

(the second runs `kopa synth` on the graph the demo verified; copy graph.sqlite3 first to keep the demo's as it was.)

An API label is a field's name (`rbf_tax_type`) or a documented label the API files a value under (코드, 메세지,
서열, 최하위…, 일련, 순번, PK, ID) or one of the form labels the reading of docs/data_reading.md found (대지위치,
상세주소, 대표이미지, 교통편 위치명, …), found in a request though the user did not type it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from graph.concepts import KMA_CATEGORIES, answer_label
from graph.embedded_store import EmbeddedStore
from graph.models import ToolRecord
from synthesis.korean import short_description
from synthesis.quality import quality

_API = re.compile(r"코드|메세지|메시지|PK|일련|식별|순번|서열|최하위|ID|Id")
_FORM = {
    "대지위치",
    "상세주소",
    "대표이미지",
    "교통편 위치명",
    "교통편 방향",
    "예보 값",
    "실황 값",
    "TM 좌표",
    "TM X",
    "TM Y",
}


def api_labels(tool: ToolRecord) -> set[str]:
    out = set()
    for f in tool.fields:
        for label in {
            short_description(f.description).split("(")[0].strip(),
            answer_label(f.name, f.description) or "",
        }:
            if len(label) >= 3 and (_API.search(label) or label in _FORM):
                out.add(label)
        if len(f.name) >= 4 and re.search(r"[a-z][A-Z]|_", f.name):
            out.add(f.name)
    return out


def first_labels(step: dict[str, Any]) -> list[str]:
    """The labels of a final step's first three answering fields (categories of a KMA table)."""
    items = step["response"]["items"]
    if not items:
        return []
    if "category" in items[0]:
        cats = [str(x.get("category")) for x in items if str(x.get("category")) in KMA_CATEGORIES]
        return list(dict.fromkeys(KMA_CATEGORIES[c][0] for c in cats))[:3]
    row = items[min(step["response"].get("chosen", 0), len(items) - 1)]
    return list(dict.fromkeys(x for x in (answer_label(k) for k in row) if x))[:3]


def records_file(folder: Path) -> Path:
    """The records of a `kopa demo --workdir` folder (its export/) or of a `kopa synth --out` folder."""
    demo = folder / "export" / "records.jsonl"
    return demo if demo.is_file() else folder / "records.jsonl"


def figures(folder: Path, graph: Path | None = None) -> dict[str, Any]:
    """The figures of the records in `folder`, the tools read from `graph` (the demo folder's graph.sqlite3 when
    None; for `kopa synth`, the embedded graph it ran on)."""
    store = EmbeddedStore(graph or folder / "graph.sqlite3")
    tools = {t.name: t for t in store.all_tools()}
    store.close()
    recs = [json.loads(line) for line in records_file(folder).open(encoding="utf-8")]
    spoken = [r for r in recs if r["steps"]]
    asked_by: Counter[str] = Counter()
    first3 = api = 0
    for r in spoken:
        finals = [r["steps"][i - 1] for i in r["final_steps"]]
        first3 += any(len(ls) == 3 and all(x in r["request"] for x in ls) for ls in map(first_labels, finals))
        typed = json.dumps(r.get("slots", {}), ensure_ascii=False)
        labels = {x for s in r["steps"] for x in api_labels(tools[s["tool"]])}
        api += any(x in r["request"] and x not in typed for x in labels)
        for need in r["metadata"].get("needs") or ["(none recorded)"]:
            asked_by[need if need in ("field meaning", "condition", "(none recorded)") else "need"] += 1
    q = quality(recs)
    return {
        "records": len(recs),
        "records_with_steps": len(spoken),
        "request_frames": q["sentence_frames"],
        "final_steps_asked_by": dict(asked_by),
        "first_three_labels": first3,
        "api_labels_in_requests": api,
        "asked_pairs": q["world"]["asked_pairs"],
        "judge_gate": f"{q['facts_confirmed_on_own_answer']}/{q['records_with_facts']}",
        "world": q["world"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a kopa demo --workdir folder, or a kopa synth --out folder")
    parser.add_argument(
        "--graph", type=Path, help="the embedded graph the records were made on (default: FOLDER/graph.sqlite3)"
    )
    args = parser.parse_args()
    f = figures(args.folder, args.graph)
    n = max(1, f["records_with_steps"])
    asked = f["final_steps_asked_by"]
    print(f"records {f['records']} ({f['records_with_steps']} with calls), request frames {f['request_frames']}")
    print(
        f"final steps asked by a need {asked.get('need', 0)}, by the field-meaning fallback "
        f"{asked.get('field meaning', 0)}, conditional frames {asked.get('condition', 0)}, "
        f"not recorded {asked.get('(none recorded)', 0)}"
    )
    print(
        f"requests naming the first three labels of a row {f['first_three_labels']} ({f['first_three_labels'] / n:.1%})"
    )
    print(f"requests with API labels {f['api_labels_in_requests']}, (tool, asked facts) pairs {f['asked_pairs']}")
    print(f"judge gate (facts confirmed on their own answer) {f['judge_gate']}")
    w, total = f["world"], max(1, f["records"])
    print(
        f"distinct now {w['clocks']}, tools used {w['tools_used']}, KMA grid cells {w['grid_cells']}, places "
        f"(시도 시군구 started from) {w['places']}"
    )
    print("shapes " + ", ".join(f"{k} {v} ({v / total:.1%})" for k, v in w["shapes"].items()))
    print(
        f"counts that are not the provider's total {w['counts_not_total']}, extremes over rows not all seen "
        f"{w['extremes_over_partial_rows']}"
    )


if __name__ == "__main__":
    main()
