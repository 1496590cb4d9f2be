"""KOPA-Bench and BFCL transfer evaluation."""
