"""`kopa train check` (training/check.py): the GPU-readiness checks of a model's tokenizer pass for every family's
real template (trl recognises it, the sample's assistant mask covers the call and the answer only, both parsers read
the template's own call back) and fail, with exit 1, for a template trl does not recognise byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli import app
from training.check import ANSWER, NAME, USER, template_checks
from training.tiny import FAMILIES, build_tokenizer

CORPUS = [f"{USER} {ANSWER} {NAME} stationName numOfRows 종로구 52"] * 20


def saved(tmp_path: Path, family: str, edit: str = "") -> Path:
    tok = build_tokenizer(CORPUS, vocab_size=600, words=[NAME], family=family)
    if edit:
        tok.chat_template = tok.chat_template + edit
    out = tmp_path / family
    tok.save_pretrained(out)
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_template_passes(tmp_path: Path, family: str) -> None:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(saved(tmp_path, family))
    kwargs = {"enable_thinking": False} if family != "qwen2.5" else {}
    checks = {c["check"]: c for c in template_checks(tok, kwargs)}
    assert all(c["ok"] for c in checks.values()), checks
    assert "trl's parse_response agree" in checks["parser reads the template's own call"]["detail"]
    trained, total = (int(x) for x in checks["assistant mask"]["detail"].split(" tokens")[0].split(" of "))
    assert 0 < trained < total / 2


def test_an_edited_template_is_refused_with_exit_1(tmp_path: Path) -> None:
    model = saved(tmp_path, "qwen3.5", edit="\n")  # one byte more than the released template
    result = CliRunner().invoke(app, ["train", "check", "--model", str(model)])
    assert result.exit_code == 1, result.output
    assert "FAIL template recognised by trl" in result.output and "byte for byte" in result.output
    assert "ok   tool calling" in result.output
    assert "not ready" in result.output


def test_the_cli_passes_a_released_template(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["train", "check", "--model", str(saved(tmp_path, "qwen3")), "--json"])
    assert result.exit_code == 0, result.output
    assert '"ok": true' in result.output
