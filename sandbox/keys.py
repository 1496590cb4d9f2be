"""Service keys, per-key daily quotas per service (code 22) and per-second limits (code 23).

Quota counters survive a restart when a state file is configured: they are written atomically, at most every
half second while dirty, and at shutdown.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

#: The demo key: 64 hex characters, like the keys the portal issues since its 2025 revamp.
DEMO_KEY = "6b6f70612d656467652d73616e64626f782d64656d6f2d6b65792d3230323621"
#: An older-style key in base64 with '+', '/', '=': sending it already percent-encoded through a client that
#: encodes again reproduces the classic double-encoding failure (code 30).
LEGACY_KEY = "Kq9Jd+3vXo/Tn2Lw8YbR5hQe1Mz7Ua4Cf6Gs0Ph/Vk3Ni8Oy2Wr9Bx5Ej1Dt7Sl4Am6Zu0Hc3Fg+Ip9Qw2Er5Ty8Ui1Op4As=="
#: A key that has applied only for some services (others answer SERVICE_ACCESS_DENIED_ERROR, code 20).
LIMITED_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"


@dataclass
class KeyInfo:
    key: str
    name: str
    services: frozenset[str] | None = None  # None: every service

    def allows(self, service: str) -> bool:
        return self.services is None or service in self.services


@dataclass
class KeyRegistry:
    keys: dict[str, KeyInfo] = field(default_factory=dict)

    @classmethod
    def default(cls, extra_file: Path | None = None) -> KeyRegistry:
        reg = cls()
        reg.add(KeyInfo(DEMO_KEY, "demo"))
        reg.add(KeyInfo(LEGACY_KEY, "demo-legacy-base64"))
        reg.add(KeyInfo(LIMITED_KEY, "demo-limited", frozenset({"VilageFcstInfoService_2.0", "StanReginCd"})))
        if extra_file is not None:
            for entry in json.loads(extra_file.read_text(encoding="utf-8")):
                services = entry.get("services")
                reg.add(
                    KeyInfo(entry["key"], entry.get("name", "configured"), frozenset(services) if services else None)
                )
        return reg

    def add(self, info: KeyInfo) -> None:
        self.keys[info.key] = info

    def get(self, key: str) -> KeyInfo | None:
        return self.keys.get(key)


class QuotaBook:
    """Counts calls per (key, service, day) and per (key, service, second)."""

    def __init__(self, state_file: Path | None, limits: dict[str, int], per_second: int) -> None:
        self.state_file = state_file
        self.limits = limits
        self.per_second = per_second
        self.day = ""
        self.counts: dict[str, int] = {}
        self._second: dict[str, tuple[int, int]] = {}
        self._dirty = False
        self._last_flush = 0.0
        self._lock = threading.Lock()
        if state_file is not None and state_file.exists():
            data = json.loads(state_file.read_text(encoding="utf-8"))
            self.day, self.counts = data.get("day", ""), {k: int(v) for k, v in data.get("counts", {}).items()}

    def limit_for(self, service: str, default: int) -> int:
        """Configured limit of a service ('*' applies to all; 0 means unlimited), else the real default."""
        return self.limits.get(service, self.limits.get("*", default))

    def take(self, key: str, service: str, day: str, default_limit: int) -> str | None:
        """Count one call; return '22' or '23' when it is over a limit (the call is then not served)."""
        with self._lock:
            if day != self.day:
                self.day, self.counts = day, {}
            if self.per_second:
                now = int(time.monotonic())
                sec, n = self._second.get(f"{key}|{service}", (now, 0))
                n = n + 1 if sec == now else 1
                self._second[f"{key}|{service}"] = (now, n)
                if n > self.per_second:
                    return "23"
            limit = self.limit_for(service, default_limit)
            slot = f"{key}|{service}"
            used = self.counts.get(slot, 0)
            if limit and used >= limit:
                return "22"
            self.counts[slot] = used + 1
            self._dirty = True
        self.maybe_flush()
        return None

    def usage(self) -> dict[str, object]:
        with self._lock:
            return {"day": self.day, "counts": dict(self.counts)}

    def reset(self) -> None:
        with self._lock:
            self.counts, self._dirty = {}, True
        self.flush()

    def maybe_flush(self) -> None:
        if self.state_file is not None and self._dirty and time.monotonic() - self._last_flush > 0.5:
            self.flush()

    def flush(self) -> None:
        if self.state_file is None:
            return
        with self._lock:
            payload = json.dumps({"day": self.day, "counts": self.counts}, ensure_ascii=False)
            self._dirty = False
            self._last_flush = time.monotonic()
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(payload, encoding="utf-8")
        os.replace(tmp, self.state_file)
