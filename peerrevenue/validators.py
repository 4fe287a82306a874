"""Checks for values PostgreSQL would refuse, shared by the apps' models."""

from __future__ import annotations

NUL_IN_JSON = "This cannot contain a NUL character (\\u0000): the database cannot store one."


def json_contains_nul(value: object) -> bool:
    """Whether any string in a decoded JSON value, keys included, has a NUL character.

    Forms cannot see it: the JSON text carries the six characters ``\\u0000``, and only
    decoding makes them a NUL, which PostgreSQL's jsonb refuses with an error.
    """
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(json_contains_nul(key) or json_contains_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(json_contains_nul(item) for item in value)
    return False
