"""Every property of an object schema is required, optional ones included."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import schema_rewritten


def require_all(schema):
    if isinstance(schema.get("properties"), dict):
        schema["required"] = list(schema["properties"])


json_schema_to_regex = schema_rewritten(require_all)
