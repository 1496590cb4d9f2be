"""Celery app and thin tasks only; the engines they call live in execution/, verification/ and synthesis/."""
