"""Domain records of the tool graph (plain pydantic models shared by the parser, the stores and the API)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from pydantic import BaseModel, Field

Location = Literal["query", "path", "header", "body"]
LinkStatus = Literal["candidate", "verified", "refuted", "inconclusive"]
Role = Literal["admin", "reader"]


def utcnow() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class GraphStats(TypedDict):
    """What a store holds (`kopa graph stats`)."""

    apis: int
    tools: int  # every tool, retired ones included
    active_tools: int
    links: dict[str, int]  # by status


class AuthConfig(BaseModel):
    """How calls authenticate. Only the NAME of the secret is stored; its value lives in the environment."""

    scheme: Literal["query_key", "header_key", "cookie_key", "none"] = "query_key"
    param: str | None = None
    secret: str | None = None


class RegistrationMeta(BaseModel):
    api_id: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_\-]{1,62}$", description="stable id; derived if absent")
    base_url: str | None = Field(None, description="override of the document's server URL")
    auth: AuthConfig | None = None
    rate_limit_per_s: float | None = Field(None, gt=0, le=10_000)
    daily_quota: int | None = Field(None, ge=0)


class ParamRecord(BaseModel):
    name: str
    location: Location = "query"
    type: str = "string"
    format: str | None = None
    pattern: str | None = None
    #: The documented values, typed as documented (1 stays 1, true stays true). For an array parameter these are
    #: the values of one element (read off `items`), as `item_type` is the type of one element.
    enum: list[Any] | None = None
    item_type: str | None = None
    required: bool = False
    example: Any = None
    default: Any = None
    description: str = ""

    def key(self) -> str:
        return f"{self.location}:{self.name}"


class FieldRecord(BaseModel):
    name: str
    path: str
    type: str = "string"
    description: str = ""
    nullable: bool = False
    example: Any = None


class ToolRecord(BaseModel):
    name: str
    api_id: str
    op_key: str  # "GET /getVilageFcst": identity of the operation inside its API
    method: str
    url: str  # server URL + path, as documented
    summary: str = ""
    description: str = ""
    description_en: str = ""
    intent: str = ""
    envelope: str = "plain"
    items_path: str = ""
    params: list[ParamRecord] = Field(default_factory=list)
    fields: list[FieldRecord] = Field(default_factory=list)
    json_schema: dict[str, Any] = Field(default_factory=dict)
    format_param: str | None = None  # "name=value" the tool always sends (e.g. "dataType=JSON")
    auth_param: str | None = None
    #: How the body params travel: "application/json", "application/x-www-form-urlencoded" or
    #: "multipart/form-data" (the document's request body or Swagger 2 `consumes`); None when there is no body.
    body_media: str | None = None
    spec_hash: str = ""
    status: Literal["active", "retired"] = "active"
    updated_at: str = Field(default_factory=utcnow)

    @property
    def key_in_path(self) -> bool:
        """The key is a segment of the URL's path (`/{KEY}/json/...`), filled in at call time, never an argument."""
        return bool(self.auth_param) and "{" + str(self.auth_param) + "}" in self.url

    @property
    def format_name(self) -> str | None:
        """The name of the response-format parameter (`dataType` of "dataType=JSON"), None when there is none."""
        return self.format_param.split("=", 1)[0] if self.format_param else None


class ApiRecord(BaseModel):
    id: str
    title: str
    version: str = ""
    source_format: str = "openapi-3.0"
    server_url: str
    base_url: str | None = None
    auth: AuthConfig = Field(default_factory=AuthConfig)
    rate_limit_per_s: float | None = None
    daily_quota: int | None = None
    doc_hash: str = ""
    tool_count: int = 0
    created_at: str = Field(default_factory=utcnow)
    updated_at: str = Field(default_factory=utcnow)


class LinkRecord(BaseModel):
    id: str
    source_tool: str
    source_field: str
    target_tool: str
    target_param: str  # ParamRecord.key() of the target, e.g. "query:LAWD_CD"
    transform: dict[str, Any] = Field(default_factory=lambda: {"kind": "identity"})
    score: float = 0.0
    status: LinkStatus = "candidate"
    reason: str = ""
    needs_reverify: bool = False
    evidence: dict[str, Any] = Field(default_factory=dict)
    history: list[dict[str, Any]] = Field(default_factory=list)
    last_run: str = ""
    verified_at: str = ""
    updated_at: str = Field(default_factory=utcnow)


RunStatus = Literal["queued", "running", "completed", "paused", "failed"]


class RunRecord(BaseModel):
    """A verification run. Counts of link outcomes are derived from the links themselves (by `last_run`)."""

    id: str
    status: RunStatus = "queued"
    mode: Literal["inprocess", "celery"] = "inprocess"
    api_ids: list[str] = Field(default_factory=list)
    budget: int | None = None
    scope: Literal["pending", "stale", "all"] = "pending"
    created_at: str = Field(default_factory=utcnow)
    started_at: str = ""
    finished_at: str = ""
    message: str = ""
    candidates: int = 0
    calls: dict[str, int] = Field(default_factory=dict)
    unreachable: list[dict[str, Any]] = Field(default_factory=list)
    pending_sources: list[str] = Field(default_factory=list)
    round: int = 0
    extra_seeds: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    #: The team whose batch started the run (on-demand verification): only that team and admins see it. Empty for
    #: the runs an admin starts, which every reader sees.
    team: str = ""


class RegistrationResult(BaseModel):
    api: ApiRecord
    created: bool
    tools: list[dict[str, str]]
    retired: list[str]
    flagged_links: int
    understood: list[dict[str, Any]] = Field(
        default_factory=list,
        description="per operation: where the key goes, the paging kind, the rows path, the total and the success "
        "rule, each with its reason, and what could not be worked out (`unresolved`)",
    )


class TokenRecord(BaseModel):
    id: str
    name: str
    role: Role
    token_hash: str
    created_at: str = Field(default_factory=utcnow)
    #: ISO instant after which the token is refused ("" = never).
    expires_at: str = ""
    #: ISO instant of revocation ("" = not revoked); revoked tokens stay listed, refused.
    revoked_at: str = ""

    def state(self, now: datetime | None = None) -> Literal["active", "expired", "revoked"]:
        if self.revoked_at:
            return "revoked"
        if self.expires_at:
            try:
                expires = datetime.fromisoformat(self.expires_at)
            except ValueError:
                return "expired"  # an unreadable expiry never grants access
            if expires.tzinfo is None:
                expires = expires.replace(tzinfo=UTC)
            if (now or datetime.now(UTC)) >= expires:
                return "expired"
        return "active"
