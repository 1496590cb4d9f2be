// KOPA EDGE: saved queries for Neo4j Browser. Drag this file onto the Browser to add them as favourites.

// Tools of one API (set it first with :param api => 'apis_data_go_kr_1360000_vilage_fcst_info_service_2_0-...')
MATCH (a:Api {id: $api})-[:HAS_TOOL]->(t:Tool) RETURN a, t;

// The tool-level graph of verified links: which tool can feed which
MATCH p = (:Tool)-[:FEEDS]->(:Tool) RETURN p LIMIT 300;

// Verified field -> parameter links with their evidence
MATCH (st:Tool)-[:PRODUCES]->(f:Field)-[l:LINK {status: 'verified'}]->(p:Param)<-[:HAS_PARAM]-(tt:Tool)
RETURN st.name AS from_tool, f.name AS field, l.transform AS transform, tt.name AS to_tool, p.name AS param,
       l.evidence AS evidence ORDER BY from_tool LIMIT 200;

// Candidate links still waiting for verification, best first
MATCH (f:Field)-[l:LINK {status: 'candidate'}]->(p:Param)
RETURN l.source_tool, f.name, l.target_tool, p.name, l.score ORDER BY l.score DESC LIMIT 100;

// Refuted links and why
MATCH ()-[l:LINK {status: 'refuted'}]->() RETURN l.source_tool, l.source_field, l.target_tool, l.target_param, l.reason LIMIT 100;

// Chains of 2 to 4 verified steps starting from one tool (:param tool => 'mois_get_stan_regin_cd_list')
MATCH p = (:Tool {name: $tool})-[:FEEDS*1..4]->(:Tool) RETURN p LIMIT 50;

// Links flagged for re-verification after an API changed
MATCH ()-[l:LINK {needs_reverify: true}]->() RETURN l.id, l.source_tool, l.target_tool, l.status LIMIT 100;
