"""Scripts of the streaming components: the module's IncrementalDetokenizer (detokenizer/stream,
detokenizer/decode_stream) and StopChecker (stops/stream, stops/pipeline), fed the case's deltas,
against what tokenizers (whole decode, DecodeStream) and oracles.stop_reference answer. Where a check
also judges each step (a text shown too early, a tail held back wrongly), the reference's answer for
every step is inline too, and the script checks the same rule."""
from __future__ import annotations

import itertools

from textbound.oracles.stop_reference import held_back_reference

from ...checks.detokenizer import _changing_id
from ...checks.stops import _reference
from ...checks.streaming import StreamInput, chunks, decode_stream_shown
from .reference import oracle_subject, reference_decode
from .registry import Script, ScriptPlan, scripted

STREAM = '''detokenizer = engine.IncrementalDetokenizer(tokenizer, skip_special_tokens=SKIP_SPECIAL_TOKENS,
                                           prompt_ids=PROMPT_IDS)
shown = [detokenizer.prompt_text]
for chunk in CHUNKS:
    shown.append(shown[-1] + detokenizer.add(chunk))
actual = shown[-1] + detokenizer.flush()
# Nothing shown on the way may be taken back: each text shown begins the whole decode.
problems += [f"shown {text!a}, which the whole decode does not begin with" for text in shown
             if not EXPECTED.startswith(text)]
if detokenizer.text != actual[len(detokenizer.prompt_text):]:
    problems.append(f"text {detokenizer.text!a} is not the deltas")
primed = engine.IncrementalDetokenizer(tokenizer, skip_special_tokens=SKIP_SPECIAL_TOKENS).add(PROMPT_IDS)
if primed != detokenizer.prompt_text:
    problems.append(f"prompt_text {detokenizer.prompt_text!a} is not the prompt streamed alone, {primed!a}")
'''

DECODE_STREAM = '''detokenizer = engine.IncrementalDetokenizer(tokenizer, skip_special_tokens=SKIP_SPECIAL_TOKENS,
                                           prompt_ids=PROMPT_IDS)
actual = [detokenizer.prompt_text]
for chunk in CHUNKS[:len(EXPECTED)]:
    actual.append(actual[-1] + detokenizer.add(chunk))
actual = actual[1:]
# The engine may show less than DecodeStream only where one more id can still change that text.
for step, (theirs, mine, settled) in enumerate(zip(EXPECTED, actual, SETTLED)):
    if not (theirs.startswith(mine) or mine.startswith(theirs)):
        problems.append(f"add {step}: shows {mine!a}, which contradicts DecodeStream's {theirs!a}")
    elif settled and len(mine) < len(theirs):
        problems.append(f"add {step}: holds back {theirs[len(mine):]!a}, which no further id changes")
'''

STOPS = '''checker = engine.StopChecker(STOPS, include_stop=INCLUDE_STOP)
output, seen = "", ""
for step, (delta, hold) in enumerate(zip(DELTAS, HOLD)):
    output += checker.add(delta)
    seen += delta
    if not EXPECTED["output"].startswith(output):
        problems.append(f"add {step}: released {output!a}, which the reference's output does not begin with")
    elif not checker.stopped and len(seen) - len(output) != hold:
        problems.append(f"add {step}: holds back {len(seen) - len(output)} characters where {hold} may begin a stop")
if not checker.stopped:
    output += checker.finish()
actual = {"output": output, "stopped": checker.stopped, "stop_string": checker.stop_string}
'''

PIPELINE = '''detokenizer = engine.IncrementalDetokenizer(tokenizer, skip_special_tokens=SKIP_SPECIAL_TOKENS)
checker = engine.StopChecker(STOPS, include_stop=INCLUDE_STOP)
output = ""
for chunk in [*CHUNKS, None]:  # None: the end of generation
    output += checker.add(detokenizer.flush() if chunk is None else detokenizer.add(chunk))
    if checker.stopped:
        break
else:
    output += checker.finish()
actual = {"output": output, "stopped": checker.stopped, "stop_string": checker.stop_string}
'''


def _streamed(given: StreamInput) -> dict:
    return {"CHUNKS": given.chunks, "SKIP_SPECIAL_TOKENS": given.skip_special_tokens, "PROMPT_IDS": given.prompt_ids}


@scripted("detokenizer", "stream", tokenizer=True)
def stream_script(plan: ScriptPlan) -> Script:
    """ids 220, 83 in two deltas -> EXPECTED, tokenizers' decode of them at once (" t"), beside what
    the module's detokenizer shows after each delta and at the end."""
    given = StreamInput.of(plan.case)
    expected = reference_decode(plan, given.prompt_ids + given.ids, given.skip_special_tokens)
    return Script(_streamed(given), expected, "tokenizers' decode(PROMPT_IDS + all CHUNKS)", STREAM)


@scripted("detokenizer", "decode_stream", tokenizer=True)
def decode_stream_script(plan: ScriptPlan) -> Script:
    """EXPECTED: the text tokenizers' DecodeStream has shown after each delta; SETTLED: whether one
    more id (of a sample of ids that break or end things) can still change that text."""
    given = StreamInput.of(plan.case)
    reference_decode(plan, given.prompt_ids + given.ids, given.skip_special_tokens)
    subject = oracle_subject(plan)
    shown = decode_stream_shown(subject, given)
    settled = [_changing_id(subject, given.ids_through(step), text, given.skip_special_tokens, None) is None
               for step, text in enumerate(shown)]
    return Script({**_streamed(given), "SETTLED": settled}, shown,
                  "the whole text tokenizers' DecodeStream shows after each delta", DECODE_STREAM, fails="problems")


def _stop_options(plan: ScriptPlan) -> dict:
    return {"STOPS": plan.case.input["stops"], "INCLUDE_STOP": plan.case.input.get("include_stop", False)}


@scripted("stops", "stream")
def stops_script(plan: ScriptPlan) -> Script:
    """"ab##c" in deltas, stop "##" -> EXPECTED {"output": "ab", "stopped": True, "stop_string": "##"},
    and HOLD, how many characters the reference holds back after each delta, beside the StopChecker's."""
    text, options = plan.case.input["text"], _stop_options(plan)
    deltas = ["".join(part) for part in chunks(list(text), plan.case.input.get("splits", []))]
    longest = max(map(len, options["STOPS"]), default=0)
    seen = [text[:end] for end in itertools.accumulate(map(len, deltas))]
    hold = [held_back_reference(so_far[-longest:], options["STOPS"]) if longest else 0 for so_far in seen]
    return Script({"DELTAS": deltas, **options, "HOLD": hold}, _reference(text, options["STOPS"], options["INCLUDE_STOP"]),
                  "textbound.oracles.stop_reference's stop_outcome of the whole text", STOPS)


@scripted("stops", "pipeline", tokenizer=True)
def pipeline_script(plan: ScriptPlan) -> Script:
    """ids streamed through the module's detokenizer into its StopChecker -> EXPECTED, the stop outcome
    of tokenizers' whole decode."""
    given, options = StreamInput.of(plan.case), _stop_options(plan)
    whole = reference_decode(plan, given.ids, given.skip_special_tokens)
    return Script({"CHUNKS": given.chunks, "SKIP_SPECIAL_TOKENS": given.skip_special_tokens, **options},
                  _reference(whole, options["STOPS"], options["INCLUDE_STOP"]),
                  "textbound.oracles.stop_reference's stop_outcome of tokenizers' decode(all CHUNKS)", PIPELINE)
