"""The built-in conversion tools (API kopa-convert): handlers against core.geo reference points, the spec a model
sees, registration, the executor's in-process path, the benchmark's gold runner and replay, GRPO rollouts, and
synthesised trajectories that carry a conversion step instead of a projection in the model's head."""

from __future__ import annotations

import asyncio
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
from core.settings import get_settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph import transforms as T
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
from graph.specs import function_spec
from training.environment import LiveBackend as TrainLive
from training.environment import ReplayBackend as TrainReplay
from verification.runs import new_run, scoped_tools

CITY_HALL = (126.9779692, 37.5662952)  # 서울시청, WGS84 lon/lat
#: core.geo reference points (tests/test_world.py): (lat, lon) -> KMA grid
GRID_POINTS = [((37.5665, 126.9780), (60, 127)), ((37.5172, 127.0473), (61, 126)),
               ((36.3504, 127.3845), (67, 100)), ((35.1796, 129.0756), (98, 76)), ((33.4996, 126.5312), (53, 38))]


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
    tx = T.apply({"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "x", "pair": "entY"}, row["entX"], row)
    ty = T.apply({"kind": "coord", "src": "UTMK", "dst": "KMA_GRID", "axis": "y", "pair": "entX"}, row["entY"], row)
    (grid,) = to_kma_grid_rows({"x": row["entX"], "y": row["entY"], "crs": "UTMK"})
    assert (str(grid["nx"]), str(grid["ny"])) == (tx, ty) == ("60", "127")
    tm = T.apply({"kind": "coord", "src": "UTMK", "dst": "TM", "axis": "x", "pair": "entY"}, row["entX"], row)
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


@pytest.mark.parametrize("args,code,words", [
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
])
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
