"""`python -m cli` runs the `kopa` command (where the console script is not on PATH)."""

from cli import main

main()
