"""The tool graph: API registration into tools, the graph stores (Neo4j and embedded), candidate links."""
