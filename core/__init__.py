"""Shared foundations of KOPA EDGE: the one typed settings object, domain errors, logging with redaction, the
egress policy, payload parsing and geodesy. Imports nothing of ours."""
