"""Scripts of tools/whole, tools/stream, tools/deltas and tools/tokens: the module's ``parse_response``
and ``OutputParser`` on the recorded model output (its splits into deltas; for tokens, its ids
streamed through the module's detokenizer) against the message oracles.tool_reference reads in it.
The script compares messages as the checks do: it carries the checks' own ``message_of`` (and, for
the whole parse, ``shape_problem``), their source copied in when the script is written.

tools/round_trip gets none: where impl reads a rendered message's part otherwise than the reference,
the check leaves it to the whole case of the part (scripted here); what it records itself is a
template and the reference disagreeing (an oracle disagreement, never scripted) or a template that
cannot render the message, neither an engine's bug."""
from __future__ import annotations

import inspect
import itertools

from textbound.oracles import tool_reference
from textbound.oracles.tool_reference_core import Parsed

from ...checks import tools as tool_checks
from ...checks.tools import ToolInput
from .reference import oracle_subject, reference_decode
from .registry import Script, ScriptPlan, literal, scripted

WHOLE = '''message = engine.parse_response(TEXT, FORMAT, **OPTIONS)
actual = message_of(message)
if problem := shape_problem(message):
    problems.append(f"not an OpenAI-shaped message: {problem}")
'''

STREAM = '''parser = engine.OutputParser(FORMAT, **OPTIONS)
deltas = [delta for piece in PIECES for delta in parser.feed(piece)] + list(parser.feed("", final=True))
actual = message_of(engine.assemble(deltas))
if (whole := message_of(engine.parse_response(TEXT, FORMAT, **OPTIONS))) != actual:
    problems.append(f"the whole parse, {whole!a}, is not what the stream assembles to")
'''

DELTAS = '''parser = engine.OutputParser(FORMAT, **OPTIONS)
so_far = {"content": "", "reasoning_content": ""}
arguments = []  # per call, its arguments' text so far
deltas = []
for step, piece in enumerate([*PIECES, None]):  # None: the final feed
    fed = list(parser.feed("", final=True) if piece is None else parser.feed(piece))
    deltas += fed
    for delta in fed:
        for name in so_far:
            so_far[name] += delta.get(name) or ""
            if not EXPECTED[name].startswith(so_far[name]):
                problems.append(f"feed {step}: {name} {so_far[name]!a} has text the reference's does not")
        for call in delta.get("tool_calls") or []:
            index, function = call.get("index"), call.get("function") or {}
            if index == len(arguments):
                if not (call.get("id") and call.get("type") == "function" and function.get("name")):
                    problems.append(f"feed {step}: call {index}'s first delta lacks its id, type or name")
                arguments.append("")
            elif not (isinstance(index, int) and 0 <= index < len(arguments)):
                problems.append(f"feed {step}: call index {index!a} does not start at 0 and grow by one")
                continue
            elif call.get("id") or function.get("name"):
                problems.append(f"feed {step}: call {index}'s id or name repeated in a later delta")
            arguments[index] += function.get("arguments") or ""
    # Released by now: all but a tail that may begin a tag (DUE, by the reference).
    for name, due in (DUE[step] if piece is not None else {}).items():
        if len(so_far[name]) < len(due):
            problems.append(f"feed {step}: {name} {so_far[name]!a} holds back some of {due!a}, though no tag can begin")
for index, text in enumerate(arguments):
    try:
        if not isinstance(json.loads(text), dict):
            raise ValueError
    except ValueError:
        problems.append(f"call {index}'s arguments {text!a} are not a JSON object")
actual = message_of(engine.assemble(deltas))
'''

TOKENS = '''detokenizer = engine.IncrementalDetokenizer(tokenizer, skip_special_tokens=False)
parser = engine.OutputParser(FORMAT, **OPTIONS)
deltas = [delta for token_id in IDS for delta in parser.feed(detokenizer.add([token_id]))]
deltas += parser.feed(detokenizer.flush()) + parser.feed("", final=True)
actual = message_of(engine.assemble(deltas))
'''

def _message_of() -> list[str]:
    """The checks' own way to put the module's message in the reference's shape, as source."""
    return [f"MALFORMED_FLAG = {literal(tool_checks.MALFORMED_FLAG)}",
            inspect.getsource(tool_checks.is_flagged_malformed), inspect.getsource(tool_checks.message_of)]


def _script(plan: ScriptPlan, body: str, constants: dict, helpers: tuple = (), reference: Parsed | None = None,
            read: str = "TEXT") -> Script:
    """The script of ``body`` on the case's output; ``reference`` (default: the parse of the text) is what
    tool_reference reads in ``read``."""
    given = ToolInput.of(plan.case)
    return Script({"TEXT": given.text, "FORMAT": given.format, "OPTIONS": given.options, **constants},
                  (reference or given.reference()).message(), f"textbound.oracles.tool_reference's parse({read}, FORMAT, **OPTIONS)",
                  body, imports=("import json",), helpers=[*_message_of(), *helpers])


@scripted("tools", "whole")
def whole_script(plan: ScriptPlan) -> Script:
    """``parse_response('Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>', "hermes")`` ->
    EXPECTED ``{"content": "Hi ", "reasoning_content": "", "calls": [{"name": "f", "arguments": {}}]}``."""
    return _script(plan, WHOLE, {}, (inspect.getsource(tool_checks.shape_problem),))


@scripted("tools", "stream")
def stream_script(plan: ScriptPlan) -> Script:
    """The text cut into PIECES, fed to ``OutputParser``, ``assemble``d -> the reference's message."""
    return _script(plan, STREAM, {"PIECES": ToolInput.of(plan.case).pieces()})


@scripted("tools", "deltas")
def deltas_script(plan: ScriptPlan) -> Script:
    """OutputParser's deltas, feed by feed: content and reasoning only add (always a beginning of the
    reference's), call indexes from 0, id and name once, arguments a JSON object; and after each feed
    all is released but a tail that may begin a tag (DUE, per feed, by tool_reference.held_back)."""
    given = ToolInput.of(plan.case)
    pieces, reference = given.pieces(), given.reference()
    due = []
    for seen in itertools.accumulate(map(len, pieces)):
        hold = tool_reference.held_back(given.format, given.text[:seen], given.reasoning)
        due.append({"content": reference.released_before(seen - hold, "content"),
                    "reasoning_content": reference.released_before(seen - hold, "reasoning")})
    return _script(plan, DELTAS, {"PIECES": pieces, "DUE": due})


@scripted("tools", "tokens", tokenizer=True)
def tokens_script(plan: ScriptPlan) -> Script:
    """IDS, tokenizers' encoding of the output on the minimized file, streamed id by id through the
    module's detokenizer into its OutputParser -> the reference's message for their whole decode."""
    given = ToolInput.of(plan.case)
    ids = oracle_subject(plan).oracle.encode(given.text)
    decoded = reference_decode(plan, ids, False)
    return _script(plan, TOKENS, {"IDS": ids}, reference=tool_reference.parse(decoded, given.format, **given.options),
                   read="tokenizers' decode(IDS)")

