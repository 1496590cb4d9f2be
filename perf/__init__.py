"""Performance scripts that print figures (not packaged): `python -m perf.NAME`."""
