"""A world that moves: each trajectory's instant is drawn over the year before the clock (never the clock's own day,
the benchmark's), everything that reads the clock sees it, and the in-process sandbox answers at it."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta

import httpx

from core.clock import world_at
from core.settings import Settings
from execution.seeds import KST, kma_base, now
from sandbox.inprocess import sandbox_mode
from sandbox.keys import DEMO_KEY
from synthesis.build import draw_instant
from synthesis.formats import system_text

BASE = datetime(2026, 10, 15, 14, 20, tzinfo=KST)


def _settings(days: int) -> Settings:
    s = Settings()
    return s.model_copy(
        update={
            "verify": s.verify.model_copy(update={"now": BASE.isoformat()}),
            "batches": s.batches.model_copy(update={"clock_days": days}),
        }
    )


def test_instants_span_the_year_before_the_clock_and_never_its_day() -> None:
    settings = _settings(365)
    instants = [draw_instant(settings, random.Random(i)) for i in range(300)]
    assert all(x is not None for x in instants)
    days = {x.date() for x in instants if x is not None}
    assert BASE.date() not in days
    assert all(BASE - timedelta(days=366) < x < BASE for x in instants if x is not None)
    assert len({x for x in instants}) >= 290 and len({x.hour for x in instants if x}) >= 20
    assert draw_instant(_settings(0), random.Random(1)) is None  # real APIs: the clock itself


def test_the_clock_readers_follow_the_conversation_instant() -> None:
    settings = _settings(365)
    at = datetime(2026, 3, 2, 7, 5, tzinfo=KST)
    assert now(settings) == BASE
    with world_at(at):
        assert now(settings) == at
        assert "현재 시각: 2026-03-02 07:05 (KST)." in system_text(now(settings))
    assert now(settings) == BASE


def test_the_in_process_sandbox_answers_at_the_instant_asked() -> None:
    settings, transport = sandbox_mode(_settings(0))
    assert settings.batches.clock_days == 365  # the sandbox can be asked about its last year
    at = datetime(2026, 2, 11, 9, 50, tzinfo=KST)
    date, hour = kma_base("ncst", at)
    params = {
        "serviceKey": DEMO_KEY,
        "dataType": "JSON",
        "base_date": date,
        "base_time": hour,
        "nx": "60",
        "ny": "127",
        "numOfRows": "10",
    }

    async def ask(instant: datetime | None) -> str:
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox.local") as client:
            with world_at(instant):
                r = await client.get("/1360000/VilageFcstInfoService_2.0/getUltraSrtNcst", params=params)
        return r.text

    assert '"baseDate":"' + date + '"' in asyncio.run(ask(at)).replace(" ", "")
    assert "최근 1일" in asyncio.run(ask(None))  # at the sandbox's own clock that day is long past
