"""Hardening, round three (issue 37, a security review): each finding reproduced and now passing.

1. Secret names: the default allow-list is a namespace no other software uses (`KOPA_APIKEY_*`, `*_SERVICE_KEY`,
   plus KOPA_VERIFY__KEY_SECRET), matched case-sensitively, as the variable is read; other systems' credentials
   (model hosts, clouds, CI, workflow engines, the BFCL run's key) are refused under any list.
2. Host names with Unicode full stops (。 ． ｡) are the ASCII host for the allow-list, the overrides and egress.
3. Conversion tools and the executor answer hostile arguments (NaN, 5,000-digit integers, the pole, lone
   surrogates, 100 kB strings, lists where numbers go) with `invalid` and what to fix, never an exception, and the
   executor refuses them before any quota or rate limit is taken.
4. The production guard refuses low-entropy tokens and allow-listed hosts that are not public, qualified names.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr, ValidationError

from core.conversions import ConversionError, convert_rows, from_kma_grid_rows, to_kma_grid_rows
from core.egress import EgressPolicy
from core.errors import DisallowedHost, InvalidInput
from core.geo import kma_grid_to_wgs84, wgs84_to_kma_grid
from core.secret_names import DEFAULT_SECRET_NAMES, weak_token
from core.settings import (
    ProductionRefused,
    SandboxSettings,
    Settings,
    canonical_base,
    find_override,
    normalise_host,
    parse_overrides,
)
from execution.executor import MAX_ARGUMENT_BYTES, Executor, argument_problem
from execution.limits import MemoryEconomy
from graph.conversions import CONVERT, FROM_KMA_GRID, TO_KMA_GRID, answer, conversion_tools
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, RegistrationMeta
from graph.openapi import parse_document
from graph.registry import register
from sandbox.catalog import shipped_documents
from sandbox.inprocess import sandbox_mode
from tests.support.helpers import Recorder, first_tool_outcome

ROOT = Path(__file__).resolve().parents[1]
DOCS = shipped_documents()

# ------------------------------------------------------------------------------------------ 1. secret names

#: Credentials of other systems that a machine running KOPA EDGE may well hold: none is an API key a registration
#: may read, under the default policy.
OTHER_SYSTEMS = [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "VERTEXAI_API_KEY",
    "VLLM_API_KEY",
    "AIRFLOW__CORE__FERNET_KEY",
    "AIRFLOW__WEBSERVER__SECRET_KEY",
    "KOPA_BFCL_API_KEY",
    "KOPA_BFCL_SERVICE_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACE_API_KEY",
    "COHERE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "WANDB_API_KEY",
    "LANGSMITH_API_KEY",
    "PINECONE_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "AZURE_CLIENT_SECRET",
    "GCP_SERVICE_KEY",
    "SUPABASE_SERVICE_KEY",
    "FIREBASE_SERVICE_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "DOCKER_PASSWORD",
    "NPM_TOKEN",
    "PYPI_API_TOKEN",
    "TWINE_PASSWORD",
    "STRIPE_SECRET_KEY",
    "STRIPE_SERVICE_KEY",
    "SENDGRID_API_KEY",
    "TWILIO_AUTH_TOKEN",
    "SLACK_BOT_TOKEN",
    "DATADOG_API_KEY",
    "SENTRY_AUTH_TOKEN",
    "CLOUDFLARE_API_KEY",
    "MINIO_SECRET_KEY",
    "VAULT_TOKEN",
    "SECRET_KEY",
    "DJANGO_SECRET_KEY",
    "JWT_SIGNING_KEY",
    "ENCRYPTION_KEY",
    "MASTER_KEY",
    "SSH_PRIVATE_KEY",
    "KOPA_BOOTSTRAP_TOKEN",
    "KOPA_SANDBOX__ADMIN_TOKEN",
    "KOPA_NEO4J__PASSWORD",
    "KOPA_VERIFY__KEY_SECRET",
    "KOPA_TEST_BFCL_KEY",
    # lower-case spellings: another variable than the one the allow-list names, or still a credential
    "gemini_api_key",
    "openai_api_key",
    "hf_token",
    "aws_secret_access_key",
    "corp_service_key",
    "Corp_Service_Key",
    "kopa_service_key",
    "kopa_apikey_corp",
]
#: The lower-case spellings of names that are allowed as spelled: refused by the default (case-sensitive) list,
#: but an operator's "*" takes them.
ALLOWED_WHEN_SPELLED = {"corp_service_key", "Corp_Service_Key"}


def test_no_other_systems_credential_is_accepted_by_the_default_policy() -> None:
    settings = Settings()
    assert settings.secret_names == list(DEFAULT_SECRET_NAMES)
    assert len(OTHER_SYSTEMS) >= 30
    accepted = [n for n in OTHER_SYSTEMS if settings.secret_refusal(n) is None]
    assert accepted == [], accepted
    # the refusals of credential families hold whatever the operator lists
    loose = Settings(secret_names=["*"])
    assert {n for n in OTHER_SYSTEMS if loose.secret_refusal(n) is None} == ALLOWED_WHEN_SPELLED
    # a lower-case spelling is told what it was matched against
    assert "did you mean CORP_SERVICE_KEY" in (settings.secret_refusal("corp_service_key") or "")


def test_the_readme_example_and_the_project_namespace_are_accepted() -> None:
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"--secret-name (\S+)", readme)) | set(re.findall(r"secret_name=(\w+)", readme))
    exported = set(re.findall(r"export ([A-Z_]*SERVICE_KEY)=", readme))
    assert named == {"CORP_SERVICE_KEY"} and named <= exported, (named, exported)
    settings = Settings()
    for name in [*named, "KOPA_SERVICE_KEY", "KOPA_APIKEY_JUSO", "DATA_GO_KR_SERVICE_KEY", "LIBRARY_SERVICE_KEY"]:
        assert settings.secret_refusal(name) is None, (name, settings.secret_refusal(name))
    # KOPA_ names outside KOPA_APIKEY_ are the project's own, even when they end like a key
    assert "namespace" in (settings.secret_refusal("KOPA_JUSO_SERVICE_KEY") or "")
    assert "namespace" in (Settings(secret_names=["*"]).secret_refusal("KOPA_SOMETHING_KEY") or "")
    # the key variables the chart gives the processes are names a registration may use
    for values in (ROOT / "helm/kopa-edge").rglob("*values.yaml"):
        items = ((yaml.safe_load(values.read_text()) or {}).get("secrets") or {}).get("serviceKeys") or {}
        for item in items.get("items") or []:
            assert settings.secret_refusal(item["env"]) is None, (values, item)


def test_registration_reads_the_variable_as_spelled(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "g.sqlite3")
    for name in ("corp_service_key", "CORP_KEY", "GEMINI_API_KEY", "VLLM_API_KEY"):
        with pytest.raises(InvalidInput, match="secret name refused"):
            register(store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret=name)))
    assert store.list_apis()[1] == 0
    ok = register(store, Settings(), DOCS["StanReginCd"], RegistrationMeta(auth=AuthConfig(secret="CORP_SERVICE_KEY")))
    assert ok.api.auth.secret == "CORP_SERVICE_KEY"
    # an operator's exact list is exact too
    exact = Settings(secret_names=["CORP_KEY"])
    assert exact.secret_refusal("CORP_KEY") is None and exact.secret_refusal("corp_key")
    store.close()


# ------------------------------------------------------------------------------------ 2. Unicode full stops

DOTS = ["\u3002", "\uff0e", "\uff61"]  # 。 ． ｡


def _forms(host: str, dot: str) -> list[str]:
    return [host + dot, host.replace(".", dot), host.replace(".", dot) + dot, host.upper().replace(".", dot)]


@pytest.mark.parametrize("dot", DOTS)
def test_unicode_full_stops_are_the_ascii_host_for_overrides(dot: str) -> None:
    host = "apis.data.go.kr"
    overrides = parse_overrides(f"{host}=http://h:1,https://api.odcloud.kr/api/1=http://b:1")
    for form in _forms(host, dot):
        assert normalise_host(form) == host, form
        assert canonical_base(f"https://{form}/1360000/x/") == f"https://{host}/1360000/x"
        found = find_override(overrides, f"https://{form}/1360000/x", None)
        assert found is not None and found.target == "http://h:1", (form, found)
    for form in _forms("api.odcloud.kr", dot):
        found = find_override(overrides, f"https://{form}/api/1/op", None)
        assert found is not None and found.target == "http://b:1", (form, found)
    # written in the overrides themselves: the same keys (and the same key twice is refused)
    for form in _forms(host, dot):
        (one,) = parse_overrides(f"{form}=http://h:1")
        assert one.kind == "host" and one.key == host, (form, one)
        found = find_override([one], f"https://{host}/x", None)
        assert found is not None
        (base,) = parse_overrides(f"https://{form}/1360000=http://h:1")
        assert base.key == f"https://{host}/1360000"
        with pytest.raises(ValidationError, match="named twice"):
            Settings(upstream_overrides=f"{host}=http://a:1,{form}=http://b:1")


@pytest.mark.parametrize("dot", DOTS)
def test_unicode_full_stops_are_the_ascii_host_for_the_allow_list(dot: str) -> None:
    host = "open.example.go.kr"
    for form in _forms(host, dot):
        settings = Settings(allowed_hosts=[form], use_default_hosts=False)
        assert settings.allowed_hosts == [host], form
        policy = EgressPolicy.from_settings(settings)
        assert policy.check_url(f"https://{host}/x").host == host
        assert EgressPolicy([form]).check_url(f"https://{host}/x").host == host  # entries given in code too
        for url_form in _forms(host, dot):
            assert policy.check_url(f"https://{url_form}/x").host == host, url_form
            assert EgressPolicy([host]).check_url(f"https://{url_form}/x").host == host, url_form
        with pytest.raises(DisallowedHost):
            policy.check_url(f"https://evil{dot}example/x")
    wildcard = EgressPolicy([f"*{dot}data{dot}example{dot}kr{dot}"])
    assert wildcard.check_url(f"https://a{dot}data{dot}example{dot}kr{dot}/").host == "a.data.example.kr"
    assert wildcard.check_url("https://a.data.example.kr/").host == "a.data.example.kr"
    with pytest.raises(DisallowedHost):
        wildcard.check_url(f"https://data{dot}example{dot}kr/")


@pytest.mark.parametrize("dot", DOTS)
def test_a_server_spelled_with_unicode_full_stops_hits_the_override(dot: str, tmp_path: Path) -> None:
    settings, sandbox = sandbox_mode(Settings())
    doc = copy.deepcopy(DOCS["StanReginCd"])
    doc["servers"] = [{"url": doc["servers"][0]["url"].replace("apis.data.go.kr", f"apis{dot}data{dot}go{dot}kr{dot}")}]
    store = EmbeddedStore(tmp_path / "dot.sqlite3")
    result = register(store, settings, doc)
    recorder = Recorder(sandbox)

    assert first_tool_outcome(settings, store, result.api, recorder, {"locatadd_nm": "서울특별시"}) in ("ok", "empty")
    assert recorder.urls and not any("data.go.kr" in seen for seen in recorder.urls), recorder.urls
    store.close()


# ------------------------------------------------------------------------ 3. answers, never exceptions


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no text")

    def __repr__(self) -> str:
        raise ValueError("no text")


#: What a model, a replayed recording or a fuzzer may put where a number or a coordinate system goes.
HOSTILE = [
    None,
    True,
    False,
    [],
    {},
    [126.9, 37.5],
    {"value": 126.9},
    (1, 2),
    {1, 2},
    math.nan,
    math.inf,
    -math.inf,
    "nan",
    "inf",
    "-Infinity",
    "1e400",
    "-1e400",
    10**309,
    -(10**309),
    10**5000,
    "9" * 400,
    "1" * 100_000,
    " " * 100_000,
    "\ud800",
    "12\udfff",
    "126.9\ud83d",
    "１２６.９",
    "126,978",
    "0x7e",
    "1_26",
    b"126.9",
    1e308,
    -1e308,
    5e-324,
    "",
    "WGS84" * 20_000,
    Unprintable(),
]
#: Points that are numbers but no place the projections can answer for.
EDGES = [
    (0, -90),
    (126.9, -90),
    (0, 90),
    (180, -90),
    (-180, 90),
    (126.9, -89.9999999999),
    (1e308, 1e308),
    (-1e308, 1e308),
    (1e300, -1e300),
    (5e15, -5e15),
]
TOOLS: dict[str, dict[str, Any]] = {
    TO_KMA_GRID: {"x": 126.9779692, "y": 37.5662952, "crs": "WGS84"},
    CONVERT: {"x": 126.9779692, "y": 37.5662952, "from_crs": "WGS84", "to_crs": "TM"},
    FROM_KMA_GRID: {"nx": 60, "ny": 127},
}
HANDLERS: dict[str, Callable[[dict[str, Any]], list[dict[str, Any]]]] = {
    TO_KMA_GRID: to_kma_grid_rows,
    CONVERT: convert_rows,
    FROM_KMA_GRID: from_kma_grid_rows,
}


def _hostile_calls() -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, good in TOOLS.items():
        for param in good:
            calls.extend((name, {**good, param: value}) for value in HOSTILE)
    for x, y in EDGES:
        for crs in ("WGS84", "UTMK", "TM"):
            calls.append((TO_KMA_GRID, {"x": x, "y": y, "crs": crs}))
            calls.extend((CONVERT, {"x": x, "y": y, "from_crs": crs, "to_crs": dst}) for dst in ("WGS84", "UTMK", "TM"))
    calls.extend(
        (FROM_KMA_GRID, {"nx": nx, "ny": ny})
        for nx, ny in [(10**400, 1), (1e308, 1), (43, 136), (0, 0), (-1, -1), (149.0, 253.0)]
    )
    calls.extend(
        [
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], "\ud800": 1}),
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], "z" * 10_000: 1}),
            (TO_KMA_GRID, {**TOOLS[TO_KMA_GRID], **{f"p{i}": i for i in range(1000)}}),
            (CONVERT, {}),
        ]
    )
    return calls


def _reason_ok(reason: str) -> bool:
    reason.encode("utf-8")  # no lone surrogate in what a model or a log reads
    return 0 < len(reason) <= 600


def test_hostile_arguments_get_answers_never_exceptions() -> None:
    calls = _hostile_calls()
    assert len(calls) >= 50
    outcomes: dict[str, int] = {}
    for name, args in calls:
        ans = answer(name, args)  # raises nothing
        outcomes[ans.outcome] = outcomes.get(ans.outcome, 0) + 1
        assert ans.outcome in ("ok", "invalid"), (name, ans)
        if ans.outcome == "invalid":
            assert ans.status == 400 and ans.code and ans.items == [] and _reason_ok(ans.reason), (name, ans)
        else:
            assert all(isinstance(v, str) or math.isfinite(v) for row in ans.items for v in row.values()), ans
        try:  # the handlers themselves raise nothing but ConversionError
            HANDLERS[name](args)
        except ConversionError as exc:
            assert _reason_ok(exc.message) and exc.code
    assert outcomes.get("invalid", 0) >= 50, outcomes
    assert answer(TO_KMA_GRID, [1, 2]).code == "bad_arguments"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args,code,words",
    [
        ({"x": 0, "y": -90, "crs": "WGS84"}, "outside_grid", "outside the KMA forecast grid"),
        ({"x": 10**309, "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a finite number"),
        ({"x": 126.9, "y": math.nan, "crs": "WGS84"}, "not_a_number", "y must be a finite number"),
        ({"x": [126.9], "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": None, "y": 37.5, "crs": "WGS84"}, "missing_parameter", "x is required"),
        ({"x": "1" * 100_000, "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": "12\udfff", "y": 37.5, "crs": "WGS84"}, "not_a_number", "x must be a number"),
        ({"x": 126.9, "y": 37.5, "crs": ["WGS84"]}, "bad_crs", "crs must be one of WGS84, UTMK, TM"),
        ({"x": 126.9, "y": 37.5, "crs": 10**5000}, "bad_crs", "crs must be one of WGS84, UTMK, TM"),
    ],
)
def test_hostile_arguments_say_what_to_fix(args: dict[str, Any], code: str, words: str) -> None:
    ans = answer(TO_KMA_GRID, args)
    assert (ans.outcome, ans.code) == ("invalid", code), ans
    assert words in ans.reason and _reason_ok(ans.reason), ans.reason


def test_the_grid_projection_refuses_what_it_cannot_place() -> None:
    with pytest.raises(ValueError, match="no place"):
        wgs84_to_kma_grid(-90, 126.9)
    with pytest.raises(ValueError, match="no place"):
        wgs84_to_kma_grid(math.nan, 126.9)
    assert wgs84_to_kma_grid(37.5665, 126.9780) == (60, 127)  # unchanged where it can
    assert kma_grid_to_wgs84(60, 127) == pytest.approx((37.5, 126.97), abs=0.1)


class Spy(MemoryEconomy):
    """Counts what the executor takes from the economy: quota and rate-limit tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.taken: list[str] = []

    def take_quota(self, key: str, limit: int | None) -> bool:
        self.taken.append(f"quota {key}")
        return super().take_quota(key, limit)

    async def acquire(self, api: str, rate_per_s: float | None) -> None:
        self.taken.append(f"rate {api}")
        await super().acquire(api, rate_per_s)


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


EXECUTOR_HOSTILE: list[Any] = [
    "x" * 70_000,
    "가" * 30_000,
    "가" * 20_000,  # 60 kB of text: 180 kB once percent-encoded in the URL, over httpx's limit
    "\ud800",
    "a\udfffb",
    ["ok", "\ud800"],
    {"k": "\ud800"},
    {"\udc80": "v"},
    math.nan,
    math.inf,
    -math.inf,
    10**5000,
    10**400,
    _nested(100),
    _nested(5000),
    ["x" * 1000] * 100,
    b"bytes",
    Unprintable(),
    object(),
    {1: "non-text key"},
]


def test_the_executor_refuses_hostile_arguments_before_any_quota_or_limit() -> None:
    settings, sandbox = sandbox_mode(Settings(verify=Settings().verify.model_copy(update={"default_rate_per_s": 50})))
    api, tools = parse_document(DOCS["StanReginCd"], RegistrationMeta(api_id="stan"))
    for t in tools:
        t.api_id = api.id
    api.daily_quota = 1000
    tool = tools[0]
    name = "locatadd_nm"
    header_tool = tool.model_copy(
        update={"params": [p.model_copy(update={"location": "header"}) if p.name == name else p for p in tool.params]}
    )
    locals_ = {t.name: t for t in conversion_tools()}
    spy = Spy()
    calls: list[tuple[Any, dict[str, Any]]] = []
    for value in EXECUTOR_HOSTILE:
        calls.append((tool, {name: value}))
        calls.append((locals_[TO_KMA_GRID], {"x": value, "y": 37.5, "crs": "WGS84"}))
    calls.append((tool, {f"p{i}": "y" * 4000 for i in range(20)}))  # each small, 80 kB together
    calls.append((tool, {"\ud800": "1"}))
    calls.append((header_tool, {name: "서울특별시"}))  # a header that is not Latin-1 makes no request
    calls.append((header_tool, {name: "a\r\nX-Injected: 1"}))

    async def go() -> list[Any]:
        executor = Executor(settings, spy, {"stan": api}, transport=sandbox, run_id="hostile")
        try:
            return [await executor.call(t, args) for t, args in calls]
        finally:
            await executor.aclose()

    results = asyncio.run(go())  # raises nothing
    assert len(results) >= 40
    assert all(r.outcome == "invalid" and _reason_ok(r.reason) for r in results), [
        (r.outcome, r.reason[:80]) for r in results if r.outcome != "invalid"
    ]
    assert spy.taken == [], spy.taken  # no quota, no rate-limit token for any of them
    assert not spy.calls("hostile").get("calls"), spy.calls("hostile")
    sized = [r.reason for r in results[:2]]
    assert f"{MAX_ARGUMENT_BYTES:,}" in sized[0] and "lone surrogate" in results[6].reason, sized

    async def fine() -> Any:
        executor = Executor(settings, spy, {"stan": api}, transport=sandbox, run_id="fine")
        try:
            return await executor.call(tool, {name: "서울특별시"})
        finally:
            await executor.aclose()

    assert asyncio.run(fine()).outcome in ("ok", "empty")  # a plain call still goes, and takes its quota once
    assert [t for t in spy.taken if t.startswith("quota")] == ["quota KOPA_SERVICE_KEY:stan"]


def test_argument_problem_accepts_what_apis_take() -> None:
    for args in (
        {},
        {"q": "서울특별시 종로구", "n": 10, "f": 1.5, "b": True, "none": None},
        {"ids": ["a", "b", 3], "body": {"statements": [{"statement": "x"}]}},
        {"big": "x" * (MAX_ARGUMENT_BYTES - 100)},
        {"num": 10**300},
    ):
        assert argument_problem(args) is None, args
    assert argument_problem(["not", "a", "dict"])


# -------------------------------------------------------------------------------------- 4. production guard

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


def test_the_guard_is_one_line_for_weak_tokens_and_local_hosts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOPA_")}
    env.update(
        {
            "KOPA_ENV": "production",
            "KOPA_BOOTSTRAP_TOKEN": "a" * 32,
            "KOPA_ALLOWED_HOSTS": "vm,*.localhost",
            "KOPA_EMBEDDED_PATH": str(tmp_path / "g.sqlite3"),
            "PYTHONPATH": str(ROOT),
        }
    )
    got = subprocess.run(
        [sys.executable, "-m", "cli", "serve"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in got.stderr.splitlines() if line.strip()]
    assert got.returncode != 0 and len(lines) == 1 and lines[0].startswith("error:"), got.stderr
    assert "KOPA_BOOTSTRAP_TOKEN is a low-entropy value" in lines[0] and "KOPA_ALLOWED_HOSTS" in lines[0], lines
