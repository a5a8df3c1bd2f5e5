"""outlines-core's JSON-schema regex puts a property name holding a backslash into the pattern
unescaped for JSON: the text it admits has a bare backslash inside a JSON string, which is not JSON.

Needs: outlines-core (0.2.14). Runs anywhere; exits 1 while the bug is there, 0 once it is fixed.

The reference: JSON (RFC 8259 section 7) and Python's json module: the property name back\\slash is
written "back\\\\slash" in JSON text; "back\\slash" (one backslash before s) is an invalid escape.
"""
import json
import re
import sys

from outlines_core.json_schema import build_regex_from_schema

NAME = "back\\slash"  # the seven characters b a c k \ s l a s h
schema = {"type": "object", "properties": {NAME: {"type": "integer"}}, "required": [NAME]}
pattern = build_regex_from_schema(json.dumps(schema))

valid = json.dumps({NAME: 1}, separators=(",", ":"))  # {"back\\slash":1}, what the schema describes
invalid = '{"back\\slash":1}'  # one backslash: an invalid escape, not JSON
try:
    json.loads(invalid)
    sys.exit("the sample meant to be invalid JSON parses: the reproducer is wrong")
except json.JSONDecodeError:
    pass
admits_valid, admits_invalid = bool(re.fullmatch(pattern, valid)), bool(re.fullmatch(pattern, invalid))
print("expected: admits", valid, "and not", invalid)
print(f"actual:   admits {valid}: {admits_valid}; admits {invalid}: {admits_invalid}")
sys.exit(0 if admits_valid and not admits_invalid else 1)
