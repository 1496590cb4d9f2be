"""The secret policy on registration: names outside the allowed key variables are refused (REST 422 naming
`/metadata/auth/secret`, `kopa register` one line, the registry's InvalidInput), the policy is configurable but never
for the project's own settings, and a registration stored before the policy existed sends no key at call time."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from core.errors import InvalidInput
from core.settings import Settings
from execution.executor import Executor
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_document
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import Recorder

ROOT = Path(__file__).resolve().parents[1]
ADMIN = {"Authorization": "Bearer boot-two"}
DOCS = shipped_documents()


REFUSED = [
    "KOPA_BOOTSTRAP_TOKEN",
    "KOPA_NEO4J__PASSWORD",
    "KOPA_REDIS_URL",
    "KOPA_SANDBOX__ADMIN_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "PGPASSWORD",
    "HOME",
    "PATH",
    "SECRET_KEY",
    "bad-name",
    "X" * 200,
]


def test_registration_refuses_secret_names_outside_the_policy(
    embedded_app: tuple[TestClient, EmbeddedStore],
) -> None:
    c, store = embedded_app
    doc = DOCS["StanReginCd"]
    for name in REFUSED:
        r = c.post("/v1/apis", params={"secret_name": name, "api_id": "stan"}, json=doc, headers=ADMIN)
        assert r.status_code == 422, (name, r.status_code, r.text)
        body = r.json()
        assert body["error"] == "invalid_input" and "secret name refused" in body["detail"], body
        assert body["locations"][0]["pointer"] == "/metadata/auth/secret"
        wrapped = c.post("/v1/apis", json={"document": doc, "metadata": {"auth": {"secret": name}}}, headers=ADMIN)
        assert wrapped.status_code == 422, (name, wrapped.text)
    assert store.list_apis()[1] == 0  # nothing stored
    # README's example and the sandbox's key variable still register
    for name in ("CORP_SERVICE_KEY", "KOPA_SERVICE_KEY", "LIBRARY_SERVICE_KEY", "KOPA_APIKEY_LIBRARY"):
        r = c.post(
            "/v1/apis",
            params={"secret_name": name, "api_id": f"stan-{name.lower().replace('_', '-')}"},
            json=doc,
            headers=ADMIN,
        )
        assert r.status_code == 201, (name, r.text)
    assert c.post("/v1/apis", json=DOCS["KorService2"], headers=ADMIN).status_code == 201  # none named: the default


def test_secret_policy_is_configurable_never_for_own_settings() -> None:
    s = Settings(secret_names=["DATA_GO_KR_*", "CORP_KEY"])
    assert s.secret_refusal("DATA_GO_KR_WEATHER") is None and s.secret_refusal("CORP_KEY") is None
    assert "not an allowed key variable" in (s.secret_refusal("OTHER_KEY") or "")
    assert s.secret_refusal("KOPA_SERVICE_KEY") is None  # verify.key_secret always
    loose = Settings(secret_names=["*"])
    for name in ("KOPA_BOOTSTRAP_TOKEN", "KOPA_NEO4J__PASSWORD", "AWS_SECRET_ACCESS_KEY", "KOPA_ENV"):
        assert loose.secret_refusal(name), name
    with pytest.raises(ValidationError, match="KOPA_VERIFY__KEY_SECRET"):
        Settings.model_validate({"verify": {"key_secret": "KOPA_BOOTSTRAP_TOKEN"}})


def test_kopa_register_refuses_a_credential_as_secret(tmp_path: Path) -> None:
    doc = tmp_path / "stan.json"
    doc.write_text(json.dumps(DOCS["StanReginCd"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update({"KOPA_STORE": "embedded", "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"), "PYTHONPATH": str(ROOT)})

    def kopa(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cli", "register", str(doc), *args],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )

    bad = kopa("--secret-name", "AWS_SECRET_ACCESS_KEY")
    assert bad.returncode == 1 and "secret name refused" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
    good = kopa("--secret-name", "CORP_SERVICE_KEY", "--api-id", "stan")
    assert good.returncode == 0, good.stderr


def test_a_stored_registration_from_before_the_policy_sends_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = "aws-canary-7f3e9b1c55"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canary)
    settings, sandbox = sandbox_mode(Settings())
    store = EmbeddedStore(tmp_path / "old.sqlite3")
    # written as an older version did, without the policy: straight into the store
    api, tools = parse_document(
        DOCS["StanReginCd"],
        RegistrationMeta(api_id="stan", auth=AuthConfig(param="serviceKey", secret="AWS_SECRET_ACCESS_KEY")),
    )
    for t in tools:
        t.api_id = api.id
    api.tool_count = len(tools)
    store.apply_registration(api, tools, [], {})
    stored = store.get_api("stan")
    assert stored is not None and stored.auth.secret == "AWS_SECRET_ACCESS_KEY"
    recorder = Recorder(sandbox)

    async def go() -> tuple[dict[str, str], str]:
        executor = Executor(settings, MemoryEconomy(), {"stan": stored}, transport=recorder)
        try:
            blocked = executor.preflight()
            result = await executor.call(tools[0], {"locatadd_nm": "서울특별시"})
            return blocked, result.reason
        finally:
            await executor.aclose()

    blocked, reason = asyncio.run(go())
    assert "secret policy" in blocked["stan"] and "secret policy" in reason
    assert not any(canary in seen for seen in recorder.seen), "the credential went upstream"
    # direct use of the request builder never reads the refused variable either
    executor = Executor(settings, MemoryEconomy(), {"stan": stored}, transport=recorder)
    assert executor._auth(tools[0], stored)[1] is None
    asyncio.run(executor.aclose())
    store.close()


def test_invalid_input_location_for_refused_secret(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "s.sqlite3")
    with pytest.raises(InvalidInput) as info:
        register(
            store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret="KOPA_BOOTSTRAP_TOKEN"))
        )
    assert info.value.locations[0]["pointer"] == "/metadata/auth/secret"
    assert store.list_apis()[1] == 0
    store.close()
