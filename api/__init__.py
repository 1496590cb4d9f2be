"""The REST service (FastAPI): API registry, links, runs, trajectory batches."""
