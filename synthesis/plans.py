"""Plans over verified links only: which tools a user's words can call, how later steps are fed, and which
routes a careful agent would take (`synthesis.routes`).

Users know names, tools know codes: every parameter has a role (`graph.concepts.param_role`). A plan starts
from a tool whose inputs a person knows (address text, names, dates, business registration numbers); every
system code later in the plan comes from an earlier tool result; issue dates and times follow from the clock
the system message states. Slot values are drawn from the world behind the endpoints: before planning, each
tool callable from seeds alone is called once and the values of the fields that verified links (or names)
tie to a user parameter become that parameter's pool.

A careful agent's route: a step whose rows are named entities (a hospital, a bus stop, a tourist site) may feed
later steps only with its identity (the question is then about it) or when the user named it; a route that takes
only its coordinates or area codes borrows an entity nobody asked about and is not planned. Parameters that
narrow a lookup to the user's entity (the lot number after the 법정동 code) are bound from the same row when a
verified link gives them. A middle step that feeds only an issue time the clock gives is not planned (a
shorter route answers the same). Every plan records why it was chosen (`Plan.route`).
"""

from __future__ import annotations

from synthesis.plan_shapes import fan_in_targets, identifies, route_check
from synthesis.records import SHAPES
from synthesis.sampler import REPEATS, PlanSampler, sample_plans
from synthesis.verified_graph import PENDING, WHOLE_PAGE, VerifiedGraph

__all__ = [
    "PENDING",
    "REPEATS",
    "SHAPES",
    "WHOLE_PAGE",
    "PlanSampler",
    "VerifiedGraph",
    "fan_in_targets",
    "identifies",
    "route_check",
    "sample_plans",
]
