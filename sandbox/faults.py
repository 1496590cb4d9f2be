"""Fault profiles: latency, 5xx, timeouts, truncated or malformed bodies, error bursts, throttling, drift.

A profile is chosen by name (`none`, `latency50`, `flaky`, `drift`, `chaos`), by a JSON object, or by a path to a
JSON file; `name,key=value` overrides single fields, e.g. `flaky,latency_ms=50`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FaultProfile:
    name: str = "none"
    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    error_5xx_rate: float = 0.0
    timeout_rate: float = 0.0
    timeout_s: float = 30.0
    truncate_rate: float = 0.0
    malformed_rate: float = 0.0
    #: Probability that a request starts a burst of provider errors inside HTTP 200 (code 01/99).
    error200_burst_rate: float = 0.0
    error200_burst_len: int = 5
    #: Probability that a request starts a burst of gateway throttling errors (22 or 23).
    throttle_burst_rate: float = 0.0
    throttle_burst_len: int = 5
    #: Schema drift: per operation id ("Service.operation") or "*", a map of renamed output fields.
    drift: dict[str, dict[str, str]] = field(default_factory=dict)


PROFILES: dict[str, FaultProfile] = {
    "none": FaultProfile(),
    "latency50": FaultProfile(name="latency50", latency_ms=50.0),
    "flaky": FaultProfile(
        name="flaky",
        error_5xx_rate=0.10,
        timeout_rate=0.05,
        timeout_s=20.0,
        error200_burst_rate=0.01,
        throttle_burst_rate=0.01,
        truncate_rate=0.01,
    ),
    "drift": FaultProfile(
        name="drift",
        drift={
            "StanReginCd.getStanReginCdList": {"region_cd": "regionCd"},
            "hospInfoServicev2.getHospBasisList": {"ykiho": "ykihoEnc"},
        },
    ),
    "chaos": FaultProfile(
        name="chaos",
        latency_ms=20.0,
        latency_jitter_ms=30.0,
        error_5xx_rate=0.15,
        timeout_rate=0.05,
        timeout_s=10.0,
        truncate_rate=0.03,
        malformed_rate=0.03,
        error200_burst_rate=0.02,
        throttle_burst_rate=0.02,
    ),
}


def parse_profile(spec: str | dict[str, Any]) -> FaultProfile:
    """Resolve a profile name, JSON text, JSON file path or dict into a FaultProfile (ValueError if unknown)."""
    if isinstance(spec, dict):
        return _from_dict(spec)
    spec = spec.strip() or "none"
    if spec.startswith("{"):
        return _from_dict(json.loads(spec))
    if spec.endswith(".json") and Path(spec).exists():
        return _from_dict(json.loads(Path(spec).read_text(encoding="utf-8")))
    name, *overrides = spec.split(",")
    if name not in PROFILES:
        raise ValueError(f"unknown fault profile {name!r}; choose one of {', '.join(PROFILES)} or give JSON")
    prof = PROFILES[name]
    types = {f.name: f.type for f in fields(FaultProfile)}
    changes: dict[str, Any] = {}
    for ov in overrides:
        key, _, value = ov.partition("=")
        if key not in types or key in ("name", "drift"):
            raise ValueError(f"unknown fault setting {key!r}")
        changes[key] = int(value) if types[key] == "int" else float(value)
    return replace(prof, **changes)


def _from_dict(data: dict[str, Any]) -> FaultProfile:
    base = PROFILES.get(str(data.get("base", "none")), FaultProfile())
    known = {f.name for f in fields(FaultProfile)}
    unknown = set(data) - known - {"base"}
    if unknown:
        raise ValueError(f"unknown fault settings: {', '.join(sorted(unknown))}")
    return replace(base, **{k: v for k, v in data.items() if k in known}, name=str(data.get("name", "custom")))


@dataclass
class FaultDecision:
    delay_s: float = 0.0
    status_5xx: int = 0
    hang: bool = False
    truncate: bool = False
    malformed: bool = False
    error200: bool = False
    throttle: str = ""


class FaultInjector:
    """Draws per-request faults from a seeded generator; bursts are tracked per service."""

    def __init__(self, profile: FaultProfile, seed: int) -> None:
        self.profile = profile
        self._rnd = random.Random(seed)
        self._bursts: dict[tuple[str, str], int] = {}

    def set_profile(self, profile: FaultProfile) -> None:
        self.profile = profile
        self._bursts.clear()

    def decide(self, service: str) -> FaultDecision:
        p, r = self.profile, self._rnd
        d = FaultDecision()
        if p.name == "none" and not p.drift:
            return d
        if p.latency_ms or p.latency_jitter_ms:
            d.delay_s = max(0.0, (p.latency_ms + r.uniform(-p.latency_jitter_ms, p.latency_jitter_ms)) / 1000.0)
        if self._in_burst("throttle", service) or (
            p.throttle_burst_rate
            and r.random() < p.throttle_burst_rate
            and self._start_burst("throttle", service, p.throttle_burst_len)
        ):
            d.throttle = r.choice(["22", "23"])
            return d
        if self._in_burst("error200", service) or (
            p.error200_burst_rate
            and r.random() < p.error200_burst_rate
            and self._start_burst("error200", service, p.error200_burst_len)
        ):
            d.error200 = True
            return d
        roll = r.random()
        if roll < p.timeout_rate:
            d.hang = True
        elif roll < p.timeout_rate + p.error_5xx_rate:
            d.status_5xx = r.choice([500, 502, 503])
        elif roll < p.timeout_rate + p.error_5xx_rate + p.truncate_rate:
            d.truncate = True
        elif roll < p.timeout_rate + p.error_5xx_rate + p.truncate_rate + p.malformed_rate:
            d.malformed = True
        return d

    def drift_for(self, op_id: str) -> dict[str, str]:
        drift = self.profile.drift
        return {**drift.get("*", {}), **drift.get(op_id, {})}

    def _start_burst(self, kind: str, service: str, length: int) -> bool:
        self._bursts[(kind, service)] = max(0, length - 1)
        return True

    def _in_burst(self, kind: str, service: str) -> bool:
        left = self._bursts.get((kind, service), 0)
        if left > 0:
            self._bursts[(kind, service)] = left - 1
            return True
        return False
