"""Unit tests by package: pure modules, no service, no socket (tests/unit/conftest.py enforces it)."""
