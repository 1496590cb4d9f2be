"""execution/tool_calls.py, the one reader of tool calls written as text (the training probes and the benchmark's
text fallback): a gold call rendered as Hermes JSON and as Qwen3.5 XML (by hand, by trl's bundled templates, and
through a local tokenizer) parses back to the same name and arguments; XML values are typed (JSON when they
parse, text for string parameters); malformed blocks are calls with an error, never an exception; the probes'
`well_formed`/`first_tool_right` and the bench's `parse_tool_blocks` read both forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.agents import parse_tool_blocks
from execution.tool_calls import parse_tool_calls, strip_think, xml_value
from training.run import first_tool_right, well_formed

NAME = "kma_get_ultra_srt_ncst"
ARGS: dict[str, Any] = {
    "base_date": "20240101",  # digits, but a string parameter: stays text
    "nx": 60,
    "ny": 127.5,
    "codes": ["T1H", "RN1"],
    "filters": {"지역": "종로구", "n": [1, 2]},
    "strict": True,
    "memo": "두 줄의\n메모 <b>",
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": NAME,
            "description": "초단기실황",
            "parameters": {
                "type": "object",
                "properties": {
                    "base_date": {"type": "string"},
                    "nx": {"type": "integer"},
                    "ny": {"type": "number"},
                    "codes": {"type": "array", "items": {"type": "string"}},
                    "filters": {"type": "object"},
                    "strict": {"type": "boolean"},
                    "memo": {"type": ["string", "null"]},
                },
                "required": ["base_date", "nx", "ny"],
            },
        },
    },
    {"type": "function", "function": {"name": "juso_addr_link_api", "parameters": {"type": "object"}}},
]
OFFERED = [t["function"]["name"] for t in TOOLS]


def hermes(name: str, args: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n</tool_call>"


def xml(name: str, args: dict[str, Any]) -> str:
    """The Qwen3.5 template's rendering: mappings and lists as JSON, everything else as its string."""

    def text(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else str(v)

    params = "".join(f"<parameter={k}>\n{text(v)}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


@pytest.mark.parametrize("render", [hermes, xml])
def test_a_gold_call_in_either_form_parses_back(render: Any) -> None:
    text = (
        "측정소를 먼저 찾습니다.\n\n" + render(NAME, ARGS) + "\n" + render("juso_addr_link_api", {"keyword": "신교로"})
    )
    content, calls = parse_tool_calls(text, TOOLS)
    assert content == "측정소를 먼저 찾습니다."
    assert [(c.name, c.arguments, c.error, c.ok) for c in calls] == [
        (NAME, ARGS, "", True),
        ("juso_addr_link_api", {"keyword": "신교로"}, "", True),
    ]
    assert well_formed(text, OFFERED, TOOLS) and first_tool_right(text, OFFERED, NAME, TOOLS)
    assert not first_tool_right(text, OFFERED, "juso_addr_link_api", TOOLS)
    _, bench = parse_tool_blocks(text, prefix="call_t0_0", tools=TOOLS)
    assert [(c.id, c.name, c.arguments, c.error) for c in bench] == [
        ("call_t0_0_0", NAME, ARGS, ""),
        ("call_t0_0_1", "juso_addr_link_api", {"keyword": "신교로"}, ""),
    ]


def test_xml_values_are_json_when_they_parse_and_text_otherwise() -> None:
    """Without a schema (a tool not offered, or no tools handed in) numbers, lists, objects and JSON literals
    become JSON values and anything else stays text; a schema's `string` keeps digits as text."""
    _, [call] = parse_tool_calls(xml("other", {"n": 3, "x": 1.5, "xs": [1, "a"], "o": {"k": None}, "s": "종로구"}))
    assert call.arguments == {"n": 3, "x": 1.5, "xs": [1, "a"], "o": {"k": None}, "s": "종로구"}
    _, [call] = parse_tool_calls(xml(NAME, {"base_date": "20240101", "nx": "60"}))
    assert call.arguments == {"base_date": 20240101, "nx": 60}  # no schema: digits are a number
    _, [call] = parse_tool_calls(xml(NAME, {"base_date": "20240101", "nx": "60"}), TOOLS)
    assert call.arguments == {"base_date": "20240101", "nx": 60}
    assert xml_value("\nTrue\n", {"type": "boolean"}) is True and xml_value("\nfalse\n") is False
    assert xml_value("\n  spaced \n", {"type": "string"}) == "  spaced "
    assert xml_value("\n[1, 2\n", {"type": "array"}) == "[1, 2"  # not JSON: kept as written


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("<tool_call>{not json}</tool_call>", "not JSON"),
        ("<tool_call>[1]</tool_call>", "string `name`"),
        ('<tool_call>{"name": "a", "arguments": "{oops"}</tool_call>', "not a JSON object"),
        ('<tool_call>{"name": "a", "arguments": [1]}</tool_call>', "not a JSON object"),
        ("<tool_call>\n<function=a>\n<parameter=x>\n1\n</function>\n</tool_call>", "not closed"),
        ("<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</tool_call>", "not closed"),
        ("<tool_call>\n<function=>\n</function>\n</tool_call>", "needs a tool name"),
        ("<tool_call>\n<function=a>\n<parameter=>\n1\n</parameter>\n</function>\n</tool_call>", "needs a name"),
        ("<tool_call>\n<function=a>\nstray\n</function>\n</tool_call>", "outside <parameter>"),
        ('<tool_call>\n<function=a>\n</function>\n{"name": "b"}\n</tool_call>', "outside <function"),
        ("<tool_call>\n<function a>\n</tool_call>", "not JSON"),
    ],
)
def test_malformed_blocks_are_calls_with_an_error(text: str, why: str) -> None:
    content, calls = parse_tool_calls(text, TOOLS)
    assert len(calls) == 1 and calls[0].arguments is None and why in calls[0].error, calls
    assert not calls[0].ok and content == ""
    assert not well_formed(text, ["a", "b"])
    _, [bench] = parse_tool_blocks(text)
    assert bench.error == calls[0].error and bench.arguments is None and bench.raw


def test_what_the_probe_counts_as_well_formed() -> None:
    good = xml(NAME, {"base_date": "20240101", "nx": 60, "ny": 127})
    assert well_formed(good + "<|im_end|>", OFFERED)
    assert well_formed("<think>\n<tool_call>생각만</tool_call>\n</think>\n\n" + good, OFFERED, TOOLS)
    assert not well_formed("답만 합니다.", OFFERED)
    assert not well_formed(xml("not_offered", {}), OFFERED)
    assert not well_formed(good + "\n<tool_call>{broken", OFFERED)  # one bad block spoils the turn
    assert not well_formed(good.removesuffix("</tool_call>"), OFFERED)  # cut off before the closing tag
    assert not first_tool_right("답만 합니다.", OFFERED, NAME)
    # the fallbacks (no <tool_call> wrapper) are calls for the benchmark, not a well-formed turn for the probe
    bare = json.dumps({"name": NAME, "arguments": {"nx": 60}})
    _, [call] = parse_tool_calls(bare)
    assert (call.name, call.arguments, call.error, call.wrapped) == (NAME, {"nx": 60}, "", False)
    assert not well_formed(bare, OFFERED)
    content, [call] = parse_tool_calls("<function=a>\n<parameter=x>\n1\n</parameter>\n</function>")
    assert (content, call.name, call.arguments, call.form, call.wrapped) == ("", "a", {"x": 1}, "xml", False)
    assert parse_tool_calls('{"name": "a"}') == ('{"name": "a"}', [])  # an answer that happens to be JSON
    assert parse_tool_calls("  그냥 답입니다  ") == ("그냥 답입니다", [])
    content, [call] = parse_tool_calls(hermes("a", {}).removesuffix("</tool_call>"))  # cut off, JSON complete
    assert (call.name, call.arguments, call.error, call.closed) == ("a", {}, "", False)
    assert strip_think("앞부분 추론</think>답입니다") == "답입니다"


def _template(name: str) -> str:
    trl = pytest.importorskip("trl")
    return (Path(trl.__file__).parent / "chat_templates" / name).read_text(encoding="utf-8")


def _conversation() -> list[dict[str, Any]]:
    calls = [{"type": "function", "function": {"name": NAME, "arguments": ARGS}}]
    calls.append({"type": "function", "function": {"name": "juso_addr_link_api", "arguments": {"keyword": "신교로"}}})
    return [{"role": "user", "content": "종로구 날씨"}, {"role": "assistant", "content": "", "tool_calls": calls}]


@pytest.mark.parametrize("template", ["qwen2_5.jinja", "qwen3_5_nothink.jinja", "qwen3_5_think.jinja"])
def test_calls_rendered_by_the_chat_templates_parse_back(template: str) -> None:
    """trl's bundled Qwen2.5 (Hermes JSON) and Qwen3.5 (XML) templates render the gold calls; the assistant turn
    parses back to the same calls."""
    from transformers.utils.chat_template_utils import render_jinja_template

    tools: list[Any] = list(TOOLS)
    rendered = render_jinja_template([_conversation()], tools=tools, chat_template=_template(template))[0][0]
    turn = str(rendered).rsplit("<|im_start|>assistant\n", 1)[1].replace("<|im_end|>", "")
    assert ("<function=" in turn) == template.startswith("qwen3_5")
    _, calls = parse_tool_calls(strip_think(turn), TOOLS)
    assert [(c.name, c.arguments, c.ok) for c in calls] == [
        (NAME, ARGS, True),
        ("juso_addr_link_api", {"keyword": "신교로"}, True),
    ]
    assert well_formed(turn, OFFERED, TOOLS) and first_tool_right(turn, OFFERED, NAME, TOOLS)


def test_calls_through_the_local_tokenizer_parse_back() -> None:
    """The tiny local tokenizer (training/tiny.py) with its own Qwen2.5 template and with the Qwen3.5 one: the
    rendered conversation tokenised and decoded as the probe decodes a completion parses back to the gold calls."""
    pytest.importorskip("tokenizers")
    from training.tiny import build_tokenizer

    tok = build_tokenizer([json.dumps(ARGS, ensure_ascii=False)], vocab_size=400, words=OFFERED)
    for template in (tok.chat_template, _template("qwen3_5_nothink.jinja")):
        tok.chat_template = template
        prompt = tok.apply_chat_template(_conversation()[:1], tools=TOOLS, add_generation_prompt=True, tokenize=False)
        ids = tok(tok.apply_chat_template(_conversation(), tools=TOOLS, tokenize=False), add_special_tokens=False)
        decoded = tok.decode(ids["input_ids"], skip_special_tokens=False)
        assert decoded.startswith(prompt)
        completion = decoded.removeprefix(prompt)
        assert well_formed(completion, OFFERED, TOOLS), completion
        _, calls = parse_tool_calls(strip_think(completion), TOOLS)
        assert [(c.name, c.arguments) for c in calls] == [(NAME, ARGS), ("juso_addr_link_api", {"keyword": "신교로"})]
