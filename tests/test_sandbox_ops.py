"""Quotas, per-second limits, restart persistence, fault profiles and the admin endpoints, each against its
own sandbox process on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from core.payload import PayloadError, parse_body
from sandbox.examples import example_args
from sandbox.world import get_world
from tests.support.helpers import OPS, call, free_port, sandbox_process

EX = example_args(get_world(20261130))
AIR = "MsrstnInfoInqireSvc.getMsrstnList"
VF = "VilageFcstInfoService_2.0.getVilageFcst"
ADMIN = {"X-Sandbox-Admin": "sandbox-admin"}


def test_daily_quota_22_survives_restart(tmp_path: Path) -> None:
    state = tmp_path / "quota.json"
    env = {"KOPA_SANDBOX__QUOTAS": "MsrstnInfoInqireSvc=3"}
    port = free_port()
    with sandbox_process("--state-file", str(state), env=env, port=port) as url, httpx.Client(base_url=url) as c:
        assert [call(c, AIR, EX[AIR]).status_code for _ in range(2)] == [200, 200]
        # other services have their own counters
        assert call(c, VF, EX[VF]).status_code == 200
    assert json.loads(state.read_text())["counts"]
    with sandbox_process("--state-file", str(state), env=env, port=port) as url, httpx.Client(base_url=url) as c:
        assert call(c, AIR, EX[AIR]).status_code == 200
        r = call(c, AIR, EX[AIR])
        assert r.status_code == 429
        assert r.json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]["returnReasonCode"] == "22"
        usage = c.get("/_sandbox/quota", headers=ADMIN).json()
        assert any(v == 3 for v in usage["counts"].values())
        assert c.post("/_sandbox/quota/reset", headers=ADMIN).status_code == 200
        assert call(c, AIR, EX[AIR]).status_code == 200


def test_per_second_limit_23() -> None:
    with sandbox_process(env={"KOPA_SANDBOX__PER_SECOND_LIMIT": "5"}) as url, httpx.Client(base_url=url) as c:
        responses = [call(c, VF, EX[VF]) for _ in range(30)]
        assert responses[0].status_code == 200
        limited = [r for r in responses if r.status_code == 429]
        assert limited, "30 calls in a burst must exceed 5 per second"
        assert limited[0].json()["OpenAPI_ServiceResponse"]["cmmMsgHeader"]["returnReasonCode"] == "23"


def test_classic_gateway_mode_is_http_200_xml() -> None:
    with sandbox_process("--gateway-mode", "classic") as url, httpx.Client(base_url=url) as c:
        r = call(c, VF, EX[VF], fmt="json", key="0" * 64)
        assert r.status_code == 200 and r.text.startswith("<?xml")
        assert "<errMsg>SERVICE ERROR</errMsg>" in r.text
        assert "<returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg>" in r.text


def test_admin_endpoints_need_the_token() -> None:
    with sandbox_process() as url, httpx.Client(base_url=url) as c:
        assert c.get("/_sandbox/faults").status_code == 401
        assert c.put("/_sandbox/faults", json={"profile": "bogus"}, headers=ADMIN).status_code == 400
        assert (
            c.put("/_sandbox/clock", json={"now": "2026-10-16T09:00"}, headers=ADMIN)
            .json()["now"]
            .startswith("2026-10-16T09:00")
        )
        r = call(c, VF, {**EX[VF], "base_date": "20261016", "base_time": "0800"})
        assert r.json()["response"]["header"]["resultCode"] == "00"


def test_flaky_profile_rates_and_body_faults() -> None:
    profile = json.dumps(
        {"error_5xx_rate": 0.1, "timeout_rate": 0.05, "timeout_s": 0.2, "truncate_rate": 0.05, "malformed_rate": 0.05}
    )
    with sandbox_process("--faults", profile) as url, httpx.Client(base_url=url, timeout=5) as c:
        statuses: dict[str, int] = {}
        for _ in range(400):
            r = call(c, AIR, EX[AIR])
            kind = str(r.status_code)
            if r.status_code == 200:
                try:
                    parse_body(r.content)
                    kind = "ok"
                except PayloadError:
                    kind = "bad-body"
            statuses[kind] = statuses.get(kind, 0) + 1
        n5xx = sum(v for k, v in statuses.items() if k in ("500", "502", "503"))
        assert 20 <= n5xx <= 65, statuses
        assert 5 <= statuses.get("504", 0) <= 40, statuses  # hung, then the gateway timed out
        assert 15 <= statuses.get("bad-body", 0) <= 70, statuses


def test_bursts_and_drift_switched_at_run_time() -> None:
    with sandbox_process() as url, httpx.Client(base_url=url) as c:
        burst = {"error200_burst_rate": 1.0, "error200_burst_len": 3}
        assert c.put("/_sandbox/faults", json=burst, headers=ADMIN).status_code == 200
        r = call(c, VF, EX[VF])
        assert r.status_code == 200 and r.json()["response"]["header"]["resultCode"] == "01"
        c.put("/_sandbox/faults", json={"throttle_burst_rate": 1.0}, headers=ADMIN)
        assert call(c, VF, EX[VF]).status_code == 429
        c.put("/_sandbox/faults", json={"profile": "drift"}, headers=ADMIN)
        rows = call(c, "StanReginCd.getStanReginCdList", EX["StanReginCd.getStanReginCdList"]).json()
        row = rows["StanReginCd"][1]["row"][0]
        assert "regionCd" in row and "region_cd" not in row
        c.put("/_sandbox/faults", json={"profile": "none"}, headers=ADMIN)
        assert call(c, VF, EX[VF]).json()["response"]["header"]["resultCode"] == "00"


def test_latency_profile() -> None:
    with sandbox_process("--faults", "latency50") as url, httpx.Client(base_url=url) as c:
        r = call(c, VF, EX[VF])
        assert r.elapsed.total_seconds() >= 0.05


def test_unknown_fault_profile_is_a_clear_cli_error() -> None:
    with pytest.raises(RuntimeError, match="unknown fault profile"), sandbox_process("--faults", "nonsense"):
        pass
    assert OPS
