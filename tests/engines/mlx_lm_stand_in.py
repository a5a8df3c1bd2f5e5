"""A stand-in for the few names of mlx-lm that textbound.adapters.mlx_lm_adapter calls, so that its
plumbing is tested where mlx-lm is not installed (``install(monkeypatch)`` puts it in sys.modules as
``mlx_lm``). It behaves as a simple server would, not as mlx-lm does:

- ``utils.load_tokenizer``: transformers' tokenizer of the folder; the tool parser is inferred from
  the chat template by PARSER_MARKERS; its detokenizer shows the decode of every id so far, and
  holds a trailing space until ``finalize`` (so that ``flush`` has something to give).
- ``server.process_message_content``: a None content becomes "" (one of the server's steps).
- ``server.APIHandler.handle_completion``: each step's text is a delta, reasoning when the request
  starts inside reasoning, else content; a whole message gathers them; calls are never parsed.
"""
from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

PARSER_MARKERS = (("<tool_call>\n<function=", "qwen3_coder"), ("<arg_key>", "glm47"), ("[TOOL_CALLS]", "mistral"),
                  ("<|tool_calls_section_begin|>", "kimi_k2"), ("<minimax:tool_call>", "minimax_m2"),
                  ("tool_call.name", "json_tools"))


class Detokenizer:
    def __init__(self, tokenizer):
        self.tokenizer, self.tokens, self.offset, self.finished = tokenizer, [], 0, False

    def add_token(self, token):
        self.tokens.append(token)

    def finalize(self):
        self.finished = True

    @property
    def last_segment(self):
        text = self.tokenizer.decode(self.tokens)
        text = text if self.finished else text.rstrip(" ")
        segment, self.offset = text[self.offset:], max(self.offset, len(text))
        return segment


class TokenizerWrapper:
    def apply_chat_template(self, *args, **kwargs):
        return self._tokenizer.apply_chat_template(*args, return_dict=False, **kwargs)

    def __init__(self, tokenizer, parser):
        self._tokenizer, self.init_kwargs = tokenizer, {"tool_parser_type": parser}
        self.has_thinking = "<think>" in tokenizer.get_vocab()
        self.has_tool_calling, self.tool_parser = parser is not None, None

    @property
    def detokenizer(self):
        return Detokenizer(self._tokenizer)

    def __len__(self):
        return len(self._tokenizer)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def load_tokenizer(folder):
    from transformers import AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    template = tokenizer.chat_template or ""
    return TokenizerWrapper(tokenizer, next((parser for marker, parser in PARSER_MARKERS if marker in template), None))


def process_message_content(messages):
    for message in messages:
        if message.get("content") is None:
            message["content"] = ""


@dataclass
class GenerationContext:
    has_tool_calling: bool
    has_thinking: bool
    tool_parser: Callable
    text_sm: Any
    initial_state: str
    prompt: list


@dataclass
class Response:
    text: str
    token: int
    logprob: float
    finish_reason: str | None
    top_tokens: tuple


@dataclass
class CompletionRequest:
    request_type: str
    prompt: str
    messages: list
    tools: list | None
    role_mapping: dict | None


class APIHandler:
    def handle_completion(self, request, stop_words):
        ctx, responses = self.response_generator.generate(request, None, progress_callback=None)
        key = "reasoning" if ctx.initial_state == "reasoning" else "content"
        self._set_stream_headers(200) if self.stream else self._set_completion_headers(200)
        self.end_headers()
        gathered = ""
        for response in responses:
            if self.stream and response.text:
                self._write({"choices": [{"delta": {"role": "assistant", key: response.text}}]})
            gathered += response.text
        if self.stream:
            self.wfile.write(b"data: [DONE]\n\n")
        else:
            self.send_header("Content-Length", "0")
            self.wfile.write(json.dumps({"choices": [{"message": {"role": "assistant", key: gathered or None}}]}).encode())

    def _write(self, event):
        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())


def install(monkeypatch) -> None:
    """Makes ``import mlx_lm`` (and its server, generate and utils) this stand-in for one test."""
    package = types.ModuleType("mlx_lm")
    package.__version__, package.__path__ = "0.0-stand-in", []
    parts = {"server": {"APIHandler": APIHandler, "GenerationContext": GenerationContext, "Response": Response,
                        "CompletionRequest": CompletionRequest, "process_message_content": process_message_content},
             "generate": {"make_text_state_machine": lambda tokenizer, stop_words: None},
             "utils": {"load_tokenizer": load_tokenizer}}
    monkeypatch.setitem(sys.modules, "mlx_lm", package)
    for name, members in parts.items():
        module = types.ModuleType(f"mlx_lm.{name}")
        module.__dict__.update(members)
        setattr(package, name, module)
        monkeypatch.setitem(sys.modules, f"mlx_lm.{name}", module)
