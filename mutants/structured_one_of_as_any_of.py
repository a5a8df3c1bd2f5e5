"""oneOf read as anyOf: an instance of two branches is admitted (llguidance's ``coerce_one_of`` option)."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import schema_rewritten


def _as_any_of(schema: dict) -> None:
    if "oneOf" in schema:
        schema.setdefault("anyOf", schema.pop("oneOf"))


json_schema_to_regex = schema_rewritten(_as_any_of)
