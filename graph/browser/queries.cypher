// KOPA EDGE: saved queries for Neo4j Browser, one favourite per block below (a block starts with its name).
// Import them all: download http://127.0.0.1:8000/browser/favorites.zip and drop the zip onto the Browser (one
// favourite per query, in a "KOPA EDGE" folder). Dropping this .cypher file instead makes ONE favourite of it all.
// Run "KOPA 1" first: it sets $tool and $api, which KOPA 2 and KOPA 3 use (each shows its graph only when run
// on its own: a favourite of several statements shows a summary per statement, not their results).

// KOPA 1 · Parameters: the start tool and the API (edit the values, then run)
// Defaults: a tool with verified links out, and an API owning one. Or name yours: :param tool => 'mois_get_stan_regin_cd_list'
:param tool => head([(t:Tool)-[:FEEDS]->(:Tool) WHERE t.status = 'active' | t.name]);
:param api => head([(a:Api)-[:HAS_TOOL]->(:Tool)-[:FEEDS]->(:Tool) | a.id]);

// KOPA 2 · Verified chains from $tool (up to 3 steps, 6 chains, 1 link per step)
// Each step: a field of one tool feeds a parameter of the next; the VERIFIED caption is the transform and the
// evidence (values that worked / values tried). Cyan = tools, green = output fields, orange = input parameters.
MATCH chain = (:Tool {name: $tool})-[:FEEDS*1..3]->(:Tool)
WITH chain LIMIT 6
UNWIND relationships(chain) AS step
WITH DISTINCT startNode(step) AS a, endNode(step) AS b
CALL (a, b) {
  MATCH p = (a)-[:PRODUCES]->(:Field)-[:VERIFIED]->(:Param)<-[:HAS_PARAM]-(b)
  RETURN p LIMIT 1
}
RETURN p;

// KOPA 3 · Tools of $api
MATCH p = (:Api {id: $api})-[:HAS_TOOL]->(:Tool) RETURN p;

// KOPA 4 · Which tool can feed which (verified, tool level)
MATCH p = (:Tool)-[:FEEDS]->(:Tool) RETURN p LIMIT 100;

// KOPA 5 · Verified field -> parameter links with their evidence
MATCH (st:Tool)-[:PRODUCES]->(f:Field)-[l:LINK {status: 'verified'}]->(p:Param)<-[:HAS_PARAM]-(tt:Tool)
RETURN st.name AS from_tool, f.name AS field, l.transform_label AS transform, tt.name AS to_tool,
       p.name AS param, l.evidence_label AS evidence ORDER BY from_tool, to_tool LIMIT 200;

// KOPA 6 · Candidate links waiting for verification, best first
MATCH (f:Field)-[l:LINK {status: 'candidate'}]->(p:Param)
RETURN l.source_tool AS from_tool, f.name AS field, l.target_tool AS to_tool, p.name AS param, l.score AS score
ORDER BY score DESC LIMIT 100;

// KOPA 7 · Refuted links and why
MATCH ()-[l:LINK {status: 'refuted'}]->()
RETURN l.source_tool AS from_tool, l.source_field AS field, l.target_tool AS to_tool, l.target_param AS param,
       l.reason AS reason LIMIT 100;

// KOPA 8 · Links flagged for re-verification after an API changed
MATCH ()-[l:LINK {needs_reverify: true}]->()
RETURN l.id AS link, l.source_tool AS from_tool, l.target_tool AS to_tool, l.status AS status LIMIT 100;
