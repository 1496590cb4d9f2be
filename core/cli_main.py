"""`python -m core.cli_main` runs the `kopa` CLI (used where the console script is not on PATH)."""

from core.cli import main

if __name__ == "__main__":
    main()
