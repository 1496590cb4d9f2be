"""Register the unseen family into a store and verify it in process against its emulated servers; score the
verdicts against its own ground truth. Used by tests/test_unseen_family.py and perf/unseen_family.py."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import httpx
import yaml

from core.settings import Settings
from execution.limits import MemoryEconomy
from graph.embedded_store import EmbeddedStore
from graph.models import AuthConfig, LinkRecord, RegistrationMeta, ToolRecord
from graph.registry import register
from graph.store import all_links
from tests.unseen.app import KEY, create_app
from verification.runs import execute_run, new_run, run_progress

HERE = Path(__file__).parent
HOSTS = [
    "corp.unseen.example",
    "odcloud.unseen.example",
    "adm.unseen.example",
    "ocean.unseen.example",
    "sea.unseen.example",
    "culture.unseen.example",
    "kostat.unseen.example",
    "astro.unseen.example",
    "openapi.city.unseen.example",
    "data.road.unseen.example",
]
LOCAL = "unseen.local"
SECRET = "KOPA_APIKEY_UNSEEN"


def documents() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted((HERE / "docs").iterdir()):
        text = path.read_text(encoding="utf-8")
        out[path.name] = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return out


def ground_truth() -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = json.loads((HERE / "ground_truth.json").read_text(encoding="utf-8"))["links"]
    return links


def unseen_settings(base: Settings) -> Settings:
    """Settings whose upstream overrides send every unseen host to the in-process app."""
    os.environ.setdefault(SECRET, KEY)
    overrides = ",".join(f"{h}=http://{LOCAL}" for h in HOSTS)
    joined = ",".join(x for x in (base.upstream_overrides, overrides) if x)
    return base.model_copy(update={"upstream_overrides": joined, "allowed_hosts": [*base.allowed_hosts, *HOSTS, LOCAL]})


def transport() -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app())


@dataclass
class UnseenScore:
    true_total: int
    decoy_total: int
    verified_true: list[str] = field(default_factory=list)
    verified_decoys: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    unreachable: list[dict[str, Any]] = field(default_factory=list)
    tools: int = 0
    candidates: int = 0
    verified: int = 0
    calls: int = 0
    registered: int = 0
    registration_errors: list[str] = field(default_factory=list)
    rounds: int = 0
    #: Verified links that the ground truth does not list (precision is measured only when there are none).
    unlabelled: list[str] = field(default_factory=list)
    #: Bonus links (true, but another provider's identifier with only the values to say so): scored apart.
    bonus_total: int = 0
    verified_bonus: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return len(self.verified_true) / max(1, self.true_total)

    @property
    def precision(self) -> float:
        """True links among the verified links the ground truth labels (every verified link, when none is
        unlabelled)."""
        labelled = len(self.verified_true) + len(self.verified_decoys)
        return len(self.verified_true) / labelled if labelled else 0.0

    @property
    def calls_per_verified_link(self) -> float:
        return self.calls / max(1, self.verified)

    def summary(self) -> dict[str, Any]:
        return {
            "tools": self.tools,
            "registered_documents": self.registered,
            "candidates": self.candidates,
            "true_links": self.true_total,
            "verified_true": len(self.verified_true),
            "recall": round(self.recall, 3),
            "decoys": self.decoy_total,
            "decoys_verified": self.verified_decoys,
            "precision": round(self.precision, 3),
            "unlabelled_verified": self.unlabelled,
            "bonus": self.bonus_total,
            "bonus_verified": self.verified_bonus,
            "unreachable_tools": len(self.unreachable),
            "calls": self.calls,
            "calls_per_verified_link": round(self.calls_per_verified_link, 2),
            "missed": self.missed,
            "registration_errors": self.registration_errors,
        }


def _transform_key(t: dict[str, Any] | None) -> str:
    """A transform as compared with the ground truth: its kind and its parameters (a link that strips a prefix is not
    the same link as one that passes the value as is)."""
    t = dict(t or {"kind": "identity"})
    t.pop("pair", None)
    return json.dumps(t, sort_keys=True)


def _key(lk: LinkRecord, paths: dict[str, str]) -> tuple[str, str, str, str, str]:
    return (
        paths.get(lk.source_tool, ""),
        lk.source_field,
        paths.get(lk.target_tool, ""),
        lk.target_param.split(":", 1)[-1],
        _transform_key(lk.transform),
    )


def _paths(tools: list[ToolRecord]) -> dict[str, str]:
    """Each tool's operation path as the ground truth names it (path templates kept: `/{KEY}/json/...`)."""
    return {t.name: unquote(urlparse(t.url).path) for t in tools}


def _gt_key(gt: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (
        gt["source"]["path"],
        gt["source"]["field"],
        gt["target"]["path"],
        gt["target"]["param"],
        _transform_key(gt["transform"]),
    )


def score_links(links: list[LinkRecord], tools: list[ToolRecord]) -> tuple[list[str], list[str], list[str]]:
    paths = _paths(tools)
    verified = {_key(lk, paths) for lk in links if lk.status == "verified"}
    true_hit: list[str] = []
    decoy_hit: list[str] = []
    missed: list[str] = []
    for gt in ground_truth():
        k = _gt_key(gt)
        if gt["kind"] == "true":
            (true_hit if k in verified else missed).append(gt["id"])
        elif gt["kind"] == "decoy" and k in verified:
            decoy_hit.append(gt["id"])
    return true_hit, decoy_hit, missed


def bonus_links(links: list[LinkRecord], tools: list[ToolRecord]) -> list[str]:
    """The bonus links verified (ground-truth ids)."""
    paths = _paths(tools)
    verified = {_key(lk, paths) for lk in links if lk.status == "verified"}
    return [gt["id"] for gt in ground_truth() if gt["kind"] == "bonus" and _gt_key(gt) in verified]


def unlabelled_links(links: list[LinkRecord], tools: list[ToolRecord]) -> list[str]:
    """Verified links the ground truth does not list, as 'path.field -> path.param transform'."""
    paths = _paths(tools)
    listed = {_gt_key(g) for g in ground_truth()}
    out = []
    for lk in links:
        k = _key(lk, paths)
        if lk.status == "verified" and k not in listed:
            out.append(f"{k[0]}.{k[1]} -> {k[2]}.{k[3]} {k[4]}")
    return sorted(out)


def run_unseen(graph_file: Path, base: Settings | None = None) -> UnseenScore:
    """Register every unseen document (the key by its env var name), verify in process, score."""
    settings = unseen_settings(base or Settings(store="embedded", embedded_path=graph_file))
    store = EmbeddedStore(graph_file)
    gt = ground_truth()
    score = UnseenScore(
        true_total=sum(1 for g in gt if g["kind"] == "true"),
        decoy_total=sum(1 for g in gt if g["kind"] == "decoy"),
        bonus_total=sum(1 for g in gt if g["kind"] == "bonus"),
    )
    try:
        for name, doc in documents().items():
            try:
                register(store, settings, doc, RegistrationMeta(auth=AuthConfig(secret=SECRET)))
                score.registered += 1
            except Exception as exc:  # recorded in the score: registration must take every document
                score.registration_errors.append(f"{name}: {type(exc).__name__}: {exc}")
        run = asyncio.run(execute_run(store, settings, new_run(), transport=transport(), economy=MemoryEconomy()))
        progress = run_progress(store, run)
        tools = store.all_tools()
        links = all_links(store)
        score.verified_true, score.verified_decoys, score.missed = score_links(links, tools)
        score.unlabelled = unlabelled_links(links, tools)
        score.verified_bonus = bonus_links(links, tools)
        score.tools, score.candidates = len(tools), progress["candidates"]
        score.verified, score.calls = progress["verified"], progress["calls_spent"]
        score.unreachable = progress["unreachable"]
        score.rounds = run.round + 1
    finally:
        store.close()
    return score
