"""Candidate derivation over a generated registry of 20,000 tools shaped like large real documents.

    python -m perf.derive_20k [--tools 20000] [--seed 7] [--verify]

The registry is made of OpenAPI 3 documents generated here (seeded, deterministic) and parsed by
graph.openapi.parse_document, as registration does:

* vendor-style REST documents of 1,000 to 6,000 operations: CRUD over hundreds of resources (list and create on
  /things, get/put/patch/delete on /things/{id}, nested /parents/{parentId}/children...), the same generic
  record fields in every item (id, name, type, status, code, value, count, url, description, createdAt,
  updatedAt), references between resources (ownerId, projectId...), list filters and request bodies that reuse
  those names, and path parameters named {id}, {thingId} or {thing_id} depending on the vendor;
* data.go.kr-style Korean documents (flat /getXxxList operations, Korean descriptions, region codes, station names,
  dates, paging parameters).

The generator knows what every field and parameter means (a "domain": users.id, region.sgg_code...), so it can
say which proposed candidates are plausible at all: a candidate whose field and parameter carry different domains
is one that verification would refute (an oracle estimate; these documents have no servers). With --verify the
script also runs the real verification, in process, on the two worlds that do have servers (the sandbox catalog and
the unseen family in tests/unseen) and prints what it verified and refuted.

Prints: tools, fields, parameters, the largest candidate block (pairs of one blocking key) before the cap and what
derivation assessed of it, comparisons, candidates, the largest number of candidates of one parameter, seconds,
RSS before derivation and the peak RSS of the process (wall and CPU seconds: on a shared machine the CPU seconds
are the figure that does not depend on what else runs).
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from graph import meaning
from graph.candidates import (
    MAX_BLOCK,
    MAX_TOKEN_BLOCK,
    NON_LINKABLE,
    _field_keys,
    _param_keys,
    derive_candidates,
)
from graph.concepts import signals
from graph.models import LinkRecord, RegistrationMeta, ToolRecord
from graph.openapi import parse_document

#: (field or parameter, domain) by (api id, op key, name): what the generator meant.
Domains = dict[tuple[str, str, str], str]

NOUNS = [
    "user",
    "project",
    "repo",
    "issue",
    "order",
    "invoice",
    "customer",
    "device",
    "cluster",
    "volume",
    "policy",
    "role",
    "team",
    "ticket",
    "asset",
    "account",
    "payment",
    "product",
    "plan",
    "subscription",
    "webhook",
    "event",
    "file",
    "folder",
    "job",
    "pipeline",
    "build",
    "release",
    "deployment",
    "alert",
    "metric",
    "report",
    "campaign",
    "contact",
    "lead",
    "message",
    "channel",
    "comment",
    "tag",
    "label",
]
QUALIFIERS = [
    "",
    "admin",
    "audit",
    "billing",
    "cloud",
    "data",
    "edge",
    "git",
    "iam",
    "media",
    "net",
    "ops",
    "org",
    "partner",
    "search",
    "storage",
    "sync",
    "vault",
    "web",
    "work",
]
GENERIC_FIELDS = [
    ("id", "string", "Unique identifier of the {r}."),
    ("name", "string", "Name of the {r}."),
    ("type", "string", "Type of the {r}."),
    ("status", "string", "Current status of the {r}."),
    ("code", "string", "Short code of the {r}."),
    ("value", "string", "Value of the {r}."),
    ("count", "integer", "Number of items in the {r}."),
    ("url", "string", "API URL of the {r}."),
    ("description", "string", "Free text describing the {r}."),
    ("createdAt", "string", "When the {r} was created."),
    ("updatedAt", "string", "When the {r} was last updated."),
]
VENDORS = [
    ("cloudhub", 600, "id"),
    ("devforge", 400, "camel"),
    ("payflow", 300, "snake"),
    ("crmcloud", 200, "id"),
    ("opsboard", 150, "camel"),
    ("mediaapi", 110, "snake"),
]

KR_FIELDS = [  # (name, description, domain)
    ("rnum", "순번", "row.rnum"),
    ("resultCode", "결과코드", "row.result"),
    ("regionCd", "법정동코드 (10자리)", "region.bjd_code"),
    ("sggCd", "시군구코드 (5자리)", "region.sgg_code"),
    ("sidoName", "시도명", "region.sido_name"),
    ("sggName", "시군구명", "region.sgg_name"),
    ("stationName", "측정소명", "station.name"),
    ("dataTime", "측정일시", "row.time"),
    ("bldNm", "건물명", "building.name"),
    ("platPlc", "대지위치", "building.address"),
    ("regDt", "등록일자 (YYYYMMDD)", "row.date"),
    ("itemNm", "품목명", "item.name"),
    ("cnt", "건수", "row.count"),
    ("addr", "주소", "row.address"),
    ("telno", "전화번호", "row.phone"),
]
KR_PARAMS = [  # (name, description, pattern, domain)
    ("LAWD_CD", "지역코드 (법정동코드 앞 5자리)", "^[0-9]{5}$", "region.sgg_code"),
    ("sigunguCd", "시군구코드 (5자리)", "^[0-9]{5}$", "region.sgg_code"),
    ("admCd", "행정구역코드 (법정동코드 10자리)", "^[0-9]{10}$", "region.bjd_code"),
    ("sidoName", "시도명 (예: 서울)", None, "region.sido_name"),
    ("stationName", "측정소명", None, "station.name"),
    ("DEAL_YMD", "계약년월 (YYYYMM)", "^[0-9]{6}$", "row.month"),
    ("itemName", "품목명", None, "item.name"),
]


def _schema(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def _param_name(style: str, noun: str) -> str:
    return {"id": "id", "camel": f"{noun}Id", "snake": f"{noun}_id"}[style]


def _cap(noun: str) -> str:
    return f"{noun[0].upper()}{noun[1:]}"


class _Vendor:
    """The parts of one vendor's document, each recording the domain of its fields and parameters (what the
    generator meant) by (api id, op key, name)."""

    def __init__(self, api_id: str, domains: Domains) -> None:
        self.api_id = api_id
        self.domains = domains

    def item(self, noun: str, parent: str | None, ref: str, op_key_list: list[str]) -> dict[str, Any]:
        api_id, domains = self.api_id, self.domains
        props: dict[str, Any] = {}
        for name, typ, desc in GENERIC_FIELDS:
            props[name] = {"type": typ, "description": desc.format(r=noun)}
            for op in op_key_list:
                domains[(api_id, op, "f:" + name)] = api_id + "/" + f"{noun}.{name}"
        extra = {f"{ref}Id": f"{ref}.id", "tags": f"{noun}.tags", "metadata": f"{noun}.metadata"}
        if parent:
            extra[f"{parent}Id"] = f"{parent}.id"
        for name, dom in extra.items():
            props[name] = {
                "type": "array" if name == "tags" else "object" if name == "metadata" else "string",
                "description": f"{name} of the {noun}.",
            }
            for op in op_key_list:
                domains[(api_id, op, "f:" + name)] = api_id + "/" + dom
        return _schema(props)

    def body(self, noun: str, ref: str, op: str) -> dict[str, Any]:
        props = {}
        for name in ("name", "description", "type", "status", "value", "code", f"{ref}Id"):
            props[name] = {"type": "string", "description": f"{name} of the {noun}."}
            self.domains[(self.api_id, op, "p:" + name)] = (
                self.api_id + "/" + (f"{ref}.id" if name.endswith("Id") else f"{noun}.{name}")
            )
        return {"content": {"application/json": {"schema": _schema(props)}}}

    def list_params(self, noun: str, ref: str, op: str) -> list[dict[str, Any]]:
        out = []
        for name, dom in (
            ("limit", "page.limit"),
            ("offset", "page.offset"),
            ("sort", "page.sort"),
            ("status", f"{noun}.status"),
            ("type", f"{noun}.type"),
            ("name", f"{noun}.name"),
            (f"{ref}Id", f"{ref}.id"),
        ):
            out.append(
                {
                    "name": name,
                    "in": "query",
                    "schema": {"type": "integer" if name in ("limit", "offset") else "string"},
                    "description": f"Filter by {name}.",
                }
            )
            self.domains[(self.api_id, op, "p:" + name)] = self.api_id + "/" + dom
        return out

    def path_param(self, name: str, noun: str, op: str) -> dict[str, Any]:
        self.domains[(self.api_id, op, "p:" + name)] = self.api_id + "/" + f"{noun}.id"
        return {
            "name": name,
            "in": "path",
            "required": True,
            "schema": {"type": "string"},
            "description": f"The {noun} identifier.",
        }

    def resource(self, rnd: random.Random, paths: dict[str, Any], top: str, ref: str, style: str) -> str:
        """List and create on /tops, get, replace, update and delete on /tops/{id}; returns the parent path
        parameter its child resource is nested under."""
        coll, one = f"/{top}s", f"/{top}s/{{{_param_name(style, top)}}}"
        pid = _param_name(style, top)
        list_key, post_key = f"GET {coll}", f"POST {coll}"
        get_key, put_key, patch_key, del_key = (f"{m} {one}" for m in ("GET", "PUT", "PATCH", "DELETE"))
        it = self.item(top, None, ref, [list_key, post_key, get_key, put_key, patch_key])
        envelope = rnd.choice(["data", "items", "array"])
        listing = (
            {"type": "array", "items": it}
            if envelope == "array"
            else _schema({envelope: {"type": "array", "items": it}, "next": {"type": "string"}})
        )
        paths[coll] = {
            "get": {
                "operationId": f"list{_cap(top)}s",
                "parameters": self.list_params(top, ref, list_key),
                "responses": _content(listing),
            },
            "post": {
                "operationId": f"create{_cap(top)}",
                "requestBody": self.body(top, ref, post_key),
                "responses": _content(it),
            },
        }
        paths[one] = {
            "get": {
                "operationId": f"get{_cap(top)}",
                "parameters": [self.path_param(pid, top, get_key)],
                "responses": _content(it),
            },
            "put": {
                "operationId": f"replace{_cap(top)}",
                "parameters": [self.path_param(pid, top, put_key)],
                "requestBody": self.body(top, ref, put_key),
                "responses": _content(it),
            },
            "patch": {
                "operationId": f"update{_cap(top)}",
                "parameters": [self.path_param(pid, top, patch_key)],
                "requestBody": self.body(top, ref, patch_key),
                "responses": _content(it),
            },
            "delete": {
                "operationId": f"delete{_cap(top)}",
                "parameters": [self.path_param(pid, top, del_key)],
                "responses": {"204": {"description": "gone"}},
            },
        }
        return f"{top}Id" if style != "snake" else f"{top}_id"

    def child(self, paths: dict[str, Any], top: str, child: str, ref: str, style: str, pid_parent: str) -> None:
        """List and create on /tops/{topId}/childs, get and delete on /tops/{topId}/childs/{childId}."""
        ccoll = f"/{top}s/{{{pid_parent}}}/{child}s"
        cid = _param_name(style, child) if style != "id" else "childId"
        cone = f"{ccoll}/{{{cid}}}"
        name = f"{_cap(top)}{_cap(child)}"
        clist, cpost, cget, cdel = f"GET {ccoll}", f"POST {ccoll}", f"GET {cone}", f"DELETE {cone}"
        cit = self.item(child, top, ref, [clist, cpost, cget])
        paths[ccoll] = {
            "get": {
                "operationId": f"list{name}s",
                "parameters": [self.path_param(pid_parent, top, clist), *self.list_params(child, ref, clist)],
                "responses": _content(_schema({"data": {"type": "array", "items": cit}})),
            },
            "post": {
                "operationId": f"create{name}",
                "parameters": [self.path_param(pid_parent, top, cpost)],
                "requestBody": self.body(child, ref, cpost),
                "responses": _content(cit),
            },
        }
        paths[cone] = {
            "get": {
                "operationId": f"get{name}",
                "parameters": [self.path_param(pid_parent, top, cget), self.path_param(cid, child, cget)],
                "responses": _content(cit),
            },
            "delete": {
                "operationId": f"delete{name}",
                "parameters": [self.path_param(pid_parent, top, cdel), self.path_param(cid, child, cdel)],
                "responses": {"204": {"description": "gone"}},
            },
        }


def vendor_document(
    rnd: random.Random, vendor: str, resources: int, style: str, domains: Domains
) -> tuple[str, dict[str, Any]]:
    """A REST document: `resources` resources (each with one nested child), ten operations per resource. Its
    domains are its own: a vendor's user id means nothing to another vendor's user id parameter."""
    api_id = f"{vendor}-api"
    nouns = sorted({f"{q}{n.capitalize()}" if q else n for q in [*QUALIFIERS, *NOUNS] for n in NOUNS if q != n})
    rnd.shuffle(nouns)
    nouns = nouns[: resources * 2]
    paths: dict[str, Any] = {}
    parts = _Vendor(api_id, domains)
    for r in range(resources):
        top, child = nouns[2 * r], nouns[2 * r + 1]
        ref = rnd.choice(nouns)
        pid_parent = parts.resource(rnd, paths, top, ref, style)
        parts.child(paths, top, child, ref, style, pid_parent)
    return api_id, {
        "openapi": "3.0.3",
        "info": {"title": f"{vendor} API", "version": "2"},
        "servers": [{"url": f"https://api.{vendor}.example/v2"}],
        "paths": paths,
    }


def korean_document(rnd: random.Random, i: int, ops: int, domains: Domains) -> tuple[str, dict[str, Any]]:
    """A data.go.kr-style document: flat get...List/get...Info operations in the datagokr envelope."""
    api_id = f"kr-service-{i:03d}"
    paths: dict[str, Any] = {}
    for j in range(ops):
        path = f"/get{['Info', 'List', 'Detail', 'Stats'][j % 4]}{j // 4:03d}"
        op = f"GET {path}"
        params: list[dict[str, Any]] = [
            {"name": "serviceKey", "in": "query", "required": True, "schema": {"type": "string"}},
            {"name": "pageNo", "in": "query", "schema": {"type": "integer"}, "description": "페이지 번호"},
            {"name": "numOfRows", "in": "query", "schema": {"type": "integer"}, "description": "한 페이지 결과 수"},
            {"name": "_type", "in": "query", "schema": {"type": "string", "enum": ["xml", "json"]}},
        ]
        for name, desc, pattern, dom in rnd.sample(KR_PARAMS, 2):
            schema: dict[str, Any] = {"type": "string", **({"pattern": pattern} if pattern else {})}
            params.append({"name": name, "in": "query", "required": True, "schema": schema, "description": desc})
            domains[(api_id, op, "p:" + name)] = dom
        props = {}
        for name, desc, dom in rnd.sample(KR_FIELDS, 8):
            props[name] = {"type": "string", "description": desc}
            domains[(api_id, op, "f:" + name)] = dom
        items = {"type": "object", "properties": {"item": {"type": "array", "items": _schema(props)}}}
        envelope = _schema(
            {
                "response": _schema(
                    {"header": _schema({"resultCode": {"type": "string"}}), "body": _schema({"items": items})}
                )
            }
        )
        paths[path] = {
            "get": {
                "operationId": path.strip("/"),
                "summary": f"조회 서비스 {j}",
                "parameters": params,
                "responses": _content(envelope),
            }
        }
    return api_id, {
        "openapi": "3.0.3",
        "info": {"title": f"공공데이터 Service{i:03d}", "version": "1"},
        "servers": [{"url": f"https://apis.data.go.kr/{1000000 + i}/Service{i}"}],
        "paths": paths,
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "serviceKey"}}},
    }


def generated_registry(n_tools: int = 20_000, seed: int = 7) -> tuple[list[ToolRecord], Domains]:
    """Parse generated documents until `n_tools` tools: the vendor documents first, Korean ones after."""
    rnd = random.Random(seed)
    domains: Domains = {}
    tools: list[ToolRecord] = []
    for i in range(len(VENDORS) + 400):
        if len(tools) >= n_tools:
            break
        if i < len(VENDORS):
            vendor, resources, style = VENDORS[i]
            api_id, doc = vendor_document(rnd, vendor, resources, style, domains)
        else:
            api_id, doc = korean_document(rnd, i - len(VENDORS), rnd.randint(12, 48), domains)
        _, parsed = parse_document(doc, RegistrationMeta(api_id=api_id))
        tools.extend(parsed[: n_tools - len(tools)])
    return tools, domains


def block_sizes(tools: list[ToolRecord]) -> tuple[int, str, int, int]:
    """The largest block by pairs (fields x parameters sharing one blocking key) that derivation expands: name
    token blocks over MAX_TOKEN_BLOCK parameters and other non-name blocks over MAX_BLOCK are skipped."""
    fields: Counter[str] = Counter()
    params: Counter[str] = Counter()
    for t in tools:
        for p in t.params:
            if p.name in NON_LINKABLE:
                continue
            s = signals(p.name, p.description, p.type, pattern=p.pattern, enum=p.enum)
            params.update(
                _param_keys(s)
                | {f"d:{x}" for x in meaning.phrases(p.name, p.description)}
                | {f"w:{w}" for w in meaning.korean_words(p.description)}
            )
        for f in t.fields:
            s = signals(f.name, f.description, f.type)
            fields.update(_field_keys(s) | {f"d:{x}" for x in meaning.phrases(f.name, f.description)})
    pairs, key = max(
        (fields[k] * params[k], k)
        for k in params
        if not (
            (k[:2] in ("t:", "w:") and params[k] > MAX_TOKEN_BLOCK)
            or (params[k] > MAX_BLOCK and not k.startswith("n:"))
        )
    )
    return pairs, key, fields[key], params[key]


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def oracle(links: list[LinkRecord], tools: list[ToolRecord], domains: Domains) -> tuple[int, int]:
    """(plausible, implausible) candidates by the generator's domains: a field and a parameter of different
    meaning (another resource's id, a name into a status) can only be refuted by execution."""
    by_name = {t.name: t for t in tools}
    parts = {"region.sgg_code", "region.sido_code"}
    good = bad = 0
    for lk in links:
        src, dst = by_name[lk.source_tool], by_name[lk.target_tool]
        a = domains.get((src.api_id, src.op_key, "f:" + lk.source_field))
        b = domains.get((dst.api_id, dst.op_key, "p:" + lk.target_param.split(":", 1)[1]))
        same = a is not None and (a == b or (a == "region.bjd_code" and b in parts))
        good, bad = (good + 1, bad) if same else (good, bad + 1)
    return good, bad


def verify_worlds() -> None:
    """Real verification, in process, on the worlds with servers (the helpers of perf.verify_quality and the
    unseen family's harness)."""
    import verification.engine as engine
    from core.settings import Settings
    from execution.limits import MemoryEconomy
    from graph.embedded_store import EmbeddedStore
    from graph.store import all_links
    from perf.verify_quality import fresh_store, run
    from sandbox.inprocess import sandbox_mode
    from tests.unseen.harness import run_unseen

    # every derivation of the runs is repeated with the cap lifted, on the same sampled rows, to show what the cap
    # changes in these worlds
    lifted: list[tuple[int, int, bool]] = []
    capped = derive_candidates

    def both(tools: list[ToolRecord], samples: Any = None, **kw: Any) -> list[LinkRecord]:
        links = capped(tools, samples, **kw)
        free = capped(tools, samples, full_block=10**9, per_param=10**9, **kw)
        lifted.append((len(links), len(free), {lk.id for lk in links} == {lk.id for lk in free}))
        return links

    vars(engine)["derive_candidates"] = both
    print("== verification on worlds with servers (in process)")
    with tempfile.TemporaryDirectory() as tmp:
        settings, transport = sandbox_mode(Settings())
        store = fresh_store(Path(tmp), "sandbox", settings)
        run(store, settings, transport, MemoryEconomy())
        rows = [("sandbox catalog", store.list_links(limit=100_000)[0], list(lifted))]
        store.close()
        lifted.clear()
        graph_file = Path(tmp) / "unseen.sqlite3"
        run_unseen(graph_file)
        unseen = EmbeddedStore(graph_file)
        rows.append(("unseen family", all_links(unseen), list(lifted)))
        unseen.close()
    vars(engine)["derive_candidates"] = capped
    for label, links, rounds in rows:
        c = Counter(lk.status for lk in links)
        decided = c["verified"] + c["refuted"] + c["inconclusive"]
        print(
            f"{label:16s} candidates {len(links)}, verified {c['verified']}, refuted {c['refuted']}, "
            f"inconclusive {c['inconclusive']}, refuted share {c['refuted'] / max(1, decided):.1%}"
        )
        same = all(s for _, _, s in rounds)
        print(
            f"{'':16s} cap lifted: {', '.join(f'{a} capped / {b} uncapped' for a, b, _ in rounds)} candidates "
            f"per derivation round; {'the same candidates' if same else 'the cap changes the candidates'}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--verify", action="store_true", help="also verify the sandbox catalog and the unseen family")
    args = ap.parse_args()
    t0 = time.perf_counter()
    tools, domains = generated_registry(args.tools, args.seed)
    gc.collect()
    apis = Counter(t.api_id for t in tools)
    print(
        f"registry: {len(tools)} tools in {len(apis)} documents (largest {max(apis.values())} operations), "
        f"fields {sum(len(t.fields) for t in tools)}, parameters {sum(len(t.params) for t in tools)}, "
        f"generated and parsed in {time.perf_counter() - t0:.1f} s"
    )
    pairs, key, nf, np_ = block_sizes(tools)
    print(f"largest block before the cap: {key!r}: {nf} fields x {np_} parameters = {pairs:,} pairs")
    before = rss_mb()
    stats: dict[str, int] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    links = derive_candidates(tools, {}, stats=stats)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    per_param: defaultdict[tuple[str, str], int] = defaultdict(int)
    for lk in links:
        per_param[(lk.target_tool, lk.target_param)] += 1
    if "largest_block_assessed" in stats:
        print(
            f"largest block after the cap: {stats['largest_block_assessed']:,} pairs assessed "
            f"({stats.get('capped_blocks', 0)} blocks capped)"
        )
    print(
        f"comparisons {stats.get('comparisons', 0):,}; candidates {len(links):,} "
        f"({len(links) / max(1, stats.get('params', 1)):.2f} per parameter, at most "
        f"{max(per_param.values(), default=0)} for one parameter)"
    )
    good, bad = oracle(links, tools, domains)
    print(
        f"oracle (generator's meaning): plausible {good:,}, implausible {bad:,} = "
        f"{bad / max(1, good + bad):.1%} of the candidates verification would refute"
    )
    print(f"derivation {seconds:.1f} s wall, {cpu:.1f} s CPU   (target < 60 s)")
    print(f"RSS before derivation {before:.0f} MB, peak RSS of the process {peak:.0f} MB   (target < 2048 MB)")
    if args.verify:
        verify_worlds()


if __name__ == "__main__":
    main()
