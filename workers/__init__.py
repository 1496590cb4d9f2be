"""Verification and synthesis workers (Celery with a Redis broker); thin tasks over plain functions."""
