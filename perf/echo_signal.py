"""How well the echo signal (graph.echoes) foretells what verification decides: a full verification (fresh
sandbox, in process) of the bundled sandbox catalog and of the unseen family (tests/unseen/), and for every
candidate link the signal read from the rows (and arguments) discovery sampled, against the verdict the trials gave.
The signal costs no call; demand-driven synthesis proposes the links it says `against` last and verifies them
after the other links of a wave.

    python -m perf.echo_signal [--catalog sandbox|unseen|both]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import Counter
from pathlib import Path

import httpx

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.echoes import signals_for
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.registry import register
from graph.store import all_links
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import register_catalog
from tests.unseen.harness import SECRET, documents, transport, unseen_settings
from verification.engine import Engine
from verification.rounds import run_rounds
from verification.runs import new_run, scoped_tools

VERDICTS = ("support", "none", "against")


async def _verify(store: EmbeddedStore, settings: Settings, upstream: httpx.AsyncBaseTransport) -> Engine:
    run = new_run()
    tools, apis = scoped_tools(store, run)
    ex = Executor(settings, MemoryEconomy(), apis, transport=upstream, run_id=run.id)
    engine = Engine(store, settings, ex, run, tools={t.name: t for t in tools})
    try:
        await run_rounds(engine, tools)
    finally:
        await ex.aclose()
    return engine


def table(name: str, store: EmbeddedStore, engine: Engine) -> None:
    links = all_links(store)
    sig = signals_for(links, engine.samples, engine.sample_args)
    counts: Counter[tuple[str, str]] = Counter(
        (sig[lk.id].verdict if lk.id in sig else "none", lk.status) for lk in links
    )
    print(f"== {name}: {len(links)} candidate links, signal read for {len(sig)}")
    print(f"{'signal':>8} | {'verified':>8} {'refuted':>8} {'other':>6} | {'verified share':>14}")
    for v in VERDICTS:
        ok, bad = counts[(v, "verified")], counts[(v, "refuted")]
        other = sum(n for (vv, st), n in counts.items() if vv == v and st not in ("verified", "refuted"))
        share = ok / max(1, ok + bad)
        print(f"{v:>8} | {ok:>8} {bad:>8} {other:>6} | {share:>14.0%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", choices=("sandbox", "unseen", "both"), default="both")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.catalog in ("sandbox", "both"):
            settings, upstream = sandbox_mode(Settings())
            store = register_catalog(EmbeddedStore(Path(tmp) / "sandbox.sqlite3"), settings)
            table("bundled sandbox", store, asyncio.run(_verify(store, settings, upstream)))
            store.close()
        if args.catalog in ("unseen", "both"):
            path = Path(tmp) / "unseen.sqlite3"
            settings = unseen_settings(Settings(store="embedded", embedded_path=path))
            store = EmbeddedStore(path)
            for doc in documents().values():
                register(store, settings, doc, RegistrationMeta(auth=AuthConfig(secret=SECRET)))
            table("unseen family", store, asyncio.run(_verify(store, settings, transport())))
            store.close()


if __name__ == "__main__":
    main()
