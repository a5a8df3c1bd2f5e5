"""Scripts of structured/sound, structured/complete, structured/differential and structured/errors:
the module's ``json_schema_to_regex`` (or ``tool_call_pattern``) on the case's schema, its pattern
fullmatched against the case's text, beside the verdict jsonschema gives that text: a text invalid
for the schema must not match; a valid one that is json.dumps output with the schema's keys in order
must. The schema the module was given must be left as it was. For errors, what the module must
refuse (a keyword it does not support, a tool name no tool has) raises ValueError naming it."""
from __future__ import annotations

from textbound.oracles.structured_oracles import schema_errors

from ...checks.structured import _canonical, _json
from .registry import Script, ScriptPlan, Unscripted, scripted

PATTERN = {"schema": "engine.json_schema_to_regex(given)",
           "tools": "engine.tool_call_pattern(given, name=NAME, format=FORMAT)"}

MATCH = '''given = copy.deepcopy({given})
pattern = {build}
if given != {given}:
    problems.append("changed the {what} it was given")
actual = {{"matches": re.fullmatch(pattern, TEXT) is not None}}
'''

# What an errors case asks refused: the call, and what its ValueError must name.
REFUSED = {"schema": ("engine.json_schema_to_regex(copy.deepcopy(SCHEMA))", "the keyword and its path"),
           "tools": ("engine.tool_call_pattern(copy.deepcopy(TOOLS), name=NAME)", "the known tool names")}

REFUSE = '''try:
    {call}
    actual = {{"error": None}}
except ValueError as exc:
    actual = {{"error": "ValueError", "names": [word for word in WORDS if word in str(exc)]}}
'''

SLOW = "backtracks"  # a kind naming a match that took seconds: the script would hang, not fail


@scripted("structured", "sound")
@scripted("structured", "complete")
@scripted("structured", "differential")
def match_script(plan: ScriptPlan) -> Script:
    """SCHEMA ``{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}``,
    TEXT ``'{}'`` -> EXPECTED ``{"matches": False}``, jsonschema's verdict, beside whether the module's
    pattern fullmatches TEXT."""
    given = plan.case.input
    if "text" not in given:
        raise Unscripted("the case holds no text: the engine failed before any was matched")
    if SLOW in plan.signature:
        raise Unscripted("matching the pattern takes seconds: a script would hang rather than fail")
    schema, text = given["schema"], given["text"]
    instance, error = _json(text)
    valid = error is None and not schema_errors(schema, instance)
    if valid and not _canonical(schema, text, instance):
        raise Unscripted("the text is valid but not json.dumps output in the schema's key order: "
                         "the engine may match it or not")
    what = "tools" if "tools" in given else "schema"
    constants = {"SCHEMA": schema, "TEXT": text}
    if what == "tools":
        constants.update({"TOOLS": given["tools"], "NAME": given.get("name"), "FORMAT": given.get("format", "hermes")})
    return Script(constants, {"matches": valid},
                  "jsonschema's verdict on TEXT for SCHEMA (valid json.dumps output matches, invalid text does not)",
                  MATCH.format(given=what.upper(), build=PATTERN[what], what=what),
                  imports=("import copy", "import re"))


@scripted("structured", "errors")
def errors_script(plan: ScriptPlan) -> Script:
    """SCHEMA with ``"oneOf"`` at its root -> EXPECTED ``{"error": "ValueError", "names": ["oneOf"]}``:
    the call raises ValueError, its message naming each of WORDS (the keyword and its path)."""
    given = plan.case.input
    if "tools" in given:
        what, constants = "tools", {"TOOLS": given["tools"], "NAME": given["name"],
                                    "WORDS": [tool["function"]["name"] for tool in given["tools"]]}
    else:
        what, constants = "schema", {"SCHEMA": given["schema"], "WORDS": [given["keyword"], *given["path"]]}
    call, named = REFUSED[what]
    return Script(constants, {"error": "ValueError", "names": constants["WORDS"]},
                  f"the refusal impl's API documents: ValueError naming {named}", REFUSE.format(call=call),
                  imports=("import copy",))
