"""The plumbing every mutant shares: each mutant module re-exports impl's names (``from textbound.impl import *``)
and replaces one of them with what one of these helpers builds, so a mutant is a few lines saying
which behaviour it breaks.

Nothing here changes impl itself: a mutant's classes are subclasses, its pipeline stages are copies
of impl's objects re-classed one by one, so several mutants can share one process with impl.

>>> Tokenizer = spec_rewritten(ignore_field("BPE", ignore_merges=False))   # "ignore_merges ignored"
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterator

from textbound import impl
from textbound.impl.chat import ChatRenderer
from textbound.impl.chat.environment import DEFAULT_ENVIRONMENT
from textbound.impl.tools import engine as tools_engine

# -- tokenizer: tokenizer.json read as if a field were absent, or stages re-classed ------------------

Rewrite = Callable[[dict], None]
SKIPPED_KEYS = frozenset({"vocab", "merges"})  # large and never holding pipeline nodes


def nodes(spec, type_name: str) -> Iterator[dict]:
    """Every object in ``spec`` whose "type" is ``type_name`` (nested Sequences included)."""
    if isinstance(spec, dict):
        if spec.get("type") == type_name:
            yield spec
        for key, value in spec.items():
            if key not in SKIPPED_KEYS:
                yield from nodes(value, type_name)
    elif isinstance(spec, list):
        for value in spec:
            yield from nodes(value, type_name)


def ignore_field(type_name: str, **defaults) -> Rewrite:
    """A rewrite that gives every ``type_name`` node the field values an engine ignoring them assumes.

    >>> spec = {"pre_tokenizer": {"type": "Split", "invert": True}}
    >>> ignore_field("Split", invert=False)(spec); spec
    {'pre_tokenizer': {'type': 'Split', 'invert': False}}
    """
    def rewrite(spec: dict) -> None:
        for node in nodes(spec, type_name):
            node.update(defaults)
    return rewrite


def drop_normalizer(type_name: str) -> Rewrite:
    """A rewrite that makes every ``type_name`` normalizer do nothing (an empty Sequence)."""
    def rewrite(spec: dict) -> None:
        for node in list(nodes(spec.get("normalizer"), type_name)):
            node.clear()
            node.update({"type": "Sequence", "normalizers": []})
    return rewrite


def added_tokens_flag(flag: str, value: bool) -> Rewrite:
    """A rewrite setting ``flag`` (lstrip, rstrip, single_word, normalized) on every added token."""
    def rewrite(spec: dict) -> None:
        for token in spec.get("added_tokens", []):
            token[flag] = value
    return rewrite


def rewritable_copy(spec: dict) -> dict:
    """A copy of ``spec`` a rewrite may change, sharing the model's vocabulary and merges (SKIPPED_KEYS:
    no rewrite changes them, and copying them was most of a mutant's loading time)."""
    model = spec.get("model")
    shared = {id(model[key]): model[key] for key in SKIPPED_KEYS if key in model} if isinstance(model, dict) else {}
    return copy.deepcopy(spec, shared)


def spec_rewritten(rewrite: Rewrite) -> type:
    """A Tokenizer that loads each tokenizer.json as ``rewrite`` changes it (on a copy)."""
    class Tokenizer(impl.Tokenizer):
        def __init__(self, spec, source="tokenizer.json", config=None):
            if isinstance(spec, dict):
                spec = rewritable_copy(spec)
                rewrite(spec)
            super().__init__(spec, source, config)
    return Tokenizer


def text_rewritten(rewrite: Callable[[str], str]) -> type:
    """A Tokenizer that encodes ``rewrite(text)`` instead of the text it is given, as an engine
    cleaning prompts before its tokenizer sees them does."""
    class Tokenizer(impl.Tokenizer):
        def encode(self, text, add_special_tokens=True):
            return super().encode(rewrite(text), add_special_tokens)
    return Tokenizer


def _components(root) -> Iterator[object]:
    """``root`` and every pipeline object below it (Sequence members)."""
    yield root
    for value in vars(root).values() if hasattr(root, "__dict__") else ():
        if isinstance(value, list):
            for member in value:
                if hasattr(member, "__dict__"):
                    yield from _components(member)


def restaged(stage: str, base: type, replacement: type) -> type:
    """A Tokenizer whose ``stage`` (normalizer, pre_tokenizer, model, decoder) has each ``base`` object
    re-classed as ``replacement`` (a subclass overriding one method)."""
    class Tokenizer(impl.Tokenizer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            root = getattr(self, stage)
            for component in list(_components(root)) if root is not None else ():
                if type(component) is base:
                    component.__class__ = replacement
    return Tokenizer


SkipMatch = Callable[[str, int, int, int], bool]  # (text, start, stop, end of the previous match)


class _SkippingMatcher:
    """An added-token matcher that passes over the matches ``skip`` names, as a buggy splitter would."""

    def __init__(self, matcher, skip: SkipMatch):
        self._matcher, self._skip = matcher, skip

    def finditer(self, text: str):
        previous = -1
        for start, stop, token_id in self._matcher.finditer(text):
            if not self._skip(text, start, stop, previous):
                previous = stop
                yield start, stop, token_id


def added_tokens_missed(skip: SkipMatch) -> type:
    """A Tokenizer that does not split off an added token where ``skip(text, start, stop, previous_end)``."""
    class Tokenizer(impl.Tokenizer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.added._raw = _SkippingMatcher(self.added._raw, skip)
            self.added._normalized = _SkippingMatcher(self.added._normalized, skip)
    return Tokenizer


def char_before(test: Callable[[str], bool]) -> SkipMatch:
    """Skip a match preceded by a character passing ``test``."""
    return lambda text, start, stop, previous: start > 0 and test(text[start - 1])


def char_after(test: Callable[[str], bool]) -> SkipMatch:
    """Skip a match followed by a character passing ``test``."""
    return lambda text, start, stop, previous: stop < len(text) and test(text[stop])


# -- stops: impl's checker, with what it was given and released kept for a mutant to re-cut ---------

class ReleasingStopChecker(impl.StopChecker):
    """impl's StopChecker that keeps the text given (``seen``) and what impl released (``impl_output``);
    a mutant overrides ``releasable`` (all the text released once the call returns) and may set
    ``reported`` (the stop string it reports instead of impl's)."""

    def __init__(self, stops, include_stop=False):
        super().__init__(stops, include_stop)
        self.stops, self.include_stop = list(stops), include_stop
        self.seen = self.impl_output = self.given = ""
        self.reported: str | None = None

    @property
    def stop_string(self):
        return self.reported or super().stop_string

    def add(self, delta):
        if not self.stopped:
            self.seen += delta
        self.impl_output += super().add(delta)
        return self._give(self.releasable(final=False))

    def finish(self):
        self.impl_output += super().finish()
        return self._give(self.releasable(final=True))

    def releasable(self, final: bool) -> str:
        return self.impl_output

    def _give(self, text: str) -> str:
        if len(text) <= len(self.given):
            return ""
        new, self.given = text[len(self.given):], text
        return new


# -- state one class keeps for all its instances (n>1 choices, concurrent requests) -----------------

def shared_state(base: type, *names: str) -> type:
    """A subclass of ``base`` whose attributes ``names`` live on the class, one value for every
    instance: each new instance resets them (as a server resetting one parser object per request
    does), so streams fed one after another are right and streams fed interleaved are not.

    >>> Checker = shared_state(impl.StopChecker, "_state", "_held")
    >>> a, b = Checker(["xy"]), Checker(["xy"])
    >>> a.add("ax"), b.add("b"), a.add("y")  # b releases the "x" a held, and a misses its stop
    ('a', 'xb', 'y')
    """
    store: dict[str, object] = {}

    def attribute(name: str) -> property:
        return property(lambda self: store[name], lambda self, value: store.__setitem__(name, value))

    return type(base.__name__, (base,), {name: attribute(name) for name in names})


# -- chat: a renderer of its own, in a Jinja environment changed ------------------------------------

def render_chat_with(configure: Callable[[object], None]) -> Callable:
    """A ``render_chat`` on a fresh Jinja environment that ``configure(environment)`` changes."""
    renderer = ChatRenderer(limits=DEFAULT_ENVIRONMENT.limits)
    configure(renderer.environment.jinja)
    return renderer.render_chat


# -- tools: a parser whose stream, format or deltas are changed -------------------------------------

def tool_parsers(formats: dict[str, type] | None = None, stream: type | None = None,
                 deltas: Callable[[list[dict]], list[dict]] | None = None,
                 message: Callable[[dict], dict] | None = None):
    """(OutputParser, parse_response, parse_tool_calls) with ``formats`` (name -> TaggedFormat
    subclass) replacing impl's, ``stream`` (a TaggedStream subclass) running every format, and
    ``deltas`` rewriting what each ``feed`` returns, ``message`` what ``parse_response`` returns."""
    class OutputParser(impl.OutputParser):
        def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
            super().__init__(format, tools=tools, reasoning=reasoning, starts_in_reasoning=starts_in_reasoning)
            fmt = (formats or {}).get(format)
            # gpt_oss reads harmony channels with a stream of its own, which a TaggedStream cannot replace.
            tagged = isinstance(self._stream, tools_engine.TaggedStream)
            if fmt is not None or (stream is not None and tagged):
                fmt = fmt or type(self._stream.format)
                self._stream = (stream or tools_engine.TaggedStream)(fmt(), tools, reasoning, starts_in_reasoning)

        def feed(self, text, final=False):
            found = super().feed(text, final)
            return found if deltas is None else deltas(found)

    def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        parser = OutputParser(format, tools=tools, reasoning=reasoning, starts_in_reasoning=starts_in_reasoning)
        found = impl.assemble(parser.feed(text, final=True))
        return found if message is None else message(found)

    def parse_tool_calls(text, format="hermes"):
        found = parse_response(text, format)
        return found["content"], found.get("tool_calls", [])

    return OutputParser, parse_response, parse_tool_calls


# -- structured: the schema an engine reads instead of the one given --------------------------------

def schema_rewritten(rewrite: Callable[[dict], None]) -> Callable:
    """A ``json_schema_to_regex`` that translates a copy of the schema changed by ``rewrite`` at
    every object schema in it (the caller's schema is left as it was)."""
    def json_schema_to_regex(schema, **options):
        if isinstance(schema, dict):
            schema = copy.deepcopy(schema)
            for node in _schemas(schema):
                rewrite(node)
        return impl.json_schema_to_regex(schema, **options)
    return json_schema_to_regex


def _schemas(schema) -> Iterator[dict]:
    """Every dict in a schema, the root first."""
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _schemas(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _schemas(value)
