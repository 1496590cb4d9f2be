"""The generated catalog (sandbox/generated.py): per-region copies of the sandbox's services, more than a thousand
operations, deterministic, registered through the real parser, each copy answering with its own data only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from execution.result import CallResult
from graph.embedded_store import EmbeddedStore
from graph.models import ToolRecord
from sandbox import generated
from sandbox.examples import example_args
from sandbox.keys import DEMO_KEY
from sandbox.world import get_world
from tests.support.generated import carry_oracle, instance_map, label_links, link_kind, register_generated


def test_documents_are_deterministic_and_reach_a_thousand_operations() -> None:
    docs = generated.generated_documents()
    generated._documents.cache_clear()
    again = generated.generated_documents()
    assert generated.documents_hash(docs) == generated.documents_hash(again)
    assert generated.operation_count(docs) >= 1000
    n = len(generated.instances_for())
    assert n * generated.sandbox_operation_count() == generated.operation_count(docs)
    assert (n - 1) * generated.sandbox_operation_count() < 1000  # the fewest instances that reach the target
    assert len(generated.instances_for(min_operations=100)) == 3 and len(generated.instances_for(7)) == 7
    with pytest.raises(ValueError):
        generated.instances_for(0)
    # another base seed is another catalog: other worlds, so other parameter examples
    other = generated.generated_documents(2, seed=generated.DEFAULT_SEED + 1000)
    assert generated.documents_hash(other) != generated.documents_hash(generated.generated_documents(2))
    op_ids = [op["operationId"] for d in docs for m in d["paths"].values() for op in m.values()]
    assert len(op_ids) == len(set(op_ids))
    hosts = {d["servers"][0]["url"].split("/")[2] for d in docs}
    assert hosts == {i.host for i in generated.instances_for()}


def test_instance_zero_is_the_sandbox_rewritten() -> None:
    """Instance 0 serves the sandbox's own seed: its documents differ from the shipped ones only by what the
    generator rewrites (host, names, titles, descriptions)."""
    from sandbox.catalog import shipped_documents

    shipped = shipped_documents()
    first = generated.generated_documents(1)
    assert len(first) == len(shipped)
    for doc in first:
        did = doc["info"]["x-kopa-generated"]["service"]
        orig = shipped[did]
        assert doc["paths"].keys() == orig["paths"].keys()
        for sub, methods in doc["paths"].items():
            for method, op in methods.items():
                o = orig["paths"][sub][method]
                assert op["operationId"] == o["operationId"] + "_r00"
                assert [p.get("example") for p in op["parameters"]] == [p.get("example") for p in o["parameters"]]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("generated")
    settings, transport = generated.generated_mode(Settings(store="embedded", embedded_path=root / "g.sqlite3"))
    store = register_generated(EmbeddedStore(root / "g.sqlite3"), settings)
    yield {"store": store, "settings": settings, "transport": transport}
    store.close()


def test_registration_takes_every_operation_with_unique_tool_names(catalog: dict[str, Any]) -> None:
    store: EmbeddedStore = catalog["store"]
    tools = store.all_tools()
    im = instance_map(tools)
    catalogued = [t for t in tools if im[t.name] is not None]
    assert len(catalogued) == generated.operation_count(generated.generated_documents())
    assert len({t.name for t in tools}) == len(tools)
    assert all(t.name.endswith(f"_r{im[t.name]:02d}") for t in catalogued)
    apis = store.list_apis(limit=10_000)[0]
    assert len([a for a in apis if a.server_url.split("/")[2].endswith(generated.DOMAIN)]) == len(
        generated.generated_documents()
    )


def _tool(tools: list[ToolRecord], path_end: str, index: int) -> ToolRecord:
    host = generated.Instance(index, 0).host
    return next(t for t in tools if t.url.split("/")[2] == host and t.url.endswith(path_end))


async def _call(
    settings: Settings,
    transport: httpx.AsyncBaseTransport,
    store: EmbeddedStore,
    tool: ToolRecord,
    args: dict[str, Any],
) -> CallResult:
    ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=10_000)[0]}, transport=transport)
    try:
        return await ex.call(tool, args)
    finally:
        await ex.aclose()


def test_an_identifier_of_one_copy_means_nothing_to_another(catalog: dict[str, Any]) -> None:
    """The ykiho of a hospital of copy 1 answers in copy 1 and not in copy 2, through the real executor; a national
    code (시도코드) answers in both, with each copy's own hospitals."""
    store, settings, transport = catalog["store"], catalog["settings"], catalog["transport"]
    tools = store.all_tools()
    ykiho = example_args(get_world(generated.DEFAULT_SEED + 1))["MadmDtlInfoService2.7.getDtlInfo2.7"]["ykiho"]
    own = asyncio.run(_call(settings, transport, store, _tool(tools, "/getDtlInfo2.7", 1), {"ykiho": ykiho}))
    other = asyncio.run(_call(settings, transport, store, _tool(tools, "/getDtlInfo2.7", 2), {"ykiho": ykiho}))
    assert own.ok and own.items, own
    assert not other.items and other.outcome in ("empty", "invalid"), other
    lists = [
        asyncio.run(_call(settings, transport, store, _tool(tools, "/getHospBasisList", k), {"sidoCd": "110000"}))
        for k in (1, 2)
    ]
    assert all(r.ok and r.items for r in lists)
    assert {r["ykiho"] for r in lists[0].items}.isdisjoint({r["ykiho"] for r in lists[1].items})


def test_candidates_are_labelled_same_or_cross_instance(catalog: dict[str, Any]) -> None:
    from graph.store import all_links

    store = catalog["store"]
    links = all_links(store)
    im = instance_map(store.all_tools())
    kinds = {link_kind(lk, im) for lk in links}
    assert {"same", "cross"} <= kinds
    for lk in links[:500]:
        k = link_kind(lk, im)
        a, b = im.get(lk.source_tool), im.get(lk.target_tool)
        assert (k == "same") == (a is not None and a == b)


def test_every_generated_mode_call_is_a_fresh_app_without_daily_quotas() -> None:
    s1, t1 = generated.generated_mode(Settings())
    s2, t2 = generated.generated_mode(Settings())
    app1, app2 = t1.app, t2.app
    assert isinstance(app1, generated.GeneratedApp) and isinstance(app2, generated.GeneratedApp) and app1 is not app2
    path = "/B551182/hospInfoServicev2/getHospBasisList"

    async def hit(transport: httpx.AsyncBaseTransport, n: int) -> list[int]:
        async with httpx.AsyncClient(transport=transport, base_url="http://r03.generated.local") as client:
            out = []
            for _ in range(n):
                r = await client.get(path, params={"serviceKey": DEMO_KEY, "_type": "json", "sidoCd": "110000"})
                out.append(r.status_code)
            return out

    assert asyncio.run(hit(t1, 3)) == [200, 200, 200]
    used1 = app1.app_for(3).quota.counts
    assert sum(used1.values()) == 3
    assert 2 not in app2.apps and 3 not in app2.apps  # nothing built, nothing counted in the second app
    assert sum(app2.app_for(3).quota.counts.values()) == 0
    assert app1.app_for(3).quota.limit_for("hospInfoServicev2", 1000) == 0  # 0: no daily limit
    assert s1.upstream_overrides == s2.upstream_overrides

    # an unknown host is not served
    async def unknown() -> int:
        async with httpx.AsyncClient(transport=t1, base_url="http://r99.generated.local") as client:
            return (await client.get(path)).status_code

    assert asyncio.run(unknown()) == 404


def test_ground_truth_lifts_the_sandbox_labels_to_the_copies(catalog: dict[str, Any]) -> None:
    """The oracle executes each true sandbox link's values in two copies: a 법정동코드 crosses (national standard),
    a 요양기호 does not (issued by one copy); labels follow, within a copy as in the sandbox."""
    from graph.store import all_links

    oracle = carry_oracle()
    assert oracle["T01"].verdict == "crosses"  # region_cd -> LAWD_CD: a national code
    assert oracle["T62"].verdict == "local"  # ykiho: only the issuing copy knows it
    assert all(c.cross <= c.same <= c.tried for c in oracle.values())
    store = catalog["store"]
    tools = store.all_tools()
    links = all_links(store)
    labels = label_links(links, tools, oracle)
    im = instance_map(tools)
    seen = {(link_kind(lk, im), labels[lk.id]) for lk in links}
    assert {("same", "true"), ("cross", "true"), ("cross", "false")} <= seen
    ykiho = {
        labels[lk.id]
        for lk in links
        if lk.source_field == "ykiho" and lk.target_param.endswith(":ykiho") and link_kind(lk, im) == "cross"
    }
    assert "false" in ykiho and "true" not in ykiho
