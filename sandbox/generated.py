"""A generated catalog of more than a thousand operations: per-region copies of the sandbox's services.

Korean public data publishes one standard API many times over: every 지자체 or institution serves its own copy of a
national standard schema (지자체별 표준데이터, per-institution copies of one OpenAPI), and each copy answers with its
own data only. A copy is a separate API with its own server, operation names and key; identifiers issued by one
copy (a complex code, a facility code, a business number) mean nothing to another, while national standards
(법정동코드, the KMA grid, dates) are valid in every copy.

This module builds that pattern from the sandbox: instance `k` is a `SandboxApp` with its own world
(`SandboxSettings(seed=seed + k)`: different entities, the same national codes) served under its own host
`rNN.generated.example`. Its documents are the sandbox's documents rewritten: the server host, operationIds
suffixed `_rNN` (tool names are `prefix_snake(operationId)`, so they stay unique across copies), titles and
descriptions naming the region, and parameter examples taken from the instance's own world. One host-dispatching
ASGI app serves every instance in process; `generated_mode` points settings at it like `sandbox_mode` does.

Daily quotas are off in every instance (`quotas="*=0"`, the sandbox's documented "unlimited" setting), so a long
synthesis run measures plans, not the development-account quota of 100 to 10,000 calls a day.

Used by tests and perf only (sandbox may import only core); registration lives in tests/support/generated.py.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import httpx

from core.settings import SandboxSettings, Settings
from sandbox.app import SandboxApp
from sandbox.catalog import _typed, doc_id, shipped_documents
from sandbox.clock import DEFAULT_NOW
from sandbox.examples import example_args
from sandbox.keys import DEMO_KEY
from sandbox.providers import all_operations
from sandbox.spec import Operation
from sandbox.world import get_world

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: The default base seed: the sandbox's own default seed, so instance 0 serves the sandbox's world.
DEFAULT_SEED = SandboxSettings().seed
#: Every instance host is NN.generated.example; overrides send it to NN.generated.local (in process).
DOMAIN = "generated.example"
LOCAL_DOMAIN = "generated.local"
#: The 17 시도: instance k publishes the copy of 시도 k mod 17 (a second round of copies is a second institution).
SIDO = (
    "서울특별시",
    "부산광역시",
    "대구광역시",
    "인천광역시",
    "광주광역시",
    "대전광역시",
    "울산광역시",
    "세종특별자치시",
    "경기도",
    "강원특별자치도",
    "충청북도",
    "충청남도",
    "전북특별자치도",
    "전라남도",
    "경상북도",
    "경상남도",
    "제주특별자치도",
)
#: Daily quotas off in every instance ("*=0": 0 is unlimited in sandbox.keys.QuotaBook.limit_for).
UNLIMITED_QUOTAS = "*=0"


@dataclass(frozen=True)
class Instance:
    """One regional copy: its index, world seed, host and the region it names."""

    index: int
    seed: int

    @property
    def tag(self) -> str:
        return f"r{self.index:02d}"

    @property
    def host(self) -> str:
        return f"{self.tag}.{DOMAIN}"

    @property
    def local_host(self) -> str:
        return f"{self.tag}.{LOCAL_DOMAIN}"

    @property
    def region(self) -> str:
        rnd, sido = divmod(self.index, len(SIDO))
        return SIDO[sido] if rnd == 0 else f"{SIDO[sido]} {rnd + 1}기관"


def sandbox_operation_count() -> int:
    return len(all_operations())


def instances_for(
    instances: int | None = None, *, min_operations: int = 1000, seed: int = DEFAULT_SEED
) -> list[Instance]:
    """The instances of a catalog: `instances` if given, else the fewest whose operations reach `min_operations`."""
    n = instances if instances is not None else max(1, math.ceil(min_operations / sandbox_operation_count()))
    if n < 1:
        raise ValueError("a generated catalog needs at least one instance")
    return [Instance(k, seed + k) for k in range(n)]


def instance_of_host(host: str) -> int | None:
    """The instance index a host (public or local) belongs to, or None."""
    m = re.fullmatch(rf"r(\d+)\.(?:{re.escape(DOMAIN)}|{re.escape(LOCAL_DOMAIN)})", host.lower().split(":")[0])
    return int(m.group(1)) if m else None


def _ops_by_doc() -> dict[str, list[Operation]]:
    out: dict[str, list[Operation]] = {}
    for op in all_operations():
        out.setdefault(doc_id(op), []).append(op)
    return out


def _rewrite(
    did: str, doc: dict[str, Any], inst: Instance, ops: list[Operation], examples: dict[str, Any]
) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    server = out["servers"][0]["url"]
    path = re.sub(r"^https?://[^/]+", "", server)
    out["servers"] = [{"url": f"https://{inst.host}{path}"}]
    info = out["info"]
    info["title"] = f"{info['title']} - {inst.region} ({inst.tag})"
    info["description"] = f"{inst.region} 제공본 ({inst.tag}): 이 기관의 데이터만 제공합니다. " + str(
        info.get("description", "")
    )
    info["x-kopa-generated"] = {"instance": inst.index, "seed": inst.seed, "region": inst.region, "service": did}
    by_sub = {"/" + op.path.rsplit("/", 1)[1]: op for op in ops}
    for sub, methods in out["paths"].items():
        op = by_sub[sub]
        op_examples = examples.get(op.op_id, {})
        declared = {p.name: p for p in op.params}
        for entry in methods.values():
            entry["operationId"] = f"{entry['operationId']}_{inst.tag}"
            entry["summary"] = f"{entry.get('summary', '')} ({inst.region})"
            entry["description"] = f"[{inst.region} 제공본] {entry.get('description', '')}"
            for prm in entry.get("parameters", []):
                p = declared.get(prm["name"])
                example = op_examples.get(prm["name"], p.example if p else None)
                if example is not None and p is not None:
                    prm["example"] = _typed(str(example), p.type)
            body = entry.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None and "__body__" in op_examples:
                body["example"] = op_examples["__body__"]
    return out


@lru_cache(maxsize=4)
def _documents(n: int, seed: int) -> str:
    shipped = shipped_documents()
    groups = _ops_by_doc()
    docs = []
    for inst in instances_for(n, seed=seed):
        examples = example_args(get_world(inst.seed))
        for did in sorted(shipped):
            docs.append(_rewrite(did, shipped[did], inst, groups[did], examples))
    return json.dumps(docs, ensure_ascii=False, sort_keys=True)


def generated_documents(
    instances: int | None = None, *, min_operations: int = 1000, seed: int = DEFAULT_SEED
) -> list[dict[str, Any]]:
    """The OpenAPI 3 documents of every instance, in a fixed order (instance, then service id); fresh copies."""
    n = len(instances_for(instances, min_operations=min_operations, seed=seed))
    docs: list[dict[str, Any]] = json.loads(_documents(n, seed))
    return docs


def documents_hash(docs: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(docs, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def operation_count(docs: list[dict[str, Any]]) -> int:
    return sum(len(methods) for d in docs for methods in d["paths"].values())


class GeneratedApp:
    """ASGI app serving every instance: dispatches on the Host header to that instance's `SandboxApp`.

    Instances are built on first use (a world takes a fraction of a second), so a test that calls one region
    does not build them all. An unknown host answers 404 like a missing virtual host.
    """

    def __init__(self, instances: list[Instance], base: SandboxSettings | None = None) -> None:
        base = base or SandboxSettings()
        self.instances = {inst.index: inst for inst in instances}
        self.base = base.model_copy(update={"quotas": base.quotas or UNLIMITED_QUOTAS})
        self.apps: dict[int, SandboxApp] = {}

    def app_for(self, index: int) -> SandboxApp:
        app = self.apps.get(index)
        if app is None:
            inst = self.instances[index]
            app = self.apps[index] = SandboxApp(self.base.model_copy(update={"seed": inst.seed}))
        return app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    for app in self.apps.values():
                        app.quota.flush()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        index = instance_of_host(host)
        if index is None or index not in self.instances:
            body = b"<html><body><h1>404 Not Found</h1></body></html>"
            await send(
                {
                    "type": "http.response.start",
                    "status": 404,
                    "headers": [(b"content-type", b"text/html"), (b"content-length", str(len(body)).encode())],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app_for(index)(scope, receive, send)


def generated_mode(
    settings: Settings, *, min_operations: int = 1000, seed: int = DEFAULT_SEED, instances: int | None = None
) -> tuple[Settings, httpx.ASGITransport]:
    """Settings and an in-process transport that send every instance host to a FRESH `GeneratedApp` (fresh
    quotas, clocks and fault state on every call), like `sandbox.inprocess.sandbox_mode`."""
    insts = instances_for(instances, min_operations=min_operations, seed=seed)
    os.environ.setdefault(settings.verify.key_secret, DEMO_KEY)
    overrides = ",".join(f"{i.host}=http://{i.local_host}" for i in insts)
    joined = ",".join(x for x in (settings.upstream_overrides, overrides) if x)
    locals_ = [i.local_host for i in insts]
    settings = settings.model_copy(
        update={
            "upstream_overrides": joined,
            "allowed_hosts": [*settings.allowed_hosts, f"*.{DOMAIN}", *locals_],
            "local_upstreams": [*settings.local_upstreams, *locals_],
            "verify": settings.verify.model_copy(update={"now": settings.verify.now or DEFAULT_NOW.isoformat()}),
        }
    )
    app = GeneratedApp(insts, settings.sandbox)
    return settings, httpx.ASGITransport(app=app)  # type: ignore[arg-type]
