"""verification/verdicts.py: when trials convince (`convincing`) and the verdict they make (`judge`): verified,
refuted or inconclusive, transient faults never refute, one entity of three refutes, and the evidence and history
a verdict carries (capped at MAX_HISTORY)."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from execution.result import CallResult, Outcome
from graph.models import LinkRecord
from verification.trials import Trial
from verification.verdicts import MAX_HISTORY, convincing, judge, rate

LINK = LinkRecord(
    id="l1", source_tool="src", source_field="code", target_tool="tgt", target_param="query:code", verified_at="then"
)
#: Source rows of three provinces (11 서울, 26 부산, 27 대구): values of several entities on offer.
POOL = [{"code": c} for c in ("11110", "11140", "26110", "27110")]


def trial(value: str, outcome: str, *, pool: list[dict[str, Any]] | None = None, reason: str = "") -> Trial:
    items = [{"name": f"row of {value}"}] if outcome == "ok" else []
    result = CallResult(Outcome(outcome), items=items, reason=reason or outcome, latency_ms=10.0)
    result.response_hash = f"hash of {value}"
    return Trial(value, {"code": value}, result, pool=pool or [], source_field="code")


def test_rate_counts_definitive_trials_only() -> None:
    assert rate([trial("1", "ok"), trial("2", "empty"), trial("3", "transient")]) == 0.5
    assert rate([trial("1", "transient")]) == 0.0


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (("ok", "ok", "empty", "empty", "empty"), True),  # two successes
        (("ok", "empty"), True),  # one in two
        (("ok", "empty", "empty"), False),  # one in three is under a third
        (("ok", "invalid", "empty", "empty"), False),
        (("empty", "invalid"), False),
        (("ok", "transient", "transient"), True),  # the rate reads definitive trials only
    ],
)
def test_convincing_without_a_pool_is_two_successes_or_a_third(outcomes: tuple[str, ...], expected: bool) -> None:
    assert convincing([trial(str(i), o) for i, o in enumerate(outcomes)]) is expected


def test_values_of_one_entity_do_not_convince_when_the_source_offers_several() -> None:
    one = [trial("11110", "ok", pool=POOL), trial("11140", "ok", pool=POOL), trial("26110", "empty", pool=POOL)]
    two = [trial("11110", "ok", pool=POOL), trial("26110", "ok", pool=POOL), trial("27110", "empty", pool=POOL)]
    assert not convincing(one)
    assert convincing(two)


def test_two_of_three_verify_with_the_kinds_that_worked() -> None:
    v = judge("run-1", LINK, [trial("11110", "ok"), trial("11140", "ok"), trial("11170", "empty")], "trial")
    assert v.status == "verified" and v.reason == "2 of 3 values worked (digits5 2/3)"
    assert not v.needs_reverify and v.last_run == "run-1" and v.verified_at == v.updated_at != "then"


def test_one_success_among_values_of_one_entity_is_no_proof() -> None:
    v = judge("r", LINK, [trial(str(i), o) for i, o in enumerate(("ok", "empty", "empty", "invalid"))], "trial")
    assert v.status == "refuted" and v.reason == "worked for only 1 of 4 values"
    assert v.verified_at == "then"  # a refutation keeps when the link was last verified


def test_no_success_refutes_with_the_most_common_reason() -> None:
    trials = [trial("1", "empty", reason="no rows"), trial("2", "empty", reason="no rows"), trial("3", "invalid")]
    v = judge("r", LINK, trials, "trial")
    assert (v.status, v.reason) == ("refuted", "no rows (3 values)")


def test_one_entity_of_three_refutes_however_many_of_its_values_worked() -> None:
    trials = [
        trial("11110", "ok", pool=POOL),
        trial("11140", "ok", pool=POOL),
        trial("26110", "empty", pool=POOL),
        trial("27110", "empty", pool=POOL),
    ]
    v = judge("r", LINK, trials, "trial")
    assert v.status == "refuted"
    assert v.reason == "worked for one entity only (11) of 3 tried: the values coincide there"


def test_one_entity_of_two_may_be_a_target_with_data_for_some_entities() -> None:
    pool = [{"code": c} for c in ("11110", "26110")]
    v = judge("r", LINK, [trial("11110", "ok", pool=pool), trial("26110", "empty", pool=pool)], "trial")
    assert v.status == "verified"


def test_two_entities_of_three_verify() -> None:
    trials = [trial("11110", "ok", pool=POOL), trial("26110", "ok", pool=POOL), trial("27110", "empty", pool=POOL)]
    assert judge("r", LINK, trials, "trial").status == "verified"


def test_a_transient_fault_leaves_the_link_inconclusive_with_its_reason() -> None:
    trials = [trial("1", "empty"), trial("2", "transient", reason="timeout"), trial("3", "transient", reason="503")]
    v = judge("r", LINK, trials, "trial")
    assert (v.status, v.reason, v.needs_reverify) == ("inconclusive", "transient: 503", True)
    assert v.verified_at == "then"


def test_faults_count_as_failures_so_they_never_tip_a_link_into_verified() -> None:
    trials = [trial("1", "ok"), trial("2", "transient"), trial("3", "transient")]
    assert convincing(trials)  # one success of one definitive trial
    assert judge("r", LINK, trials, "trial").status == "inconclusive"  # but one of three calls


def test_no_trial_is_inconclusive() -> None:
    v = judge("r", LINK, [], "trial")
    assert (v.status, v.reason) == ("inconclusive", "transient: no trial")
    assert v.evidence["response_hash"] == "" and v.evidence["latency_ms"] is None


OUTCOMES = ("ok", "empty", "invalid", "transient")


@pytest.mark.parametrize("pool", [[], POOL], ids=["one entity", "three entities"])
def test_transient_faults_never_refute(pool: list[dict[str, Any]]) -> None:
    """Every mix of four outcomes over values of three provinces: with a fault among them, never refuted."""
    values = ("11110", "26110", "27110", "11140")
    seen = set()
    for outcomes in product(OUTCOMES, repeat=len(values)):
        v = judge("r", LINK, [trial(x, o, pool=pool) for x, o in zip(values, outcomes, strict=True)], "trial")
        seen.add(v.status)
        if "transient" in outcomes:
            assert v.status != "refuted", outcomes
    assert seen == {"verified", "refuted", "inconclusive"}


def test_an_answer_that_takes_the_value_as_another_parameter_refutes_even_when_all_worked() -> None:
    """ny's value fed into nx of a service that echoes both: the rows say the value was taken as nx."""
    link = LINK.model_copy(update={"source_field": "ny", "target_param": "query:nx"})
    result = CallResult(Outcome.OK, items=[{"nx": "55", "ny": "127", "temp": "3"}])
    trials = [Trial("55", {"nx": "55", "ny": "127"}, result, source_field="ny") for _ in range(3)]
    v = judge("r", link, trials, "trial")
    assert v.status == "refuted" and v.reason.startswith("echo: the value of ny lands in nx")


def test_the_evidence_names_entities_examples_and_latency() -> None:
    trials = [trial(v, o, pool=POOL) for v, o in [("11110", "empty"), ("11140", "ok"), ("11170", "ok")]]
    trials += [trial("11200", "ok", pool=POOL), trial("26110", "ok", pool=POOL)]
    trials[0].result.latency_ms = 50.0
    ev = judge("run-9", LINK, trials, "joint").evidence
    assert (ev["run_id"], ev["mode"], ev["trials"], ev["successes"]) == ("run-9", "joint", 5, 4)
    assert ev["entities"] == [
        {"entity": "11", "values": ["11110", "11140", "11170"], "worked": 3},
        {"entity": "26", "values": ["26110"], "worked": 1},
    ]
    assert ev["latency_ms"] == 18.0  # (50 + 4 × 10) / 5
    assert ev["response_hash"] == "hash of 11140"  # the first that worked
    assert [e["source_value"] for e in ev["examples"]] == ["11110", "11140", "11170"]
    assert ev["examples"][1]["first_row"] == {"name": "row of 11140"} and ev["examples"][0]["first_row"] is None


def test_the_history_keeps_the_last_verdicts_newest_last() -> None:
    old = [{"at": "t", "run": f"old-{i}", "status": "verified", "reason": ""} for i in range(MAX_HISTORY)]
    v = judge("new", LINK.model_copy(update={"history": old}), [trial("1", "empty")], "trial")
    assert len(v.history) == MAX_HISTORY
    assert v.history[0]["run"] == "old-1" and v.history[-1]["run"] == "new"
    assert v.history[-1]["status"] == "refuted"
    assert LINK.history == []  # the link judged is a copy, never changed
