"""The one typed settings object. Every knob is an environment variable with the `KOPA_` prefix.

Nested sections use `__`, e.g. `KOPA_SANDBOX__SEED=7` or `KOPA_NEO4J__URI=bolt://127.0.0.1:7687`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


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

    env: Literal["dev", "test", "prod"] = "dev"
    data_dir: Path = Path(".kopa")
    #: "embedded" keeps the graph in a local SQLite file; "neo4j" uses the server in `neo4j`.
    store: Literal["embedded", "neo4j"] = "embedded"
    embedded_path: Path | None = None
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    redis_url: str | None = None
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    batches: BatchSettings = Field(default_factory=BatchSettings)
    #: Hosts that registered server URLs may point to (no server-side request forgery).
    allowed_hosts: list[str] = Field(
        default_factory=lambda: [
            "apis.data.go.kr",
            "api.odcloud.kr",
            "business.juso.go.kr",
            "www.juso.go.kr",
            "127.0.0.1",
            "localhost",
        ]
    )
    #: Base-URL rewrites applied when calling registered APIs, "host=url,host=url".
    #: Pointing the real hosts at the sandbox is how tests and the embedded main job run.
    upstream_overrides: str = ""
    log_level: str = "INFO"
    log_json: bool = False
    #: Bootstrap admin token accepted alongside minted tokens (useful for first setup and CI).
    bootstrap_token: SecretStr | None = None

    def graph_file(self) -> Path:
        return self.embedded_path or (self.data_dir / "graph.sqlite3")

    def override_map(self) -> dict[str, str]:
        return parse_pairs(self.upstream_overrides)


def parse_pairs(text: str) -> dict[str, str]:
    """Parse "a=1,b=2" into a dict, ignoring blanks."""
    out: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"expected NAME=VALUE, got {part!r}")
        out[key.strip()] = value.strip()
    return out


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
