"""Candidate derivation stays bounded on registries shaped like large real documents: blocks of generic names
(id, name, status... in every operation of a vendor document) are capped before any pair is scored, a generic name
links only inside its own resource, a provider's identifier does not cross documents by its name alone, a shared
meaning still does, and every parameter keeps at most PER_PARAM sources."""

from __future__ import annotations

from collections import defaultdict

from graph.candidates import (
    NAME_SHORTLIST,
    PER_PARAM,
    SHORTLIST,
    derive_candidates,
    names_identifier,
    param_resource,
    tool_resource,
)
from graph.models import FieldRecord, LinkRecord, ParamRecord, ToolRecord

GENERIC = ("id", "name", "status", "code", "value", "description", "createdAt", "updatedAt", "url", "count")


def _tool(
    api: str, op_key: str, fields: list[str], params: list[ParamRecord], descriptions: dict[str, str] | None = None
) -> ToolRecord:
    method, path = op_key.split(" ", 1)
    name = f"{api}_{method.lower()}_{path.strip('/').replace('/', '_').replace('{', '').replace('}', '')}"
    return ToolRecord(
        name=name,
        api_id=api,
        op_key=op_key,
        method=method,
        url=f"https://{api}.example{path}",
        fields=[FieldRecord(name=f, path=f, description=(descriptions or {}).get(f, "")) for f in fields],
        params=params,
    )


def _crud(api: str, resources: int, extra_fields: tuple[str, ...] = ()) -> list[ToolRecord]:
    """A vendor document: list/create on /rNs, get/update/delete on /rNs/{id}, the same record fields everywhere,
    list filters and request bodies of the same names."""
    tools = []
    fields = [*GENERIC, *extra_fields]
    for r in range(resources):
        coll, one = f"/res{r}s", f"/res{r}s/{{id}}"
        path_id = ParamRecord(name="id", location="path", required=True)
        body = [ParamRecord(name=n, location="body") for n in ("name", "status", "code", "value", "description")]
        tools += [
            _tool(
                api,
                f"GET {coll}",
                fields,
                [ParamRecord(name="status"), ParamRecord(name="name"), ParamRecord(name="limit", type="integer")],
            ),
            _tool(api, f"POST {coll}", fields, body),
            _tool(api, f"GET {one}", fields, [path_id]),
            _tool(api, f"PUT {one}", fields, [path_id, *body]),
            _tool(api, f"DELETE {one}", [], [path_id]),
        ]
    return tools


def _per_param(links: list[LinkRecord]) -> dict[tuple[str, str], list[LinkRecord]]:
    out: dict[tuple[str, str], list[LinkRecord]] = defaultdict(list)
    for lk in links:  # derive_candidates returns them best first
        out[(lk.target_tool, lk.target_param)].append(lk)
    return out


def test_resources_are_read_off_paths() -> None:
    users = _tool("a", "GET /users", ["id"], [])
    one = _tool(
        "a",
        "GET /users/{userId}/posts/{id}",
        ["id"],
        [ParamRecord(name="userId", location="path"), ParamRecord(name="id", location="path")],
    )
    rpc = _tool("a", "GET /getUserList", ["id"], [ParamRecord(name="userId")])
    assert tool_resource(users) == "user" and tool_resource(rpc) == "user" and tool_resource(one) == "post"
    assert param_resource(one, one.params[0]) == "user" and param_resource(one, one.params[1]) == "post"
    assert param_resource(rpc, rpc.params[0]) == "user"
    assert all(names_identifier(n) for n in ("id", "userId", "user_id", "userID", "obs_post_id", "uuid"))
    assert not any(names_identifier(n) for n in ("paid", "crno", "bizrno", "stnCd", "valid", "name"))


def test_a_large_document_of_generic_names_gives_linear_candidates() -> None:
    tools = _crud("vendor", 500)  # 2,500 operations; `status` alone: 2,000 fields x 1,500 parameters
    stats: dict[str, int] = {}
    links = derive_candidates(tools, {}, stats=stats)
    assert stats["largest_block"] >= 2_000 * 1_000
    assert stats["capped_blocks"] >= 5
    # every pair of a capped block comes from the parameter's own resource: at most NAME_SHORTLIST per key
    assert stats["comparisons"] <= stats["params"] * NAME_SHORTLIST, stats
    assert len(links) <= stats["params"] * NAME_SHORTLIST, stats
    assert max(len(v) for v in _per_param(links).values()) <= NAME_SHORTLIST
    by_name = {t.name: t for t in tools}
    for lk in links:  # a generic name never links two resources
        assert tool_resource(by_name[lk.source_tool]) == tool_resource(by_name[lk.target_tool]), lk


def test_the_crud_link_inside_a_capped_block_is_proposed_and_ranked_first() -> None:
    tools = _crud("vendor", 400)
    by_name = {t.name: t for t in tools}
    per = _per_param(derive_candidates(tools, {}))
    for r in (0, 137, 399):
        target = f"vendor_get_res{r}s_id"
        best = per[(target, "path:id")][0]
        # the list of the same resource is callable as it is: the one source every other value starts from
        assert (best.source_tool, best.source_field) == (f"vendor_get_res{r}s", "id"), per[(target, "path:id")]
        assert {tool_resource(by_name[lk.source_tool]) for lk in per[(target, "path:id")]} == {f"res{r}"}


def test_a_huge_generic_block_is_not_squared() -> None:
    # 2,000 tools in two documents, every one with field `id` and parameter `id`: 4,000,000 pairs uncapped
    tools = [
        _tool(api, f"GET /things{i}/{{id}}", ["id", "name"], [ParamRecord(name="id", location="path", required=True)])
        for api in ("left", "right")
        for i in range(1_000)
    ]
    tools += [
        _tool(api, f"GET /things{i}", ["id", "name"], []) for api in ("left", "right") for i in range(0, 1_000, 10)
    ]
    stats: dict[str, int] = {}
    links = derive_candidates(tools, {}, stats=stats)
    assert stats["largest_block"] >= 2_000 * 2_000
    assert len(links) <= 2_000 * NAME_SHORTLIST and stats["comparisons"] <= 2_000 * NAME_SHORTLIST
    by_name = {t.name: t for t in tools}
    assert not [lk for lk in links if by_name[lk.source_tool].api_id != by_name[lk.target_tool].api_id]
    assert {(lk.source_tool, lk.target_tool) for lk in links} >= {
        ("left_get_things10", "left_get_things10_id"),
        ("right_get_things990", "right_get_things990_id"),
    }


def test_an_identifier_does_not_cross_documents_by_its_name_alone() -> None:
    billing = [
        _tool("billing", "GET /customers", ["customerId", "itemName"], []),
        _tool("billing", "GET /invoices", ["invoiceNo"], [ParamRecord(name="customerId", required=True)]),
    ]
    shop = [
        _tool(
            "shop",
            "GET /orders",
            ["orderNo"],
            [ParamRecord(name="customerId", required=True), ParamRecord(name="itemName")],
        )
    ]
    pairs = {(lk.source_tool, lk.target_tool, lk.target_param) for lk in derive_candidates(billing + shop, {})}
    assert ("billing_get_customers", "billing_get_invoices", "query:customerId") in pairs  # same provider
    assert ("billing_get_customers", "shop_get_orders", "query:customerId") not in pairs  # another provider's key
    assert ("billing_get_customers", "shop_get_orders", "query:itemName") in pairs  # a name of a thing crosses
    # the same identifier with a shared meaning (a concept of public data) crosses
    corp = [_tool("corp", "GET /corps", ["bizrId"], [], {"bizrId": "사업자등록번호"})]
    tax = [
        _tool(
            "tax",
            "GET /status",
            ["state"],
            [ParamRecord(name="bizrId", description="사업자등록번호 10자리", required=True)],
        )
    ]
    assert [(lk.source_tool, lk.target_tool) for lk in derive_candidates(corp + tax, {})] == [
        ("corp_get_corps", "tax_get_status")
    ]


def test_a_shared_meaning_crosses_documents_within_the_cap() -> None:
    # 300 documents return a 법정동코드; 300 others filter by a 시군구코드: a concept block of 300 x 300
    sources = [
        _tool(f"src{i}", "GET /regions", ["regionCd"], [], {"regionCd": "법정동코드 (10자리)"}) for i in range(300)
    ]
    targets = [
        _tool(
            f"dst{i}",
            "GET /deals",
            ["dealAmount"],
            [
                ParamRecord(
                    name="LAWD_CD", description="지역코드 (법정동코드 앞 5자리)", pattern="^[0-9]{5}$", required=True
                )
            ],
        )
        for i in range(300)
    ]
    stats: dict[str, int] = {}
    links = derive_candidates(sources + targets, {}, stats=stats)
    per = _per_param(links)
    assert len(per) == 300 and stats["capped_blocks"] >= 1
    for found in per.values():
        assert 1 <= len(found) <= 2 * SHORTLIST
        assert len({lk.source_tool for lk in found}) == len(found)  # spread over providers, one field each
    assert len(links) <= 300 * 2 * SHORTLIST


def test_every_parameter_keeps_its_best_sources_only() -> None:
    # 60 providers of one specific name (a block under the cap, compared in full): 60 sources for one parameter
    sources = [
        _tool(
            f"p{i}", "GET /stations", ["stationName", *(["dataTime"] if i % 2 else [])], [], {"stationName": "측정소명"}
        )
        for i in range(60)
    ]
    target = _tool(
        "air", "GET /measures", ["pm10Value"], [ParamRecord(name="stationName", description="측정소명", required=True)]
    )
    samples = {
        f"p{i}_get_stations": [{"stationName": "종로구"}] for i in range(0, 60, 3)
    }  # observed values fit: ranked higher
    found = derive_candidates([*sources, target], samples)
    assert len(found) == PER_PARAM
    assert {lk.source_tool for lk in found[:20]} == set(samples)
    assert len(derive_candidates([*sources, target], samples, per_param=5)) == 5
    assert len(derive_candidates([*sources, target], samples, per_param=1000)) == 60
