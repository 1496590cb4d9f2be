"""Registering API documents: parse, check the host allow-list, diff against what is stored, write atomically."""

from __future__ import annotations

from typing import Any

from core.egress import EgressPolicy
from core.errors import NotFound
from core.settings import Settings, find_override
from graph.models import RegistrationMeta, RegistrationResult, ToolRecord
from graph.openapi import MAX_NAME, field_hash, param_hash, parse_document
from graph.store import GraphStore


def check_host(url: str, settings: Settings, api_id: str | None = None) -> None:
    """Only allow-listed hosts with public addresses (or named local upstreams) may be registered; the executor
    checks every call again (core.egress). A URL that an upstream override replaces (by host, base URL or API id)
    is checked by name only, since calls never go to it."""
    policy = EgressPolicy.from_settings(settings)
    policy.target(url)
    if find_override(settings.overrides(), url, api_id) is None:
        policy.check_url(url, resolve=True)


def register(store: GraphStore, settings: Settings, doc: Any, meta: RegistrationMeta | None = None) -> RegistrationResult:
    meta = meta or RegistrationMeta()
    api, tools = parse_document(doc, meta)
    check_host(api.base_url or api.server_url, settings, api.id)

    existing = {t.op_key: t for t in store.tools_of_api(api.id)}
    previous = store.get_api(api.id)
    if previous is not None:
        api.created_at = previous.created_at
    # stable names across re-registration, unique across APIs
    for t in tools:
        if t.op_key in existing:
            t.name = existing[t.op_key].name
    owners = store.tool_owners([t.name for t in tools])
    taken = {n for n, owner in owners.items() if owner != api.id}
    used = {t.name for t in tools if t.name not in taken}
    for t in tools:
        if t.name in taken:
            base, n = t.name, 2
            while t.name in taken or t.name in used:
                suffix = f"_{n}"
                t.name = base[: MAX_NAME - len(suffix)] + suffix
                n += 1
            used.add(t.name)

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
    return RegistrationResult(api=api, created=previous is None, tools=report, retired=retire, flagged_links=flagged)


def unregister(store: GraphStore, api_id: str) -> int:
    removed = store.delete_api(api_id)
    if removed < 0:
        raise NotFound(f"no API {api_id!r}; GET /v1/apis lists the registered ones")
    return removed
