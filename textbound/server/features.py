"""What each server property needs from a dialect, and how to learn once whether the dialect has it.

A property whose feature the dialect lacks is "not provided" (noted, never checked, never passed).
A feature is learnt by one small request: ``NotProvided`` means the dialect (or the server) lacks it;
an answer, or a ``ServerError``, means it has it (the checks then meet that misbehaviour per case
and record it as a server error). Two features no server has: impl's ``sanitize_control_tokens``
and a vocabulary listing.

    >>> missing_features(open_dialect("openai", url), ("tokenize",), {})       # doctest: +SKIP
    ['tokenize (not provided: the openai dialect has no /tokenize)']
"""
from __future__ import annotations

from collections.abc import Callable

from .dialect import Dialect, GenerationRequest, NotProvided

PROBE_MESSAGES = [{"role": "user", "content": "Hi"}]
PROBE_TOOL = {"type": "function", "function": {"name": "probe", "parameters": {"type": "object", "properties": {}}}}
PROBE_SCHEMA = {"type": "json_schema", "json_schema": {"name": "probe", "schema": {"type": "object"}}}


def _generates(dialect: Dialect) -> None:
    """Completions of a prompt, else chat completions (all OpenAI's public API has)."""
    try:
        dialect.generate(GenerationRequest(prompt="Hi", max_tokens=1))
    except NotProvided:
        dialect.generate(GenerationRequest(messages=PROBE_MESSAGES, max_tokens=1))


def _generated_ids(dialect: Dialect) -> str | None:
    generation = dialect.generate(GenerationRequest(prompt="Hi", max_tokens=1))
    return "the server returns no token ids" if generation.ids is None else None


def _answers(call: Callable[[Dialect], object]) -> Callable[[Dialect], None]:
    """A probe that needs only an answer: None once ``call`` returns."""
    def asked(dialect: Dialect) -> None:
        call(dialect)
    return asked


def _never(why: str) -> Callable[[Dialect], str]:
    return lambda dialect: why


# Each feature's probe: None where the dialect has it, else why not (or it raises NotProvided).
PROBES: dict[str, Callable[[Dialect], str | None]] = {
    "tokenize": _answers(lambda d: d.tokenize("Hi")),
    "detokenize": _answers(lambda d: d.detokenize([0])),
    "chat_ids": _answers(lambda d: d.chat_ids(PROBE_MESSAGES)),
    "chat_text": _answers(lambda d: d.chat_text(PROBE_MESSAGES)),
    "completions": _answers(lambda d: d.generate(GenerationRequest(prompt="Hi", max_tokens=1))),
    "generate": _generates,
    "special tokens kept": _answers(lambda d: d.generate(GenerationRequest(prompt="Hi", max_tokens=1,
                                                                           skip_special_tokens=False))),
    "generated ids": _generated_ids,
    "tool_choice": _answers(lambda d: d.generate(GenerationRequest(
        messages=PROBE_MESSAGES, tools=[PROBE_TOOL], tool_choice="required", max_tokens=1))),
    "response_format": _answers(lambda d: d.generate(GenerationRequest(
        messages=PROBE_MESSAGES, response_format=PROBE_SCHEMA, max_tokens=1))),
    "sanitize_control_tokens": _never("impl's own option: no server has it"),
    "vocabulary": _never("a server lists no vocabulary (id_to_token, token_to_id, vocab_size)"),
}

# The features each server property needs, by (component, property).
SERVER_FEATURES: dict[tuple[str, str], tuple[str, ...]] = {
    ("tokenizer", "encode"): ("tokenize",),
    ("tokenizer", "decode"): ("detokenize",),
    ("tokenizer", "vocab"): ("vocabulary",),
    ("chat", "render"): ("chat_text",),
    ("chat", "ids"): ("chat_ids",),
    ("chat", "sanitized_ids"): ("chat_ids", "sanitize_control_tokens"),
    ("detokenizer", "server_stream"): ("generated ids",),
    ("detokenizer", "server_specials"): ("generated ids", "special tokens kept"),
    ("detokenizer", "server_whole"): ("generate",),
    ("stops", "server"): ("generate",),
    ("tools", "server"): ("tool_choice",),
    ("structured", "server"): ("response_format",),
}


def probe(dialect: Dialect, feature: str) -> str | None:
    """None where ``dialect`` has ``feature``, else why not."""
    try:
        return PROBES[feature](dialect)
    except NotProvided as exc:
        return f"not provided: {exc}"
    except Exception:  # noqa: BLE001 - a misbehaving server has the feature: its checks record how it fails
        return None


def missing_features(dialect: Dialect, features: tuple[str, ...], probed: dict[str, str | None]) -> list[str]:
    """The ``features`` ``dialect`` lacks, each with why; ``probed`` remembers the answers."""
    for feature in features:
        if feature not in probed:
            probed[feature] = probe(dialect, feature)
    return [f"{feature} ({probed[feature]})" for feature in features if probed[feature]]
