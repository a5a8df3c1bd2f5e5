"""An object schema's required is ignored: a required property may be left out."""
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import schema_rewritten

json_schema_to_regex = schema_rewritten(lambda schema: schema.pop("required", None))
