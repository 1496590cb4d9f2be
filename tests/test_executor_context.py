"""`Executor` is an async context manager: `async with Executor(...) as ex:` closes its connections however the
block ends, which is how shipped code holds one (no hand-written `finally: await ex.aclose()`)."""

from __future__ import annotations

import asyncio

import pytest

from core.settings import get_settings
from execution.executor import Executor
from execution.limits import MemoryEconomy


def test_an_executor_closes_its_connections_when_its_block_ends() -> None:
    async def go() -> None:
        async with Executor(get_settings(), MemoryEconomy(), {}) as ex:
            assert not ex._client.is_closed
        assert ex._client.is_closed
        with pytest.raises(RuntimeError, match="inside"):
            async with Executor(get_settings(), MemoryEconomy(), {}) as failing:
                raise RuntimeError("inside the block")
        assert failing._client.is_closed

    asyncio.run(go())
