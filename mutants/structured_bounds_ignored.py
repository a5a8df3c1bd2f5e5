"""minimum and maximum (of numbers and integers) are ignored."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import schema_rewritten


def drop_bounds(schema):
    if schema.get("type") in ("integer", "number"):
        for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            schema.pop(keyword, None)


json_schema_to_regex = schema_rewritten(drop_bounds)
