"""Benchmark scripts that print figures."""
