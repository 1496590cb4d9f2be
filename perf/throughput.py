"""Throughput under global rate limits: two Celery workers, ten APIs limited to 20 requests/s each, a sandbox
answering with 50 ms latency. Prints the aggregate rate reached (target >= 85% of 200/s) and the highest
per-API rate in any one-second window (target: no limit exceeded by more than 5%).

    python -m perf.throughput [--seconds 12]

Starts its own Redis (redis-server), sandbox and workers on loopback.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import httpx
import redis

from core.settings import Settings
from sandbox.catalog import REAL_HOSTS
from sandbox.keys import DEMO_KEY
from tests.support.helpers import free_port, sandbox_process
from workers.celery_app import make_celery

SERVICES = [
    "StanReginCd",
    "VilageFcstInfoService_2.0",
    "MsrstnInfoInqireSvc",
    "KorService2",
    "hospInfoServicev2",
    "DrbEasyDrugInfoService",
    "AptListService4",
    "BldRgstHubService",
    "RTMSDataSvcAptTrade",
    "AsosDalyInfoService",
]
RATE = 20.0
ROOT = Path(__file__).resolve().parents[1]


def measure(workers_n: int, seconds: float, concurrency: int = 32, rate: float = RATE) -> dict[str, float]:
    """Start Redis, a sandbox (50 ms latency) and `workers_n` Celery workers; push calls through the real executor
    for about `seconds` at the aggregate limit; return the rate reached and the worst per-API one-second peak."""
    port = free_port()
    redis_proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""], stdout=subprocess.DEVNULL
    )
    url = f"redis://127.0.0.1:{port}/0"
    for _ in range(50):
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.RedisError:
            time.sleep(0.1)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with sandbox_process("--faults", "latency50", env={"KOPA_SANDBOX__QUOTAS": "*=0"}) as sandbox_url:
            env = {
                **os.environ,
                "KOPA_REDIS_URL": url,
                "KOPA_SERVICE_KEY": DEMO_KEY,
                "KOPA_UPSTREAM_OVERRIDES": ",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
                "KOPA_ALLOWED_HOSTS": json.dumps([*REAL_HOSTS, "127.0.0.1"]),
                "KOPA_VERIFY__CONCURRENCY": str(concurrency),
                "KOPA_VERIFY__NOW": "2026-10-15T14:20:00+09:00",
            }
            for i in range(workers_n):
                workers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "celery",
                            "-A",
                            "perf.throughput_app",
                            "worker",
                            "--pool=solo",
                            "-Q",
                            "kopa",
                            "-n",
                            f"bench{i}@%h",
                            "--loglevel=WARNING",
                            "--without-gossip",
                            "--without-mingle",
                        ],
                        env=env,
                        cwd=ROOT,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )
            time.sleep(4)
            admin = {"X-Sandbox-Admin": "sandbox-admin"}
            httpx.delete(sandbox_url + "/_sandbox/requests", headers=admin)
            celery = make_celery(Settings(redis_url=url))
            tasks = max(4, workers_n * 2)
            per_task = max(1, int(rate * seconds / tasks))
            run_id = "bench-" + uuid.uuid4().hex[:6]
            for _ in range(tasks):
                celery.send_task("bench.call_many", args=[SERVICES, per_task, rate, run_id])
            deadline = time.time() + seconds * 6 + 60
            r = redis.Redis.from_url(url)
            expected = per_task * tasks * len(SERVICES)
            while time.time() < deadline:
                calls = int(r.hget(f"kopa:run:{run_id}:calls", "calls") or 0)
                if calls >= expected and not r.llen("kopa"):
                    break
                time.sleep(0.5)
            time.sleep(1)
            log = httpx.get(sandbox_url + "/_sandbox/requests", headers=admin).json()["requests"]
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.wait(20)
        redis_proc.terminate()
    by_service: dict[str, list[float]] = defaultdict(list)
    for t, service in log:
        by_service[service].append(t)
    times = sorted(t for t, _ in log)
    duration = max(1e-9, times[-1] - times[0])
    worst, worst_service = 0.0, ""
    for service, ts in by_service.items():
        ts.sort()
        peak = max(bisect.bisect_left(ts, t + 1.0) - i for i, t in enumerate(ts))
        if peak > worst:
            worst, worst_service = peak, service
    return {
        "requests": len(times),
        "seconds": duration,
        "aggregate": len(times) / duration,
        "limit": rate * len(SERVICES),
        "worst_peak": worst,
        "worst_service": worst_service,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=12.0, help="planned duration at the aggregate limit")
    args = ap.parse_args()
    m = measure(2, args.seconds)
    print(
        f"APIs {len(SERVICES)} x limit {RATE:.0f}/s = aggregate limit {m['limit']:.0f}/s; workers 2; "
        f"sandbox latency 50 ms"
    )
    print(f"requests {m['requests']:.0f} in {m['seconds']:.1f} s")
    print(
        f"aggregate rate reached     {m['aggregate']:6.1f}/s = {m['aggregate'] / m['limit']:.1%} of the limit"
        "   (target >= 85%)"
    )
    print(
        f"highest rate of one API in any 1-second window {m['worst_peak']:.0f}/s ({m['worst_service']}) = "
        f"{m['worst_peak'] / RATE - 1:+.1%} against its limit   (target <= +5%)"
    )


if __name__ == "__main__":
    main()
