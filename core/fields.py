"""Field types shared by the request records of every entry (REST bodies, CLI options, stored records), and
reading a typed record by the keys of the dict it replaced."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator


def _integral(value: Any) -> Any:
    """JSON has one number type: 1.0 is the integer 1 (as JavaScript clients send it). Booleans, strings and
    numbers with a fraction stay refused."""
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"expected an integer, got {value!r}")
        return int(value)
    if not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    return value


#: An integer field of a JSON body: integers, and floats with no fraction (1.0); never "1", true or 1.5.
Integral = Annotated[int, BeforeValidator(_integral)]


class ByKey:
    """A typed record read by the keys of the dict it replaced (`progress["verified"]`), for the scripts and
    tests written against that dict; shipped code reads the attributes, which mypy checks."""

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)
