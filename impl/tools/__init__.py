"""Tool calls and reasoning in generated text, whole and streamed.

``OutputParser(format).feed(text, final=False)`` turns streamed output into OpenAI chat-completion
deltas; ``parse_response`` reads a whole output into the complete message, and is by definition
the same machine fed the whole text at once, so whole and streamed parses agree for every split.
``assemble`` merges deltas into a message as OpenAI clients do.

>>> parse_response('<think>hm</think>Hi<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
... # doctest: +NORMALIZE_WHITESPACE
{'role': 'assistant', 'content': 'Hi', 'reasoning_content': 'hm',
 'tool_calls': [{'id': 'call_0', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"x": 1}'}}]}

Formats (details and worked examples in each module)
----------------------------------------------------
============  ====================  =========  =============  ===============================
format        reasoning             parallel   typed by tools ids
============  ====================  =========  =============  ===============================
hermes        <think>               yes        no (JSON)      call_N
qwen3_coder   <think>               yes        yes (XML)      call_N
llama3_json   none                  yes (;)    no (JSON)      call_N
mistral       [THINK]               yes        no (JSON)      model's "id"/[CALL_ID], else call_N
deepseek_r1   <think>               yes        no (JSON)      call_N
deepseek_v31  <think> (prompt)      yes        no (JSON)      call_N
gpt_oss       analysis channel      yes        no (JSON)      call_N
kimi_k2       <think>               yes        no (JSON)      the model's functions.NAME:IDX
glm45         <think>               yes        yes (XML)      call_N
minimax_m2    <think> (prompt)      yes        yes (XML)      call_N
============  ====================  =========  =============  ===============================

The message
-----------
``role`` is "assistant". ``content`` is every character outside reasoning and call syntax,
verbatim, except whitespace alone beside a call (between calls, before the first, after the last:
vLLM and llama.cpp drop it, transformers' response parser keeps it; blank_runs.py), and for glm45
whitespace at content's ends beside calls and reasoning (both its servers trim it), and for gpt_oss
text after a stop token (``<|call|>``, ``<|return|>``) up to the next message; None when the
answer is tool calls alone (as OpenAI and vLLM), "" when there is nothing at all.
``reasoning_content`` is None when there is no reasoning. ``tool_calls`` is present only when there
are calls; each has ``id``, ``type`` "function", ``function.name`` and ``function.arguments`` (JSON
text; ``{}`` for a call without arguments). Ids are ``call_0``, ``call_1``... by position in the
output, or the format's own (kimi_k2's ``functions.NAME:IDX``, mistral's ``[CALL_ID]``/``"id"``).

Streaming
---------
Content and reasoning are released as they arrive, holding back only the longest tail that may
still become a tag, after a call the whitespace (llama3_json: and ``;``) that may still glue it
to the syntax that follows (a section's closing tag, the next call), and whitespace alone that may
still turn out to stand beside a call.

A call is announced as soon as its header is read and its arguments have begun: one delta with
``index``, ``id``, ``type`` and the whole name (``arguments`` ""); then its arguments follow in
further deltas as they arrive (partial.py):

- JSON formats (hermes, llama3_json, mistral ``[ARGS]``, deepseek_*, kimi_k2, gpt_oss): when the
  name (and id) precede the arguments object and its ``{`` has been read; the arguments pass on
  exactly as written, as far as closing characters alone would make them valid JSON (a partial key,
  literal, number sign or escape waits for the rest). Calls written otherwise (name after the
  arguments, mistral's list, whose ids follow the arguments) come whole when their block ends.
- XML formats (qwen3_coder, glm45, minimax_m2): at the function/invoke header (glm45: at the first
  ``<arg_key>`` after the name); then one ``"key": value`` member per parameter as it closes,
  typed by the tool's schema; ``}`` when the block ends. A call without arguments gets ``{}``.

The concatenated arguments are byte for byte those of the whole parse, for every split.

Announcing early, before a block is known to be well formed, is the trade-off every streaming
engine makes: the announcement cannot be taken back. Here a block still decides as a whole when it
ends. If it reads, announced calls get the rest of their arguments. If it does not (a JSON error
after the ``{``, a stray piece of text), its text is content, exactly as written, as before; each
call announced from it is closed into valid JSON with closing characters only (``{"city": "Par`` +
``"}``) and flagged ``"error": "malformed call: its block is content"`` (``MALFORMED_CALL``) in a last
delta. So nothing is dropped, the content is the same as if nothing had been announced, and
``parse_response`` (the same machine fed the whole text) returns the same flagged calls, so split
invariance holds for malformed output too. Likewise if the complete parse differs from what was
announced (a key repeated later in the object), the announced call is flagged (``"malformed call:
the complete call differs from the one streamed"``) and the parse's calls follow as new ones.
Clients that ignore ``error`` would act on such a call, as with vLLM's announced-then-broken calls;
the flag and the content say what happened: a flagged call is not a call.

Rules (the same as oracles.tool_reference's, written independently)
-------------------------------------------------------------------
Where transformers' response parser can express a rule, the rule is transformers', unless vLLM and
llama.cpp both answer otherwise (whitespace beside calls); elsewhere the engines' parsers decided
(each format module cites the file). corpora/server_parser_tests holds the servers' own parser
tests, and tests/test_server_parser_corpus.py how many of them impl agrees with.

- Reasoning: the open tag opens a reasoning block wherever it stands in content (after text, after
  another block: transformers opens a region at its tag anywhere; vLLM's reasoning parsers take the
  first open tag anywhere), up to the first close tag or the end (kimi_k2: a block never closed ends
  where a tool-calls section begins, as vLLM, SGLang and llama.cpp read it); blocks add up. A close
  tag outside reasoning is content. Tags inside reasoning, calls included, are reasoning text.
  ``reasoning=False``: reasoning tags are ordinary content (gpt_oss: analysis is content).
- A call block runs from its tag to the first close tag (hermes: the first outside a JSON string,
  its tags being plain text; elsewhere close tags are special tokens, or end values as vLLM's regexes
  do), to where its JSON ends (mistral, llama3_json, hermes' bare object), or to the end of the stream. A block still open
  at the end is read as it stands (transformers and vLLM's hermes parser do): calls if it reads.
- A block that cannot be read (invalid JSON, no or empty name, arguments that are not a JSON object,
  an open tag or stray text where the format has none) is content, exactly as written, tags included
  (plus the flagged calls announced from it).
- Section tags (deepseek, kimi) are syntax only next to a call: an opening one followed (after
  whitespace) by a call tag, a closing one following (after whitespace) a call; anywhere else
  content. Whitespace alone between two calls, before the first or after the last is not content.
- Names written as text (not JSON strings) are stripped, non-empty and without ``<``.
- A call of a tool not in ``tools`` (when ``tools`` is given) is returned flagged: the call carries
  the non-OpenAI key ``"error": "unknown tool 'NAME'"`` (in its first delta).
Per-format details are in each format module's docstring.
"""
from __future__ import annotations

from .deepseek_r1 import DeepSeekR1
from .deepseek_v31 import DeepSeekV31
from .engine import TaggedFormat
from .glm45 import Glm45
from .gpt_oss import GptOss
from .hermes import Hermes
from .kimi_k2 import KimiK2
from .llama3_json import Llama3Json
from .message import CALL_ERROR_KEY, MALFORMED_CALL, assemble
from .minimax_m2 import MinimaxM2
from .mistral import Mistral
from .qwen3_coder import Qwen3Coder

# The one registry of formats: name -> the format's class.
_FORMATS: dict[str, type[TaggedFormat]] = {fmt.name: fmt for fmt in (
    Hermes, Qwen3Coder, Llama3Json, Mistral, DeepSeekR1, DeepSeekV31, GptOss, KimiK2, Glm45, MinimaxM2)}
FORMATS: tuple[str, ...] = tuple(_FORMATS)


class OutputParser:
    """Streams one model output into OpenAI deltas (see the module docstring).

    >>> OutputParser("hermes").feed('<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>', final=True)
    [{'tool_calls': [{'index': 0, 'id': 'call_0', 'type': 'function', 'function': {'name': 'f', 'arguments': ''}}]}, \
{'tool_calls': [{'index': 0, 'function': {'arguments': '{"x": 1}'}}]}]
    """

    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        if format not in _FORMATS:
            raise ValueError(f"unknown tool-call format {format!r}; known: {', '.join(FORMATS)}")
        if tools is not None and not isinstance(tools, (list, tuple)):
            raise TypeError(f"tools must be a list of OpenAI tool definitions, found {type(tools).__name__}")
        self.format = format
        self._stream = _FORMATS[format].stream(tools, reasoning, starts_in_reasoning)

    def feed(self, text, final=False) -> list[dict]:
        if not isinstance(text, str):
            raise TypeError(f"feed() takes str, found {type(text).__name__}")
        return self._stream.feed(text, final)


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False) -> dict:
    """The complete message in a whole output.

    >>> parse_response('Hi <tool_call>{"name": "f", "arguments": {}}</tool_call>')["tool_calls"]
    [{'id': 'call_0', 'type': 'function', 'function': {'name': 'f', 'arguments': '{}'}}]
    """
    parser = OutputParser(format, tools=tools, reasoning=reasoning, starts_in_reasoning=starts_in_reasoning)
    return assemble(parser.feed(text, final=True))


def parse_tool_calls(text, format="hermes"):
    """(content, tool_calls) of a whole output; tool_calls is [] when there are none.

    >>> parse_tool_calls("Just text")
    ('Just text', [])
    """
    message = parse_response(text, format)
    return message["content"], message.get("tool_calls", [])


# Markers of each format's call syntax in a chat template's source, most specific first (qwen3_coder
# and glm45 templates also contain <tool_call>, deepseek_r1's fenced body tells it from deepseek_v31).
_TEMPLATE_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt_oss", ("<|channel|>", "<|message|>")),
    ("minimax_m2", ("<minimax:tool_call>",)),
    ("kimi_k2", ("<|tool_call_begin|>",)),
    ("deepseek_r1", ("<｜tool▁call▁begin｜>", "```json")),
    ("deepseek_v31", ("<｜tool▁call▁begin｜>",)),
    ("glm45", ("<arg_key>",)),
    ("qwen3_coder", ("<tool_call>", "<function=")),
    ("hermes", ("<tool_call>",)),
    ("mistral", ("[TOOL_CALLS]",)),
    ("llama3_json", ("<|python_tag|>",)),
    ("llama3_json", ("<|start_header_id|>", "ipython", '"parameters": ')),  # Llama 3.x JSON tool prompts
)


def format_for_template(chat_template):
    """The format whose call syntax a chat template's source writes, or None if it writes none.

    >>> format_for_template("{{ '<tool_call>' + tool_call.name }}"), format_for_template("{{ messages }}")
    ('hermes', None)
    """
    if not isinstance(chat_template, str):
        raise TypeError(f"chat_template must be str, found {type(chat_template).__name__}")
    for name, markers in _TEMPLATE_MARKERS:
        if all(marker in chat_template for marker in markers):
            return name
    return None


__all__ = ["CALL_ERROR_KEY", "FORMATS", "MALFORMED_CALL", "OutputParser", "assemble", "format_for_template", "parse_response",
           "parse_tool_calls"]
