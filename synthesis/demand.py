"""Verification driven by demand: verify what will be traversed.

Verification stays upstream of generation: no trajectory ever uses a link that is not verified. But instead of
verifying every candidate link of the graph first (`kopa verify`, the REST run: it remains, and is what the
graph's explorers see), the sampler proposes plans over the links no run has refuted (`VerifiedGraph(pending=
True)`), the links on the plans about to run that are not verified yet are verified, once, by a `LinkVerifier`
(verification.runs.DemandVerifier: the verification engine, its evidence and run record, the links saved in the
store where every later run and batch reuses them), and only the plans whose links all came out verified are
executed. A refuted link leaves the graph at once, so later proposals route around it.

Synthesis may not import verification (tests/test_architecture.py): the verifier is handed in by the caller
(cli, perf, workers), which gives both the same call economy, so a verification call that is also a trajectory
step (the sampling call of a root tool, a trial with the same values) is paid once, a cache hit the second time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from graph.models import LinkRecord
from synthesis.plans import PENDING, VerifiedGraph
from synthesis.records import Plan

#: How often one synthesis asks for the same link to be verified while it stays inconclusive.
TRIES = 2
#: How often one synthesis grows the graph (reaches tools through links it verified) when the draw runs out.
ROUNDS = 3


class LinkVerifier(Protocol):
    """What demand-driven synthesis needs of verification (verification.runs.DemandVerifier)."""

    async def discover(self) -> None:
        """Sample the tools and derive the candidate links (cached calls once done), without deciding any."""
        ...

    async def verify(self, links: list[LinkRecord]) -> list[LinkRecord]:
        """Decide these links (saved in the store with their evidence); returns them as decided."""
        ...

    def spent(self) -> int:
        """Upstream calls verification has made so far."""
        ...

    async def expand(self) -> bool:
        """Another round's first half: tools blocked until now fed through the links verified since, sampled, and
        their candidate links derived; True when that added candidate links."""
        ...


@dataclass
class DemandGate:
    """Between the sampler and execution: verifies the links a wave of plans needs, then says which may run."""

    graph: VerifiedGraph
    verifier: LinkVerifier
    asked: Counter[str] = field(default_factory=Counter)
    decided: dict[str, str] = field(default_factory=dict)
    expansions: int = 0

    async def admit(self, plans: list[Plan]) -> list[str | None]:
        """For each plan, None when every link on it is verified (it may run), else why it may not."""
        wanted: dict[str, LinkRecord] = {}
        for plan in plans:
            for lk in self.graph.unverified_on(plan):
                if lk.id not in self.decided and self.asked[lk.id] < TRIES:
                    wanted[lk.id] = lk
        if wanted:
            for lk in wanted.values():
                self.asked[lk.id] += 1
            got = {lk.id: lk for lk in await self.verifier.verify(sorted(wanted.values(), key=lambda lk: lk.id))}
            for lid, lk in wanted.items():
                out = got.get(lid, lk)
                retry = out.status in PENDING and self.asked[lid] < TRIES
                self.graph.decide(out, keep_pending=retry)
                if out.status == "verified" or not retry:
                    self.decided[lid] = out.status if lid in got else "not verifiable now"
        reasons: list[str | None] = []
        for plan in plans:
            bad = self.graph.unverified_on(plan)
            if not bad:
                reasons.append(None)
                continue
            lk = bad[0]
            status = self.decided.get(lk.id, lk.status)
            reasons.append(f"link {lk.id} is {status}, not verified: the plan does not run")
        return reasons

    async def expand(self) -> bool:
        """Grow the graph once the draw over it is exhausted (at most `ROUNDS` times per synthesis)."""
        if self.expansions >= ROUNDS:
            return False
        self.expansions += 1
        return await self.verifier.expand()

    def figures(self) -> dict[str, int]:
        """Links this synthesis had verified, by outcome, and the upstream calls verification spent in all."""
        counts = Counter(self.decided.values())
        return {
            "links_asked": len(self.asked),
            "verified": counts.get("verified", 0),
            "refuted": counts.get("refuted", 0),
            "undecided": sum(v for k, v in counts.items() if k not in ("verified", "refuted")),
            "calls": self.verifier.spent(),
        }
