"""The engine on a family of services it has never seen (tests/unseen/: five services of four made-up agencies, own
envelopes, all-optional filters, dates in other formats, a 10-digit code that is not 법정동, a prefixed station code),
registered with its own key and verified in process. Prints recall, decoys verified, unreachable tools and calls per
verified link against the targets of issue 12 (recall >= 90%, decoys 0, unreachable 0, calls per verified link <= 2).

    python -m perf.unseen_family
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.unseen.harness import run_unseen


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        score = run_unseen(Path(tmp) / "unseen.sqlite3")
    s = score.summary()
    print(f"documents registered {s['registered_documents']}/5, tools {s['tools']}, candidates {s['candidates']}")
    print(f"verified recall {s['verified_true']}/{s['true_links']} = {s['recall']:.0%}   (target >= 90%)")
    print(f"decoys verified {len(s['decoys_verified'])}/{s['decoys']} {s['decoys_verified']}   (target 0)")
    print(f"unreachable tools {s['unreachable_tools']}   (target 0)")
    print(f"calls {s['calls']} = {s['calls_per_verified_link']} per verified link   (target <= 2)")
    print("missed: " + ", ".join(s["missed"]))
    for u in score.unreachable:
        print(f"  unreachable {u.get('tool')}: {json.dumps(u, ensure_ascii=False)[:200]}")
    for e in s["registration_errors"]:
        print(f"  registration error: {e}")


if __name__ == "__main__":
    main()
