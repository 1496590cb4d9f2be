"""In-process verification and synthesis with progress bars (shared by `kopa verify`, `kopa synth`, `kopa demo`)."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy, economy_for
from graph.models import LinkRecord, RunRecord
from graph.store import GraphStore, all_apis
from synthesis.batches import synthesize_guarded
from synthesis.records import SynthesisRequest, SynthesisResult
from verification.runs import DemandVerifier, execute_run


def verify_inprocess(store: GraphStore, settings: Settings, run: RunRecord, transport: Any = None) -> RunRecord:
    """Run a verification in this process with a progress bar; returns the finished run."""
    counts = {"verified": 0, "refuted": 0, "inconclusive": 0}
    with Progress(
        TextColumn("[bold]verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        transient=False,
    ) as bar:
        task = bar.add_task("", total=None)

        def tick(link: LinkRecord) -> None:
            counts[link.status] = counts.get(link.status, 0) + 1
            bar.update(
                task,
                advance=1,
                total=max(run.candidates, sum(counts.values())),
                description=f"✔ {counts['verified']}  ✘ {counts['refuted']}  ? {counts['inconclusive']}",
            )

        return asyncio.run(execute_run(store, settings, run, transport=transport, progress=tick))


def synth_inprocess(
    store: GraphStore, settings: Settings, transport: Any, request: SynthesisRequest, *, unverified: bool = False
) -> SynthesisResult:
    """Synthesise trajectories in this process with a progress bar, through the guarded path REST and Celery
    batches take too (never a trajectory that reproduces a KOPA-Bench task). `request.on_demand`: the links the
    plans traverse are verified first (verification.runs.DemandVerifier, sharing the executor's economy)."""
    apis = {a.id: a for a in all_apis(store)}

    async def go() -> SynthesisResult:
        # the process's economy (Redis, or the ledger beside the embedded graph): quotas hold across commands; the
        # in-process sandbox (`transport`) gets one of its own, so its answers never reach a shared cache
        economy = MemoryEconomy() if transport is not None else economy_for(settings, store)
        verifier = (
            DemandVerifier(store, settings, economy=economy, transport=transport)
            if request.on_demand and not unverified
            else None
        )
        bar = Progress(TextColumn("[bold]synthesising"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        async with Executor(settings, economy, apis, transport=transport) as executor:
            with bar:
                task = bar.add_task("", total=request.count)
                try:
                    return await synthesize_guarded(
                        store,
                        settings,
                        executor,
                        request,
                        progress=lambda _r: bar.advance(task),
                        unverified=unverified,
                        verifier=verifier,
                    )
                finally:
                    if verifier is not None:
                        await verifier.close()

    return asyncio.run(go())
