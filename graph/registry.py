"""Registering API documents: parse, check the host allow-list, diff against what is stored, write atomically."""

from __future__ import annotations

import hashlib
from typing import Any

from core.egress import EgressPolicy
from core.errors import InvalidInput, NotFound
from core.settings import Settings, find_override
from graph.models import RegistrationMeta, RegistrationResult, ToolRecord
from graph.openapi import MAX_NAME, parse_with_report
from graph.store import GraphStore
from graph.tool_schema import field_hash, param_hash


def check_host(url: str, settings: Settings, api_id: str | None = None) -> None:
    """Only allow-listed hosts with public addresses (or named local upstreams) may be registered; the executor
    checks every call again (core.egress). A URL that an upstream override replaces (by host, base URL or API id)
    is checked by name only, since calls never go to it."""
    policy = EgressPolicy.from_settings(settings)
    policy.target(url)
    if find_override(settings.overrides(), url, api_id) is None:
        policy.check_url(url, resolve=True)


def check_secret(settings: Settings, name: str | None) -> None:
    """A registration may name only an allowed variable as its key (Settings.secret_refusal): 422 otherwise."""
    why = settings.secret_refusal(name) if name else None
    if why:
        raise InvalidInput(
            f"secret name refused: {why}", locations=[{"pointer": "/metadata/auth/secret", "message": why}]
        )


def _version_keys(doc: Any) -> Any:
    """A document with both `openapi` and an empty `swagger` (or the other way round), as generators write them,
    is read by the key that has a value."""
    if isinstance(doc, dict) and "openapi" in doc and "swagger" in doc:
        empty = [k for k in ("openapi", "swagger") if doc[k] in (None, "")]
        if len(empty) == 1:
            return {k: v for k, v in doc.items() if k != empty[0]}
    return doc


def scoped_name(base: str, api_id: str, op_key: str, attempt: int = 0) -> str:
    """The name a tool gets when `base` belongs to another API: the base, cut to fit, with a digest of its own
    API id and operation (and `attempt`, past the first): stable across re-registrations, and another API's
    tool can never be named so by its own document's operations only by chance."""
    digest = hashlib.sha256(f"{api_id}\n{op_key}\n{attempt}".encode()).hexdigest()[:8]
    suffix = f"_{digest}"
    return base[: MAX_NAME - len(suffix)].rstrip("_") + suffix


def _assign_names(store: GraphStore, api_id: str, tools: list[ToolRecord], existing: dict[str, ToolRecord]) -> None:
    """Names unique across APIs by construction: a tool keeps the name it has in this API; a new tool takes its
    document's name unless another API owns it, then an API-scoped name (`scoped_name`), checked against the
    store too. A tool of another API is never renamed, replaced or moved."""
    for t in tools:
        if t.op_key in existing:
            t.name = existing[t.op_key].name
    mine = {t.name for t in existing.values()}
    kept = {t.name for t in tools if t.op_key in existing}
    pending = [t for t in tools if t.op_key not in existing]
    attempt = 0
    while pending:
        owners = store.tool_owners([t.name for t in pending])
        used = set(kept)
        clash: list[ToolRecord] = []
        for t in pending:
            owner = owners.get(t.name)
            foreign = owner is not None and owner != api_id
            # a name one of this API's own tools has (another operation's) is taken too
            if foreign or t.name in used or (t.name in mine and t.name not in kept):
                clash.append(t)
            else:
                used.add(t.name)
        if not clash:
            return
        for t in clash:
            t.name = scoped_name(t.name if attempt == 0 else t.name.rsplit("_", 1)[0], api_id, t.op_key, attempt)
        kept = used
        pending = clash
        attempt += 1
        if attempt > 20:  # 20 digests in a row all owned elsewhere: nothing honest can be done
            raise InvalidInput("could not find names for this API's tools that no other API uses")


def register(
    store: GraphStore, settings: Settings, doc: Any, meta: RegistrationMeta | None = None
) -> RegistrationResult:
    meta = meta or RegistrationMeta()
    check_secret(settings, meta.auth.secret if meta.auth else None)
    api, tools, understood = parse_with_report(_version_keys(doc), meta)
    check_secret(settings, api.auth.secret)
    check_host(api.base_url or api.server_url, settings, api.id)

    existing = {t.op_key: t for t in store.tools_of_api(api.id)}
    previous = store.get_api(api.id)
    if previous is not None:
        api.created_at = previous.created_at
    _assign_names(store, api.id, tools, existing)

    upsert: list[ToolRecord] = []
    report: list[dict[str, str]] = []
    flags: dict[str, tuple[list[str], list[str]]] = {}
    for t in tools:
        old = existing.get(t.op_key)
        if old is None:
            upsert.append(t)
            report.append({"name": t.name, "op": t.op_key, "change": "new"})
        elif old.spec_hash != t.spec_hash or old.status != "active":
            upsert.append(t)
            report.append({"name": t.name, "op": t.op_key, "change": "changed"})
            new_params = {p.key(): param_hash(p) for p in t.params}
            new_fields = {f.name: field_hash(f) for f in t.fields}
            params = [p.key() for p in old.params if new_params.get(p.key()) != param_hash(p)]
            fields = [f.name for f in old.fields if new_fields.get(f.name) != field_hash(f)]
            if params or fields:
                flags[t.name] = (params, fields)
        else:
            report.append({"name": t.name, "op": t.op_key, "change": "unchanged"})
    new_keys = {t.op_key for t in tools}
    retire = [t.name for k, t in existing.items() if k not in new_keys and t.status == "active"]
    for name in retire:
        old_tool = next(t for t in existing.values() if t.name == name)
        flags[name] = ([p.key() for p in old_tool.params], [f.name for f in old_tool.fields])
    flagged = store.apply_registration(api, upsert, retire, flags)
    names = {t.op_key: t.name for t in tools}  # the names kept from earlier registrations
    understood = [{**u, "tool": names.get(u["op"], u["tool"])} for u in understood]
    return RegistrationResult(
        api=api, created=previous is None, tools=report, retired=retire, flagged_links=flagged, understood=understood
    )


def unregister(store: GraphStore, api_id: str) -> int:
    removed = store.delete_api(api_id)
    if removed < 0:
        raise NotFound(f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    return removed
