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

from sandbox.catalog import REAL_HOSTS
from sandbox.keys import DEMO_KEY
from tests.support.helpers import free_port, sandbox_process

SERVICES = ["StanReginCd", "VilageFcstInfoService_2.0", "MsrstnInfoInqireSvc", "KorService2", "hospInfoServicev2",
            "DrbEasyDrugInfoService", "AptListService4", "BldRgstHubService", "RTMSDataSvcAptTrade", "AsosDalyInfoService"]
RATE = 20.0
ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=12.0, help="planned duration at the aggregate limit")
    args = ap.parse_args()
    port = free_port()
    redis_proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
                                  stdout=subprocess.DEVNULL)
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
            env = {**os.environ, "KOPA_REDIS_URL": url, "KOPA_SERVICE_KEY": DEMO_KEY,
                   "KOPA_UPSTREAM_OVERRIDES": ",".join(f"{h}={sandbox_url}" for h in REAL_HOSTS),
                   "KOPA_ALLOWED_HOSTS": json.dumps([*REAL_HOSTS, "127.0.0.1"]), "KOPA_VERIFY__CONCURRENCY": "32",
                   "KOPA_VERIFY__NOW": "2026-10-15T14:20:00+09:00"}
            for i in range(2):
                workers.append(subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "perf.throughput_app", "worker", "--pool=solo", "-Q", "kopa",
                     "-n", f"bench{i}@%h", "--loglevel=WARNING", "--without-gossip", "--without-mingle"],
                    env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(4)
            admin = {"X-Sandbox-Admin": "sandbox-admin"}
            httpx.delete(sandbox_url + "/_sandbox/requests", headers=admin)
            from core.settings import Settings
            from workers.celery_app import make_celery

            celery = make_celery(Settings(redis_url=url))
            per_task = int(RATE * args.seconds / 4)
            run_id = "bench-" + uuid.uuid4().hex[:6]
            results = [celery.send_task("bench.call_many", args=[SERVICES, per_task, RATE, run_id]) for _ in range(4)]
            deadline = time.time() + args.seconds * 4 + 60
            r = redis.Redis.from_url(url)
            expected = per_task * 4 * len(SERVICES)
            while time.time() < deadline:
                calls = int(r.hget(f"kopa:run:{run_id}:calls", "calls") or 0)
                if calls >= expected and not r.llen("kopa"):
                    break
                time.sleep(0.5)
            time.sleep(1)
            log = httpx.get(sandbox_url + "/_sandbox/requests", headers=admin).json()["requests"]
            del results
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
    start, end = times[0], times[-1]
    duration = end - start
    print(f"APIs {len(SERVICES)} x limit {RATE:.0f}/s = aggregate limit {RATE * len(SERVICES):.0f}/s; workers 2; "
          f"sandbox latency 50 ms")
    print(f"requests {len(times)} in {duration:.1f} s")
    aggregate = len(times) / duration
    print(f"aggregate rate reached     {aggregate:6.1f}/s = {aggregate / (RATE * len(SERVICES)):.1%} of the limit"
          "   (target >= 85%)")
    worst = 0.0
    worst_service = ""
    for service, ts in by_service.items():
        ts.sort()
        peak = max(bisect.bisect_left(ts, t + 1.0) - i for i, t in enumerate(ts))
        if peak > worst:
            worst, worst_service = peak, service
    print(f"highest rate of one API in any 1-second window {worst:.0f}/s ({worst_service}) = "
          f"{worst / RATE - 1:+.1%} against its limit   (target <= +5%)")


if __name__ == "__main__":
    main()
