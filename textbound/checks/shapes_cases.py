"""Cases of the request shapes (textbound.checks.shapes), at every budget alike, each naming its stratum
in STRATUM_FIELD; the builders of the detokenizer, stops and tools components draw them in:

- */interleaved: two to four of the component's own stratum streams (each a case of its stream
  property already), the stream count cycling through 2, 3 and 4;
- tools/stream at the split shapes servers feed parsers in (``split_shapes``): the family's token
  boundaries (where the family decodes the output's ids back to it), each whole call in one delta, a
  closing reasoning tag with the next call's opening tag in one delta, the whole output in one delta;
- tools/pipeline: each format's fixed output (properties.model_outputs.option_strata's, reasoning
  and calls) as the family's ids, one id per delta, with a stop inside its reasoning, a stop inside
  its first call, and no stop; with ``skip_special_tokens`` False (as a server must set it where
  markers are special tokens), and for the formats whose markers families hold as added tokens
  (MARKER_FORMATS) True as well (as a careless server sets it); each with its stops/pipeline twin
  (``stop_pipeline_twins``, drawn by the stops builder) and tools/stream and tools/whole twins of
  the text the reference cuts, the stream's deltas where a stop checker releases them
  (``released_cuts``; see textbound.checks.shapes).

    {"streams": [<stops/stream stratum input>, <another>], "stratum": "2 streams interleaved: stop at the start, ..."}
"""
from __future__ import annotations

from collections.abc import Iterator

from textbound.oracles import tool_reference
from textbound.oracles.tool_reference import TOOL_CALL_FORMATS
from textbound.oracles.stop_reference import held_back_reference, stop_outcome
from textbound.oracles.tool_reference_core import REASONING
from textbound.properties.model_outputs import hard_outputs, option_strata

from ..naming.divergence import STRATUM_FIELD, Case
from .registry import Subject
from .shapes import INTERLEAVED
from .tools import token_cuts

STREAM_COUNTS = (2, 3, 4)  # streams fed interleaved, as n>1 choices and concurrent requests are
INTERLEAVED_CASES = 3  # per component and family (per format for tools)
MARKER_FORMATS = ("hermes",)  # their tags are added tokens in families (Qwen's <tool_call>, <think>)
STOP_LENGTH = 4  # characters of a stop cut from inside the output's reasoning or first call
# option_strata's output with reasoning and two calls, fed through the pipeline
PIPELINE_STRATUM = "tools: listed, reasoning: True, starts_in_reasoning: False"


def interleaved_cases(component: str, family: str, streams: list[dict]) -> Iterator[Case]:
    """INTERLEAVED_CASES cases of ``component``/interleaved from ``streams`` (stratum inputs, which
    name their own strata), taking the next 2, 3 or 4 of them in turn."""
    if len(streams) < 2:
        return
    start = 0
    for number in range(INTERLEAVED_CASES):
        count = STREAM_COUNTS[number % len(STREAM_COUNTS)]
        chosen = [streams[(start + i) % len(streams)] for i in range(count)]
        start += count
        yield Case(component, INTERLEAVED, family, {
            "streams": [{k: v for k, v in stream.items() if k != STRATUM_FIELD} for stream in chosen],
            STRATUM_FIELD: f"{count} streams interleaved: " + "; ".join(s.get(STRATUM_FIELD, "") for s in chosen)})


def split_shapes(subject: Subject, output: dict) -> dict[str, list[int]]:
    """The splits servers feed a parser ``output``'s text in, by name (see the module docstring); a
    shape the output does not have (no reasoning before a call) is left out."""
    text = output["text"]
    reference = tool_reference.parse(text, output["format"], tools=output.get("tools"),
                                     reasoning=output.get("reasoning", True),
                                     starts_in_reasoning=output.get("starts_in_reasoning", False))
    shapes = {"the whole output in one delta": []}
    if reference.call_markup:
        shapes["each whole call in one delta"] = sorted({cut for span in reference.call_markup for cut in span})
        reasoning_ends = [span.end for span in reference.spans if span.kind == REASONING]
        first_call = next(((start, end) for start, end in reference.call_markup
                           if reasoning_ends and start >= reasoning_ends[-1]), None)
        if first_call:
            shapes["the reasoning's closing tag and the next call's opening in one delta"] = [
                reasoning_ends[-1], (first_call[0] + first_call[1]) // 2]
    ids = subject.oracle.encode(text)
    if subject.oracle.decode(ids, False) == text:
        shapes["at the family's token boundaries"] = token_cuts(subject, ids, text)
    return shapes


def tool_shape_cases(family: str, subject: Subject, fmt: str) -> Iterator[Case]:
    """The shape cases of one format's outputs: split shapes, interleaved streams, the pipeline."""
    streams = []
    for number, output in enumerate(hard_outputs(fmt)):
        stratum = {**output, STRATUM_FIELD: f"{fmt} hard output {number}"}
        for shape, splits in split_shapes(subject, stratum).items():
            stream = {**stratum, "splits": splits, STRATUM_FIELD: f"{stratum[STRATUM_FIELD]}, {shape}"}
            streams.append(stream)
            yield Case("tools", "stream", family, stream)
    yield from interleaved_cases("tools", family, streams)
    yield from pipeline_cases(family, subject, fmt, "tools")


def _stop_inside(text: str, start: int, end: int) -> str | None:
    """A stop of STOP_LENGTH characters from the middle of ``text[start:end]`` whose first occurrence
    in ``text`` is there, or None."""
    middle = (start + end) // 2
    for at in range(middle, end - STOP_LENGTH):
        stop = text[at:at + STOP_LENGTH]
        if text.find(stop) == at and stop.strip():
            return stop
    return None


def pipeline_cases(family: str, subject: Subject, fmt: str, component: str) -> Iterator[Case]:
    """The tools/pipeline cases of ``fmt`` (``component`` "tools"), or their twins of stops/pipeline
    (``component`` "stops": the same ids, splits, flag and stops)."""
    output = option_strata(fmt)[PIPELINE_STRATUM]
    text = output["text"]
    reference = tool_reference.parse(text, fmt, tools=output["tools"], reasoning=output["reasoning"],
                                     starts_in_reasoning=output["starts_in_reasoning"])
    reasoning = next((span for span in reference.spans if span.kind == REASONING), None)
    stops = {"no stop": []}
    if reasoning and (stop := _stop_inside(text, reasoning.start, reasoning.end)):
        stops["a stop inside the reasoning"] = [stop]
    if reference.call_markup and (stop := _stop_inside(text, *reference.call_markup[0])):
        stops["a stop inside the first call"] = [stop]
    ids = subject.oracle.encode(text)
    options = {k: output[k] for k in ("format", "tools", "reasoning", "starts_in_reasoning")}
    for skip in (False, True) if fmt in MARKER_FORMATS else (False,):
        decoded = subject.oracle.decode(ids, skip)
        for name, stop_list in stops.items():
            stratum = f"{fmt} pipeline: {name}, skip_special_tokens {skip}"
            yield Case(component, "pipeline", family, {
                **(options if component == "tools" else {}), "ids": ids, "splits": list(range(1, len(ids))),
                "skip_special_tokens": skip, "stops": stop_list, "include_stop": False, STRATUM_FIELD: stratum})
            if component == "tools":
                cut = stop_outcome(decoded, stop_list, False).output
                yield Case("tools", "stream", family, {**options, "text": cut, "splits": released_cuts(
                    subject, ids, decoded, stop_list, len(cut)), STRATUM_FIELD: stratum})
                yield Case("tools", "whole", family, {**options, "text": cut, "splits": [], STRATUM_FIELD: stratum})


def released_cuts(subject: Subject, ids: list[int], decoded: str, stops: list[str], end: int) -> list[int]:
    """Where a stop checker fed ``decoded`` one id at a time releases text, before ``end`` (where the
    reference cuts): at each token boundary, less the tail that may still begin a stop."""
    released = {at - held_back_reference(decoded[:at], stops) for at in token_cuts(subject, ids, decoded)}
    return sorted(at for at in released if 0 < at < end)


def stop_pipeline_twins(family: str, subject: Subject) -> Iterator[Case]:
    """The stops/pipeline twin of every tools/pipeline case."""
    for fmt in TOOL_CALL_FORMATS:
        yield from pipeline_cases(family, subject, fmt, "stops")
