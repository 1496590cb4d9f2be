"""What keeps tests/unit pure: a test here that asks for a service fixture (tests/conftest.py FIXTURE_MARKERS) or
carries a service marker fails before it runs, and any test here that connects or binds an internet socket
(loopback included) fails at that call. Integration tests belong in tests/ beside this folder."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import FIXTURE_MARKERS

#: Markers of tests that start or reach a service (the `slow` and `gpu` markers are no service).
SERVICE_MARKERS = frozenset(FIXTURE_MARKERS.values()) | {"celery"}
#: Fixtures that open a service beside those of FIXTURE_MARKERS (the store parametrised over Neo4j).
SERVICE_FIXTURES = frozenset(FIXTURE_MARKERS) | {"any_store"}
INTERNET = (socket.AF_INET, socket.AF_INET6)


def service_use(item: pytest.Item) -> list[str]:
    """The service fixtures and markers a test asks for."""
    fixtures = sorted(SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())))
    markers = sorted({m.name for m in item.iter_markers()} & SERVICE_MARKERS)
    return fixtures + [f"@{m}" for m in markers if m not in {FIXTURE_MARKERS[f] for f in fixtures}]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    used = service_use(item)
    if used:
        pytest.fail(f"a unit test may not use a service ({', '.join(used)}): move it beside tests/unit", pytrace=False)


def refusing(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def refuse(self: socket.socket, address: Any, *rest: Any) -> Any:
        if self.family in INTERNET:
            raise OSError(f"a unit test may not open a network socket: {name}({address!r})")
        return real(self, address, *rest)

    return refuse


@pytest.fixture(autouse=True, scope="package")
def no_network() -> Iterator[None]:
    """connect, connect_ex and bind refused on internet sockets for every test under tests/unit (Unix sockets and
    socket pairs, which event loops use, still work)."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("connect", "connect_ex", "bind"):
            patch.setattr(socket.socket, name, refusing(name, getattr(socket.socket, name)))
        yield
