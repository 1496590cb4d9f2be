"""Which records without calls GRPO takes: those whose answer declines, the one outcome its answer reward checks
for a prompt without gold calls; a benign request answered without tools stays in SFT."""

from __future__ import annotations

from synthesis.records import Trajectory
from training.datasets import abstention_records


def _record(rid: str, request: str, answer: str) -> Trajectory:
    return Trajectory(
        id=rid, request=request, shape="single", n_steps=0, tools=[], steps=[], final_answer=answer, kind="irrelevance"
    )


def test_declines_join_grpo_and_answers_made_without_tools_do_not() -> None:
    declined = _record("a", "주식 어떤 종목 사면 좋을까요?", "죄송하지만 제 도구로는 도와드릴 수 없어요.")
    answered = _record("b", "123 곱하기 456은 얼마야?", "123 곱하기 456은 56,088이에요.")
    asked_back = _record("c", "보고서 제목 세 가지만 제안해 주세요.", "어떤 보고서인지 알려 주세요.")
    assert [r.id for r in abstention_records([declined, answered, asked_back])] == ["a"]
