"""minLength and maxLength (of strings) are ignored."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import schema_rewritten


def drop_lengths(schema):
    if schema.get("type") == "string":
        schema.pop("minLength", None)
        schema.pop("maxLength", None)


json_schema_to_regex = schema_rewritten(drop_lengths)
