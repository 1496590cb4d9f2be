"""The built-in conversion tools (API kopa-convert): handlers against core.geo reference points, the spec a model
sees, registration, the executor's in-process path, the benchmark's gold runner and replay, GRPO rollouts, and
synthesised trajectories that carry a conversion step instead of a projection in the model's head."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.backends import ReplayBackend, Snapshot
from bench.gold import execute_gold
from bench.tasks import load_tasks
from cli.bench import bench_env
from core.conversions import ConversionError, convert_rows, from_kma_grid_rows, to_kma_grid_rows
from core.geo import convert, haversine_m, kma_grid_to_wgs84, wgs84_to_kma_grid
from core.settings import Settings, get_settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from execution.view import tool_view
from graph import transforms
from graph.conversions import (
    API_ID,
    CONVERT,
    FROM_KMA_GRID,
    TO_KMA_GRID,
    TOOL_NAMES,
    answer,
    conversion_tools,
    is_conversion,
    register_conversions,
)
from graph.embedded_store import EmbeddedStore
from graph.models import LinkRecord, ToolRecord
from graph.openapi import parse_document
from graph.specs import function_spec
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from synthesis.conversions import projects, with_conversions
from synthesis.engine import synthesize
from synthesis.quality import quality, quality_lines
from synthesis.records import Plan, Source, Step, StepResponse, SynthesisResult, Trajectory, TrajectoryStep
from tests.support.helpers import copy_store
from training.datasets import toolset_key
from training.environment import LiveBackend as TrainLive
from training.environment import ReplayBackend as TrainReplay
from training.environment import environment_factories
from verification.runs import new_run, scoped_tools

CITY_HALL = (126.9779692, 37.5662952)  # 서울시청, WGS84 lon/lat
#: core.geo reference points (tests/unit/sandbox/test_world.py): (lat, lon) -> KMA grid
GRID_POINTS = [
    ((37.5665, 126.9780), (60, 127)),
    ((37.5172, 127.0473), (61, 126)),
    ((36.3504, 127.3845), (67, 100)),
    ((35.1796, 129.0756), (98, 76)),
    ((33.4996, 126.5312), (53, 38)),
]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# ---------------------------------------------------------------------------------------------- handlers


@pytest.mark.parametrize("latlon,grid", GRID_POINTS)
def test_to_kma_grid_from_every_system_matches_core_geo(latlon: tuple[float, float], grid: tuple[int, int]) -> None:
    lat, lon = latlon
    assert wgs84_to_kma_grid(lat, lon) == grid
    (row,) = to_kma_grid_rows({"x": lon, "y": lat, "crs": "WGS84"})
    assert (row["nx"], row["ny"]) == grid
    for src in ("UTMK", "TM"):
        x, y = convert(lon, lat, "WGS84", src)
        # as a model sends them: numeric text with the precision the source API prints
        (row,) = to_kma_grid_rows({"x": f"{x:.3f}", "y": f"{y:.3f}", "crs": src})
        assert (row["nx"], row["ny"]) == grid, src
        assert haversine_m(row["lat"], row["lon"], lat, lon) < 0.01


def test_same_values_as_the_coord_transform_it_replaces() -> None:
    """Synthesis swaps a `coord` link for a conversion step: both must give the target the same value."""
    lon, lat = CITY_HALL
    ex, ey = convert(lon, lat, "WGS84", "UTMK")
    row = {"entX": f"{ex:.6f}", "entY": f"{ey:.6f}"}
    tx = transforms.apply(
        {"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "x", "pair": "entY"}, row["entX"], row
    )
    ty = transforms.apply(
        {"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "y", "pair": "entX"}, row["entY"], row
    )
    (grid,) = to_kma_grid_rows({"x": row["entX"], "y": row["entY"], "crs": "UTMK"})
    assert (str(grid["nx"]), str(grid["ny"])) == (tx, ty) == ("60", "127")
    tm = transforms.apply({"kind": "coord", "src": "UTMK", "dst": "TM", "axis": "x", "pair": "entY"}, row["entX"], row)
    (out,) = convert_rows({"x": row["entX"], "y": row["entY"], "from_crs": "UTMK", "to_crs": "TM"})
    assert out["crs"] == "TM" and abs(out["x"] - float(tm)) < 0.001


def test_coordinates_round_trip_between_wgs84_utmk_and_tm() -> None:
    lon, lat = CITY_HALL
    for dst in ("UTMK", "TM"):
        (there,) = convert_rows({"x": lon, "y": lat, "from_crs": "WGS84", "to_crs": dst})
        ref = convert(lon, lat, "WGS84", dst)
        assert abs(there["x"] - ref[0]) < 0.001 and abs(there["y"] - ref[1]) < 0.001
        (back,) = convert_rows({"x": there["x"], "y": there["y"], "from_crs": dst, "to_crs": "WGS84"})
        assert haversine_m(back["y"], back["x"], lat, lon) < 0.01
    (same,) = convert_rows({"x": "953898.319", "y": "1952009.375", "from_crs": "UTMK", "to_crs": "UTMK"})
    assert (same["x"], same["y"]) == (953898.319, 1952009.375)
    (centre,) = from_kma_grid_rows({"nx": 60, "ny": 127})
    assert (centre["lat"], centre["lon"]) == pytest.approx(kma_grid_to_wgs84(60, 127), abs=1e-6)
    assert wgs84_to_kma_grid(centre["lat"], centre["lon"]) == (60, 127)


@pytest.mark.parametrize(
    "args,code,words",
    [
        ({"x": 150.0, "y": 10.0, "crs": "WGS84"}, "outside_grid", "outside the KMA forecast grid"),
        ({"x": "abc", "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": "126,978", "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": True, "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": "nan", "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"y": 37.5, "crs": "WGS84"}, "missing_parameter", "x is required"),
        ({"x": 126.9, "y": 37.5}, "missing_parameter", "crs is required"),
        ({"x": 126.9, "y": 37.5, "crs": "GRS80"}, "bad_crs", "one of WGS84, UTMK, TM"),
        ({"x": 37.5662952, "y": 126.9779692, "crs": "WGS84"}, "out_of_range", "were they swapped"),
        ({"x": 126.9779692, "y": 37.5662952, "crs": "UTMK"}, "out_of_range", "send crs WGS84"),
    ],
)
def test_bad_input_is_refused_with_what_to_fix(args: dict[str, Any], code: str, words: str) -> None:
    with pytest.raises(ConversionError) as err:
        to_kma_grid_rows(args)
    assert err.value.code == code and words in err.value.message
    ans = answer(TO_KMA_GRID, args)
    assert (ans.outcome, ans.status, ans.code, ans.items) == ("invalid", 400, code, [])
    assert words in ans.reason


def test_answer_refuses_unknown_parameters_and_grid_cells() -> None:
    ans = answer(TO_KMA_GRID, {"x": 126.9, "y": 37.5, "crs": "WGS84", "lat": 37.5})
    assert ans.outcome == "invalid" and ans.code == "unknown_parameter" and "lat" in ans.reason
    assert answer(FROM_KMA_GRID, {"nx": 200, "ny": 127}).code == "outside_grid"
    assert answer(FROM_KMA_GRID, {"nx": 60.5, "ny": 127}).code == "not_an_integer"
    assert answer(CONVERT, {"x": 126.9, "y": 37.5, "from_crs": "WGS84", "to_crs": "TM"}).outcome == "ok"
    assert answer(CONVERT, {"x": -74.0, "y": 40.7, "from_crs": "WGS84", "to_crs": "TM"}).code == "out_of_range"


# ---------------------------------------------------------------------------------------------- spec and registry


def test_specs_tell_a_model_everything_it_needs() -> None:
    specs = {t.name: function_spec(t)["function"] for t in conversion_tools()}
    assert set(specs) == TOOL_NAMES
    grid = specs[TO_KMA_GRID]
    props = grid["parameters"]["properties"]
    assert grid["parameters"]["required"] == ["x", "y", "crs"]
    assert props["x"]["type"] == props["y"]["type"] == "number"
    assert props["crs"]["enum"] == ["WGS84", "UTMK", "TM"]
    assert "경도" in props["x"]["description"] and "easting" in props["x"]["description"]
    assert "위도" in props["y"]["description"] and "northing" in props["y"]["description"]
    for crs, source in (("WGS84", "mapx"), ("UTMK", "entX"), ("TM", "tmX")):
        assert crs in props["crs"]["description"] or source in props["x"]["description"]
    assert "nx" in grid["description"] and "격자" in grid["description"]
    conv = specs[CONVERT]["parameters"]
    assert conv["required"] == ["x", "y", "from_crs", "to_crs"]
    assert conv["properties"]["from_crs"]["enum"] == conv["properties"]["to_crs"]["enum"] == ["WGS84", "UTMK", "TM"]
    fields = {t.name: [f.name for f in t.fields] for t in conversion_tools()}
    assert fields[TO_KMA_GRID] == ["nx", "ny", "lon", "lat"] and fields[CONVERT] == ["x", "y", "crs"]


def test_registration_is_idempotent_and_verification_leaves_the_tools_out(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    first = register_conversions(store, get_settings())
    assert first.created and {t["change"] for t in first.tools} == {"new"}
    again = register_conversions(store)
    assert not again.created and {t["change"] for t in again.tools} == {"unchanged"}
    tools = {t.name: t for t in store.all_tools()}
    assert set(tools) == TOOL_NAMES and all(is_conversion(t) for t in tools.values())
    assert store.get_api(API_ID) is not None
    scoped, apis = scoped_tools(store, new_run())
    assert scoped == [] and API_ID in apis
    store.close()


# ---------------------------------------------------------------------------------------------- executor


class NoNetwork(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"a conversion tool went out to {request.url}")


def test_executor_answers_conversion_tools_in_process() -> None:
    tools = {t.name: t for t in conversion_tools()}
    economy = MemoryEconomy()

    async def go() -> list[Any]:
        ex = Executor(get_settings(), economy, {}, transport=NoNetwork(), run_id="r1")
        try:
            ok = await ex.call(tools[TO_KMA_GRID], {"x": "126.9779692", "y": "37.5662952", "crs": "WGS84"})
            bad = await ex.call(tools[TO_KMA_GRID], {"x": "not a number", "y": "37.5", "crs": "WGS84"})
            tm = await ex.call(tools[CONVERT], {"x": 126.9779692, "y": 37.5662952, "from_crs": "WGS84", "to_crs": "TM"})
            return [ok, bad, tm]
        finally:
            await ex.aclose()

    ok, bad, tm = run(go())
    assert ok.ok and ok.items == [{"nx": 60, "ny": 127, "lon": 126.9779692, "lat": 37.5662952}] and ok.status == 200
    assert ok.url.startswith("https://convert.kopa.invalid/v1/to-kma-grid?") and ok.response_hash
    assert (bad.outcome, bad.status, bad.code, bad.definitive) == ("invalid", 400, "not_a_number", True)
    assert tm.ok and tm.items[0]["crs"] == "TM"
    calls = economy.calls("r1")
    assert calls.get("local_calls") == 3 and not calls.get("calls")  # no upstream call counted


def test_a_lookalike_tool_is_not_answered_locally() -> None:
    """Only the built-in API's tools take the in-process path: same name, other API or URL goes upstream."""
    tool = conversion_tools()[0]
    assert is_conversion(tool)
    assert not is_conversion(tool.model_copy(update={"api_id": "someone-else"}))
    assert not is_conversion(tool.model_copy(update={"url": "https://apis.example.kr/v1/to-kma-grid"}))


# ---------------------------------------------------------------------------------------------- benchmark

GOLD_TASK = """
- id: fx-convert-weather-001
  category: chain
  persona: citizen
  turns: [종로구 청운로 74-11 근처 내일 오후 3시 기온이 몇 도일지 알려줘.]
  tools:
    offered: [juso_addr_link_api, juso_addr_coord_api, kopa_convert_to_kma_grid, kma_get_vilage_fcst]
    distractors: 2
  gold:
  - id: addr
    tool: juso_addr_link_api
    args:
      keyword: {user: 종로구 청운로 74-11}
  - id: xy
    tool: juso_addr_coord_api
    args:
      admCd: {from: addr, field: admCd}
      rnMgtSn: {from: addr, field: rnMgtSn}
      udrtYn: {from: addr, field: udrtYn}
      buldMnnm: {from: addr, field: buldMnnm}
      buldSlno: {from: addr, field: buldSlno}
  - id: grid
    tool: kopa_convert_to_kma_grid
    args:
      x: {from: xy, field: entX}
      y: {from: xy, field: entY}
      crs: {const: UTMK}
  - id: fc
    tool: kma_get_vilage_fcst
    args:
      base_date: {date: today, format: "%Y%m%d"}
      base_time: {const: "1100"}
      numOfRows: {const: 1000}
      nx: {from: grid, field: nx}
      ny: {from: grid, field: ny}
  facts:
  - kind: number
    from: fc
    field: fcstValue
    row: {where: {category: TMP, fcstDate: "20261016", fcstTime: "1500"}}
    tolerance: 0.5
    unit: ℃
"""


def test_gold_step_through_the_conversion_tool_live_and_in_replay(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "convert.yaml").write_text(GOLD_TASK, encoding="utf-8")
    (task,) = load_tasks(folder)
    shipped = next(t for t in load_tasks() if t.id == "chain-weather-cheongun-001")  # the same, projected in-head
    snap_path = tmp_path / "snap.json"

    async def go() -> tuple[Any, Any, Any]:
        async with bench_env(record=snap_path) as env:
            assert set(env.registry) >= TOOL_NAMES
            live = await execute_gold(task, env.backend, env.now)
            old = await execute_gold(shipped, env.backend, env.now)
        async with bench_env(mode="replay", snapshot=snap_path) as env:
            replay = await execute_gold(task, env.backend, env.now)
        return live, old, replay

    live, old, replay = run(go())
    grid = next(c for c in live.calls if c.step == "grid")
    assert grid.tool == TO_KMA_GRID and grid.args["crs"] == "UTMK"
    xy = next(c for c in live.calls if c.step == "xy").observation.items[0]
    assert (grid.args["x"], grid.args["y"]) == (str(xy["entX"]), str(xy["entY"]))  # the visible values, as shown
    fc = next(c for c in live.calls if c.step == "fc").args
    old_fc = next(c for c in old.calls if c.step == "fc").args
    assert (fc["nx"], fc["ny"]) == (old_fc["nx"], old_fc["ny"])  # the tool gives what the transform computed
    assert live.facts == old.facts == replay.facts
    snapshot = Snapshot.load(snap_path)
    assert not any(e["tool"] in TOOL_NAMES for e in snapshot.entries.values())  # replay computes, never records
    assert [c.tool for c in replay.calls] == [c.tool for c in live.calls]


def test_replay_computes_conversions_for_any_arguments() -> None:
    backend = ReplayBackend(Snapshot())
    obs = run(backend.call(TO_KMA_GRID, {"x": 126.978, "y": 37.5665, "crs": "WGS84"}))
    assert obs.ok and (obs.items[0]["nx"], obs.items[0]["ny"]) == (60, 127) and not backend.misses
    bad = run(backend.call(TO_KMA_GRID, {"x": 126.978, "y": 37.5665, "crs": "nope"}))
    assert bad.outcome == "invalid" and "one of WGS84" in bad.reason and not bad.miss
    miss = run(backend.call("kma_get_vilage_fcst", {"nx": 60}))
    assert miss.miss and len(backend.misses) == 1


# ---------------------------------------------------------------------------------------------- training


def test_grpo_replay_rollouts_compute_conversions() -> None:
    backend = TrainReplay([])
    out = backend.run("tr_x", TO_KMA_GRID, {"x": 126.978, "y": 37.5665, "crs": "WGS84"})
    assert out == {"rows": 1, "shown": 1, "items": [{"nx": 60, "ny": 127, "lon": 126.978, "lat": 37.5665}]}
    err = backend.run("tr_x", TO_KMA_GRID, {"x": 200, "y": 37.5665, "crs": "WGS84"})
    assert err["error"] == "invalid" and "longitude" in err["message"]  # the one view of an error (execution/view.py)


def test_grpo_live_rollouts_execute_conversions_through_the_executor() -> None:
    tools = {t.name: t for t in conversion_tools()}
    economy = MemoryEconomy()
    backend = TrainLive(get_settings(), tools, {}, transport=NoNetwork(), economy=economy)
    try:
        out = backend.run("tr_x", CONVERT, {"x": 126.9779692, "y": 37.5662952, "from_crs": "WGS84", "to_crs": "TM"})
        err = backend.run("tr_x", CONVERT, {"x": 126.9779692, "y": 37.5662952, "from_crs": "WGS84", "to_crs": "KMA"})
    finally:
        backend.close()
    assert out["rows"] == 1 and out["items"][0]["crs"] == "TM"
    assert abs(out["items"][0]["x"] - convert(*CITY_HALL, "WGS84", "TM")[0]) < 0.001
    assert err["error"] == "invalid" and err["message"].startswith("to_crs must be one of")
    assert economy.calls("training").get("local_calls") == 2


# ---------------------------------------------------------------------------------------------- synthesis


def _catalog_tools() -> dict[str, ToolRecord]:
    return {t.name: t for doc in shipped_documents().values() for t in parse_document(doc)[1]}


def _coord(
    lid: str, src_tool: str, field: str, target: str, param: str, src: str, dst: str, axis: str, pair: str
) -> LinkRecord:
    return LinkRecord(
        id=lid,
        source_tool=src_tool,
        source_field=field,
        target_tool=target,
        target_param=f"query:{param}",
        status="verified",
        transform={"kind": "coord", "src": src, "dst": dst, "axis": axis, "pair": pair},
    )


def test_plan_rewrite_puts_one_shared_conversion_step_before_the_projecting_steps() -> None:
    tools = _catalog_tools()
    root, fcst, ncst = tools["juso_addr_coord_api"], tools["kma_get_vilage_fcst"], tools["kma_get_ultra_srt_ncst"]

    def grid(target: ToolRecord) -> dict[str, Source]:
        return {
            "nx": Source(
                "link",
                link=_coord(
                    f"l_{target.name}_x", root.name, "entX", target.name, "nx", "UTMK", "KMA_GRID", "x", "entY"
                ),
                from_step=0,
            ),
            "ny": Source(
                "link",
                link=_coord(
                    f"l_{target.name}_y", root.name, "entY", target.name, "ny", "UTMK", "KMA_GRID", "y", "entX"
                ),
                from_step=0,
            ),
            "base_date": Source("clock", "20261015"),
        }

    plan = Plan(
        "parallel",
        [
            Step(root, {"admCd": Source("constant", "1111010100")}),
            Step(fcst, grid(fcst), [0]),
            Step(ncst, grid(ncst), [0]),
        ],
        [1, 2],
    )
    out = with_conversions(plan, {})
    assert [s.tool.name for s in out.steps] == [root.name, TO_KMA_GRID, fcst.name, ncst.name]
    assert out.finals == [2, 3] and out.shape == "parallel"
    conv = out.steps[1]
    assert conv.depends_on == [0] and conv.sources["crs"].value == "UTMK"
    assert {
        p: (s.from_step, s.link.source_field if s.link else None) for p, s in conv.sources.items() if s.kind == "link"
    } == {"x": (0, "entX"), "y": (0, "entY")}
    for i in (2, 3):
        fed = out.steps[i].sources
        assert out.steps[i].depends_on == [1] and fed["base_date"].kind == "clock"
        for p in ("nx", "ny"):
            link = fed[p].link
            assert link is not None and fed[p].from_step == 1 and link.source_tool == TO_KMA_GRID
            assert (
                link.source_field == p
                and link.transform == transforms.IDENTITY
                and link.id == f"l_{out.steps[i].tool.name}_{p[1]}"
            )
            assert not projects(link.transform)
    assert with_conversions(out, {}) is out  # nothing left to rewrite
    # between systems: the generic conversion, systems as constants
    tour, near = tools["tour_area_based_list2"], tools["airkorea_get_nearby_msrstn_list"]
    tm = Plan(
        "chain",
        [
            Step(tour, {}),
            Step(
                near,
                {
                    "tmX": Source(
                        "link",
                        link=_coord("a", tour.name, "mapx", near.name, "tmX", "WGS84", "TM", "x", "mapy"),
                        from_step=0,
                    ),
                    "tmY": Source(
                        "link",
                        link=_coord("b", tour.name, "mapy", near.name, "tmY", "WGS84", "TM", "y", "mapx"),
                        from_step=0,
                    ),
                },
                [0],
            ),
        ],
        [1],
    )
    rewritten = with_conversions(tm, {})
    assert [s.tool.name for s in rewritten.steps] == [tour.name, CONVERT, near.name]
    assert (rewritten.steps[1].sources["from_crs"].value, rewritten.steps[1].sources["to_crs"].value) == ("WGS84", "TM")
    assert {p: s.link.source_field for p, s in rewritten.steps[2].sources.items() if s.link} == {"tmX": "x", "tmY": "y"}


@pytest.fixture(scope="module")
def synthesised(
    tmp_path_factory: pytest.TempPathFactory, verified_catalog: Path
) -> tuple[list[Trajectory], dict[str, ToolRecord]]:
    settings, transport = sandbox_mode(Settings())
    store = copy_store(verified_catalog, tmp_path_factory.mktemp("convert") / "g.sqlite3")

    async def go() -> SynthesisResult:
        ex = Executor(settings, MemoryEconomy(), {a.id: a for a in store.list_apis(limit=100)[0]}, transport=transport)
        try:
            return await synthesize(store, settings, ex, count=60, seed=5, shapes=("chain", "fan_in", "parallel"))
        finally:
            await ex.aclose()

    try:
        out = run(go())
        tools = {t.name: t for t in store.all_tools()}
    finally:
        store.close()
    return out["records"], tools


def test_synthesised_trajectories_call_the_conversion_tool_with_visible_inputs(
    synthesised: tuple[list[Trajectory], dict[str, ToolRecord]],
) -> None:
    records, tools = synthesised
    converting = [r for r in records if any(s.tool in TOOL_NAMES for s in r.steps)]
    assert len(converting) >= 5, [[s.tool for s in r.steps] for r in records]
    for r in converting:
        offered = {t["function"]["name"] for t in r.tools}
        for i, s in enumerate(r.steps):
            if s.tool not in TOOL_NAMES:
                continue
            assert s.tool in offered and i > 0
            up = r.steps[s.provenance["x"]["from_step"]]
            assert s.provenance["y"]["from_step"] == s.provenance["x"]["from_step"]
            shown = up.response.items[up.response.chosen]
            for axis in ("x", "y"):  # the inputs are the source row's values as the model saw them
                prov = s.provenance[axis]
                assert prov["kind"] == "link" and prov["transform"] == transforms.IDENTITY
                assert str(shown[prov["field"]]) == str(prov["source_value"])
                assert float(s.arguments[axis]) == float(shown[prov["field"]])
            (row,) = s.response.items
            assert row == answer(s.tool, s.arguments).items[0]  # executed, recorded as answered
            consumers = [
                (later, p, prov)
                for later in r.steps
                for p, prov in later.provenance.items()
                if prov["kind"] == "link" and prov["from_step"] == i
            ]
            assert consumers
            for later, p, prov in consumers:
                assert str(later.arguments[p]) == str(row[prov["field"]])
                # the value the replaced coord transform would have computed from the same row
                src = s.arguments.get("crs") or s.arguments["from_crs"]
                dst = "KMA_GRID" if s.tool == TO_KMA_GRID else s.arguments["to_crs"]
                axis = "x" if prov["field"] in ("nx", "x") else "y"
                pair = s.provenance["y" if axis == "x" else "x"]["field"]
                legacy = transforms.apply(
                    {"kind": "coord", "src": src, "dst": dst, "axis": axis, "pair": pair},
                    shown[s.provenance[axis]["field"]],
                    shown,
                )
                assert abs(float(legacy) - float(later.arguments[p])) < 0.01
    q = quality(records)
    assert q["arguments_projected_outside_conversion_tool"] == 0 and q["conversion_steps"] >= len(converting)
    assert q["linked_values_not_visible"] == 0 and q["argument_schema_violations"] == 0
    assert all(tools[n].api_id == API_ID for n in TOOL_NAMES)


def test_quality_counts_projections_left_in_the_models_head() -> None:
    step = TrajectoryStep(
        step=2,
        tool="kma_get_vilage_fcst",
        arguments={"nx": 60, "ny": 127},
        provenance={
            "nx": {
                "kind": "link",
                "link": "l1",
                "from_step": 0,
                "field": "entX",
                "source_value": "953898.3",
                "transform": {"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "x", "pair": "entY"},
            },
            "ny": {
                "kind": "link",
                "link": "l2",
                "from_step": 0,
                "field": "entY",
                "source_value": "1952009.4",
                "transform": {"kind": "coord", "src": "UTMK", "dst": "UTMK", "axis": "y", "pair": "entX"},
            },
        },
        response=StepResponse(rows=1, items=[{"fcstValue": "18"}]),
    )
    first = TrajectoryStep(
        step=1,
        tool="juso_addr_coord_api",
        arguments={},
        provenance={},
        response=StepResponse(rows=1, items=[{"entX": "953898.3", "entY": "1952009.4"}]),
    )
    rec = Trajectory(
        id="tr_1",
        request="r",
        shape="chain",
        n_steps=2,
        steps=[first, step],
        final_steps=[2],
        final_answer="18",
        tools=[],
    )
    q = quality([rec])
    assert q["arguments_projected_outside_conversion_tool"] == 1 and q["arguments"] == 2  # same-system: no projection
    assert any("projection outside a conversion tool 1 of 2" in line for line in quality_lines(q))


def test_grpo_environment_of_a_synthesised_record_executes_its_conversion_step(
    synthesised: tuple[list[Trajectory], dict[str, ToolRecord]],
) -> None:
    records, tools = synthesised
    record = next(r for r in records if any(s.tool == TO_KMA_GRID for s in r.steps))
    step = next(s for s in record.steps if s.tool == TO_KMA_GRID)
    economy = MemoryEconomy()
    backend = TrainLive(get_settings(), {n: tools[n] for n in TOOL_NAMES}, {}, transport=NoNetwork(), economy=economy)
    try:
        classes, counter = environment_factories([record], backend)
        env = classes[toolset_key(record)]()
        env.reset(trajectory_id=record.id)
        out = getattr(env, TO_KMA_GRID)(**step.arguments)
    finally:
        backend.close()
    # the rollout sees what the record recorded, through the one view
    assert out == tool_view("ok", step.response.items, tool=tools[TO_KMA_GRID])
    assert json.loads(out)["items"] == step.response.items
    assert counter[TO_KMA_GRID] == 1 and economy.calls("training").get("local_calls") == 1
