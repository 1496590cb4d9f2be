"""A Celery app for the throughput benchmark: the project's workers plus one task that makes many calls through
the real executor (global Redis rate limits, no cache). Started by perf.throughput; not used in production."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from core.settings import Settings, get_settings
from execution.executor import Executor
from execution.limits import NoCache, RedisEconomy
from execution.seeds import seed_args
from graph.models import ApiRecord
from graph.openapi import parse_document
from sandbox.catalog import shipped_documents
from workers.celery_app import make_celery

app = make_celery(get_settings())


def bench_tools(settings: Settings, services: list[str], rate: float) -> tuple[list[Any], dict[str, ApiRecord]]:
    docs = shipped_documents()
    tools, apis = [], {}
    for name in services:
        api, parsed = parse_document(docs[name])
        api.rate_limit_per_s = rate
        apis[api.id] = api
        for tool in parsed:
            tool.api_id = api.id
            if not seed_args(tool, settings)[1]:
                tools.append(tool)
                break
    return tools, apis


@app.task(name="bench.call_many")
def call_many(services: list[str], calls_per_api: int, rate: float, run_id: str) -> int:
    settings = get_settings()
    tools, apis = bench_tools(settings, services, rate)

    async def go() -> int:
        executor = Executor(settings, NoCache(RedisEconomy(settings.redis_url or "")), apis, run_id=run_id)
        try:
            jobs = []
            for tool in tools:
                args, _ = seed_args(tool, settings)
                for i in range(calls_per_api):
                    jobs.append(executor.call(tool, {**args, "_bench": f"{os.getpid()}-{i}"}))
            results = await asyncio.gather(*jobs)
            return sum(1 for r in results if r.ok)
        finally:
            await executor.aclose()

    return asyncio.run(go())
