"""Requests per second of the sandbox for a mix of operations, no injected latency, over loopback.

    python -m perf.sandbox_rps [--seconds 10] [--connections 32] [--workers 1]

Starts `kopa sandbox serve` as its own process (quotas lifted) and drives it with `wrk` (Debian package `wrk`)
rotating through a mix of operations; without wrk it falls back to a Python client, which measures the client
more than the server. Target: at least 1,000 requests/s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx

from sandbox.examples import example_args
from sandbox.world import get_world
from tests.support.helpers import OPS, request_args, sandbox_process

MIX = [
    "VilageFcstInfoService_2.0.getUltraSrtNcst",
    "StanReginCd.getStanReginCdList",
    "RTMSDataSvcAptTrade.getRTMSDataSvcAptTrade",
    "MsrstnInfoInqireSvc.getNearbyMsrstnList",
    "ArpltnInforInqireSvc.getMsrstnAcctoRltmMesureDnsty",
    "KorService2.detailCommon2",
    "hospInfoServicev2.getHospBasisList",
    "MadmDtlInfoService2.7.getDtlInfo2.7",
    "ArvlInfoInqireService.getSttnAcctoArvlPrearngeInfoList",
    "DrbEasyDrugInfoService.getDrbEasyDrugList",
    "AptBasisInfoServiceV5.getAphusBassInfoV5",
    "addrlink.addrCoordApi.do",
    "BldRgstHubService.getBrTitleInfo",
    "KorService2.areaBasedList2",
    "BusRouteInfoInqireService.getRouteInfoIem",
]


def mix_paths() -> list[str]:
    ex = example_args(get_world(20261130))
    out = []
    for op_id in MIX:
        ra = request_args(OPS[op_id], ex[op_id], fmt="json")
        out.append(str(httpx.URL(ra["url"], params=ra["params"])))
    return out


def run_wrk(url: str, paths: list[str], seconds: float, connections: int) -> tuple[float, int, str]:
    lua = (
        "local paths = {"
        + ",".join(f'"{p}"' for p in paths)
        + "}\n"
        + ("local i = 0\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format('GET', paths[i])\nend\n")
    )
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "mix.lua"
        script.write_text(lua)
        out = subprocess.run(
            ["wrk", "-t2", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "-s", str(script), url],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rps, int(non2xx.group(1)) if non2xx else 0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--workers", type=int, default=1, help="sandbox server processes")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    paths = mix_paths()
    with sandbox_process("--workers", str(args.workers), env={"KOPA_SANDBOX__QUOTAS": "*=0"}) as url:
        run_wrk(url, paths, 2, 8)  # warm up
        rps, non2xx, out = run_wrk(url, paths, args.seconds, args.connections)
    lat = {m.group(1): m.group(2) for m in re.finditer(r"\s+(50|99)%\s+(\S+)", out)}
    print(f"operations in mix     {len(MIX)}")
    print(f"server processes      {args.workers}")
    print(f"non-200 responses     {non2xx}")
    print(f"requests/s            {rps:,.0f}   (target >= 1,000)")
    print(f"latency p50 / p99     {lat.get('50')} / {lat.get('99')}")


if __name__ == "__main__":
    main()
