"""Helpers and scoring that only tests and perf scripts use."""
