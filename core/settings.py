"""The one typed settings object. Every knob is an environment variable with the `KOPA_` prefix.

Nested sections use `__`, e.g. `KOPA_SANDBOX__SEED=7` or `KOPA_NEO4J__URI=bolt://127.0.0.1:7687`.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import re
import socket
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from core.errors import ConfigurationError, DisallowedHost
from core.secret_names import API_KEY_PREFIX, CREDENTIAL_PREFIXES, CREDENTIAL_WORDS, DEFAULT_SECRET_NAMES, weak_token

#: Public hosts that registered documents may always point to (unless `use_default_hosts` is off).
DEFAULT_ALLOWED_HOSTS = ("apis.data.go.kr", "api.odcloud.kr", "business.juso.go.kr", "www.juso.go.kr")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_HOST_ENTRY = re.compile(r"^(\*\.)?[a-z0-9_]([a-z0-9_.-]{0,251}[a-z0-9_])?$|^[0-9a-f:.]+$|^\[[0-9a-f:.]+\]$")


class ProductionRefused(ConfigurationError, ValueError):
    """`check_production` refused this configuration: a ConfigurationError (every process prints it as one line
    and exits non-zero) and a ValueError (what the guard always raised)."""


#: Full stops that IDNA (RFC 3490 section 3.1) reads as label separators: ideographic, fullwidth, halfwidth.
_UNICODE_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def ascii_dots(text: str) -> str:
    """`text` with the Unicode full stops that separate labels (。 ． ｡) written as ".": `host。` is `host.`."""
    return text.translate(_UNICODE_DOTS)


def normalise_host(host: str) -> str:
    """The one form of a host name, for the egress allow-list and the upstream overrides alike: Unicode full stops
    as ".", lower case, no trailing dot, ASCII (IDNA for international names); raises DisallowedHost when
    impossible."""
    host = ascii_dots(host).strip().rstrip(".").lower()
    if not host:
        raise DisallowedHost("the URL has no host")
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise DisallowedHost(f"host {host!r} is not a valid international domain name") from exc
    return host


_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_base(url: str) -> str:
    """`scheme://host[:port]/path` of a URL in its one form: the host normalised (`normalise_host`), the port left
    out when it is the scheme's default, no trailing slash. A URL that cannot be read comes back lower-cased."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        host = normalise_host(parts.hostname or "")
        port = parts.port
    except (DisallowedHost, ValueError):
        return url.strip().rstrip("/").lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


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
        return [ascii_dots(str(v)).strip().lower().rstrip(".") for v in value if str(v).strip()]
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
    #: How long a Celery task waits, retrying with backoff, for Neo4j or Redis to come back before its run or
    #: batch closes as failed with the reason (keep it well under the visibility timeout).
    outage_wait_s: float = Field(300.0, ge=0, le=3600)
    #: Rounds per run (propagation through verified links, retries of inconclusive links).
    max_rounds: int = 6


class BatchSettings(BaseModel):
    #: Largest batch a team may request, and how many of its batches may run at once.
    max_count: int = 2000
    max_concurrent: int = 2
    #: Days before the clock over which each trajectory's instant is drawn (never the clock's own day, the
    #: benchmark's), for a world that can be asked about another instant: the sandbox sets 365. 0: every trajectory
    #: at the clock, as against real APIs, which answer at real time (runs on different days vary it).
    clock_days: int = Field(0, ge=0, le=400)
    #: Optional on-premise OpenAI-compatible endpoint for paraphrasing requests (never a hosted model by default).
    paraphrase_url: str = ""
    #: Benchmark tasks no synthesised trajectory may reproduce (a folder of KOPA-Bench YAML files; empty: the
    #: shipped bench/tasks). Every synthesis path (CLI, REST, Celery) applies this guard.
    benchmark_tasks: Path | None = None
    #: Upstream calls a team's batches may make per UTC day, on-demand verification included (cache hits and pool
    #: batches cost nothing); 0: no limit. Counted in Redis, or beside the embedded store's file, so it holds across
    #: batches, processes and restarts. A batch asked for once the day's budget is spent is refused (429 with
    #: Retry-After); one that spends the rest stops calling and closes with the reason.
    team_daily_calls: int = Field(20_000, ge=0)
    #: Per-team budgets that replace `team_daily_calls`, "TEAM=N,TEAM=N" (0: no limit for that team).
    team_budgets: str = ""
    #: Teams whose trajectories every team's `source: "pool"` batches may draw from, "team-a,team-b" (the pool of
    #: a team is otherwise its own trajectories only).
    shared_pool: str = ""
    #: Concurrent `/items` streams one token may hold in one API process (more: 429 with Retry-After).
    item_streams_per_token: int = Field(4, ge=1, le=1000)

    @field_validator("team_budgets")
    @classmethod
    def _team_budgets(cls, value: str) -> str:
        for team, n in _pairs(value):
            if not n.isdigit():
                raise ValueError(f"team budget {team}={n!r}: expected a whole number of calls (0: no limit)")
        return value

    @field_validator("shared_pool")
    @classmethod
    def _shared_pool(cls, value: str) -> str:
        bad = [t for t in (p.strip() for p in value.split(",")) if t and not re.fullmatch(r"[\w.\- ]{1,200}", t)]
        if bad:
            raise ValueError(f"shared_pool entries are team names separated by commas, got {bad[:3]}")
        return value

    def team_budget(self, team: str) -> int:
        """The daily upstream-call budget of `team`'s batches (0: no limit)."""
        return int(parse_pairs(self.team_budgets).get(team, self.team_daily_calls))

    def shared_pool_teams(self) -> set[str]:
        return {t.strip() for t in self.shared_pool.split(",") if t.strip()}


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
    #: Environment variables a registration may name as its API's key (`auth.secret`): exact names or shell-style
    #: patterns (`CORP_SERVICE_KEY`, `DATA_GO_KR_*`), a JSON list or "a,b", matched case-sensitively (the variable is
    #: read as spelled). The default, DEFAULT_SECRET_NAMES, takes `KOPA_APIKEY_*` and `*_SERVICE_KEY`.
    #: `verify.key_secret` (KOPA_SERVICE_KEY) is always allowed; the project's own settings and KOPA_ names outside
    #: KOPA_APIKEY_, and the credential families of CREDENTIAL_PREFIXES / CREDENTIAL_WORDS, never are. Checked at
    #: registration (422) and again at every call (a registration stored before the policy sends no key).
    secret_names: Annotated[list[str], NoDecode] = Field(default_factory=lambda: list(DEFAULT_SECRET_NAMES))
    #: Upstreams explicitly allowed to live on loopback/private addresses (the sandbox, a local gateway):
    #: "host:port" entries (or "host" for any port), JSON list or "a,b". Override targets count as named too. An
    #: entry is on the allow-list as well (that host:port only), so production names a local upstream here rather
    #: than in `allowed_hosts`, which takes public, fully qualified names only there.
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
    #: The URL clients reach this server at (`https://kopa.example.go.kr`), for the links the server hands out
    #: (`GET /browser`); unset, a request's own Host is used only when it is a loopback name.
    public_url: str = ""

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
            if any(isinstance(h, str) and h.strip("*.") == "" for h in bad):
                raise ValueError(
                    f"{next(h for h in bad if h.strip('*.') == '')!r} would allow every host: list each host "
                    "(open.example.go.kr), or *.example.go.kr for the subdomains of one domain"
                )
            if bad:
                raise ValueError(
                    f"allowed_hosts entries must be host names (open.example.go.kr) or *.domain for the subdomains "
                    f"of one domain (no scheme, port or path), got {bad[:3]}"
                )
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

    @field_validator("secret_names", mode="before")
    @classmethod
    def _secret_names(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, (list, tuple)):
            names = [str(v).strip() for v in value if str(v).strip()]
            bad = [n for n in names if not re.fullmatch(r"[A-Za-z0-9_*?]{1,128}", n)]
            if bad:
                raise ValueError(f"secret_names entries are variable names or patterns like CORP_* , got {bad[:3]}")
            return names
        return value

    @model_validator(mode="after")
    def _key_secret_allowed(self) -> Settings:
        why = self.secret_refusal(self.verify.key_secret, default=True)
        if why:
            raise ValueError(f"KOPA_VERIFY__KEY_SECRET: {why}")
        return self

    @property
    def production(self) -> bool:
        return self.env == "production"

    def allowed_host_patterns(self) -> list[str]:
        """The effective allow-list: the defaults (unless switched off) plus `allowed_hosts`."""
        base = list(DEFAULT_ALLOWED_HOSTS) if self.use_default_hosts else []
        return [*base, *(h for h in self.allowed_hosts if h not in base)]

    def secret_refusal(self, name: str, *, default: bool = False) -> str | None:
        """Why `name` may not be used as an API's key variable (None when it may). `default`: the check of
        `verify.key_secret` itself (the allow-list does not apply to it, the hard refusals do)."""
        if not _ENV_NAME.fullmatch(name or ""):
            return f"{(name or '')[:80]!r} is not an environment variable name (letters, digits and _)"
        # the refusals hold whatever the case: a lower-case spelling of a credential is still that credential
        upper = name.upper()
        own = [f"KOPA_{f.upper()}" for f in type(self).model_fields]
        if any(upper == o or upper.startswith(o + "__") for o in own):
            return f"{name} is one of KOPA EDGE's own settings, never an API key"
        if upper.startswith(CREDENTIAL_PREFIXES) or any(w in upper for w in CREDENTIAL_WORDS):
            return (
                f"{name} looks like another system's credential (cloud, CI, registry, model host, database, "
                "password, token); name the variable after the API, e.g. CORP_SERVICE_KEY"
            )
        if default or name == self.verify.key_secret:
            return None
        if upper.startswith("KOPA_") and not name.startswith(API_KEY_PREFIX):
            return (
                f"{name} is in KOPA EDGE's own KOPA_ namespace; name an API's key {API_KEY_PREFIX}<API> or "
                "<API>_SERVICE_KEY"
            )
        # the allow-list is matched as the variable is read: case-sensitively (corp_service_key is another name)
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.secret_names):
            near = any(fnmatch.fnmatchcase(upper, pattern) for pattern in self.secret_names) and name != upper
            return (
                f"{name} is not an allowed key variable (KOPA_SECRET_NAMES: "
                f"{', '.join(self.secret_names) or 'none'}, plus {self.verify.key_secret}; names are matched as "
                f"spelled{f', did you mean {upper}?' if near else ''})"
            )
        return None

    def production_problems(self, *, sandbox: bool = False) -> list[str]:
        """Why this configuration must not start in production (empty when it may); `sandbox`: the process
        serves the sandbox, so its admin token counts too."""
        problems: list[str] = []
        boot = self.bootstrap_token.get_secret_value() if self.bootstrap_token else None
        weak = weak_token(boot) if boot is not None else None
        if weak:
            problems.append(
                f"KOPA_BOOTSTRAP_TOKEN is {weak} (use 16+ random characters, e.g. openssl rand -hex 32, or unset it)"
            )
        weak = weak_token(self.sandbox.admin_token.get_secret_value()) if sandbox else None
        if weak:
            problems.append(f"KOPA_SANDBOX__ADMIN_TOKEN is {weak} (set 16+ random characters)")
        local = [(h, found) for h in self.allowed_hosts for found in [_local_host_entry(h)] if found]
        if local:
            named = [f"{h} ({why}): {instead}" for h, (why, instead) in local[:5]]
            more = f" and {len(local) - 5} more" if len(local) > 5 else ""
            problems.append(
                f"KOPA_ALLOWED_HOSTS names hosts that are not public, fully qualified names: {'; '.join(named)}{more} "
                "(allow public hosts only; name local upstreams in KOPA_LOCAL_UPSTREAMS as host:port)"
            )
        return problems

    def check_production(self, *, sandbox: bool = False) -> None:
        """Refuse to start in production with default secrets (raises ProductionRefused with every reason)."""
        if self.production:
            problems = self.production_problems(sandbox=sandbox)
            if problems:
                raise ProductionRefused("refusing to start with KOPA_ENV=production: " + "; ".join(problems))

    def graph_file(self) -> Path:
        return self.embedded_path or (self.data_dir / "graph.sqlite3")

    def override_map(self) -> dict[str, str]:
        """KEY -> target URL of every upstream override."""
        return {o.key: o.target for o in parse_overrides(self.upstream_overrides)}

    def overrides(self) -> list[UpstreamOverride]:
        return parse_overrides(self.upstream_overrides)


#: Names of cloud instance metadata services (their addresses are link-local and refused anyway).
_METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"})


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an allow-list entry spells, in any form a resolver takes (`127.1`, `0x7f.1`, `2130706433`)."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if not re.fullmatch(r"[0-9a-fx.]+", bare) or not any(c.isdigit() for c in bare):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        return None


#: Top-level domains and suffixes that name no public host: special-use names (RFC 6761, 6762, 8375; ICANN's
#: private-use .internal) and the private suffixes in common use (home and office networks, Kubernetes services).
PRIVATE_SUFFIXES = (
    "local",
    "localdomain",
    "internal",
    "home.arpa",
    "test",
    "invalid",
    "example",
    "lan",
    "intranet",
    "corp",
    "home",
    "private",
    "svc",
)


def _local_host_entry(entry: str) -> tuple[str, str] | None:
    """Why an entry of KOPA_ALLOWED_HOSTS names no public host and what to write instead (None when it may): a
    loopback, unspecified or link-local address, a localhost name, a name without a domain (`vm`), a private-use
    domain (`gw.lan`, `metadata.google.internal`) or a wildcard over a whole top-level domain (`*.kr`)."""
    wildcard = entry.startswith("*.")
    host = entry.removeprefix("*.")
    ip = _ip_literal(host)
    if ip is not None:
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        spelled = str(mapped) if mapped else f"[{ip}]" if isinstance(ip, ipaddress.IPv6Address) else str(ip)
        if wildcard:
            return ("a wildcard over an address", f"write the address itself, {spelled}, if it is public")
        if any(a is not None and a.is_unspecified for a in (ip, mapped)):
            return (
                "an unspecified address",
                "it is a listen address, never an upstream: name the upstream itself, or KOPA_LOCAL_UPSTREAMS="
                "ADDRESS:PORT for one on this network",
            )
        if any(a is not None and a.is_link_local for a in (ip, mapped)):
            return ("a link-local address", "remove it: link-local addresses (cloud metadata) are never an upstream")
        if any(a is not None and a.is_loopback for a in (ip, mapped)):
            return ("a loopback address", f"name the one local upstream as KOPA_LOCAL_UPSTREAMS={spelled}:PORT")
        return None
    if host in ("localhost", "localhost.localdomain") or host.endswith((".localhost", ".localdomain")):
        if wildcard:
            return ("a wildcard over loopback names", "name each local upstream as KOPA_LOCAL_UPSTREAMS=HOST:PORT")
        return ("a loopback name", f"name the one local upstream as KOPA_LOCAL_UPSTREAMS={host}:PORT")
    if "." not in host:
        if wildcard:
            return (
                "a wildcard over a whole top-level domain",
                f"write the API's own domain, e.g. *.data.example.{host}",
            )
        return (
            "an unqualified name",
            f"write its fully qualified name ({host}.example.go.kr), or KOPA_LOCAL_UPSTREAMS={host}:PORT for an "
            "upstream on this network",
        )
    if host in _METADATA_NAMES:
        return ("a cloud metadata name", "remove it: instance metadata is never an upstream")
    private = next((sfx for sfx in PRIVATE_SUFFIXES if host == sfx or host.endswith("." + sfx)), None)
    if private is not None:
        return (
            f"a private-use domain, .{private}",
            f"name the upstream on this network as KOPA_LOCAL_UPSTREAMS={'HOST' if wildcard else host}:PORT",
        )
    return None


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
            rest = parts.path[len(urlsplit(base if self.kind == "api" else self.key).path.rstrip("/")) :]
        return self.target.rstrip("/") + rest + (f"?{parts.query}" if parts.query else "")


def parse_overrides(text: str) -> list[UpstreamOverride]:
    """Parse and check KOPA_UPSTREAM_OVERRIDES: targets are absolute http(s) URLs, and no key is named twice (which
    would otherwise let the last entry win silently)."""
    out: dict[str, UpstreamOverride] = {}
    for key, target in _pairs(text):
        t = urlsplit(target)
        if t.scheme not in ("http", "https") or not t.hostname or t.query or t.fragment:
            raise ValueError(
                f"upstream override {key}={target!r}: the target must be an absolute http(s) URL such "
                f"as http://{target.split('://')[-1] or '127.0.0.1:8080'} (no query)"
            )
        if "://" in key:
            k = urlsplit(key)
            if k.scheme not in ("http", "https") or not k.hostname or k.query:
                raise ValueError(f"upstream override key {key!r}: a base URL must be http(s)://host[/path]")
            kind: Literal["host", "base", "api"] = "base"
            norm = canonical_base(key)
        elif "." in ascii_dots(key) or ":" in key:
            kind, norm = "host", _host_key(key)
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
    here = canonical_base(url)  # one host form: `apis.data.go.kr.`, `APIS.data.go.kr:443` are apis.data.go.kr
    bases = [o for o in overrides if o.kind == "base" and (here == o.key or here.startswith(o.key + "/"))]
    if bases:
        return max(bases, key=lambda o: len(o.key))
    parts = urlsplit(url)
    try:
        host, port = normalise_host(parts.hostname or ""), parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except (DisallowedHost, ValueError):
        return None
    # a bare host key names the host on its scheme's default port; another port is another server
    names = {f"{host}:{port}"} | ({host} if port == _DEFAULT_PORTS.get(parts.scheme.lower()) else set())
    return next((o for o in overrides if o.kind == "host" and o.key in names), None)


def _host_key(key: str) -> str:
    """A host key of KOPA_UPSTREAM_OVERRIDES ('host' or 'host:port') in the one host form."""
    host, sep, port = key.strip().rpartition(":") if key.count(":") == 1 else (key, "", "")
    try:
        return f"{normalise_host(host)}:{int(port)}" if sep and port.isdigit() else normalise_host(key)
    except DisallowedHost as exc:
        raise ValueError(f"upstream override key {key!r}: {exc.detail}") from None


def _pairs(text: str) -> list[tuple[str, str]]:
    """ "a=1,b=2" as (key, value) pairs in order (repeats kept), ignoring blanks."""
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
        lines = [  # a model-wide check has no field (its message names the variable itself)
            f"{'KOPA_' + '__'.join(str(p) for p in e['loc']).upper() + ': ' if e['loc'] else ''}"
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise ConfigurationError("invalid settings: " + "; ".join(lines)) from None
