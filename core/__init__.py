"""Shared foundations of KOPA EDGE: settings, errors, geodesy, logging and the `kopa` CLI."""
