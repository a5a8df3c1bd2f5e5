"""vLLM's own text boundary behind textbound's JSON-lines protocol (textbound/adapters/jsonl_engine.py):
run by the python of an environment holding vllm, never importing the harness.

    python engines/vllm/engine.py --detokenizer fast --tools-base FAMILY_DIR

- tokenizer: ``vllm.tokenizers.get_tokenizer(family)``, the cached Hugging Face tokenizer the
  server loads; encode/decode as the server calls them.
- detokenizer: made as the server's output processor makes one per request,
  ``IncrementalDetokenizer.from_new_request(tokenizer, request)`` (``--detokenizer fast``, the
  default: it picks ``FastIncrementalDetokenizer``, tokenizers' DecodeStream, for the
  TokenizersBackend every family folder loads as), or ``SlowIncrementalDetokenizer``
  (``detokenize_incrementally``, ``--detokenizer slow``: what from_new_request picks for a tokenizer
  that is not a TokenizersBackend, given this family's), primed with the prompt ids; each ``add``
  is one engine step, ``update(ids, stop_terminated=False)`` then ``get_next_output_text(finished=False,
  delta=True)`` as ``RequestState.make_request_output`` reads it, ``flush`` the finished request's rest.
- stops: the same detokenizer class's stop-string check, fed each text delta as one step's text.
- chat: the server's chat preparation of a ``ChatCompletionRequest`` built from the case (its
  pydantic validation, ``build_chat_params`` with the server's ``--chat-template``, the tool dicts
  ``preprocess_chat`` adds, then ``HfRenderer.render_messages``: ``parse_chat_messages`` in the
  content format ``resolve_chat_template_content_format`` detects, and ``safe_apply_chat_template``
  with the kwargs ``resolve_chat_template_kwargs`` keeps), text as rendered and ids as the renderer
  encodes that text. The template is the server's own (``--chat-template``, or the tokenizer's),
  since a server refuses a request's template unless trusted; the case's variables are the
  request's ``chat_template_kwargs``, ``sanitize_control_tokens`` among them (the server has no
  option of its own for it). ``render_chat`` runs with a tokenizer of no special tokens, as the
  oracle does. The template's own exception, which the server wraps in a VLLMValidationError (its
  400 answer), is reported as what was raised; a request refused by validation raises pydantic's
  ValidationError.
- tools: the ``Parser`` the server composes (``ParserManager.get_parser``) from the tool and
  reasoning parsers a server would be started with for the format (PARSERS), driven through the
  server's own ``ChatStreamProcessor`` (streaming) and ``Parser.parse`` plus
  ``assemble_chat_message_fields`` (whole). The parser's tokenizer is ``--tools-base``'s with the
  format's markers added as special tokens, as a real model's tokenizer has them (MARKERS), so
  token-id-based parsers see one id per marker; each streamed delta carries its text's ids and a
  marker a composed parser reads is never cut between deltas (the server's deltas are whole
  tokens): the reasoning markers (REASONING_MARKERS) only where a reasoning parser is composed,
  so with reasoning off '<th' is streamed as it comes, as the server streams it.

Server entry point: ``vllm serve``'s OpenAI front end, per component: the tokenizer
``get_tokenizer`` loads, the output processor's ``IncrementalDetokenizer.from_new_request`` and its
``update``/``get_next_output_text`` per step (stops: the same detokenizer's check), chat
``OpenAIServingChat``'s preparation (``build_chat_params``, ``HfRenderer.render_messages``), tools
``ChatStreamProcessor.step`` per delta with the delta's token ids and the prompt's ids (the parser
reads the prompt's reasoning state from them), the last step carrying the end-of-turn id and a
finish reason (the parser's ``finalize_generation`` and flush run there), and ``Parser.parse`` plus
``assemble_chat_message_fields`` for a whole response.

    -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
    <- {"id": 3, "result": [13048]}
"""
from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from protocol_loop import Handles, die_with_parent, serve, tokenizer_ops

os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")  # vLLM's info lines go to stdout: the protocol's channel

import tokenizers  # noqa: E402
import transformers.utils.chat_template_utils as hf_chat_utils  # noqa: E402
import vllm  # noqa: E402
from vllm.entrypoints.generate.base.protocol import ToolCall  # noqa: E402
from vllm.entrypoints.openai.chat_completion.message_assembly import assemble_chat_message_fields  # noqa: E402
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest, ChatMessage  # noqa: E402
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor  # noqa: E402
from vllm.exceptions import VLLMValidationError  # noqa: E402
from vllm.parser import ParserManager  # noqa: E402
from vllm.renderers.hf import HfRenderer  # noqa: E402
from vllm.renderers.params import merge_kwargs  # noqa: E402
from vllm.renderers.chat_utils import make_tool_call_id  # noqa: E402
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.tokenizers import get_tokenizer  # noqa: E402
from vllm.v1.engine.detokenizer import (  # noqa: E402
    BaseIncrementalDetokenizer,
    IncrementalDetokenizer,
    SlowIncrementalDetokenizer,
)

# How a request's detokenizer is made: the server's own choice, or the slow path it takes for a
# tokenizer that is not a TokenizersBackend.
DETOKENIZERS = {"fast": IncrementalDetokenizer.from_new_request, "slow": SlowIncrementalDetokenizer}
THINK = ("<think>", "</think>")
DEEPSEEK = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
            "<｜tool▁sep｜>")
# The format's markers, special tokens in its models' tokenizers.
MARKERS: dict[str, tuple[str, ...]] = {
    "hermes": ("<tool_call>", "</tool_call>", *THINK),
    "qwen3_coder": ("<tool_call>", "</tool_call>", *THINK),
    "llama3_json": ("<|python_tag|>",),
    "mistral": ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"),
    "deepseek_r1": (*DEEPSEEK, *THINK),
    "deepseek_v31": (*DEEPSEEK, *THINK),
    "gpt_oss": ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>"),
    "kimi_k2": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                "<|tool_call_argument_begin|>", "<|tool_call_end|>", *THINK),
    "glm45": ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", *THINK),
    "minimax_m2": ("<minimax:tool_call>", "</minimax:tool_call>", *THINK),
}
# Which of a format's markers only its reasoning parser reads (THINK where not named).
REASONING_MARKERS: dict[str, tuple[str, ...]] = {"mistral": ("[THINK]", "[/THINK]"), "llama3_json": ()}
# (--tool-call-parser, --reasoning-parser) a server of the format's models runs with; gpt_oss's
# model type makes the server compose the Harmony parser.
PARSERS: dict[str, tuple[str, str | None]] = {
    "hermes": ("hermes", "qwen3"), "qwen3_coder": ("qwen3_coder", "qwen3"), "llama3_json": ("llama3_json", None),
    "mistral": ("mistral", "mistral"), "deepseek_r1": ("deepseek_v3", "deepseek_r1"),
    "deepseek_v31": ("deepseek_v31", "deepseek_v3"), "gpt_oss": ("openai", "openai_gptoss"),
    "kimi_k2": ("kimi_k2", "kimi_k2"), "glm45": ("glm45", "glm45"), "minimax_m2": ("minimax_m2", "minimax_m2"),
}
HARMONY_FORMATS = {"gpt_oss"}
# Formats whose vLLM parser cannot run here, and why (raised as the answer to every request of it).
REFUSED_FORMATS = {"gpt_oss": "vLLM's Harmony parser reads ids of openai_harmony's o200k_harmony encoding, "
                              "which no tokenizer here has"}
# What a prompt that left the model inside reasoning ends with (starts_in_reasoning).
REASONING_OPEN = {"mistral": "[THINK]", "gpt_oss": "<|start|>assistant<|channel|>analysis<|message|>",
                  "llama3_json": ""}
PROMPT = "Hi"  # the user turn of every parsed request (the parsers read only its ids' reasoning state)


def request_of(prompt_ids: list[int], sampling: SamplingParams) -> SimpleNamespace:
    """What the v1 detokenizers read of an EngineCoreRequest."""
    return SimpleNamespace(request_id="textbound", sampling_params=sampling, prompt_token_ids=list(prompt_ids),
                           prompt_embeds=None)


class TextSteps(BaseIncrementalDetokenizer):
    """vLLM's stop-string check over text: each ``add`` is one engine step whose token decodes to the
    given delta."""

    def __init__(self, stops: list[str], include_stop: bool):
        sampling = SamplingParams(stop=stops, include_stop_str_in_output=include_stop)
        super().__init__(request_of([], sampling))
        self._delta, self.stop_string = "", None

    def decode_next(self, next_token_id: int) -> str:
        return self._delta

    def add(self, delta: str) -> dict:
        if self.stop_string is not None:  # the request finished: nothing more is streamed
            return {"text": "", "stopped": True, "stop_string": self.stop_string}
        self._delta = delta
        self.stop_string = self.update([0], stop_terminated=False)
        stopped = self.stop_string is not None
        return {"text": self.get_next_output_text(finished=stopped, delta=True), "stopped": stopped,
                "stop_string": self.stop_string}

    def finish(self) -> str:
        return self.get_next_output_text(finished=True, delta=True)


class Detokenizer:
    def __init__(self, kind, tokenizer, skip_special_tokens: bool, prompt_ids: list[int]):
        sampling = SamplingParams(skip_special_tokens=skip_special_tokens)
        self.steps = kind(tokenizer, request_of(prompt_ids, sampling))
        # vLLM never streams the prompt: it takes all of it as shown (the slow path's offsets start
        # past it), so the prompt's decode is what was shown before the first step.
        self.prompt_text = tokenizer.decode(prompt_ids, skip_special_tokens=skip_special_tokens)
        self.text = ""

    def add(self, ids: list[int]) -> str:
        self.steps.update(list(ids), stop_terminated=False)
        return self._shown(self.steps.get_next_output_text(finished=False, delta=True))

    def flush(self) -> str:
        return self._shown(self.steps.get_next_output_text(finished=True, delta=True))

    def _shown(self, delta: str) -> str:
        self.text += delta
        return delta


def format_tokenizer(base: Path, fmt: str, into: Path):
    """``base``'s tokenizer with the format's markers added as special tokens, loaded as vLLM loads one."""
    tokenizer = tokenizers.Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.add_special_tokens([tokenizers.AddedToken(m, special=True, normalized=False) for m in MARKERS[fmt]])
    folder = into / fmt
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    config = json.loads((base / "tokenizer_config.json").read_text(encoding="utf-8"))
    config.pop("added_tokens_decoder", None)  # the added tokens are tokenizer.json's
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return get_tokenizer(str(folder))


class Parsing:
    """One request's parser, as the server makes it and feeds it."""

    def __init__(self, tokenizer, fmt: str, tools, reasoning: bool, starts_in_reasoning: bool):
        if fmt in REFUSED_FORMATS:
            raise ValueError(f"format {fmt!r} not provided: {REFUSED_FORMATS[fmt]}")
        tool_parser, reasoning_parser = PARSERS[fmt]
        self.tokenizer = tokenizer
        read_by_reasoning = REASONING_MARKERS.get(fmt, THINK)
        self.held_markers = tuple(m for m in MARKERS[fmt] if reasoning or m not in read_by_reasoning)
        self.parser_cls = ParserManager.get_parser(
            tool_parser_name=tool_parser, reasoning_parser_name=reasoning_parser if reasoning else None,
            enable_auto_tools=True, is_harmony=fmt in HARMONY_FORMATS, tokenizer=tokenizer)
        self.request = ChatCompletionRequest(messages=[{"role": "user", "content": PROMPT}], model="textbound",
                                             tools=tools, tool_choice="auto" if tools else None)
        # Without tools a server parses no calls at all (tool_choice none): past the request's
        # validation, the parsers are asked anyway, so that what they read can be compared.
        self.request.tool_choice = "auto"
        # A prompt left inside reasoning is what a request for thinking renders (the reasoning parsers
        # of DeepSeek V3.1, GLM and Kimi read this flag; Qwen3's thinks unless told not to).
        thinking = {"thinking": True} if starts_in_reasoning else {}
        self.parser = self.parser_cls(tokenizer, self.request.tools, chat_template_kwargs=thinking, model_config=None)
        opening = REASONING_OPEN.get(fmt, "<think>") if starts_in_reasoning else ""
        self.prompt_ids = tokenizer.encode(PROMPT + opening, add_special_tokens=False)
        self.processor = ChatStreamProcessor(self.request, self.parser, enable_auto_tools=True,
                                             parser_cls=self.parser_cls)
        self.processor.keep_tool_calls = True
        self.pending = ""
        end = tokenizer.eos_token_id
        self.end_ids = [end] if end is not None else []

    def feed(self, text: str, final: bool) -> list[dict]:
        self.pending += text
        piece = self.pending if final else self.pending[:len(self.pending) - self._marker_tail(self.pending)]
        self.pending = self.pending[len(piece):]
        deltas = []
        if piece:
            step = self.processor.step(piece, self.tokenizer.encode(piece, add_special_tokens=False), None,
                                       self.prompt_ids)
            deltas += openai_deltas(step.delta)
        if final:  # the last step is the end-of-turn token, which decodes to nothing (a skipped special)
            deltas += openai_deltas(self.processor.step("", self.end_ids, "stop", self.prompt_ids).delta)
        return deltas

    def _marker_tail(self, text: str) -> int:
        """The longest end of ``text`` that begins a marker a composed parser reads without being one:
        held for the next delta. With reasoning off, hermes' '<th' -> 0 (no parser reads '<think>'),
        '<tool' -> 5."""
        return max((n for marker in self.held_markers for n in range(1, len(marker)) if text.endswith(marker[:n])),
                   default=0)

    def whole(self, text: str) -> dict:
        self.parser.set_prompt_token_ids(self.prompt_ids)
        ids = self.tokenizer.encode(text, add_special_tokens=False) + self.end_ids
        reasoning, content, calls = self.parser.parse(text, self.request, enable_auto_tools=True,
                                                      model_output_token_ids=ids)
        if self.request.tools:
            fields = assemble_chat_message_fields(self.request, reasoning, content, calls, enable_auto_tools=True,
                                                  parser_cls=self.parser_cls)
            reasoning, content, tool_calls = fields
        else:
            tool_calls = [ToolCall(id=call.id or make_tool_call_id(), function=call) for call in calls or []]
        message = ChatMessage(role="assistant", reasoning=reasoning, content=content, tool_calls=tool_calls)
        return openai_message(message.model_dump(exclude_none=False))


class FrozenClock:
    """transformers' ``strftime_now`` reading the harness's clock: it calls its module's
    ``datetime.now()``, which this stands in for while a request renders."""

    def __init__(self, now: str):
        self.moment = datetime.datetime.fromisoformat(now)

    def now(self, tz=None) -> datetime.datetime:
        return self.moment

    def __enter__(self):
        self._saved, hf_chat_utils.datetime = hf_chat_utils.datetime, self
        return self

    def __exit__(self, *exc_info):
        hf_chat_utils.datetime = self._saved


def served_model_config(tokenizer) -> SimpleNamespace:
    """What the chat preparation reads of a server's ModelConfig: a text-only model whose folder is
    the tokenizer's (no processor, no multimodal inputs, no prompt embeds, no template fallback)."""
    name = tokenizer.name_or_path
    return SimpleNamespace(model=name, tokenizer=name, revision=None, tokenizer_revision=None, code_revision=None,
                           trust_remote_code=False, enable_prompt_embeds=False, multimodal_config=None,
                           is_multimodal_model=False, hf_config=SimpleNamespace(model_type=None),
                           allowed_local_media_path="", allowed_media_domains=None)


def template_error(exc: VLLMValidationError) -> Exception:
    """The template's own exception behind the server's 400 (safe_apply_chat_template wraps it);
    a refusal of vLLM's own, with nothing behind it, is itself."""
    cause = exc.__cause__
    return cause if isinstance(cause, Exception) and not isinstance(cause, VLLMValidationError) else exc


class ChatServer:
    """The server's chat preparation for one tokenizer, as ``OnlineRenderer.preprocess_chat`` and
    ``HfRenderer.render_messages`` run it (this object is the renderer they read)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.model_config = served_model_config(tokenizer)
        self.use_unified_vision_chunk = False

    def get_tokenizer(self):
        return self.tokenizer

    def request(self, r: dict, messages: list, sanitize: bool = False) -> ChatCompletionRequest:
        kwargs = {**r["variables"], **({"sanitize_control_tokens": True} if sanitize else {})}
        return ChatCompletionRequest(model="textbound", messages=messages, tools=r["tools"], documents=r["documents"],
                                     add_generation_prompt=r["add_generation_prompt"],
                                     continue_final_message=r["continue_final_message"],
                                     chat_template_kwargs=kwargs or None)

    def render(self, request: ChatCompletionRequest, server_template: str | None, now: str) -> str:
        tool_dicts = None if request.tools is None else [tool.model_dump() for tool in request.tools]
        params = request.build_chat_params(server_template, "auto").with_defaults(
            merge_kwargs(None, {"tools": tool_dicts, "tokenize": False}))
        try:
            with FrozenClock(now):
                _, prompt = HfRenderer.render_messages(self, request.messages, params)
        except VLLMValidationError as exc:
            raise template_error(exc) from None
        return prompt["prompt"]

    def ids(self, r: dict) -> list[int]:
        request = self.request(r, r["conversation"], r["sanitize_control_tokens"])
        text = self.render(request, r["chat_template"], r["now"])
        return self.tokenizer(text, add_special_tokens=request.add_special_tokens)["input_ids"]


def bare_tokenizer():
    """A tokenizer with no special tokens, as the oracle renders text with: the template's variables
    are the request's alone."""
    from transformers import PreTrainedTokenizerFast
    return PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel({"x": 0})))


def openai_deltas(delta) -> list[dict]:
    """A vLLM DeltaMessage as the protocol's deltas (reasoning, content, then calls)."""
    if delta is None:
        return []
    found = []
    if delta.reasoning:
        found.append({"reasoning_content": delta.reasoning})
    if delta.content:
        found.append({"content": delta.content})
    for call in delta.tool_calls or []:
        piece = {k: v for k, v in call.model_dump().items() if v is not None}
        if "function" in piece:
            piece["function"] = {k: v for k, v in piece["function"].items() if v is not None}
        found.append({"tool_calls": [piece]})
    return found


def openai_message(dumped: dict) -> dict:
    message = {"role": "assistant", "content": dumped.get("content"), "reasoning_content": dumped.get("reasoning")}
    if dumped.get("tool_calls"):
        message["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
            "name": c["function"]["name"], "arguments": c["function"]["arguments"]}} for c in dumped["tool_calls"]]
    return message


class Engine:
    def __init__(self, detokenizer: str, tools_base: Path | None):
        self.detokenizer = DETOKENIZERS[detokenizer]
        self.detokenizer_name = detokenizer
        self.tools_base = tools_base
        self.tokenizer = None
        self.chat: ChatServer | None = None
        self._bare_chat: ChatServer | None = None
        self.handles = Handles()
        self._tool_tokenizers: dict[str, object] = {}
        self._scratch = tempfile.TemporaryDirectory(prefix="textbound-vllm-")

    def _tok(self):
        if self.tokenizer is None:
            raise ValueError("no family loaded: this request needs a family's process")
        return self.tokenizer

    def tool_tokenizer(self, fmt: str):
        if self.tools_base is None:
            raise ValueError("tool parsing needs --tools-base (a family folder whose tokenizer the parsers use)")
        if fmt not in PARSERS:
            raise ValueError(f"vLLM has no parser for format {fmt!r}")
        if fmt not in self._tool_tokenizers:
            self._tool_tokenizers[fmt] = format_tokenizer(self.tools_base, fmt, Path(self._scratch.name))
        return self._tool_tokenizers[fmt]

    def parsing(self, r: dict) -> Parsing:
        return Parsing(self.tool_tokenizer(r["format"]), r["format"], r["tools"], r["reasoning"],
                       r["starts_in_reasoning"])

    def ops(self) -> dict:
        h = self.handles
        ops = {
            "load": self.load,
            **tokenizer_ops(self._tok),
            "detokenizer_new": self.detokenizer_new,
            "detokenizer_add": lambda r: h[r["handle"]].add(r["ids"]),
            "detokenizer_flush": lambda r: h[r["handle"]].flush(),
            "detokenizer_text": lambda r: h[r["handle"]].text,
            "stops_new": lambda r: h.keep(TextSteps(r["stops"], r["include_stop"])),
            "stops_add": lambda r: h[r["handle"]].add(r["delta"]),
            "stops_finish": lambda r: h[r["handle"]].finish(),
            "release": lambda r: h.release(r["handles"]),
            "render_chat": self.render_chat,
            "apply_chat_template": lambda r: self._chat().ids(r),
        }
        if self.tools_base is not None:
            ops.update({
                "parser_new": lambda r: h.keep(self.parsing(r)),
                "parser_feed": lambda r: h[r["handle"]].feed(r["text"], r["final"]),
                "parse_response": lambda r: self.parsing(r).whole(r["text"]),
            })
        ops["hello"] = lambda r: {"engine": f"vllm ({self.detokenizer_name} detokenizer)", "version": vllm.__version__,
                                  "ops": sorted(set(ops) - {"hello"})}
        return ops

    def load(self, r: dict) -> None:
        self.tokenizer = get_tokenizer(r["path"])
        self.chat = ChatServer(self.tokenizer)

    def _chat(self) -> ChatServer:
        self._tok()
        return self.chat

    def render_chat(self, r: dict) -> str:
        if self._bare_chat is None:
            self._bare_chat = ChatServer(bare_tokenizer())
        return self._bare_chat.render(self._bare_chat.request(r, r["messages"]), r["template"], r["now"])

    def detokenizer_new(self, r: dict) -> dict:
        made = Detokenizer(self.detokenizer, self._tok(), r["skip_special_tokens"], r["prompt_ids"])
        return {"handle": self.handles.keep(made), "prompt_text": made.prompt_text}


def main() -> None:
    die_with_parent()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detokenizer", choices=sorted(DETOKENIZERS), default="fast")
    parser.add_argument("--tools-base", type=Path, help="family folder whose tokenizer the tool parsers get")
    options = parser.parse_args()
    logging.disable(logging.WARNING)
    protocol_out = sys.stdout
    sys.stdout = sys.stderr  # anything vLLM prints must not reach the protocol's channel
    serve(sys.stdin, protocol_out, Engine(options.detokenizer, options.tools_base).ops())


if __name__ == "__main__":
    main()
