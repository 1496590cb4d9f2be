"""All Cypher of KOPA EDGE, as named constants with $parameters. Nothing else in the code base writes Cypher.

Model:
  (:Api {id, ...})-[:HAS_TOOL]->(:Tool {name, api_id, status, ...})
  (:Tool)-[:HAS_PARAM]->(:Param {id: "tool|location:name", ...})
  (:Tool)-[:PRODUCES]->(:Field {id: "tool|name", ...})
  (:Field)-[:LINK {id, status, score, transform, evidence, ...}]->(:Param)     every candidate link
  (:Field)-[:VERIFIED {id, transform, evidence}]->(:Param)                     mirror of verified links (captions)
  (:Tool)-[:FEEDS {key: "source->target", links}]->(:Tool)                     tool level, verified only
  (:Token {hash, id, role, name, expires_at, revoked_at})

Derived relationships (VERIFIED, FEEDS) carry a uniqueness key and are written with MERGE on it, so concurrent
refreshes of the same pair leave exactly one relationship; REPAIR_* rebuild them on graphs written before that.
"""

SCHEMA = [
    "CREATE CONSTRAINT api_id IF NOT EXISTS FOR (a:Api) REQUIRE a.id IS UNIQUE",
    "CREATE CONSTRAINT tool_name IF NOT EXISTS FOR (t:Tool) REQUIRE t.name IS UNIQUE",
    "CREATE CONSTRAINT param_id IF NOT EXISTS FOR (p:Param) REQUIRE p.id IS UNIQUE",
    "CREATE CONSTRAINT field_id IF NOT EXISTS FOR (f:Field) REQUIRE f.id IS UNIQUE",
    "CREATE CONSTRAINT token_hash IF NOT EXISTS FOR (k:Token) REQUIRE k.hash IS UNIQUE",
    "CREATE CONSTRAINT run_id IF NOT EXISTS FOR (r:Run) REQUIRE r.id IS UNIQUE",
    "CREATE CONSTRAINT batch_id IF NOT EXISTS FOR (b:Batch) REQUIRE b.id IS UNIQUE",
    "CREATE CONSTRAINT trajectory_id IF NOT EXISTS FOR (t:Trajectory) REQUIRE t.id IS UNIQUE",
    "CREATE INDEX trajectory_batch IF NOT EXISTS FOR (t:Trajectory) ON (t.batch_id)",
    "CREATE CONSTRAINT link_id IF NOT EXISTS FOR ()-[l:LINK]-() REQUIRE l.id IS UNIQUE",
    "CREATE CONSTRAINT feeds_key IF NOT EXISTS FOR ()-[f:FEEDS]-() REQUIRE f.key IS UNIQUE",
    "CREATE CONSTRAINT verified_id IF NOT EXISTS FOR ()-[v:VERIFIED]-() REQUIRE v.id IS UNIQUE",
    "CREATE INDEX token_id IF NOT EXISTS FOR (k:Token) ON (k.id)",
    "CREATE INDEX tool_api IF NOT EXISTS FOR (t:Tool) ON (t.api_id)",
    "CREATE INDEX tool_status IF NOT EXISTS FOR (t:Tool) ON (t.status)",
    "CREATE INDEX link_status IF NOT EXISTS FOR ()-[l:LINK]-() ON (l.status)",
    "CREATE INDEX link_source_tool IF NOT EXISTS FOR ()-[l:LINK]-() ON (l.source_tool)",
    "CREATE INDEX link_target_tool IF NOT EXISTS FOR ()-[l:LINK]-() ON (l.target_tool)",
    "CREATE INDEX link_last_run IF NOT EXISTS FOR ()-[l:LINK]-() ON (l.last_run)",
]
AWAIT_INDEXES = "CALL db.awaitIndexes(120)"
PING = "RETURN 1 AS ok"

UPSERT_API = """
MERGE (a:Api {id: $api.id})
WITH a, a.created_at AS created
SET a = $api
SET a.created_at = coalesce(created, $api.created_at)
"""
"""The API node becomes exactly $api (a property the record no longer has goes, as in the embedded store); the
first registration's created_at stays."""

# Registration writes whole tools: each row of $tools is one tool, {name, props, params, fields}, where props is
# the Tool's property map and params/fields are lists of value lists (columns named by the caller, see
# tool_write_queries), which cost far less to send than maps; the ids, keys and owner of Params and Fields and the
# Tool's param_order/field_order are derived here. A chunk of tools is one statement (and, in a large
# registration, one transaction).


def _props(var: str, columns: tuple[str, ...], derived: dict[str, str]) -> str:
    for c in (*columns, *derived):
        if not c.isidentifier():
            raise ValueError(f"not a property name: {c!r}")
    items = [f"`{c}`: {var}[{i}]" for i, c in enumerate(columns) if c not in derived]
    items += [f"`{c}`: {expr}" for c, expr in derived.items()]
    return "{" + ", ".join(items) + "}"


def tool_write_queries(param_columns: tuple[str, ...], field_columns: tuple[str, ...]) -> tuple[str, str]:
    """(CREATE_TOOLS, UPSERT_TOOLS) for params and fields sent as value lists in these column orders (the
    columns must include `name`, and `location` for params). A null value leaves its property unset.

    CREATE_TOOLS is for tools whose names no Tool node has (checked in the same transaction): plain CREATEs; the
    uniqueness constraints still guard them, so a concurrent registration that created one first makes it fail
    and the caller writes the chunk again with UPSERT_TOOLS.
    UPSERT_TOOLS is for tools that exist: every Tool property replaced (one the record dropped goes), params and
    fields merged on their ids so the LINKs on them stay, and those the document no longer has kept, marked
    removed."""
    pn, pl, fn = param_columns.index("name"), param_columns.index("location"), field_columns.index("name")
    param_key = f"p[{pl}] + ':' + p[{pn}]"
    param_id = f"t.name + '|' + {param_key}"
    param = _props("p", param_columns, {"id": param_id, "tool": "t.name", "key": param_key, "removed": "false"})
    field_id = f"t.name + '|' + f[{fn}]"
    field = _props("f", field_columns, {"id": field_id, "tool": "t.name", "removed": "false"})
    order = f"tool.param_order = [p IN t.params | {param_key}], tool.field_order = [f IN t.fields | f[{fn}]]"
    create = f"""
UNWIND $tools AS t
MATCH (a:Api {{id: t.props.api_id}})
CREATE (a)-[:HAS_TOOL]->(tool:Tool)
SET tool = t.props, {order}
WITH tool, t
CALL (tool, t) {{
  UNWIND t.params AS p
  CREATE (tool)-[:HAS_PARAM]->(:Param {param})
}}
CALL (tool, t) {{
  UNWIND t.fields AS f
  CREATE (tool)-[:PRODUCES]->(:Field {field})
}}
"""
    upsert = f"""
UNWIND $tools AS t
MATCH (a:Api {{id: t.props.api_id}})
MERGE (tool:Tool {{name: t.name}})
SET tool = t.props, {order}
MERGE (a)-[:HAS_TOOL]->(tool)
WITH tool, t
CALL (tool, t) {{
  WITH [p IN t.params | {param_id}] AS ids
  MATCH (tool)-[:HAS_PARAM]->(old:Param) WHERE NOT old.id IN ids
  SET old.removed = true
}}
CALL (tool, t) {{
  WITH [f IN t.fields | {field_id}] AS ids
  MATCH (tool)-[:PRODUCES]->(old:Field) WHERE NOT old.id IN ids
  SET old.removed = true
}}
CALL (tool, t) {{
  UNWIND t.params AS p
  MERGE (n:Param {{id: {param_id}}})
  SET n = {param}
  MERGE (tool)-[:HAS_PARAM]->(n)
}}
CALL (tool, t) {{
  UNWIND t.fields AS f
  MERGE (n:Field {{id: {field_id}}})
  SET n = {field}
  MERGE (tool)-[:PRODUCES]->(n)
}}
"""
    return create, upsert


EXISTING_TOOLS = "UNWIND $names AS name MATCH (t:Tool {name: name}) RETURN t.name AS name"

RETIRE_TOOLS = """
UNWIND $names AS name
MATCH (t:Tool {name: name})
SET t.status = 'retired', t.updated_at = $now
WITH t
OPTIONAL MATCH (t)-[feeds:FEEDS]-()
DELETE feeds
"""

FLAG_LINKS = """
UNWIND $flags AS flag
MATCH (t:Tool {name: flag.tool})
CALL (t, flag) {
  MATCH (t)-[:HAS_PARAM]->(p:Param)<-[l:LINK]-() WHERE p.key IN flag.params
  RETURN l
  UNION
  MATCH (t)-[:PRODUCES]->(f:Field)-[l:LINK]->() WHERE f.name IN flag.fields
  RETURN l
}
WITH DISTINCT l
SET l.needs_reverify = true
RETURN collect(l.id) AS ids
"""
"""Links on the changed params and fields of $flags [{tool, params: [keys], fields: [names]}]: marked for
re-verification; returns their ids (a registration written in several transactions counts each link once)."""

LIST_APIS = """
MATCH (a:Api)
WITH a ORDER BY a.id
WITH collect(a) AS items
RETURN size(items) AS total, [a IN items[$offset..($offset + $limit)] | properties(a)] AS rows
"""
GET_API = "MATCH (a:Api {id: $id}) RETURN properties(a) AS api"

DELETE_API = """
MATCH (a:Api {id: $id})
OPTIONAL MATCH (a)-[:HAS_TOOL]->(t:Tool)
OPTIONAL MATCH (t)-[:HAS_PARAM|PRODUCES]->(n)
WITH a, collect(DISTINCT t) AS tools, collect(DISTINCT n) AS nodes
WITH a, tools, nodes, size(tools) AS removed
FOREACH (n IN nodes | DETACH DELETE n)
FOREACH (t IN tools | DETACH DELETE t)
DETACH DELETE a
RETURN removed
"""

_TOOL_PROJECTION = """
OPTIONAL MATCH (t)-[:HAS_PARAM]->(p:Param) WHERE NOT p.removed
WITH t, collect(properties(p)) AS params
OPTIONAL MATCH (t)-[:PRODUCES]->(f:Field) WHERE NOT f.removed
RETURN properties(t) AS tool, params, collect(properties(f)) AS fields
"""

TOOLS_OF_API = "MATCH (t:Tool {api_id: $api_id})" + _TOOL_PROJECTION
GET_TOOL = "MATCH (t:Tool {name: $name})" + _TOOL_PROJECTION
TOOL_OWNERS = "UNWIND $names AS name MATCH (t:Tool {name: name}) RETURN t.name AS name, t.api_id AS api_id"

LIST_TOOLS = """
MATCH (t:Tool)
WHERE ($api_id IS NULL OR t.api_id = $api_id)
  AND ($status IS NULL OR t.status = $status)
  AND ($q IS NULL OR toLower(t.name) CONTAINS toLower($q) OR t.summary CONTAINS $q OR t.description CONTAINS $q)
WITH t ORDER BY t.name
WITH collect(t) AS items
WITH size(items) AS total, items[$offset..($offset + $limit)] AS page
UNWIND (CASE WHEN size(page) = 0 THEN [null] ELSE page END) AS t
OPTIONAL MATCH (t)-[:HAS_PARAM]->(p:Param) WHERE NOT p.removed
WITH total, t, collect(properties(p)) AS params
OPTIONAL MATCH (t)-[:PRODUCES]->(f:Field) WHERE NOT f.removed
RETURN total, properties(t) AS tool, params, collect(properties(f)) AS fields
ORDER BY tool.name
"""

ALL_TOOLS = "MATCH (t:Tool) WHERE $status IS NULL OR t.status = $status" + _TOOL_PROJECTION

UPSERT_CANDIDATES = """
UNWIND $links AS l
MATCH (f:Field {id: l.field_id})
MATCH (p:Param {id: l.param_id})
MERGE (f)-[r:LINK {id: l.id}]->(p)
ON CREATE SET r += l.props
ON MATCH SET r.score = l.props.score, r.transform = l.props.transform, r.transform_label = l.props.transform_label
RETURN count(r) AS n
"""

_LINK_RETURN = "RETURN properties(l) AS link"
LIST_LINKS = """
MATCH ()-[l:LINK]->()
WHERE ($status IS NULL OR l.status = $status)
  AND ($tool IS NULL OR l.source_tool = $tool OR l.target_tool = $tool)
WITH l ORDER BY l.score DESC, l.id
WITH collect(l) AS items
RETURN size(items) AS total, [x IN items[$offset..($offset + $limit)] | properties(x)] AS rows
"""
GET_LINK = "MATCH ()-[l:LINK {id: $id}]->() " + _LINK_RETURN

_MIRROR_VERIFIED = """
WITH l, startNode(l) AS f, endNode(l) AS p
CALL (l, f, p) {
  OPTIONAL MATCH ()-[v:VERIFIED {id: l.id}]->() WHERE l.status <> 'verified' OR startNode(v) <> f OR endNode(v) <> p
  DELETE v
}
CALL (l, f, p) {
  WITH * WHERE l.status = 'verified'
  MERGE (f)-[v:VERIFIED {id: l.id}]->(p)
  SET v.transform = l.transform_label, v.evidence = l.evidence_label
}
"""

SAVE_LINK = (
    """
MATCH ()-[l:LINK {id: $id}]->()
SET l += $props
"""
    + _MIRROR_VERIFIED
)

SAVE_LINKS = (
    """
UNWIND $links AS row
MATCH ()-[l:LINK {id: row.id}]->()
SET l += row.props
"""
    + _MIRROR_VERIFIED
)

REFRESH_FEEDS_MANY = """
UNWIND $pairs AS pair
MATCH (st:Tool {name: pair[0]})
MATCH (tt:Tool {name: pair[1]})
OPTIONAL MATCH (st)-[:PRODUCES]->(:Field)-[v:LINK {status: 'verified'}]->(:Param)<-[:HAS_PARAM]-(tt)
WITH st, tt, pair[0] + '->' + pair[1] AS key, collect(DISTINCT v.id) AS ids
CALL (st, tt, key, ids) {
  OPTIONAL MATCH (st)-[old:FEEDS]->(tt) WHERE size(ids) = 0 OR old.key IS NULL OR old.key <> key
  DELETE old
}
CALL (st, tt, key, ids) {
  WITH * WHERE size(ids) > 0
  MERGE (st)-[f:FEEDS {key: key}]->(tt)
  SET f.links = ids
}
"""
"""One FEEDS per (source, target) pair: MERGE on the unique `key` (the constraint feeds_key makes concurrent
MERGEs of one pair wait for each other instead of each creating an edge); legacy edges without a key go."""

REPAIR_DROP_FEEDS = """
MATCH ()-[f:FEEDS]->()
CALL (f) { DELETE f } IN TRANSACTIONS OF 5000 ROWS
"""
REPAIR_COUNT_FEEDS = "MATCH ()-[f:FEEDS]->() RETURN count(f) AS n"
REPAIR_VERIFIED_PAIRS = """
MATCH (st:Tool)-[:PRODUCES]->(:Field)-[:LINK {status: 'verified'}]->(:Param)<-[:HAS_PARAM]-(tt:Tool)
RETURN DISTINCT st.name AS source, tt.name AS target ORDER BY source, target
"""
REPAIR_DUPLICATE_VERIFIED = """
MATCH (f)-[v:VERIFIED]->(p)
WITH v.id AS id, collect(v) AS rels
WHERE size(rels) > 1
UNWIND rels[1..] AS extra
DELETE extra
RETURN count(extra) AS removed
"""
REPAIR_STRAY_VERIFIED = """
MATCH (f)-[v:VERIFIED]->(p)
OPTIONAL MATCH (f)-[l:LINK {id: v.id}]->(p)
WITH v, l WHERE l IS NULL OR l.status <> 'verified'
DELETE v
RETURN count(v) AS removed
"""
REPAIR_MISSING_VERIFIED = """
MATCH (f)-[l:LINK {status: 'verified'}]->(p)
WHERE NOT (f)-[:VERIFIED {id: l.id}]->(p)
MERGE (f)-[v:VERIFIED {id: l.id}]->(p)
SET v.transform = l.transform_label, v.evidence = l.evidence_label
RETURN count(l) AS added
"""
REPAIR_DUPLICATE_STRUCTURE = """
MATCH (a)-[r:HAS_TOOL|HAS_PARAM|PRODUCES]->(b)
WITH a, b, type(r) AS kind, collect(r) AS rels
WHERE size(rels) > 1
UNWIND rels[1..] AS extra
DELETE extra
RETURN count(extra) AS removed
"""

RUN_COUNTS = """
MATCH ()-[l:LINK {last_run: $run}]->()
RETURN l.status AS status, count(l) AS n
"""

SAVE_RUN = "MERGE (r:Run {id: $id}) SET r.data = $data, r.created_at = $created_at"
GET_RUN = "MATCH (r:Run {id: $id}) RETURN r.data AS data"
LIST_RUNS = "MATCH (r:Run) RETURN r.data AS data ORDER BY r.created_at DESC LIMIT $limit"

VERIFIED_EDGES = """
MATCH (s:Tool)-[f:FEEDS]->(t:Tool)
WHERE s.status = 'active' AND t.status = 'active'
RETURN s.name AS source, t.name AS target, f.links AS links
"""


def sample_paths_query(min_hops: int, max_hops: int) -> str:
    """Up to $per_start acyclic paths of verified tool-to-tool steps from each start; all of them when there are
    fewer. The LIMIT inside the subquery stops the (lazy) expansion early, so dense graphs stay cheap.
    Bounds are validated integers (they cannot be parameters of a variable-length pattern)."""
    lo, hi = int(min_hops), int(max_hops)
    if not 1 <= lo <= hi <= 8:
        raise ValueError("hops must satisfy 1 <= min <= max <= 8")
    return f"""
UNWIND $starts AS start
MATCH (s:Tool {{name: start}})
CALL (s) {{
  MATCH p = (s)-[:FEEDS*{lo}..{hi}]->(:Tool)
  WHERE all(i IN range(0, size(nodes(p)) - 2) WHERE NOT nodes(p)[i] IN nodes(p)[i + 1..])
    AND all(n IN nodes(p) WHERE n.status = 'active')
  RETURN [n IN nodes(p) | n.name] AS path
  LIMIT $per_start
}}
RETURN start, path
ORDER BY start, size(path), path
"""


SAVE_BATCH = "MERGE (b:Batch {id: $id}) SET b.data = $data, b.team = $team, b.created_at = $created_at"
GET_BATCH = "MATCH (b:Batch {id: $id}) RETURN b.data AS data"
LIST_BATCHES = """
MATCH (b:Batch) WHERE $team IS NULL OR b.team = $team
RETURN b.data AS data ORDER BY b.created_at DESC LIMIT $limit
"""
ADD_TRAJECTORIES = """
UNWIND $items AS item
MERGE (t:Trajectory {id: item.id})
SET t.batch_id = $batch_id, t.seq = item.seq, t.data = item.data
"""
LIST_TRAJECTORIES = """
MATCH (t:Trajectory) WHERE $batch_id IS NULL OR t.batch_id = $batch_id
WITH count(t) AS total
CALL () {
  MATCH (t:Trajectory) WHERE $batch_id IS NULL OR t.batch_id = $batch_id
  WITH t ORDER BY t.batch_id, t.seq SKIP $offset LIMIT $limit
  RETURN collect(t.data) AS rows
}
RETURN total, rows
"""

ADD_TOKEN = "MERGE (k:Token {hash: $token.token_hash}) SET k += $token"
FIND_TOKEN = "MATCH (k:Token {hash: $hash}) RETURN properties(k) AS token"
LIST_TOKENS = "MATCH (k:Token) RETURN properties(k) AS token ORDER BY k.created_at, k.id"
REVOKE_TOKEN = """
MATCH (k:Token {id: $id})
SET k.revoked_at = CASE WHEN coalesce(k.revoked_at, '') = '' THEN $now ELSE k.revoked_at END
RETURN properties(k) AS token
"""

STATS = """
CALL { MATCH (a:Api) RETURN count(a) AS apis }
CALL { MATCH (t:Tool) RETURN count(t) AS tools, sum(CASE WHEN t.status = 'active' THEN 1 ELSE 0 END) AS active }
CALL { MATCH ()-[l:LINK]->() WITH l.status AS status, count(l) AS n RETURN collect([status, n]) AS links }
RETURN apis, tools, active, links
"""

RESET = """
MATCH (n) WHERE n:Api OR n:Tool OR n:Param OR n:Field OR n:Token OR n:Run OR n:Batch OR n:Trajectory
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
"""
