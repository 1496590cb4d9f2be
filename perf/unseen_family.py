"""The engine on a family of services it has never seen (tests/unseen/: ten services of nine made-up agencies, own
envelopes, all-optional filters, dates in other formats and parts of dates, a 10-digit code that is not 법정동, a
prefixed station code, short and full province names, an agency's own province numbering under the same field names
as legal-dong codes, a city portal with the key as a path segment, index-range paging and Seoul/NEIS envelopes, a
highway-style `{"code": "SUCCESS", "count", "list"}` answer), registered with its own key and verified in process.
Prints recall, decoys verified, verified links the ground truth does not label, bonus links (true, scored apart),
precision, unreachable tools and calls per verified link against the targets of issue 22 (recall >= 95%, decoys 0,
unlabelled 0, precision >= 98%, unreachable 0, calls per verified link <= 1.5).

    python -m perf.unseen_family
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from tests.unseen.harness import documents, run_unseen


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        score = run_unseen(Path(tmp) / "unseen.sqlite3")
    s = score.summary()
    print(
        f"documents registered {s['registered_documents']}/{len(documents())}, tools {s['tools']}, "
        f"candidates {s['candidates']}"
    )
    print(f"verified recall {s['verified_true']}/{s['true_links']} = {s['recall']:.1%}   (target >= 95%)")
    print(f"decoys verified {len(s['decoys_verified'])}/{s['decoys']} {s['decoys_verified']}   (target 0)")
    print(f"verified links not in the ground truth {len(s['unlabelled_verified'])}   (target 0)")
    print(f"bonus links verified {len(s['bonus_verified'])}/{s['bonus']} {s['bonus_verified']}   (scored apart)")
    print(f"precision {s['precision']:.1%} of {score.verified} verified links   (target >= 98%)")
    print(f"unreachable tools {s['unreachable_tools']}   (target 0)")
    print(f"calls {s['calls']} = {s['calls_per_verified_link']} per verified link   (target <= 1.5)")
    print("missed: " + ", ".join(s["missed"]))
    for u in score.unreachable:
        print(f"  unreachable {u.get('tool')}: {json.dumps(u, ensure_ascii=False)[:200]}")
    for u in s["unlabelled_verified"]:
        print(f"  unlabelled {u}")
    for e in s["registration_errors"]:
        print(f"  registration error: {e}")


if __name__ == "__main__":
    main()
