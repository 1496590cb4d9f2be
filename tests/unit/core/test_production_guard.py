"""The production guard (core/settings.py) refuses low-entropy tokens and allow-listed hosts that are not public,
qualified names. (That `kopa serve` says both in one line:
tests/test_allow_list_guard.py)."""

from __future__ import annotations

import json
import secrets

import pytest
from pydantic import SecretStr

from core.secret_names import weak_token
from core.settings import ProductionRefused, SandboxSettings, Settings

WEAK_TOKENS = [
    "a" * 16,
    "a" * 64,
    "ab" * 8,
    "abcdefgh" * 2,
    "0123456789" * 4,
    "aaaaaaaaaBcdefgh",  # one character over half
    "aaaaaaaabbbbbbbbcccc",  # three distinct characters
    "change-me",
    "short",
]


@pytest.mark.parametrize("token", WEAK_TOKENS)
def test_production_refuses_low_entropy_tokens(token: str) -> None:
    assert weak_token(token)
    settings = Settings(env="production", bootstrap_token=SecretStr(token))
    with pytest.raises(ProductionRefused, match="KOPA_BOOTSTRAP_TOKEN"):
        settings.check_production()
    sandbox = Settings(env="production", sandbox=SandboxSettings(admin_token=SecretStr(token)))
    with pytest.raises(ProductionRefused, match="KOPA_SANDBOX__ADMIN_TOKEN"):
        sandbox.check_production(sandbox=True)
    Settings(env="dev", bootstrap_token=SecretStr(token)).check_production()  # dev and tests keep working


def test_production_accepts_random_tokens() -> None:
    for token in ["x7Gk2pQ9vL4mN8rT1wZ5", secrets.token_hex(32), secrets.token_urlsafe(24)]:
        assert weak_token(token) is None, token
        Settings(env="production", bootstrap_token=SecretStr(token)).check_production()


LOCAL_HOSTS = [
    "vm",
    "redis",
    "0.0.0.0",
    "::",
    "localhost",
    "*.localhost",
    "api.localhost",
    "localhost.localdomain",
    "127.0.0.1",
    "127.1",
    "127.0.0.53",
    "2130706433",
    "0x7f.1",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",
    "169.254.169.254",
    "fe80::1",
    "*.vm",
    "*.kr",
]


@pytest.mark.parametrize("host", LOCAL_HOSTS)
def test_production_refuses_local_and_unqualified_allowed_hosts(host: str) -> None:
    settings = Settings(env="production", allowed_hosts=[host])
    with pytest.raises(ProductionRefused, match="KOPA_ALLOWED_HOSTS") as err:
        settings.check_production()
    assert "KOPA_LOCAL_UPSTREAMS" in str(err.value) and "\n" not in str(err.value)
    Settings(env="dev", allowed_hosts=[host]).check_production()  # the sandbox and tests use such names


def test_production_accepts_public_qualified_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPA_ENV", "production")
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", json.dumps(["open.example.go.kr", "*.data.example.kr", "203.0.113.10"]))
    Settings().check_production()
    monkeypatch.setenv("KOPA_ALLOWED_HOSTS", "open.example.go.kr,vm,0.0.0.0")
    with pytest.raises(ProductionRefused, match=r"vm \(an unqualified name\).*0\.0\.0\.0"):
        Settings().check_production()
