"""The one typed settings object. Every knob is an environment variable with the `KOPA_` prefix.

Nested sections use `__`, e.g. `KOPA_SANDBOX__SEED=7` or `KOPA_NEO4J__URI=bolt://127.0.0.1:7687`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from core.errors import ConfigurationError

#: Public hosts that registered documents may always point to (unless `use_default_hosts` is off).
DEFAULT_ALLOWED_HOSTS = ("apis.data.go.kr", "api.odcloud.kr", "business.juso.go.kr", "www.juso.go.kr")
#: Values that ship in the code or the docs: refused as secrets when KOPA_ENV=production.
DEFAULT_SECRETS = {"sandbox-admin", "change-me", "changeme", "boot", "admin", "secret", "password", ""}
_HOST_ENTRY = re.compile(r"^(\*\.)?[a-z0-9_]([a-z0-9_.-]{0,251}[a-z0-9_])?$|^[0-9a-f:.]+$|^\[[0-9a-f:.]+\]$")


def _host_list(value: Any) -> Any:
    """A JSON list or a comma-separated string (environment variables), or a list (code)."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not a JSON list of host names: {exc.msg}") from exc
        else:
            value = [part for part in text.split(",")]
    if isinstance(value, (list, tuple)):
        return [str(v).strip().lower().rstrip(".") for v in value if str(v).strip()]
    return value


class Neo4jSettings(BaseModel):
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = "neo4j"
    browser_url: str = "http://127.0.0.1:7474/browser/"


class SandboxSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8090
    seed: int = 20261130
    faults: str = "none"
    gateway_mode: Literal["2026", "classic"] = "2026"
    #: Where quota counters are kept between restarts (none: in memory only).
    state_file: Path | None = None
    #: Token for the sandbox admin endpoints (fault switch, clock, quota reset).
    admin_token: SecretStr = SecretStr("sandbox-admin")
    #: ISO timestamp (KST assumed when naive) for the sandbox clock; empty: the fixed default of the seed.
    now: str = ""
    #: Daily quota overrides, "SERVICE=N,SERVICE=N" (e.g. "MsrstnInfoInqireSvc=5").
    quotas: str = ""
    #: Per-second limit per key and service (code 23 above it); 0 disables.
    per_second_limit: int = 0
    #: JSON file with more keys: [{"key": "...", "name": "...", "services": ["StanReginCd", ...]}].
    keys_file: Path | None = None


class VerifySettings(BaseModel):
    #: Distinct upstream values tried per link before judging, and the most tried when results are mixed.
    k: int = 4
    k_max: int = 6
    #: Concurrent calls per process.
    concurrency: int = 16
    timeout_s: float = 10.0
    #: Retries of a transient failure inside one run before the link is left inconclusive.
    retries: int = 3
    backoff_s: float = 0.5
    cache_ttl_s: int = 24 * 3600
    #: Environment variable that holds the service key when a registration names none.
    key_secret: str = "KOPA_SERVICE_KEY"
    #: Re-verify verified links older than this (Celery beat).
    reverify_after_h: float = 7 * 24
    #: Seed values by parameter name, JSON: {"base_date": ["{now:%Y%m%d}"], "MobileApp": ["KOPA"]}.
    seeds: str = ""
    #: Instant used by dynamic seeds ("{now:...}"); empty: the machine clock.
    now: str = ""
    #: Default per-API rate limit (requests/s) when a registration sets none; 0: unlimited.
    default_rate_per_s: float = 0.0
    #: Seconds before Redis redelivers a task whose worker vanished (must exceed the longest task).
    visibility_timeout_s: int = 900
    #: Rounds per run (propagation through verified links, retries of inconclusive links).
    max_rounds: int = 6


class BatchSettings(BaseModel):
    #: Largest batch a team may request, and how many of its batches may run at once.
    max_count: int = 2000
    max_concurrent: int = 2
    #: Optional on-premise OpenAI-compatible endpoint for paraphrasing requests (never a hosted model by default).
    paraphrase_url: str = ""


ENGINE_VERSION = "edge-0.1"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="KOPA_", env_nested_delimiter="__", extra="ignore")

    #: "production" (or "prod") turns on the production guard: default tokens and sandbox secrets are refused.
    env: Literal["dev", "test", "staging", "production"] = "dev"
    data_dir: Path = Path(".kopa")
    #: "embedded" keeps the graph in a local SQLite file; "neo4j" uses the server in `neo4j`.
    store: Literal["embedded", "neo4j"] = "embedded"
    embedded_path: Path | None = None
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    redis_url: str | None = None
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    batches: BatchSettings = Field(default_factory=BatchSettings)
    #: Hosts that registered server URLs may point to, ADDED to DEFAULT_ALLOWED_HOSTS (a JSON list or
    #: "a,b"). Exact names; "*.example.go.kr" allows every subdomain of example.go.kr (not the name itself).
    #: A name is still refused when it resolves to a loopback, private, link-local or metadata address.
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Whether DEFAULT_ALLOWED_HOSTS are allowed too (false: only `allowed_hosts`).
    use_default_hosts: bool = True
    #: Upstreams explicitly allowed to live on loopback/private addresses (the sandbox, a local gateway):
    #: "host:port" entries (or "host" for any port), JSON list or "a,b". Override targets count as named too.
    local_upstreams: Annotated[list[str], NoDecode] = Field(default_factory=list)
    #: Where calls really go, "KEY=URL,KEY=URL" (see `UpstreamOverride`). A KEY is a host (every API under it; the
    #: path is kept), a base URL "https://host/path" (the API registered with that server or base_url; its base is
    #: replaced), or an API id (no dot; its base is replaced). The API id wins over the longest base URL, which
    #: wins over the host. Pointing the real hosts at the sandbox is how tests and the embedded main job run.
    upstream_overrides: str = ""
    #: Largest request body the REST API reads (bytes), and the largest API document (POST /v1/apis).
    max_body_bytes: int = Field(1024 * 1024, ge=1024)
    max_document_bytes: int = Field(20 * 1024 * 1024, ge=1024)
    #: Seconds /readyz waits for each dependency before answering 503.
    ready_timeout_s: float = Field(0.8, gt=0, le=30)
    log_level: str = "INFO"
    log_json: bool = False
    #: Bootstrap admin token accepted alongside minted tokens (useful for first setup and CI).
    bootstrap_token: SecretStr | None = None

    @field_validator("env", mode="before")
    @classmethod
    def _env_alias(cls, value: Any) -> Any:
        return "production" if isinstance(value, str) and value.strip().lower() in ("prod", "production") else value

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _allowed(cls, value: Any) -> Any:
        hosts = _host_list(value)
        if isinstance(hosts, list):
            bad = [h for h in hosts if not isinstance(h, str) or not _HOST_ENTRY.match(h)]
            if bad:
                raise ValueError(f"allowed_hosts entries must be host names (or '*.domain'), got {bad[:3]}")
        return hosts

    @field_validator("upstream_overrides")
    @classmethod
    def _overrides(cls, value: str) -> str:
        parse_overrides(value)  # every entry is checked at start-up, not at the first failing call
        return value

    @field_validator("local_upstreams", mode="before")
    @classmethod
    def _local(cls, value: Any) -> Any:
        return _host_list(value)

    @property
    def production(self) -> bool:
        return self.env == "production"

    def allowed_host_patterns(self) -> list[str]:
        """The effective allow-list: the defaults (unless switched off) plus `allowed_hosts`."""
        base = list(DEFAULT_ALLOWED_HOSTS) if self.use_default_hosts else []
        return [*base, *(h for h in self.allowed_hosts if h not in base)]

    def production_problems(self, *, sandbox: bool = False) -> list[str]:
        """Why this configuration must not start in production (empty when it may); `sandbox`: the process
        serves the sandbox, so its admin token counts too."""
        problems: list[str] = []
        boot = self.bootstrap_token.get_secret_value() if self.bootstrap_token else None
        if boot is not None and (boot.strip().lower() in DEFAULT_SECRETS or len(boot) < 16):
            problems.append("KOPA_BOOTSTRAP_TOKEN is a default or short value (use 16+ random characters, or unset it)")
        admin = self.sandbox.admin_token.get_secret_value()
        if sandbox and (admin.strip().lower() in DEFAULT_SECRETS or len(admin) < 16):
            problems.append("KOPA_SANDBOX__ADMIN_TOKEN is the default or short (set 16+ random characters)")
        if any(_is_loopback_name(h) for h in self.allowed_hosts):
            problems.append("KOPA_ALLOWED_HOSTS names a loopback host; name local upstreams in KOPA_LOCAL_UPSTREAMS")
        return problems

    def check_production(self, *, sandbox: bool = False) -> None:
        """Refuse to start in production with default secrets (raises ValueError with every reason)."""
        if self.production:
            problems = self.production_problems(sandbox=sandbox)
            if problems:
                raise ValueError("refusing to start with KOPA_ENV=production: " + "; ".join(problems))

    def graph_file(self) -> Path:
        return self.embedded_path or (self.data_dir / "graph.sqlite3")

    def override_map(self) -> dict[str, str]:
        """KEY -> target URL of every upstream override."""
        return {o.key: o.target for o in parse_overrides(self.upstream_overrides)}

    def overrides(self) -> list[UpstreamOverride]:
        return parse_overrides(self.upstream_overrides)


def _is_loopback_name(host: str) -> bool:
    return host in ("localhost", "localhost.localdomain", "::1", "[::1]") or host.startswith("127.")


@dataclass(frozen=True)
class UpstreamOverride:
    """One entry of KOPA_UPSTREAM_OVERRIDES: calls matching `key` go to `target` instead."""

    kind: Literal["host", "base", "api"]
    key: str
    target: str

    def rewrite(self, url: str, base: str) -> str:
        """`url` (an API's call URL, `base` its server or base URL) sent to the target."""
        parts = urlsplit(url)
        if self.kind == "host":
            rest = parts.path
        else:
            rest = parts.path[len(urlsplit(base if self.kind == "api" else self.key).path.rstrip("/")):]
        return self.target.rstrip("/") + rest + (f"?{parts.query}" if parts.query else "")


def parse_overrides(text: str) -> list[UpstreamOverride]:
    """Parse and check KOPA_UPSTREAM_OVERRIDES: targets are absolute http(s) URLs, and no key is named twice (which
    would otherwise let the last entry win silently)."""
    out: dict[str, UpstreamOverride] = {}
    for key, target in _pairs(text):
        t = urlsplit(target)
        if t.scheme not in ("http", "https") or not t.hostname or t.query or t.fragment:
            raise ValueError(f"upstream override {key}={target!r}: the target must be an absolute http(s) URL such "
                             f"as http://{target.split('://')[-1] or '127.0.0.1:8080'} (no query)")
        if "://" in key:
            k = urlsplit(key)
            if k.scheme not in ("http", "https") or not k.hostname or k.query:
                raise ValueError(f"upstream override key {key!r}: a base URL must be http(s)://host[/path]")
            kind: Literal["host", "base", "api"] = "base"
            norm = f"{k.scheme}://{k.netloc.lower()}{k.path.rstrip('/')}"
        elif "." in key or ":" in key:
            kind, norm = "host", key.lower().rstrip(".")
        else:
            kind, norm = "api", key
        if norm in out:
            raise ValueError(f"upstream override {norm!r} is named twice; keep one entry")
        out[norm] = UpstreamOverride(kind, norm, target.rstrip("/"))
    return list(out.values())


def find_override(overrides: list[UpstreamOverride], url: str, api_id: str | None) -> UpstreamOverride | None:
    """The override that applies to a call URL of an API: its API id, else the longest base URL the call URL
    starts with, else its host."""
    by_id = next((o for o in overrides if o.kind == "api" and o.key == api_id), None) if api_id else None
    if by_id is not None:
        return by_id
    parts = urlsplit(url)
    here = f"{parts.scheme}://{parts.netloc.lower()}{parts.path.rstrip('/')}"
    bases = [o for o in overrides if o.kind == "base" and (here == o.key or here.startswith(o.key + "/"))]
    if bases:
        return max(bases, key=lambda o: len(o.key))
    host = (parts.hostname or "").lower()
    return next((o for o in overrides if o.kind == "host" and o.key == host), None)


def _pairs(text: str) -> list[tuple[str, str]]:
    """"a=1,b=2" as (key, value) pairs in order (repeats kept), ignoring blanks."""
    out = []
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")  # keys hold no "=" (a base-URL key has no query)
        if not sep or not key.strip():
            raise ValueError(f"expected KEY=VALUE, got {part.strip()!r}")
        out.append((key.strip(), value.strip()))
    return out


def parse_pairs(text: str) -> dict[str, str]:
    """Parse "a=1,b=2" into a dict, ignoring blanks."""
    return dict(_pairs(text))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings. An invalid environment raises ConfigurationError with one line per problem, naming
    the KOPA_ variable, so every command can print it and exit rather than show a validation dump."""
    try:
        return Settings()
    except ValidationError as exc:
        lines = [f"KOPA_{'__'.join(str(p) for p in e['loc']).upper()}: {e['msg'].removeprefix('Value error, ')}"
                 for e in exc.errors()]
        raise ConfigurationError("invalid settings: " + "; ".join(lines)) from None
