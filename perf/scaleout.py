"""Scale-out of verification workers: 1 vs 2 vs 4 Celery workers on the same work, with each worker's in-flight
calls bounded (KOPA_VERIFY__CONCURRENCY) so that one worker cannot saturate the APIs by itself. Ten APIs are limited
to 20 requests/s each (200/s in all) through the shared Redis token bucket; the sandbox answers in 50 ms.

Prints, per worker count, the aggregate rate and the worst one-second peak of any API against its limit: throughput
should grow with workers until the global limit, and no API limit is exceeded however many workers run (the
limit is global, not per worker). On Kubernetes, workers = replicas of the verification Deployment x --concurrency.

    python -m perf.scaleout [--workers 1,2,4] [--concurrency 3] [--seconds 8]
"""

from __future__ import annotations

import argparse

from perf.throughput import RATE, SERVICES, measure


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default="1,2,4", help="comma-separated worker counts")
    ap.add_argument("--concurrency", type=int, default=3, help="in-flight upstream calls per worker")
    ap.add_argument("--seconds", type=float, default=8.0, help="planned duration at the aggregate limit")
    args = ap.parse_args()
    counts = [int(x) for x in args.workers.split(",") if x.strip()]
    print(
        f"APIs {len(SERVICES)} x {RATE:.0f}/s = {RATE * len(SERVICES):.0f}/s aggregate limit; "
        f"{args.concurrency} in-flight calls per worker; 50 ms upstream latency"
    )
    print(f"{'workers':>7} {'requests':>9} {'rate/s':>8} {'of limit':>9} {'worst API peak':>15} {'vs 1 worker':>12}")
    base = None
    for n in counts:
        m = measure(n, args.seconds, concurrency=args.concurrency)
        base = base or m["aggregate"]
        print(
            f"{n:>7} {m['requests']:>9.0f} {m['aggregate']:>8.1f} {m['aggregate'] / m['limit']:>9.1%} "
            f"{m['worst_peak']:>10.0f}/s ({m['worst_peak'] / RATE - 1:+.0%}) {m['aggregate'] / base:>11.2f}x"
        )


if __name__ == "__main__":
    main()
