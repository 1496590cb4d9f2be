"""Register the generated catalog (sandbox/generated.py) into a store and label its candidate links.

It lives here, not in sandbox/, because registration goes through graph.registry and sandbox may import only core
(tests/test_architecture.py). Used by tests/test_generated_catalog.py and perf/generated_catalog.py.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx

from core.payload import parse_body
from core.settings import Settings
from graph import transforms
from graph.candidates import derive_candidates
from graph.conversions import register_conversions
from graph.models import LinkRecord, ToolRecord
from graph.registry import register
from graph.store import GraphStore
from sandbox.examples import example_args
from sandbox.generated import DEFAULT_SEED, GeneratedApp, Instance, generated_documents, instance_of_host, instances_for
from sandbox.ground_truth import GroundTruthLink, load_ground_truth
from sandbox.spec import Operation
from sandbox.world import get_world
from tests.support.helpers import OPS, items_of, request_args, result_code

S = TypeVar("S", bound=GraphStore)
_TAG = re.compile(r"_r(\d+)(?:_\d+)?$")


def register_generated(
    store: S,
    settings: Settings,
    *,
    min_operations: int = 1000,
    seed: int = DEFAULT_SEED,
    instances: int | None = None,
    derive: bool = True,
) -> S:
    """Register every generated document through graph.registry.register (as the sandbox catalog is), the built-in
    conversion API, and store the candidates derived from the documents alone (no samples yet: verification derives
    again from values). `settings` must come from `generated_mode` (its allow-list names the generated hosts)."""
    for doc in generated_documents(instances, min_operations=min_operations, seed=seed):
        register(store, settings, doc)
    register_conversions(store, settings)
    if derive:
        store.upsert_candidates(derive_candidates(store.all_tools(), {}))
    return store


def instance_of_tool(tool: ToolRecord) -> int | None:
    """The instance a tool belongs to (by its server host; None for tools outside the catalog, e.g. conversions)."""
    m = re.match(r"https?://([^/]+)", tool.url)
    return instance_of_host(m.group(1)) if m else None


def link_kind(link: LinkRecord, instance_by_tool: dict[str, int | None]) -> str:
    """'same' (both ends in one instance), 'cross' (two instances), or 'shared' (an end outside the catalog, such as
    the built-in conversion API, that serves every instance)."""
    a, b = instance_by_tool.get(link.source_tool), instance_by_tool.get(link.target_tool)
    if a is None or b is None:
        return "shared"
    return "same" if a == b else "cross"


def instance_map(tools: list[ToolRecord]) -> dict[str, int | None]:
    return {t.name: instance_of_tool(t) for t in tools}


# ------------------------------------------------------------------ ground truth
#: How many distinct source values the oracle carries over per ground-truth link.
ORACLE_VALUES = 3


@dataclass
class Carry:
    """What the oracle saw for one sandbox ground-truth link: of the values copy A's source gave, how many answered
    rows in A's own target (`same`) and in copy B's target (`cross`)."""

    tried: int = 0
    same: int = 0
    cross: int = 0

    @property
    def determined(self) -> bool:
        """Some value answered at home. A link whose target needs other parameters that match the value (a 법정동
        part with the 시군구 of the same code) answers nothing with one parameter replaced: undetermined here."""
        return self.same > 0

    @property
    def verdict(self) -> str:
        """'crosses': every value that answers at home answers in the other copy too (a national standard:
        법정동코드, coordinates, dates, drug names); 'local': none does (an identifier only the issuing copy knows:
        a 요양기호, a stop id); 'mixed': some do (a building number that happens to exist in both); 'undetermined'."""
        if not self.determined:
            return "undetermined"
        return "crosses" if self.cross == self.same else "local" if self.cross == 0 else "mixed"

    @property
    def crosses(self) -> bool:
        return self.verdict == "crosses"


def _typed_key(source: str, field_: str, target: str, param: str, transform: dict[str, Any] | None) -> tuple[str, ...]:
    t = dict(transform or {"kind": "identity"})
    if t.get("kind") != "coord":
        t.pop("pair", None)
    return source, field_, target, param.split(":", 1)[-1], repr(sorted(t.items()))


async def _rows(client: httpx.AsyncClient, host: str, op: Operation, args: dict[str, Any]) -> list[dict[str, Any]]:
    req = request_args(op, args)
    resp = await client.request(**{**req, "url": f"http://{host}{req['url']}"})
    if resp.status_code != 200:
        return []
    try:
        doc = parse_body(resp.content)
        return items_of(op, doc) if result_code(op, doc) == op.provider.success_code else []
    except (KeyError, IndexError, TypeError, ValueError):
        return []


def _target_args(dst: Operation, examples: dict[str, dict[str, Any]], param: str, value: Any) -> dict[str, Any]:
    """The copy's own example arguments of the target with the carried value in place."""
    args = dict(examples[dst.op_id])
    if dst.method == "POST":
        args["__body__"] = {param: value}
    else:
        args[param] = value
    return args


async def _carry(client: httpx.AsyncClient, gt: GroundTruthLink, a: Instance, b: Instance) -> Carry:
    src, dst = OPS[gt["source"]["op"]], OPS[gt["target"]["op"]]
    ex_a, ex_b = example_args(get_world(a.seed)), example_args(get_world(b.seed))
    rows = await _rows(client, a.local_host, src, {**ex_a[src.op_id], src.provider.paging[1]: "50"})
    field_, param, t = gt["source"]["field"], gt["target"]["param"], gt["transform"]
    out, seen = Carry(), set[str]()
    for row in rows:
        if len(seen) >= ORACLE_VALUES or row.get(field_) in (None, ""):
            continue
        try:
            value = transforms.apply(t, row[field_], row)
        except transforms.TransformError:
            continue
        if json.dumps(value) in seen:
            continue
        seen.add(json.dumps(value))
        out.tried += 1
        if await _rows(client, a.local_host, dst, _target_args(dst, ex_a, param, value)):
            out.same += 1
            if await _rows(client, b.local_host, dst, _target_args(dst, ex_b, param, value)):
                out.cross += 1
    return out


#: The pairs of copies the oracle compares (summed): more source values than one pair gives.
ORACLE_PAIRS = ((1, 2), (3, 4), (5, 6), (7, 8))


def carry_oracle(seed: int = DEFAULT_SEED, pairs: tuple[tuple[int, int], ...] = ORACLE_PAIRS) -> dict[str, Carry]:
    """By executing them in pairs of copies, which true links of the sandbox's ground truth carry values that another
    copy accepts. Direct calls on the emulated servers (no engine code): the ground truth the labels use."""
    insts = {i.index: i for i in instances_for(max(max(p) for p in pairs) + 1, seed=seed)}
    app = GeneratedApp(list(insts.values()))
    true_links = [g for g in load_ground_truth() if g["kind"] == "true"]

    async def go() -> dict[str, Carry]:
        out = {g["id"]: Carry() for g in true_links}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as client:  # type: ignore[arg-type]
            for a, b in pairs:
                for gt in true_links:
                    got = await _carry(client, gt, insts[a], insts[b])
                    total = out[gt["id"]]
                    total.tried, total.same, total.cross = (
                        total.tried + got.tried,
                        total.same + got.same,
                        total.cross + got.cross,
                    )
        return out

    return asyncio.run(go())


def label_links(
    links: list[LinkRecord], tools: list[ToolRecord], oracle: dict[str, Carry] | None = None
) -> dict[str, str]:
    """Link id -> 'true', 'false', 'undetermined' or 'unlisted': the sandbox's ground truth lifted to the copies. A
    link within one copy is what its sandbox counterpart is; across copies, a true sandbox link stays true only when
    the oracle saw all its values cross ('false' when none did: the identifier is unknown to the other copy;
    'undetermined' when some did or the oracle could not tell); decoys are false everywhere; links the ground truth
    does not list are 'unlisted'."""
    oracle = oracle if oracle is not None else carry_oracle()
    im = instance_map(tools)
    op_by_path = {op.path: op.op_id for op in OPS.values()}
    op_of = {t.name: op_by_path.get(urlparse(t.url).path) for t in tools}
    gt_by_key = {
        _typed_key(g["source"]["op"], g["source"]["field"], g["target"]["op"], g["target"]["param"], g["transform"]): g
        for g in load_ground_truth()
    }
    out = {}
    for lk in links:
        src, dst = op_of.get(lk.source_tool), op_of.get(lk.target_tool)
        g = gt_by_key.get(_typed_key(src, lk.source_field, dst, lk.target_param, lk.transform)) if src and dst else None
        kind = link_kind(lk, im)
        if g is None:
            out[lk.id] = "unlisted"
        elif g["kind"] != "true":
            out[lk.id] = "false"
        elif kind == "cross":
            carry = oracle.get(g["id"], Carry())
            out[lk.id] = {"crosses": "true", "local": "false"}.get(carry.verdict, "undetermined")
        else:
            out[lk.id] = "true"
    return out
