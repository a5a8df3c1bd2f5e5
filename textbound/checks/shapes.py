"""Checks of the request shapes servers break on (issue 38): several instances of one component fed
interleaved, and the whole pipeline a server runs on a model's ids.

- detokenizer/interleaved, stops/interleaved, tools/interleaved: two to four streams, each the input
  of the component's own stream property (detokenizer/stream, stops/stream, tools/stream), fed to
  their own instances of IncrementalDetokenizer, StopChecker or OutputParser in ``round_robin``
  order (worked out from the streams, so that a shrunk case stays consistent; a stream's instance is
  made at its first feed and its last feed ends it: flush, finish, ``final=True``), as a server
  feeds the choices of an n>1 request or concurrent requests. Each stream must give what the same
  stream fed alone to one instance gives, and a new instance made after all of them finished must
  give what the first stream gave alone.
  Whether what a stream gives alone is the oracle's is its own stream property's to say: every
  stream of an interleaved case is a case of that property too, so one bug gets one signature.

      {"streams": [{"text": "ab", "stops": ["b"], "splits": [1]}, {"text": "cd", "stops": ["d"], "splits": [1]}]}
      -> fed 0, 0, 1, 0, 1, 1 (three feeds each: two deltas and the end)

- tools/pipeline: ids -> IncrementalDetokenizer (``skip_special_tokens`` as the case sets it: False,
  as a server must set it for a format whose markers are special tokens, or True, as a careless one
  sets it) -> StopChecker -> OutputParser, streamed, equal the whole-text references applied in the
  same order: the oracle's decode, cut by oracles.stop_reference, parsed by oracles.tool_reference.
  So that one bug gets one signature, every pipeline case has twins: where the text the parser was
  fed is not the reference's cut, the stops/pipeline case of the same ids, stops and flag names what
  the detokenizer or the checker did (a detokenizer dropping the markers, say); where a new parser
  fed the same pieces alone gives the same message, the parser's reading of an output a stop ended
  (inside reasoning, inside a call) is named by the tools/stream twin (the cut text in the deltas a
  stop checker releases it in, one id at a time) and the tools/whole twin (the cut text parsed whole, as a server answering
  without streaming does). What is left is the pipeline's own: a parser whose answer depends on
  more than the text it is fed.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textbound.oracles import tool_reference
from textbound.oracles.stop_reference import stop_outcome

from ..naming.divergence import Case, Divergence
from .registry import Subject, check, impl_call, oracle_call
from .streaming import StreamInput, chunks
from .tools import ToolInput, message_difference, message_of, read_otherwise

INTERLEAVED = "interleaved"
DIFFERS_FROM_ALONE = "interleaved: a stream differs from the same stream fed alone"
NOT_CLEAN = "a new instance after finished ones differs from the first fed alone"


@dataclass(frozen=True)
class Feeding:
    """How one component's instances are made, fed and read: ``feeds(stream)`` is how many feeds a
    stream takes (the last one ends it); ``feed(instance, stream, k)`` gives what the k-th feed
    returns; ``outcome(instance, returned)`` what a finished stream gave, to compare."""

    open: Callable[[dict], object]
    feeds: Callable[[dict], int]
    feed: Callable[[object, dict, int], object]
    outcome: Callable[[object, list], object]

    def alone(self, stream: dict) -> object:
        """``stream`` fed to one instance of its own, start to end."""
        instance = self.open(stream)
        return self.outcome(instance, [self.feed(instance, stream, k) for k in range(self.feeds(stream))])

    def interleaved(self, streams: list[dict], order: list[int]) -> list[object]:
        """Each stream's outcome, fed in ``order``; an instance is made at its stream's first feed."""
        instances: dict[int, object] = {}
        returned: list[list] = [[] for _ in streams]
        for index in order:
            if index not in instances:
                instances[index] = self.open(streams[index])
            returned[index].append(self.feed(instances[index], streams[index], len(returned[index])))
        return [self.outcome(instances[i], returned[i]) for i in range(len(streams))]


def round_robin(feeds: list[int]) -> list[int]:
    """The order a server feeds streams in, stream ``i`` starting ``i`` steps after the first (a
    request arriving while others run), then one feed each a step:
    ``round_robin([2, 2]) == [0, 0, 1, 1]``, ``round_robin([3, 1, 2]) == [0, 0, 1, 0, 2, 2]``."""
    order: list[int] = []
    step = 0
    while len(order) < sum(feeds):
        order += [i for i, count in enumerate(feeds) if 0 <= step - i < count]
        step += 1
    return order


def interleaved_divergence(case: Case, feeding: Feeding) -> Divergence | None:
    """The interleaved case judged (see the module docstring): each stream against itself alone, then a
    new instance against the first stream alone. An exception only the interleaved feeding raises is
    a stream differing from itself alone too (state one stream left for another: one bug, whether it
    shows as other text or as an exception)."""
    streams = case.input["streams"]
    order = round_robin([feeding.feeds(stream) for stream in streams])
    alone, failure = impl_call(case, None, lambda: [feeding.alone(stream) for stream in streams])
    if failure:
        return failure  # a stream alone raising is its own stream property's to name
    together, failure = impl_call(case, alone, lambda: feeding.interleaved(streams, order))
    if failure:
        return Divergence(case, alone, failure.actual, DIFFERS_FROM_ALONE,
                          {"streams": len(streams), "raised": failure.kind, **failure.first_difference})
    for index, (want, got) in enumerate(zip(alone, together)):
        if want != got:
            return Divergence(case, want, got, DIFFERS_FROM_ALONE, {"stream": index, "streams": len(streams)})
    again, failure = impl_call(case, alone[0], lambda: feeding.alone(streams[0]))
    if failure or again != alone[0]:
        return Divergence(case, alone[0], failure.actual if failure else again, NOT_CLEAN,
                          {"stream": 0, "streams": len(streams)})
    return None


def detokenizer_feeding(subject: Subject) -> Feeding:
    def open_(stream: dict):
        given = StreamInput.of(Case("detokenizer", "stream", subject.family, stream))
        return subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens,
                                                   prompt_ids=given.prompt_ids), given.chunks

    def feed(instance, stream: dict, k: int) -> str:
        detokenizer, pieces = instance
        return detokenizer.add(pieces[k]) if k < len(pieces) else detokenizer.flush()

    return Feeding(open_, lambda stream: len(chunks(stream["ids"], stream.get("splits", []))) + 1, feed,
                   lambda instance, returned: {"prompt_text": instance[0].prompt_text, "deltas": returned})


def _stop_pieces(stream: dict) -> list[str]:
    return ["".join(part) for part in chunks(list(stream["text"]), stream.get("splits", []))]


def _stops_feeding(subject: Subject) -> Feeding:
    def open_(stream: dict):
        checker = subject.impl.StopChecker(stream["stops"], include_stop=stream.get("include_stop", False))
        return checker, _stop_pieces(stream)

    def feed(instance, stream: dict, k: int) -> str:
        checker, pieces = instance
        if k < len(pieces):
            return checker.add(pieces[k])
        return "" if checker.stopped else checker.finish()

    return Feeding(open_, lambda stream: len(_stop_pieces(stream)) + 1, feed,
                   lambda instance, returned: {"released": returned, "stopped": instance[0].stopped,
                                               "stop_string": instance[0].stop_string})


def _tool_input(stream: dict) -> ToolInput:
    return ToolInput.of(Case("tools", "stream", "", stream))


def _tools_feeding(subject: Subject) -> Feeding:
    def open_(stream: dict):
        given = _tool_input(stream)
        return subject.impl.OutputParser(given.format, **given.options), given.pieces()

    def feed(instance, stream: dict, k: int) -> list[dict]:
        parser, pieces = instance
        return list(parser.feed(pieces[k])) if k < len(pieces) else list(parser.feed("", final=True))

    return Feeding(open_, lambda stream: len(_tool_input(stream).pieces()) + 1, feed,
                   lambda instance, returned: message_of(subject.impl.assemble(
                       [delta for deltas in returned for delta in deltas])))


@check("detokenizer", INTERLEAVED)
def check_detokenizer_interleaved(subject: Subject, case: Case) -> Divergence | None:
    return interleaved_divergence(case, detokenizer_feeding(subject))


@check("stops", INTERLEAVED)
def check_stops_interleaved(subject: Subject, case: Case) -> Divergence | None:
    return interleaved_divergence(case, _stops_feeding(subject))


@check("tools", INTERLEAVED)
def check_tools_interleaved(subject: Subject, case: Case) -> Divergence | None:
    return interleaved_divergence(case, _tools_feeding(subject))


@dataclass(frozen=True)
class PipelineInput:
    """A tools/pipeline case's input: the output's ids and how they are fed, the request's stops and
    its parser options."""

    tool: ToolInput
    stream: StreamInput
    stops: list[str]
    include_stop: bool

    @classmethod
    def of(cls, case: Case) -> "PipelineInput":
        given = case.input
        return cls(_tool_input({**given, "text": "", "splits": []}),
                   StreamInput.of(case), given["stops"], given.get("include_stop", False))


def run_pipeline(subject: Subject, given: PipelineInput) -> tuple[list[str], dict]:
    """(the pieces of text the parser was fed, the message its deltas assemble to): ids -> detokenizer
    -> stop checker -> parser, streamed, as a server runs them."""
    detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer,
                                                      skip_special_tokens=given.stream.skip_special_tokens)
    checker = subject.impl.StopChecker(given.stops, include_stop=given.include_stop)
    parser = subject.impl.OutputParser(given.tool.format, **given.tool.options)
    pieces, deltas = [], []

    def parse(text: str) -> None:
        pieces.append(text)
        deltas.extend(parser.feed(text))

    for chunk in given.stream.chunks:
        parse(checker.add(detokenizer.add(chunk)))
        if checker.stopped:
            break
    else:
        parse(checker.add(detokenizer.flush()))
        if not checker.stopped:
            parse(checker.finish())
    deltas.extend(parser.feed("", final=True))
    return pieces, message_of(subject.impl.assemble(deltas))


def parsed_alone(subject: Subject, given: PipelineInput, pieces: list[str]) -> dict:
    """The message of a new parser fed ``pieces`` alone."""
    parser = subject.impl.OutputParser(given.tool.format, **given.tool.options)
    deltas = [delta for piece in pieces for delta in parser.feed(piece)] + parser.feed("", final=True)
    return message_of(subject.impl.assemble(deltas))


@check("tools", "pipeline", minimize="ids")
def check_tools_pipeline(subject: Subject, case: Case) -> Divergence | None:
    given = PipelineInput.of(case)
    whole, error = oracle_call(lambda: subject.oracle.decode(given.stream.ids, given.stream.skip_special_tokens))
    if error:
        return None  # the detokenizer checks judge ids the oracle cannot decode
    cut = stop_outcome(whole, given.stops, given.include_stop).output
    expected = tool_reference.parse(cut, given.tool.format, **given.tool.options).message()
    result, failure = impl_call(case, expected, lambda: run_pipeline(subject, given))
    if failure:
        return failure
    pieces, streamed = result
    if "".join(pieces) != cut:
        return None  # the detokenizer or the stop checker: the stops/pipeline twin names it
    difference = message_difference(expected, streamed)
    if difference is None:
        return None
    alone, failure = impl_call(case, expected, lambda: parsed_alone(subject, given, pieces))
    if failure is None and message_difference(alone, streamed) is None:
        return None  # the parser's own reading of the stopped text: its tools/stream and tools/whole twins name it
    return Divergence(case, expected, streamed, f"pipeline: {read_otherwise(expected, streamed, difference)}",
                      {"format": given.tool.format, "stops": given.stops,
                       "skip_special_tokens": given.stream.skip_special_tokens, "parsed_text": cut, **difference})
