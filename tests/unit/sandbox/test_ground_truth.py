"""The ground truth is true: every true link works when executed against the sandbox (with its transform), and
every decoy fails on every value tried. This is what makes the ground truth fit for scoring verification."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import httpx
import pytest

from core.payload import parse_body
from graph import transforms
from sandbox.catalog import shipped_documents
from sandbox.examples import example_args
from sandbox.ground_truth import GroundTruthLink, load_ground_truth
from sandbox.world import get_world
from tests.support.helpers import OPS, call, items_of, result_code

LINKS = load_ground_truth()
EXAMPLES = example_args(get_world(20261130))
TRUE_TRIES, DECOY_TRIES = 8, 5


def test_counts_and_references() -> None:
    kinds: dict[str, int] = defaultdict(int)
    for link in LINKS:
        kinds[link["kind"]] += 1
        src, dst = OPS[link["source"]["op"]], OPS[link["target"]["op"]]
        assert link["source"]["field"] in {f.name for f in src.fields}, link["id"]
        assert link["target"]["param"] in {p.name for p in dst.params} | set(
            (dst.body_schema or {}).get("properties", {})
        ), link["id"]
    assert kinds["true"] >= 40 and kinds["decoy"] >= 20
    assert len({link["id"] for link in LINKS}) == len(LINKS)
    assert shipped_documents()


def _rows(client: httpx.Client, op_id: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    resp = call(client, op_id, args, fmt="json" if "json" in OPS[op_id].provider.formats else None)
    doc = parse_body(resp.content)
    assert result_code(OPS[op_id], doc) == OPS[op_id].provider.success_code
    return items_of(OPS[op_id], doc)


def _required_examples(op_id: str) -> dict[str, Any]:
    op = OPS[op_id]
    keep = {p.name for p in op.params if p.required} | {"MobileOS", "MobileApp", "dataTerm", "numOfRows"}
    return {k: v for k, v in EXAMPLES[op_id].items() if k in keep}


def _attempt(client: httpx.Client, group: list[GroundTruthLink], row: dict[str, Any]) -> bool:
    target = group[0]["target"]["op"]
    args = _required_examples(target)
    op = OPS[target]
    for link in group:
        try:
            value = transforms.apply(link["transform"], row.get(link["source"]["field"]), row)
        except transforms.TransformError:
            return False
        if op.method == "POST":
            args["__body__"] = {link["target"]["param"]: value}
        else:
            args[link["target"]["param"]] = value
    resp = call(client, target, args, fmt="json" if "json" in op.provider.formats else None)
    if resp.status_code != 200:
        return False
    doc = parse_body(resp.content)
    try:
        if result_code(op, doc) != op.provider.success_code:
            return False
        rows = items_of(op, doc)
    except (KeyError, TypeError, IndexError):
        return False
    if op.provider.envelope == "odcloud":
        rows = [r for r in rows if r.get("b_stt_cd")]
    return bool(rows) and not (op.single and all(v is None for v in rows[0].values()))


def _groups(kind: str) -> list[list[GroundTruthLink]]:
    if kind == "decoy":
        return [[link] for link in LINKS if link["kind"] == "decoy"]
    grouped: dict[tuple[str, str], list[GroundTruthLink]] = defaultdict(list)
    for link in LINKS:
        if link["kind"] == "true":
            grouped[(link["source"]["op"], link["target"]["op"])].append(link)
    return list(grouped.values())


def _distinct_rows(rows: list[dict[str, Any]], fields: list[str], limit: int) -> list[dict[str, Any]]:
    seen, out = set(), []
    for row in rows:
        key = tuple(str(row.get(f)) for f in fields)
        if key not in seen:
            seen.add(key)
            out.append(row)
        if len(out) == limit:
            break
    return out


@pytest.mark.parametrize("group", _groups("true"), ids=lambda g: "+".join(link["id"] for link in g))
def test_true_links_execute(local: httpx.Client, group: list[GroundTruthLink]) -> None:
    source = group[0]["source"]["op"]
    rows = _distinct_rows(
        _rows(local, source, EXAMPLES[source]), [link["source"]["field"] for link in group], TRUE_TRIES
    )
    assert rows, f"no upstream rows for {source}"
    assert any(_attempt(local, group, row) for row in rows), f"true link failed on {len(rows)} values"


@pytest.mark.parametrize("group", _groups("decoy"), ids=lambda g: g[0]["id"])
def test_decoys_fail(local: httpx.Client, group: list[GroundTruthLink]) -> None:
    source = group[0]["source"]["op"]
    rows = _distinct_rows(_rows(local, source, EXAMPLES[source]), [group[0]["source"]["field"]], DECOY_TRIES)
    assert rows
    succeeded = [row.get(group[0]["source"]["field"]) for row in rows if _attempt(local, group, row)]
    assert not succeeded, f"decoy worked for {succeeded}"
