"""mlx-lm's own text boundary as an ``--impl``: its streaming detokenizers and its OpenAI server's
tool-call and reasoning handling, driven through the entry points ``mlx_lm.server`` (0.32.2) uses.

    pip install -e '.[mlx-lm]'          # mlx-lm with mlx's Linux CPU wheels; no torch
    textbound check --impl textbound.adapters.mlx_lm_adapter --component detokenizer,tools

Server entry point: ``mlx_lm.server``'s ``ResponseGenerator._generate`` batch loop (detokenizer),
``ResponseGenerator._tokenize`` (chat ids) and ``APIHandler.handle_completion`` (tool calls and
reasoning), each with the server's pre- and post-steps as below.

mlx-lm asks for transformers >= 5.7, which the oracles' pins satisfy, so it runs in the harness's
own environment (``nox -s engine_mlx_lm`` installs the extra and runs this adapter's checks).

- tokenizer: ``mlx_lm.utils.load_tokenizer(folder)``, what the server's ``ModelProvider._load``
  loads: a ``TokenizerWrapper`` around transformers' ``AutoTokenizer``, which answers encode and
  decode (mlx-lm adds nothing there).
- detokenizer: ``TokenizerWrapper.detokenizer``, the naive, SPM or BPE streaming detokenizer
  ``tokenizer_utils.load`` picks from tokenizer.json's decoder, fed as the server's batch loop feeds
  it (``ResponseGenerator._generate``): per generated id ``add_token`` then ``last_segment``;
  ``flush`` is a finish by length (``finalize`` then ``last_segment``). The server never feeds the
  prompt to the detokenizer (a fresh one starts at the first generated id), so ``prompt_text`` is
  what the same detokenizer shows of the prompt streamed alone, and the generated ids are streamed
  by another, without the prompt before them, as the server streams them. mlx-lm's detokenizers always show special tokens (SPM's and BPE's token map is
  ``convert_ids_to_tokens``, the naive one calls ``decode`` without skipping; the server has no
  ``skip_special_tokens``): a case skipping special tokens that holds one is not provided.
- chat: ``Tokenizer.apply_chat_template`` is the server's chat preparation (``ResponseGenerator._tokenize``):
  ``process_message_content`` on a copy of the messages (text parts joined, a None content made
  "", a call's JSON-string arguments parsed into an object), then the wrapper's
  ``apply_chat_template`` with ``add_generation_prompt=True``, the request's tools (an empty list
  is none), ``tokenize=True`` and the case's variables as the request's ``chat_template_kwargs``
  (the wrapper adds ``enable_thinking``: whether the vocabulary has think tokens, unless given).
  The case's template stands for the model's (the server takes none per request). What the server
  cannot be asked (no generation prompt, continuing the final message, documents,
  ``sanitize_control_tokens``, text instead of ids) is not provided; so is ``render_chat``, as the
  server renders only to ids.
- tools: ``APIHandler.handle_completion`` itself, on a handler made without a socket, whose
  ``response_generator`` answers with the ``GenerationContext`` the server's ``_serve_single``
  builds (the ``TextStateMachine`` of ``make_text_state_machine(tokenizer, [])``, the tokenizer's
  ``tool_parser``, and the initial state ``_tokenize`` picks: "reasoning" when the prompt left the
  model inside ``<think>``) and with one ``Response`` per fed piece of text, then the end-of-sequence
  step (finish reason "stop", whose text the server discards). The handler's own post-steps run:
  ``ToolCallFormatter`` parses each call's text with the tool parser, ``generate_response`` writes
  the SSE chunks (streamed) or the message (whole), read back here as OpenAI deltas. mlx-lm reads
  the format from the model: the tokenizer a format's requests get is the embedded ``qwen`` family's
  with a chat template holding the format's call syntax (FORMATS), so that ``tokenizer_utils.load``
  infers that format's parser as it does for a real model (checked when it loads). ``reasoning=False``
  is a model whose vocabulary has no ``<think>``/``</think>`` (the server has no switch: it reads
  reasoning whenever the vocabulary has them), as is every Mistral model (whose ``[THINK]`` mlx-lm
  does not read). Formats mlx-lm has no parser for are not provided.
  The server's ``reasoning`` key is the protocol's ``reasoning_content``.
- ``assemble`` is impl's: merging deltas is the OpenAI client's job.

    >>> parse_response('<tool_call>{"name": "f", "arguments": {}}</tool_call>', "hermes")["tool_calls"]
    ... # doctest: +SKIP
    [{'id': '...', 'type': 'function', 'function': {'name': 'f', 'arguments': '{}'}}]
"""
from __future__ import annotations

import copy
import io
import json
import logging
import queue
import tempfile
import threading
import weakref
from functools import cache
from pathlib import Path
from typing import NamedTuple

from textbound.impl.tools import assemble

from ..families import build_family
from ..server.protocol import NotProvided
from . import require

mlx_lm = require("mlx-lm", "mlx_lm")
mlx_server = require("mlx-lm", "mlx_lm.server")
mlx_generate = require("mlx-lm", "mlx_lm.generate")
mlx_utils = require("mlx-lm", "mlx_lm.utils")

__version__ = f"mlx-lm {mlx_lm.__version__}"
TOOLS_FAMILY = "qwen"  # the family whose tokenizer the tool parsers' requests get
THINK = ("<think>", "</think>")


class Format(NamedTuple):
    """How a format's models look to mlx-lm."""

    parser: str  # the tool parser mlx-lm infers for them
    template: str  # what their chat template holds that makes tokenizer_utils._infer_tool_parser infer it
    thinks: bool  # whether their vocabulary has <think> and </think> (Mistral's reasoning is [THINK])


FORMATS: dict[str, Format] = {
    "hermes": Format("json_tools", "{{ '<tool_call>' }}{{ tool_call.name }}", True),
    "qwen3_coder": Format("qwen3_coder", "<tool_call>\n<function=", True),
    "mistral": Format("mistral", "[TOOL_CALLS]", False),
    "kimi_k2": Format("kimi_k2", "<|tool_calls_section_begin|>", True),
    "glm45": Format("glm47", "<arg_key>", True),
    "minimax_m2": Format("minimax_m2", "<minimax:tool_call>", True),
}
# What a chat request to the server cannot ask for (one reason, so one "not provided" signature).
UNASKABLE = ("mlx-lm's server renders every chat request to ids with the generation prompt, without documents "
             "or sanitize_control_tokens")
EVENT = "data: "  # an SSE event's prefix as the server writes it
DONE = "[DONE]"
SERVER_GONE_SECONDS = 60.0  # a handler that neither asks for the next step nor ends is broken


def _not_the_servers(record: logging.LogRecord) -> bool:
    """The server logs each call its parser refuses (``logging.warning`` on the root logger) before
    dropping it: the drop is what the checks see, the line would only flood the run's output."""
    return not record.pathname.endswith(str(Path("mlx_lm") / "server.py"))


logging.getLogger().addFilter(_not_the_servers)


class Tokenizer:
    """A family folder as ``mlx_lm.utils.load_tokenizer`` loads it (the server's tokenizer).

    >>> Tokenizer.from_dir(qwen).encode("Hi there", add_special_tokens=False)  # doctest: +SKIP
    [13048, 1052]
    """

    def __init__(self, wrapper):
        self.wrapper = wrapper
        self.special_ids = frozenset(i for i, token in wrapper.added_tokens_decoder.items() if token.special)

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        return cls(mlx_utils.load_tokenizer(Path(path)))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.wrapper.encode(text, add_special_tokens=add_special_tokens)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return self.wrapper.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self.wrapper.get_vocab().get(token)

    def id_to_token(self, token_id: int) -> str | None:
        return self.wrapper.convert_ids_to_tokens(token_id)

    @property
    def vocab_size(self) -> int:
        return len(self.wrapper)

    def apply_chat_template(self, conversation, chat_template=None, tokenize=True, return_dict=False,
                            sanitize_control_tokens=False, tools=None, documents=None, add_generation_prompt=False,
                            continue_final_message=False, **variables) -> list[int]:
        """The prompt ids the server makes of a chat request: ``apply_chat_template([{"role": "user",
        "content": "Hi"}], TEMPLATE, add_generation_prompt=True)`` -> the ids of TEMPLATE's render."""
        if not tokenize or return_dict or sanitize_control_tokens or documents or not add_generation_prompt \
                or continue_final_message:
            raise NotProvided(UNASKABLE)
        messages = copy.deepcopy(conversation)
        mlx_server.process_message_content(messages)
        return self.wrapper.apply_chat_template(messages, chat_template=chat_template, add_generation_prompt=True,
                                                tools=tools or None, tokenize=True, **variables)


def _segments(streaming, ids: list[int]):
    """What the server reads of ``streaming`` per generated id: ``add_token``, then ``last_segment``."""
    for token_id in ids:
        streaming.add_token(token_id)
        yield streaming.last_segment


class IncrementalDetokenizer:
    """One request's ``TokenizerWrapper.detokenizer``, fed one id at a time as the server feeds it.

    >>> detokenizer = IncrementalDetokenizer(tokenizer, skip_special_tokens=False)  # doctest: +SKIP
    >>> detokenizer.add([13048]) + detokenizer.flush()                              # doctest: +SKIP
    'Hi'
    """

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True, prompt_ids=None):
        self.tokenizer, self.skip = tokenizer, skip_special_tokens
        prompt_ids = list(prompt_ids or [])
        self._refuse_skipped_specials(prompt_ids)
        prompt = tokenizer.wrapper.detokenizer  # a reset copy per request, as the server takes it
        self.prompt_text = "".join(_segments(prompt, prompt_ids))
        self.streaming = tokenizer.wrapper.detokenizer
        self.text = ""

    def _refuse_skipped_specials(self, ids: list[int]) -> None:
        if self.skip and self.tokenizer.special_ids.intersection(ids):
            raise NotProvided("skip_special_tokens: mlx-lm's detokenizers always show special tokens "
                              "(its server has no such option)")

    def add(self, ids) -> str:
        ids = list(ids)
        self._refuse_skipped_specials(ids)
        delta = "".join(_segments(self.streaming, ids))
        self.text += delta
        return delta

    def flush(self) -> str:
        self.streaming.finalize()
        delta = self.streaming.last_segment
        self.text += delta
        return delta


@cache
def _scratch() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="textbound-mlx-lm-")


@cache
def format_tokenizer(fmt: str, reasoning: bool):
    """The TokenizerWrapper of a model of format ``fmt``: the tools family's tokenizer with the
    format's template, without the think tokens when ``reasoning`` is off or the format's models
    have none, loaded as the server loads one; ValueError if mlx-lm infers another parser from it."""
    parser, template, thinks = FORMATS[fmt]
    base = build_family(TOOLS_FAMILY)
    spec = json.loads((base / "tokenizer.json").read_text(encoding="utf-8"))
    if not (reasoning and thinks):
        spec["added_tokens"] = [token for token in spec["added_tokens"] if token["content"] not in THINK]
    folder = Path(_scratch().name) / f"{fmt}-reasoning-{'on' if reasoning else 'off'}"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    config = json.loads((base / "tokenizer_config.json").read_text(encoding="utf-8"))
    config.pop("added_tokens_decoder", None)  # the added tokens are tokenizer.json's
    config["chat_template"] = template
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    wrapper = mlx_utils.load_tokenizer(folder)
    inferred = wrapper.init_kwargs.get("tool_parser_type")
    if inferred != parser:
        raise ValueError(f"mlx-lm inferred tool parser {inferred!r} for format {fmt!r}, expected {parser!r}")
    return wrapper


def _wrapper_for(fmt: str, reasoning: bool):
    if fmt not in FORMATS:
        raise NotProvided(f"format {fmt}: mlx-lm has no tool parser for it")
    return format_tokenizer(fmt, reasoning)


class _Handler(mlx_server.APIHandler):
    """The server's request handler without a socket: headers go nowhere, the body into ``wfile``."""

    def __init__(self, stream: bool, generator):
        # BaseHTTPRequestHandler.__init__ would serve a connection: set what handle_completion reads.
        self.stream, self.stream_options, self.wfile = stream, None, io.BytesIO()
        self.response_generator = generator
        self.requested_model, self.requested_draft_model, self.adapter = "default_model", "default_model", None
        self.request_id, self.created, self.system_fingerprint = "chatcmpl-textbound", 0, "textbound"
        self.object_type = "chat.completion.chunk" if stream else "chat.completion"
        self.max_tokens, self.num_draft_tokens, self.seed, self.chat_template_kwargs = -1, 0, None, None
        self.temperature, self.top_p, self.top_k, self.min_p = 0.0, 1.0, 0, 0.0
        self.xtc_probability, self.xtc_threshold, self.logit_bias = 0.0, 0.0, None
        self.repetition_penalty = self.presence_penalty = self.frequency_penalty = 0.0
        self.repetition_context_size = self.presence_context_size = self.frequency_context_size = 20
        self.logprobs, self.top_logprobs = False, -1

    def _set_stream_headers(self, status_code: int = 200) -> None:
        pass

    def _set_completion_headers(self, status_code: int = 200) -> None:
        pass

    def send_header(self, keyword, value) -> None:
        pass

    def end_headers(self) -> None:
        pass


class _Steps:
    """The ``response_generator`` a handler asks for its request: the server's context for it, then
    each Response as the harness feeds one, through a queue (the handler runs in a thread of its own)."""

    def __init__(self, wrapper, starts_in_reasoning: bool):
        initial = "reasoning" if starts_in_reasoning and wrapper.has_thinking else "normal"
        self.context = mlx_server.GenerationContext(
            has_tool_calling=wrapper.has_tool_calling, has_thinking=wrapper.has_thinking,
            tool_parser=wrapper.tool_parser, text_sm=mlx_generate.make_text_state_machine(wrapper, []),
            initial_state=initial, prompt=[])
        self.given: queue.Queue = queue.Queue()
        self.asked: queue.Queue = queue.Queue()
        self.failure: BaseException | None = None

    def serve(self, handler: _Handler, request) -> None:
        """``handler.handle_completion(request)`` in a thread of its own; its failure kept for the caller."""
        try:
            handler.handle_completion(request, [])
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread by OutputParser
            self.failure = exc
        finally:
            self.asked.put(False)

    def generate(self, request, args, progress_callback=None):
        return self.context, self._responses()

    def _responses(self):
        while True:
            self.asked.put(True)
            response = self.given.get()
            if response is None:
                return
            yield response


def _response(text: str, finish_reason: str | None):
    return mlx_server.Response(text, 0, 0.0, finish_reason, ())


def _events(written: bytes) -> list[dict]:
    lines = written.decode("utf-8").split("\n\n")
    return [json.loads(line[len(EVENT):]) for line in lines if line.startswith(EVENT) and line[len(EVENT):] != DONE]


def _openai_deltas(delta: dict) -> list[dict]:
    """A streamed chunk's delta as the protocol's deltas (reasoning, content, then calls)."""
    found = [{"reasoning_content": delta["reasoning"]}] if delta.get("reasoning") else []
    found += [{"content": delta["content"]}] if delta.get("content") else []
    return found + [{"tool_calls": [call]} for call in delta.get("tool_calls", [])]


class OutputParser:
    """One streamed chat completion through the server's ``handle_completion``: each ``feed`` is one
    generated token's text, ``final`` then ends the request with the end-of-sequence token.

    >>> OutputParser("hermes").feed("<think>hm</think>Hi")  # doctest: +SKIP
    [{'reasoning_content': 'hm'}, {'content': 'Hi'}]
    """

    def __init__(self, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False):
        self.format = format
        self._steps = _Steps(_wrapper_for(format, reasoning), starts_in_reasoning)
        self._handler = _Handler(stream=True, generator=self._steps)
        self._read = 0
        # The handler's thread holds the steps, not this parser: a parser dropped before its final
        # piece ends its request, and so its thread.
        self._thread = threading.Thread(target=self._steps.serve, daemon=True, args=(
            self._handler, mlx_server.CompletionRequest("chat", "", [], tools or None, None)))
        self._thread.start()
        weakref.finalize(self, self._steps.given.put, None)
        self._await_handler()

    def _await_handler(self) -> None:
        """Waits until the handler asks for the next step or ends; raises its failure."""
        try:
            self._steps.asked.get(timeout=SERVER_GONE_SECONDS)
        except queue.Empty:
            raise RuntimeError(f"mlx-lm's handle_completion took no step within {SERVER_GONE_SECONDS:.0f} s") from None
        if self._steps.failure is not None:
            raise self._steps.failure

    def feed(self, text, final=False) -> list[dict]:
        if not self._thread.is_alive() and not final:
            raise ValueError("feed after the final piece")
        if text:
            self._steps.given.put(_response(text, None))
            self._await_handler()
        if final:
            self._steps.given.put(_response("", "stop"))  # the end-of-sequence token: its text is not shown
            self._await_handler()
            self._steps.given.put(None)
            self._thread.join()
            if self._steps.failure is not None:
                raise self._steps.failure
        written = self._handler.wfile.getvalue()
        new, self._read = written[self._read:], len(written)
        return [d for event in _events(new) for d in _openai_deltas(event["choices"][0]["delta"])]


def parse_response(text, format="hermes", *, tools=None, reasoning=True, starts_in_reasoning=False) -> dict:
    """The whole completion (``"stream": false``) through ``handle_completion``: the text as one
    step, then the end-of-sequence step; the server's message with ``reasoning`` as ``reasoning_content``.

    >>> parse_response("<think>hm</think>Hi", "hermes")  # doctest: +SKIP
    {'role': 'assistant', 'content': 'Hi', 'reasoning_content': 'hm'}
    """
    steps = _Steps(_wrapper_for(format, reasoning), starts_in_reasoning)
    for response in (_response(text, None), _response("", "stop"), None):
        steps.given.put(response)
    handler = _Handler(stream=False, generator=steps)
    handler.handle_completion(mlx_server.CompletionRequest("chat", "", [], tools or None, None), [])
    message = json.loads(handler.wfile.getvalue())["choices"][0]["message"]
    found = {"role": "assistant", "content": message.get("content"), "reasoning_content": message.get("reasoning")}
    if message.get("tool_calls"):
        found["tool_calls"] = [{"id": call["id"], "type": "function", "function": call["function"]}
                               for call in message["tool_calls"]]
    return found


__all__ = ["IncrementalDetokenizer", "OutputParser", "Tokenizer", "assemble", "parse_response"]
