"""Verification by execution: the round engine, runs (one place that closes a run), and reports."""
