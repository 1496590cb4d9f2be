"""Calling registered tools for real: the executor (URL overrides, keys at call time), verdicts, seeds, limits."""
