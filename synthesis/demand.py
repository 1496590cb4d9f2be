"""Verification driven by demand: verify what will be traversed.

Verification stays upstream of generation: no trajectory ever uses a link that is not verified. But instead of
verifying every candidate link of the graph first (`kopa verify`, the REST run: it remains, and is what the
graph's explorers see), the sampler proposes plans over the links no run has refuted (`VerifiedGraph(pending=
True)`), the links on the plans about to run that are not verified yet are verified, once, by a `LinkVerifier`
(verification.runs.DemandVerifier: the verification engine, its evidence and run record, the links saved in the
store where every later run and batch reuses them), and only the plans whose links all came out verified are
executed. A refuted link leaves the graph at once, so later proposals route around it. Links the target's own
sampled answers contradict (graph.echoes: no call) are proposed last (weighted down in the pending graph) and
asked about only once the draw over the others runs out (the plans that need them wait till then); the signal
never decides a link.

Synthesis may not import verification (tests/test_architecture.py): the verifier is handed in by the caller
(cli, perf, workers), which gives both the same call economy, so a verification call that is also a trajectory
step (the sampling call of a root tool, a trial with the same values) is paid once, a cache hit the second time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from graph.models import LinkRecord
from synthesis.plans import PENDING, VerifiedGraph
from synthesis.records import Plan

#: How often one synthesis asks for the same link to be verified while it stays inconclusive.
TRIES = 2
#: How often one synthesis grows the graph (reaches tools through links it verified) when the draw runs out.
ROUNDS = 3
#: The start of the reason given for a plan held back until the draw over the undoubted links runs out.
DEFERRED = "deferred"


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

    def samples(self) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """The rows discovery sampled per tool: what the pending graph reads each link's echo signal from
        (graph.echoes), without a call."""
        ...

    def sample_args(self) -> Mapping[str, Mapping[str, Any]]:
        """The arguments each tool's sampled rows answered (values the tool knows, for the echo signal)."""
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
    #: While True, the links the echo signal contradicts are not asked about: a plan that needs one is deferred
    #: (`DEFERRED`), to run once the draw over the other links runs out (`open_doubtful`).
    deferring: bool = True

    async def admit(self, plans: list[Plan]) -> list[str | None]:
        """For each plan, None when every link on it is verified (it may run), else why it may not.

        The links the echo signal (graph.echoes, `VerifiedGraph.link_prior`) contradicts are verified after the
        others, and only for the plans whose other links all came out verified: a plan that failed already needs
        them no more (they stay undecided, for a later plan). While `deferring`, they are not verified at all: such
        a plan is answered `DEFERRED...`, for the caller to keep and hand back once the draw runs out."""
        viable = await self._in_stages(plans, doubtful=False)
        waiting = {id(p) for p in viable}
        if not self.deferring:
            await self._in_stages(viable, doubtful=True)
        reasons: list[str | None] = []
        for plan in plans:
            bad = self.graph.unverified_on(plan)
            if not bad:
                reasons.append(None)
                continue
            lk = next((b for b in bad if b.id in self.decided), bad[0])
            if self.deferring and id(plan) in waiting and not any(b.id in self.decided for b in bad):
                reasons.append(f"{DEFERRED}: link {lk.id} is one the echo signal doubts")
                continue
            status = self.decided.get(lk.id, lk.status)
            reasons.append(f"link {lk.id} is {status}, not verified: the plan does not run")
        return reasons

    def open_doubtful(self) -> bool:
        """The draw over the other links ran out: doubtful links are asked about from now on. True if that
        changed anything (the deferred plans may then run)."""
        was, self.deferring = self.deferring, False
        return was

    async def _in_stages(self, plans: list[Plan], *, doubtful: bool) -> list[Plan]:
        """Verify the links on `plans` still to ask about (those the echo signal contradicts, or the others) one
        per plan at a time, the likeliest to fail first (`_risk`): a plan whose link fails needs its others no
        more, so they stay undecided, for a later plan. Returns the plans none of whose links failed here."""
        live, failed = list(plans), set()
        while True:
            stage: dict[str, LinkRecord] = {}
            for plan in live:
                todo = self._todo(plan, doubtful=doubtful)
                if todo:
                    lk = min(todo, key=self._risk)
                    stage[lk.id] = lk
            if not stage:
                return live
            await self._verify(stage)
            failed |= {lid for lid in stage if self.decided.get(lid) != "verified"}
            live = [p for p in live if not any(lk.id in failed for lk in self.graph.unverified_on(p))]

    def _todo(self, plan: Plan, *, doubtful: bool) -> list[LinkRecord]:
        """The links on `plan` still to ask about: those the echo signal contradicts (`doubtful`) or the others."""
        return [
            lk
            for lk in self.graph.unverified_on(plan)
            if lk.id not in self.decided and self.asked[lk.id] < TRIES and (self.graph.link_prior(lk) < 1.0) == doubtful
        ]

    def _risk(self, link: LinkRecord) -> tuple[int, str]:
        """Which of a plan's links to ask about first: one whose target's sampled answers neither echo nor
        contradict it (`none`) fails more often than one they echo (`support`), so it goes first."""
        echo = self.graph.echo.get(link.id)
        return (0 if echo is None or echo.verdict != "support" else 1, link.id)

    async def _verify(self, wanted: dict[str, LinkRecord]) -> None:
        if not wanted:
            return
        for lk in wanted.values():
            self.asked[lk.id] += 1
        got = {lk.id: lk for lk in await self.verifier.verify(sorted(wanted.values(), key=lambda lk: lk.id))}
        for lid, lk in wanted.items():
            out = got.get(lid, lk)
            retry = out.status in PENDING and self.asked[lid] < TRIES
            self.graph.decide(out, keep_pending=retry)
            if out.status == "verified" or not retry:
                self.decided[lid] = out.status if lid in got else "not verifiable now"

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
