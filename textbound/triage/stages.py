"""A tokenizer's answer stage by stage, for the oracle and for an implementation exposing its stages.

Encoding a text goes through the normalized text, the pre-tokenized pieces (with offsets), the
model's tokens and the post-processed ids; decoding ids through the tokens and the decoded text.
`tokenizers` shows its stages through its normalizer and pre_tokenizer objects, impl (and every
mutant) through its own; the first stage where the two sides part is where the bug starts:

    >>> [s.name for s in oracle_stages(tokenizer, "encode", "é")]
    ['normalized text', 'pre-tokenized pieces', 'model tokens', 'post-processed ids']

The normalizer and pre-tokenizer are shown on the whole text; both engines split added tokens off
first, which the model tokens and ids stages include. A chat prompt has two stages, the rendered
text and its ids (``chat_stages``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..naming.shape import BYTE_LEVEL_CHARS, Vocabulary, ids_shape, text_shape
from ..run.time_limit import time_limit

NONE = "(none)"  # a stage the tokenizer.json does not have
TIMED_OUT = ("timed out",)  # the value of a stage whose call ran past its time limit


@dataclass
class Stage:
    """One stage's answer: ``value`` is what is compared, ``shown`` how it is printed."""

    name: str
    value: object
    shown: str


def _ids_shown(ids: list[int], tokens: list[str | None]) -> str:
    return " ".join(f"{i}:{token!r}" for i, token in zip(ids, tokens))


def _pieces_shown(pieces: list[tuple[str, tuple[int, int] | None]]) -> str:
    return " ".join(f"{piece!r}@{list(span) if span else '?'}" for piece, span in pieces)


def oracle_stages(tokenizer, operation: str, given) -> list[Stage]:
    """The stages of a `tokenizers.Tokenizer` on ``given`` (a text to encode, or ids to decode)."""
    if operation == "decode":
        tokens = [tokenizer.id_to_token(i) for i in given]
        return [Stage("tokens", tokens, repr(tokens)),
                *_decoded(tokenizer.decode(given), tokenizer.decode(given, skip_special_tokens=True))]
    normalized = tokenizer.normalizer.normalize_str(given) if tokenizer.normalizer is not None else given
    pieces = tokenizer.pre_tokenizer.pre_tokenize_str(normalized) if tokenizer.pre_tokenizer is not None else None
    plain, special = tokenizer.encode(given, add_special_tokens=False), tokenizer.encode(given)
    return [Stage("normalized text", normalized, repr(normalized)),
            Stage("pre-tokenized pieces", None if pieces is None else [p for p, _ in pieces],
                  NONE if pieces is None else _pieces_shown(pieces)),
            Stage("model tokens", plain.ids, _ids_shown(plain.ids, plain.tokens)),
            Stage("post-processed ids", special.ids, _ids_shown(special.ids, special.tokens))]


def _decoded(text: str, skipped: str) -> list[Stage]:
    return [Stage("decoded text", text, repr(text)),
            Stage("decoded, special tokens skipped", skipped, repr(skipped))]


def exposes_stages(tokenizer) -> bool:
    """Whether an implementation's tokenizer shows its stages as impl's does."""
    return all(hasattr(tokenizer, name) for name in ("normalizer", "pre_tokenizer", "encode", "id_to_token"))


def _surface(piece: str) -> str:
    """The text a pre-tokenized piece stands for (byte-level characters read back as bytes)."""
    if piece and all(c in BYTE_LEVEL_CHARS for c in piece):
        return bytes(BYTE_LEVEL_CHARS[c] for c in piece).decode("utf-8", "replace")
    return piece.replace("\u2581", " ")


def _offsets(text: str, pieces: list[str]) -> list[tuple[str, tuple[int, int] | None]]:
    """Each piece with where it is found in ``text``, searched from where the previous one ended
    (impl's pieces carry no offsets); None where a piece's text is not found there."""
    found, at = [], 0
    for piece in pieces:
        surface = _surface(piece)
        start = text.find(surface, at) if surface else -1
        if start < 0 and surface.startswith(" "):  # a space the pre-tokenizer added (prefix space, Metaspace)
            surface, start = surface[1:], text.find(surface[1:], at)
        found.append((piece, None if start < 0 else (start, start + len(surface))))
        at = at if start < 0 else start + len(surface)
    return found


def impl_stages(tokenizer, operation: str, given) -> list[Stage]:
    """The same stages from an implementation exposing them (``exposes_stages``); only the final
    answers from one that does not."""
    if operation == "decode":
        tokens = [tokenizer.id_to_token(i) for i in given]
        return [Stage("tokens", tokens, repr(tokens)),
                *_decoded(tokenizer.decode(given), tokenizer.decode(given, skip_special_tokens=True))]
    stages = []
    if exposes_stages(tokenizer):
        from textbound.impl.tokenizer.pre_tokenizers import Piece
        normalized = tokenizer.normalizer.normalize(given) if tokenizer.normalizer is not None else given
        pieces = None
        if tokenizer.pre_tokenizer is not None:
            pieces = [p.text for p in tokenizer.pre_tokenizer.pre_tokenize([Piece(normalized, True)])]
        stages = [Stage("normalized text", normalized, repr(normalized)),
                  Stage("pre-tokenized pieces", pieces,
                        NONE if pieces is None else _pieces_shown(_offsets(normalized, pieces)))]
    plain, special = tokenizer.encode(given, add_special_tokens=False), tokenizer.encode(given, add_special_tokens=True)
    tokens = getattr(tokenizer, "id_to_token", lambda i: None)
    return [*stages, Stage("model tokens", plain, _ids_shown(plain, [tokens(i) for i in plain])),
            Stage("post-processed ids", special, _ids_shown(special, [tokens(i) for i in special]))]


def difference(expected: Stage, actual: Stage, vocabulary: Vocabulary | None) -> str:
    """What differs between two answers of one stage, as a shape where it has one."""
    if actual.value is None and expected.value is not None:
        return actual.shown  # the implementation raised, or shows no such stage
    if isinstance(expected.value, tuple) or isinstance(actual.value, tuple):  # a chat stage raised
        sides = [side.shown if isinstance(side.value, tuple) else "renders" for side in (actual, expected)]
        return f"impl {sides[0]} where the oracle {sides[1]}"
    if expected.name == "prompt ids" and vocabulary is not None:
        return ids_shape(expected.value, actual.value, vocabulary)
    if isinstance(expected.value, str) and isinstance(actual.value, str):
        return text_shape(expected.value, actual.value)
    if expected.name in ("model tokens", "post-processed ids") and vocabulary is not None:
        return ids_shape(expected.value, actual.value, vocabulary)
    if expected.name == "pre-tokenized pieces" and isinstance(expected.value, list) and isinstance(actual.value, list):
        joined = ["".join(map(_surface, side.value)) for side in (expected, actual)]
        if joined[0] != joined[1]:
            return text_shape(*joined)
        index = next(i for i, (a, b) in enumerate(zip(expected.value, actual.value)) if a != b)
        return f"cuts the text elsewhere: piece {index} is {expected.value[index]!r}, impl's {actual.value[index]!r}"
    if isinstance(expected.value, list) and isinstance(actual.value, list):
        index = next((i for i, (a, b) in enumerate(zip(expected.value, actual.value)) if a != b),
                     min(len(expected.value), len(actual.value)))
        return f"differs at item {index}"
    return "differs"


def chat_stages(render_text: Callable[[], str], render_ids: Callable[[], list[int]], id_to_token,
                seconds: float) -> list[Stage]:
    """A chat prompt in two stages, the rendered text and its ids, from one side's two calls (each
    rendering the same request, in at most ``seconds``: a template may loop for hours); a stage that
    raised holds ``("raised", class)`` and shows the message, one past its time ``TIMED_OUT``:

        >>> [s.name for s in chat_stages(lambda: "<s>Hi", lambda: [1, 2], vocabulary.get, 30)]
        ['rendered prompt', 'prompt ids']
    """
    from textbound.oracles.chat_oracle import frozen_clock, outcome

    def stage(name: str, call) -> Stage:
        with frozen_clock(), time_limit(seconds) as limit:
            value, raised = outcome(call)
        if limit.fired:  # whatever the call made of the limit (it may record NoAnswer as its error)
            return Stage(name, TIMED_OUT, f"no answer within {seconds:g} s")
        if raised is not None:
            return Stage(name, ("raised", raised.error_class), f"raised {raised}")
        if isinstance(value, str):
            return Stage(name, value, repr(value))
        ids = list(value)
        return Stage(name, ids, _ids_shown(ids, [id_to_token(i) for i in ids]))
    return [stage("rendered prompt", render_text), stage("prompt ids", render_ids)]
