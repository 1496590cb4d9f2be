"""tests/unit/conftest.py keeps this folder pure: an internet socket (loopback included) cannot connect or bind
here, a Unix socket pair still works, and a test asking for a service fixture or marker is named."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

import pytest

from tests.unit.conftest import service_use


def test_internet_sockets_cannot_connect_or_bind() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        with pytest.raises(OSError, match="may not open a network socket: connect"):
            s.connect(("127.0.0.1", 9))
        with pytest.raises(OSError, match="may not open a network socket: connect_ex"):
            s.connect_ex(("127.0.0.1", 9))
        with pytest.raises(OSError, match="may not open a network socket: bind"):
            s.bind(("127.0.0.1", 0))


def test_socket_pairs_still_work() -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"ping")
        assert b.recv(4) == b"ping"


@dataclass
class Item:
    fixturenames: list[str]
    markers: list[pytest.Mark] = field(default_factory=list)

    def iter_markers(self) -> list[pytest.Mark]:
        return self.markers


def test_service_fixtures_and_markers_are_named() -> None:
    assert service_use(Item(["tmp_path", "monkeypatch"])) == []  # type: ignore[arg-type]
    assert service_use(Item(["live", "neo4j_uri"])) == ["live", "neo4j_uri"]  # type: ignore[arg-type]
    celery = Item(["tmp_path"], [pytest.mark.celery.mark, pytest.mark.slow.mark])
    assert service_use(celery) == ["@celery"]  # type: ignore[arg-type]
    redis = Item(["redis_url"], [pytest.mark.redis.mark])  # the marker the fixture brings is not named twice
    assert service_use(redis) == ["redis_url"]  # type: ignore[arg-type]
