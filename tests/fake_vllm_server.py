"""A fake of vLLM 0.33's OpenAI-compatible server, standard library only, with switchable bugs.

Its text boundary is impl's (the family folder's tokenizer, chat template, incremental
detokenizer, stop checker and hermes tool-call parser), so a clean fake agrees with the oracles
wherever impl does, and each bug makes it wrong in one way a real server has been::

    with FakeVllmServer(build_family("qwen"), bugs=frozenset({"stop_late"})) as server:
        ServerClient(server.url, timeout=1).post_json("/tokenize", {"prompt": "Hi"})  # {'count': 1, ...}

Field names follow vLLM's sources (vllm-project/vllm):
- ``vllm/entrypoints/serve/tokenize/protocol.py``: TokenizeCompletionRequest (``prompt``,
  ``add_special_tokens`` default True, ``return_token_strs``), TokenizeChatRequest (``messages``,
  ``add_generation_prompt`` default True, ``continue_final_message``, ``add_special_tokens`` default
  False, ``chat_template``, ``chat_template_kwargs``, ``tools``), TokenizeResponse (``count``,
  ``max_model_len``, ``tokens``, ``token_strs``), DetokenizeRequest (``tokens``) and
  DetokenizeResponse (``prompt``);
- ``vllm/entrypoints/openai/completion/protocol.py``: ``return_token_ids``; each choice, streamed or
  not, has ``text``, ``finish_reason``, ``stop_reason`` (the stop string or id, None otherwise),
  ``token_ids`` and ``prompt_token_ids`` (streamed: in the first chunk only);
- ``vllm/entrypoints/openai/chat_completion/protocol.py``: the chat choice's ``message`` (``content``,
  ``reasoning``, ``tool_calls`` left out when empty), ``stop_reason`` and ``token_ids`` per choice,
  ``prompt_token_ids`` on the response (streamed: the first chunk), ``delta`` in stream chunks.
Errors are ``{"error": {"message", "type", "param", "code"}}`` with status 400 or 404.

Where it is simpler than vLLM (on purpose, and harmless to what it tests):
- generation samples ``random.Random(seed)`` (seed None counts as 0) over the vocabulary, special
  tokens rarely and never EOS, and sometimes spells a non-ASCII character as lone byte tokens so
  characters split across ids; temperature is ignored. So the same request gives the same ids,
  streamed or not;
- ``tool_choice`` "required" or a named function, and ``response_format`` json_schema (or
  json_object), generate a seeded instance of the schema written out whole (``pattern`` and
  ``format`` are ignored), as a hermes ``<tool_call>`` block for tools (vLLM instead constrains
  "required" to a JSON list of calls and a named function to its bare arguments); the call is
  parsed back by impl's hermes parser, and finish_reason is "tool_calls" whenever there are calls;
- a forced output that ends before max_tokens ends with finish_reason "stop" and no EOS id;
- one stream chunk per generated token (each with that token's id), or ``tokens_per_chunk`` of
  them (vLLM's --stream-interval), then a last chunk carrying the held-back text and
  finish_reason; with ``n`` > 1 the choices' chunks are sent in turn, each choice seeded apart;
- steering (``allowed_token_ids``, or a ``logit_bias`` of 50 or more) samples the steered ids only;
  logprob token strings are each token's share of the decoded text (vLLM after vllm#34875), echo
  shows the prompt's decode, ``prompt_logprobs`` give None then each prompt id's own entry, and a
  stream sends ``usage`` last where ``stream_options.include_usage`` asks it.

Bugs (``BUGS``; several may be named at once). The misbehaviour bugs touch the POST endpoints
only, so ``GET /version`` and ``GET /v1/models`` still answer and a run can be set up.
"""
from __future__ import annotations

import itertools
import json
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from textbound import impl

VERSION = "0.33.0+fake"
MAX_MODEL_LEN = 4096
# A non-ASCII character spelled as lone byte tokens, so characters split across ids.
SPLIT_CHARACTERS = ("é", "€", "😀")
REPLACEMENT = "\ufffd"
STEERED_BIAS = 50  # a logit_bias at least this large steers to its id (the checks send 100)

OUTPUT_BUGS = frozenset({
    "prompt_ids",  # /tokenize (and text prompts) drop the last id (change a lone one)
    "chat_ids",  # the chat prompt is rendered with an extra "\n" at its end
    "stream_text",  # the first chunk starting with a letter or digit doubles it
    "early_replacement",  # deltas are decode(ids so far) minus what was shown: U+FFFD shown mid-character
    "stream_vs_whole",  # the non-streamed text loses its last character (or gains " ")
    "stop_late",  # a stopped text leaks the stop string's first character
    "stop_reason",  # stop_reason null where a stop string ended generation
    "tool_deltas",  # the first streamed arguments fragment is sent twice
    "invalid_arguments",  # generated tool arguments break the schema
    "invalid_json_output",  # response_format output loses its last character
})
# The request shapes servers break on (issue 38): each caught by a property of checks/server_shapes.py
# (or of server_output.py on steered output).
SHAPE_BUGS = frozenset({
    "decode_alone",  # each token decoded alone, without the text before it
    "tail_dropped",  # the detokenizer's held tail is never sent at the end of a stream
    "prompt_leak",  # a prompt ending mid-character: its last settled character leaks into the first delta
    "shared_choices",  # n > 1: the choices share one detokenizer, fed in turn (vllm#38158, sglang#3754)
    "concurrent_state",  # requests in flight together share one detokenizer
    "concurrent_seed",  # requests in flight together sample with another seed than asked
    "logprob_pieces",  # logprob token strings decode each id alone: "" for a character's first bytes (vllm#34875)
    "echo_text",  # echo drops the first prompt token's text (vllm#58007)
    "prompt_logprobs_shift",  # prompt logprobs drop the first prompt token's entry (vllm#27477)
    "finish_length",  # finish_reason "stop" where max_tokens cut the output
    "usage_count",  # usage.completion_tokens one more than the ids
    "tool_calls_at_length",  # finish_reason "tool_calls" for a call cut at max_tokens (vllm#58228)
})
# A server taking the steering fields and sampling as if they were not there: no property's bug, the
# features probe's finding (the run's notes say its output side ran unsteered).
STEERING_IGNORED = "steering_ignored"
MISBEHAVIOUR_BUGS = frozenset({
    "hang",  # never answers
    "close",  # closes the connection mid-response
    "half_event",  # a stream ends (cleanly, at the HTTP level) in the middle of an SSE event
    "no_done",  # a stream ends after its last chunk without data: [DONE] (transformers serve 5.25)
    "status_500",  # answers 500
    "bad_json",  # answers a body that is not JSON
    "huge_body",  # answers an endless body
    "redirect",  # answers 302 to another URL
})
BUGS = OUTPUT_BUGS | SHAPE_BUGS | MISBEHAVIOUR_BUGS | {STEERING_IGNORED}
OVERLAP_WAIT = 0.1  # seconds a concurrent_state request stays in flight, so that concurrent ones meet
CONCURRENCY_BUGS = frozenset({"concurrent_state", "concurrent_seed"})
REDIRECT_TARGET = "http://127.0.0.1:9/elsewhere"
POLL_INTERVAL = 0.02  # seconds between the serving thread's looks at shutdown: a quick stop


class BadRequest(Exception):
    """A request vLLM would answer with 400."""


class FakeVllmServer:
    """The fake, serving ``family_dir`` as ``model`` on 127.0.0.1 (a free port) while in its ``with``.

    >>> with FakeVllmServer(build_family("qwen")) as server:   # doctest: +SKIP
    ...     server.url
    'http://127.0.0.1:40123'
    """

    def __init__(self, family_dir: str | Path, bugs: frozenset[str] | set[str] = frozenset(), model: str = "fake",
                 tokens_per_chunk: int = 1):
        unknown = set(bugs) - BUGS
        if unknown:
            raise ValueError(f"unknown fake server bugs {sorted(unknown)} (known: {', '.join(sorted(BUGS))})")
        self.engine = FakeEngine(impl.Tokenizer.from_dir(family_dir), frozenset(bugs), model, str(family_dir))
        self.engine.tokens_per_chunk = tokens_per_chunk  # vLLM's --stream-interval: several tokens a chunk
        self.stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def __enter__(self) -> "FakeVllmServer":
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.fake = self
        self._httpd = httpd
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": POLL_INTERVAL},
                                        name="fake-vllm", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


@dataclass
class Step:
    """One generated token: its id, the text it released and its share of the decode (its logprob
    entry's token string: the text the detokenizer gave for it, before the stop checker)."""

    ids: list[int]
    text: str
    piece: str = ""


@dataclass
class Output:
    """A whole generation: its steps, the text released at the end, and why it ended."""

    steps: list[Step]
    tail: str
    finish_reason: str
    stop_reason: str | None
    tools: list[dict] | None = None
    prompt_ids: list[int] = field(default_factory=list)
    prompt_text: str = ""  # what echo shows

    @property
    def text(self) -> str:
        return "".join(step.text for step in self.steps) + self.tail

    @property
    def ids(self) -> list[int]:
        return [token_id for step in self.steps for token_id in step.ids]


class FakeEngine:
    """The fake's requests to answers, HTTP aside."""

    def __init__(self, tokenizer, bugs: frozenset[str], model: str, root: str):
        self.tokenizer, self.bugs, self.model, self.root = tokenizer, bugs, model, root
        specials = tokenizer.added.special_contents
        ids = [i for i in range(tokenizer.max_id + 1) if tokenizer.id_to_token(i) is not None]
        self.special_ids = [i for i in ids if tokenizer.id_to_token(i) in specials and i != tokenizer.eos_token_id]
        self.plain_ids = [i for i in ids if tokenizer.id_to_token(i) not in specials]
        lone = {}
        for i in self.plain_ids:
            data = tokenizer.token_bytes(i)
            if len(data) == 1:
                lone.setdefault(data, i)
        self.tokens_per_chunk = 1
        self.lock, self.in_flight, self.shared_delta = threading.Lock(), 0, ""
        self.split_spellings = [[lone[bytes([b])] for b in char.encode()] for char in SPLIT_CHARACTERS
                                if all(bytes([b]) in lone for b in char.encode())]

    # -- the endpoints -------------------------------------------------------------------------

    def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "vllm",
                                            "root": self.root, "parent": None, "max_model_len": MAX_MODEL_LEN}]}

    def tokenize(self, body: dict) -> dict:
        if "messages" in body:
            ids = self.chat_prompt_ids(body)
        else:
            ids = self.prompt_ids(_field(body, "prompt", str), body.get("add_special_tokens", True))
        strs = [self.tokenizer.id_to_token(i) for i in ids] if body.get("return_token_strs") else None
        return {"count": len(ids), "max_model_len": MAX_MODEL_LEN, "tokens": ids, "token_strs": strs}

    def detokenize(self, body: dict) -> dict:
        ids = _field(body, "tokens", list)
        unknown = [i for i in ids if not isinstance(i, int) or self.tokenizer.id_to_token(i) is None]
        if unknown:
            raise BadRequest(f"tokens: not token ids of this model: {unknown[:5]}")
        return {"prompt": self.tokenizer.decode(ids)}

    def prompt_ids(self, text: str, add_special_tokens: bool) -> list[int]:
        ids = self.tokenizer.encode(text, add_special_tokens=add_special_tokens)
        if "prompt_ids" in self.bugs and ids:
            ids = ids[:-1] if len(ids) > 1 else [(ids[0] + 1) % (self.tokenizer.max_id + 1)]
        return ids

    def chat_prompt_ids(self, body: dict) -> list[int]:
        messages = _field(body, "messages", list)
        if body.get("continue_final_message") and body.get("add_generation_prompt", True):
            raise BadRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
        arguments = dict(body.get("chat_template_kwargs") or {})
        arguments.update(tools=body.get("tools"), chat_template=body.get("chat_template"),
                         add_generation_prompt=body.get("add_generation_prompt", True),
                         continue_final_message=body.get("continue_final_message", False))
        special = body.get("add_special_tokens", False)  # on top of the template's own
        try:
            if "chat_ids" in self.bugs or special:
                text = self.tokenizer.apply_chat_template(messages, tokenize=False, **arguments)
                return self.tokenizer.encode(text + ("\n" if "chat_ids" in self.bugs else ""),
                                             add_special_tokens=special)
            return list(self.tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **arguments))
        except Exception as exc:  # a template error is the request's fault, as vLLM answers it
            raise BadRequest(f"chat template: {type(exc).__name__}: {exc}") from exc

    def generate(self, body: dict, chat: bool) -> list[Output]:
        """Each choice's output (``n`` of them), generated in turn token by token."""
        if chat:
            prompt = self.chat_prompt_ids(body)
        else:
            given = body.get("prompt")
            if isinstance(given, str) and given:
                prompt = self.prompt_ids(given, body.get("add_special_tokens", True))
            elif isinstance(given, list) and given and all(isinstance(i, int) for i in given):
                prompt = given
            else:
                raise BadRequest("prompt: a non-empty string or list of ids is required")
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 16
        seed = body.get("seed") or 0
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else stops
        skip = body.get("skip_special_tokens", True)
        count, allowed = body.get("n") or 1, self.steered_ids(body)
        sources, tools = [], None
        for index in range(count):
            rng = random.Random(seed if index == 0 else f"{seed}/{index}")
            forced = self.forced_text(body, rng)
            text, tools = forced if forced is not None else (None, None)
            sources.append(iter(self.tokenizer.encode(text)) if text is not None else self.sampled(rng, allowed))
        detokenizers = self.detokenizers(prompt, skip, count)
        checkers = [impl.StopChecker(stops, include_stop=body.get("include_stop_str_in_output", False))
                    for _ in range(count)]
        steps, finishes = [[] for _ in range(count)], ["length"] * count
        active = set(range(count))
        for _ in range(max_tokens):
            for index in sorted(active):
                token_id = next(sources[index], None)
                if token_id is None:
                    finishes[index] = "stop"
                    active.discard(index)
                    continue
                piece = detokenizers[index].add([token_id])
                steps[index].append(Step([token_id], checkers[index].add(piece), piece))
                if checkers[index].stopped:
                    active.discard(index)
        return [self.finished(steps[index], detokenizers[index], checkers[index], finishes[index], tools, prompt, skip)
                for index in range(count)]

    def finished(self, steps: list[Step], detokenizer, checker, finish: str, tools, prompt: list[int],
                 skip: bool) -> Output:
        """One choice's output once its steps are generated: the held tail flushed, the stop's reason."""
        flushed = detokenizer.flush()
        if steps:
            steps[-1].piece += flushed
        tail = checker.add(flushed)
        if checker.stopped:
            finish = "stop"
            if "stop_late" in self.bugs:
                tail += checker.stop_string[:1]
        else:
            tail += checker.finish()
        if "finish_length" in self.bugs and finish == "length":
            finish = "stop"
        stop_reason = checker.stop_string if "stop_reason" not in self.bugs else None
        shown_prompt = prompt[1:] if "echo_text" in self.bugs else prompt
        output = Output(steps, tail, finish, stop_reason, tools, prompt,
                        self.tokenizer.decode(shown_prompt, skip_special_tokens=skip))
        if "prompt_leak" in self.bugs and steps:
            whole = self.tokenizer.decode(prompt, skip_special_tokens=skip)
            settled = whole.rstrip(REPLACEMENT)
            if settled != whole and settled:  # the prompt ends mid-character
                steps[0].text = settled[-1] + steps[0].text
        return output

    def detokenizers(self, prompt: list[int], skip: bool, count: int) -> list:
        """A detokenizer per choice (the bugs': one shared by all, or a naive one)."""
        try:
            if "early_replacement" in self.bugs:
                return [_NaiveDetokenizer(self.tokenizer, skip) for _ in range(count)]
            if "decode_alone" in self.bugs:
                return [_AloneDetokenizer(self.tokenizer, skip) for _ in range(count)]
            if "shared_choices" in self.bugs:
                return [impl.IncrementalDetokenizer(self.tokenizer, skip, prompt_ids=prompt)] * count
            return [impl.IncrementalDetokenizer(self.tokenizer, skip, prompt_ids=prompt) for _ in range(count)]
        except ValueError as exc:
            raise BadRequest(f"prompt: {exc}") from exc

    def steered_ids(self, body: dict) -> list[int]:
        """The ids ``allowed_token_ids`` (vLLM) or a large ``logit_bias`` (OpenAI) steer to; [] for none."""
        allowed = body.get("allowed_token_ids") or [int(i) for i, bias in (body.get("logit_bias") or {}).items()
                                                    if bias >= STEERED_BIAS]
        if STEERING_IGNORED in self.bugs:
            return []
        if not all(isinstance(i, int) and self.tokenizer.id_to_token(i) is not None for i in allowed):
            raise BadRequest(f"allowed_token_ids: not token ids of this model: {allowed[:5]}")
        return sorted(set(allowed) - {self.tokenizer.eos_token_id})

    def sampled(self, rng: random.Random, allowed: list[int]) -> Iterator[int]:
        """Seeded ids: the allowed ones where steered, else mostly plain tokens, a few special ones,
        some characters split into bytes."""
        while True:
            if allowed:
                yield rng.choice(allowed)
                continue
            roll = rng.random()
            if roll < 0.15 and self.split_spellings:
                yield from rng.choice(self.split_spellings)
            elif roll < 0.2 and self.special_ids:
                yield rng.choice(self.special_ids)
            else:
                yield rng.choice(self.plain_ids)

    def forced_text(self, body: dict, rng: random.Random) -> tuple[str, list[dict] | None] | None:
        """The output text a grammar would force (tool_choice, response_format), or None."""
        tools, choice = body.get("tools") or [], body.get("tool_choice")
        if tools and (choice == "required" or isinstance(choice, dict)):
            if isinstance(choice, dict):
                name = (choice.get("function") or {}).get("name")
                chosen = [tool for tool in tools if tool.get("function", {}).get("name") == name]
                if not chosen:
                    raise BadRequest(f"tool_choice: no tool named {name!r}")
                tool = chosen[0]
            else:
                tool = rng.choice(tools)
            schema = tool["function"].get("parameters") or {"type": "object"}
            arguments = schema_instance(schema, rng, schema)
            if "invalid_arguments" in self.bugs:
                arguments = _broken_instance(schema, arguments)
            call = json.dumps({"name": tool["function"]["name"], "arguments": arguments}, ensure_ascii=False)
            return f"<tool_call>\n{call}\n</tool_call>", tools
        response_format = body.get("response_format") or {}
        if response_format.get("type") in ("json_schema", "json_object"):
            schema = (response_format.get("json_schema") or {}).get("schema") or {"type": "object"}
            text = json.dumps(schema_instance(schema, rng, schema), ensure_ascii=False)
            return (text[:-1] if "invalid_json_output" in self.bugs else text), None
        return None

    # -- answers ---------------------------------------------------------------------------------

    def outputs(self, body: dict, chat: bool) -> list[Output]:
        """The request's outputs, through the concurrency bugs: a request in flight while another is
        takes the first delta the other left in the state they share (concurrent_state), or samples
        with another seed (concurrent_seed)."""
        if not self.bugs & CONCURRENCY_BUGS:
            return self.generate(body, chat)
        with self.lock:
            self.in_flight += 1
        try:
            time.sleep(OVERLAP_WAIT)  # so that requests sent together are in flight together
            with self.lock:
                together = self.in_flight > 1
            if together and "concurrent_seed" in self.bugs:
                body = {**body, "seed": (body.get("seed") or 0) + 1}
            outputs = self.generate(body, chat)
            steps = outputs[0].steps
            if "concurrent_state" in self.bugs and steps:
                with self.lock:
                    left, self.shared_delta = self.shared_delta, steps[0].text
                if together:
                    steps[0].text = left + steps[0].text
            return outputs
        finally:
            with self.lock:
                self.in_flight -= 1

    def whole_text(self, output: Output) -> str:
        text = output.text
        if "stream_vs_whole" in self.bugs:
            return text[:-1] if text else " "
        return text

    def finish_reason(self, output: Output, called: bool) -> str:
        """``tool_calls`` for a completed call; the tool_calls_at_length bug says it for a cut one too."""
        if called and (output.finish_reason == "stop" or "tool_calls_at_length" in self.bugs):
            return "tool_calls"
        return output.finish_reason

    def logprobs(self, steps: list[Step], chat: bool) -> dict:
        """vLLM's logprobs of ``steps``: each token's string is its share of the decode (after vllm#34875)."""
        pieces = [self.tokenizer.decode(step.ids) if "logprob_pieces" in self.bugs else step.piece for step in steps]
        if "logprob_pieces" in self.bugs:
            pieces = ["" if piece.endswith(REPLACEMENT) else piece for piece in pieces]
        if chat:
            return {"content": [{"token": piece, "logprob": -1.0, "bytes": list(piece.encode()), "top_logprobs": []}
                                for piece in pieces]}
        return {"tokens": pieces, "token_logprobs": [-1.0] * len(pieces), "top_logprobs": [{}] * len(pieces),
                "text_offset": [0] * len(pieces)}

    def prompt_logprobs(self, prompt: list[int]) -> list:
        """vLLM's prompt_logprobs: None for the first token, then each token's own entry."""
        entries = [{str(i): {"logprob": -1.0, "rank": 1, "decoded_token": self.tokenizer.decode([i])}}
                   for i in prompt[1:]]
        if "prompt_logprobs_shift" in self.bugs:
            entries = entries[1:] + [entries[-1]] if entries else entries
        return [None, *entries]

    def usage(self, outputs: list[Output]) -> dict:
        completion = sum(len(output.ids) for output in outputs) + ("usage_count" in self.bugs)
        prompt = len(outputs[0].prompt_ids)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def completion(self, body: dict) -> dict:
        outputs = self.outputs(body, chat=False)
        with_ids, echo = bool(body.get("return_token_ids")), bool(body.get("echo"))
        choices = []
        for index, output in enumerate(outputs):
            choice = {"index": index, "text": (output.prompt_text if echo else "") + self.whole_text(output),
                      "logprobs": self.logprobs(output.steps, False) if body.get("logprobs") is not None else None,
                      "finish_reason": output.finish_reason, "stop_reason": output.stop_reason,
                      "token_ids": output.ids if with_ids else None,
                      "prompt_token_ids": output.prompt_ids if with_ids else None}
            if body.get("prompt_logprobs") is not None:
                choice["prompt_logprobs"] = self.prompt_logprobs(output.prompt_ids)
            choices.append(choice)
        return {"id": "cmpl-fake", "object": "text_completion", "created": 0, "model": self.model,
                "choices": choices, "usage": self.usage(outputs)}

    def chat_completion(self, body: dict) -> dict:
        outputs = self.outputs(body, chat=True)
        with_ids = bool(body.get("return_token_ids"))
        choices = []
        for index, output in enumerate(outputs):
            message = {"role": "assistant", "content": self.whole_text(output), "reasoning": None}
            called = False
            if output.tools is not None:
                parsed = impl.parse_response(output.text, "hermes", tools=output.tools, reasoning=False)
                message["content"] = parsed["content"]
                if parsed.get("tool_calls"):
                    message["tool_calls"] = parsed["tool_calls"]
                called = "<tool_call>" in output.text
            choices.append({"index": index, "message": message,
                            "logprobs": self.logprobs(output.steps, True) if body.get("logprobs") else None,
                            "finish_reason": self.finish_reason(output, called), "stop_reason": output.stop_reason,
                            "token_ids": output.ids if with_ids else None})
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": self.model,
                "choices": choices, "usage": self.usage(outputs),
                "prompt_token_ids": outputs[0].prompt_ids if with_ids else None}

    def completion_chunks(self, body: dict) -> Iterator[dict]:
        outputs = self.outputs(body, chat=False)
        with_ids = bool(body.get("return_token_ids"))
        streams = []
        for index, output in enumerate(outputs):
            events = []
            texts = self._shown_texts(output)
            for number, (text, step_ids, steps) in enumerate(texts):
                last = number == len(texts) - 1
                choice = {"index": index, "text": text,
                          "logprobs": self.logprobs(steps, False) if body.get("logprobs") is not None else None,
                          "finish_reason": output.finish_reason if last else None,
                          "stop_reason": output.stop_reason if last else None,
                          "token_ids": step_ids if with_ids else None}
                if number == 0 and with_ids:
                    choice["prompt_token_ids"] = output.prompt_ids
                events.append({"id": "cmpl-fake", "object": "text_completion", "created": 0, "model": self.model,
                               "choices": [choice]})
            streams.append(events)
        yield from _interleaved(streams)
        yield from self._usage_chunk(body, outputs, "text_completion")

    def chat_chunks(self, body: dict) -> Iterator[dict]:
        outputs = self.outputs(body, chat=True)
        with_ids = bool(body.get("return_token_ids"))
        streams = [self._chat_events(body, index, output, with_ids) for index, output in enumerate(outputs)]
        yield from _interleaved(streams)
        yield from self._usage_chunk(body, outputs, "chat.completion.chunk")

    def _chat_events(self, body: dict, index: int, output: Output, with_ids: bool) -> list[dict]:
        events = [self._chat_chunk(index, {"role": "assistant", "content": ""}, [] if with_ids else None, None, None,
                                   output.prompt_ids if with_ids and index == 0 else None, None)]
        texts = self._shown_texts(output)
        parser = impl.OutputParser("hermes", tools=output.tools, reasoning=False) if output.tools is not None else None
        duplicated = "tool_deltas" not in self.bugs
        called = parser is not None and "<tool_call>" in output.text
        for number, (text, step_ids, steps) in enumerate(texts):
            last = number == len(texts) - 1
            deltas = parser.feed(text, final=last) if parser else [{"content": text}]
            deltas = deltas or [{"content": ""}]
            for part, delta in enumerate(deltas):
                if not duplicated and _has_arguments(delta):
                    duplicated = True
                    deltas.insert(part + 1, delta)
                final = last and part == len(deltas) - 1
                logprobs = self.logprobs(steps, True) if body.get("logprobs") and part == 0 else None
                events.append(self._chat_chunk(index, _vllm_delta(delta), (step_ids if part == 0 else []) if with_ids else None,
                                               self.finish_reason(output, called) if final else None,
                                               output.stop_reason if final else None, None, logprobs))
        return events

    def _usage_chunk(self, body: dict, outputs: list[Output], kind: str) -> Iterator[dict]:
        if (body.get("stream_options") or {}).get("include_usage"):
            yield {"id": "fake", "object": kind, "created": 0, "model": self.model, "choices": [],
                   "usage": self.usage(outputs)}

    def _shown_texts(self, output: Output) -> list[tuple[str, list[int], list[Step]]]:
        """Each chunk's text, ids and steps: ``tokens_per_chunk`` steps a chunk, then the tail."""
        size = self.tokens_per_chunk
        groups = [output.steps[start:start + size] for start in range(0, len(output.steps), size)]
        texts = [("".join(step.text for step in group), [i for step in group for i in step.ids], group)
                 for group in groups]
        texts.append(("" if "tail_dropped" in self.bugs else output.tail, [], []))
        if "stream_text" in self.bugs:  # a letter or digit: a U+FFFD or a space repeated is named otherwise
            for index, (text, ids, steps) in enumerate(texts):
                if text[:1].isalnum():
                    texts[index] = (text[0] + text, ids, steps)
                    break
        return texts

    def _chat_chunk(self, index: int, delta: dict, ids, finish, stop_reason, prompt_ids, logprobs) -> dict:
        chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": self.model,
                 "choices": [{"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish,
                              "stop_reason": stop_reason, "token_ids": ids}]}
        if prompt_ids is not None:
            chunk["prompt_token_ids"] = prompt_ids
        return chunk


def _interleaved(streams: list[list[dict]]) -> Iterator[dict]:
    """The choices' events taken in turn, as a server streaming several choices sends them."""
    for group in itertools.zip_longest(*streams):
        yield from (event for event in group if event is not None)


class _AloneDetokenizer:
    """The decode_alone bug: each id decoded by itself, without the text before it."""

    def __init__(self, tokenizer, skip_special_tokens: bool):
        self._tokenizer, self._skip = tokenizer, skip_special_tokens

    def add(self, ids: list[int]) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=self._skip)

    def flush(self) -> str:
        return ""


class _NaiveDetokenizer:
    """The early_replacement bug: each delta is what decoding all ids now adds past what was shown."""

    def __init__(self, tokenizer, skip_special_tokens: bool):
        self._tokenizer, self._skip, self._ids, self._shown = tokenizer, skip_special_tokens, [], 0

    def add(self, ids: list[int]) -> str:
        self._ids += ids
        text = self._tokenizer.decode(self._ids, skip_special_tokens=self._skip)
        delta, self._shown = text[self._shown:], max(self._shown, len(text))
        return delta

    def flush(self) -> str:
        return ""


def schema_instance(schema, rng: random.Random, root: dict, depth: int = 0):
    """A seeded small JSON value valid for ``schema`` (local ``$ref``, enum, const, anyOf/oneOf,
    types; ``pattern`` and ``format`` ignored).

    >>> schema_instance({"type": "object", "properties": {"n": {"type": "integer", "minimum": 3,
    ...                  "maximum": 3}}, "required": ["n"]}, random.Random(0), {})
    {'n': 3}
    """
    if not isinstance(schema, dict):
        return {}
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if part else target
        return schema_instance(target, rng, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return schema_instance(schema[key][0], rng, root, depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        required = schema.get("required", [])
        properties = schema.get("properties", {})
        names = [n for n in properties if n in required or (depth < 2 and rng.random() < 0.5)]
        return {name: schema_instance(properties[name], rng, root, depth + 1) for name in names}
    if kind == "array":
        low = schema.get("minItems", 0)
        count = rng.randint(low, max(low, min(schema.get("maxItems", 2), 2)))
        return [schema_instance(schema.get("items", {}), rng, root, depth + 1) for _ in range(count)]
    if kind == "integer":
        low, high = schema.get("minimum", -50), schema.get("maximum", 100)
        return rng.randint(int(low), int(max(low, high)))
    if kind == "number":
        low, high = schema.get("minimum", -50), schema.get("maximum", 100)
        return round(rng.uniform(low, max(low, high)), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    low = schema.get("minLength", 1)
    length = max(low, min(schema.get("maxLength", 6), 6))
    return "".join(rng.choice("abcdefghij é") for _ in range(length))


def _broken_instance(schema: dict, arguments):
    """``arguments`` made invalid for ``schema``: a property of the wrong type, else a required one
    dropped, else not an object at all."""
    properties = schema.get("properties") or {}
    for name, sub in properties.items():
        kinds = sub.get("type") if isinstance(sub, dict) else None
        if kinds:
            kinds = kinds if isinstance(kinds, list) else [kinds]
            wrong = next(value for value, types in (("x", {"string"}), (12345, {"integer", "number"}),
                                                    ([], {"array"}), (None, {"null"}))
                         if not types & set(kinds))
            return {**arguments, name: wrong} if isinstance(arguments, dict) else wrong
    if schema.get("required") and isinstance(arguments, dict):
        return {k: v for k, v in arguments.items() if k != schema["required"][0]}
    return [arguments]


def _has_arguments(delta: dict) -> bool:
    return any(call.get("function", {}).get("arguments") for call in delta.get("tool_calls", []))


def _vllm_delta(delta: dict) -> dict:
    """impl's OpenAI delta in vLLM 0.33's spelling (``reasoning``, not ``reasoning_content``)."""
    return {("reasoning" if key == "reasoning_content" else key): value for key, value in delta.items()}


def _field(body: dict, name: str, kind: type):
    value = body.get(name)
    if not isinstance(value, kind):
        raise BadRequest(f"{name}: expected {kind.__name__}, found {type(value).__name__}")
    return value


ROUTES = {  # path -> (answer, streamed answer)
    "/tokenize": (FakeEngine.tokenize, None),
    "/detokenize": (FakeEngine.detokenize, None),
    "/v1/completions": (FakeEngine.completion, FakeEngine.completion_chunks),
    "/v1/chat/completions": (FakeEngine.chat_completion, FakeEngine.chat_chunks),
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # the test output stays quiet
        pass

    @property
    def fake(self) -> FakeVllmServer:
        return self.server.fake

    def do_GET(self):
        engine = self.fake.engine
        if self.path == "/version":
            self._json(200, {"version": VERSION})
        elif self.path == "/v1/models":
            self._json(200, engine.models())
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError as exc:
            return self._error(400, f"invalid JSON body: {exc}")
        route = ROUTES.get(self.path)
        if route is None:
            return self._error(404, f"no route {self.path}")
        if not isinstance(body, dict):
            return self._error(400, "the body must be a JSON object")
        streamed = bool(body.get("stream")) and route[1] is not None
        if self._misbehaved(streamed):
            return None
        engine = self.fake.engine
        try:
            if not streamed:
                return self._json(200, route[0](engine, body))
            chunks = list(route[1](engine, body))
        except BadRequest as exc:
            return self._error(400, str(exc))
        end = [] if "no_done" in self.fake.engine.bugs else [b"data: [DONE]\n\n"]
        self._stream([f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode() for chunk in chunks] + end)
        return None

    def _misbehaved(self, streamed: bool) -> bool:
        """Acts out the misbehaviour bugs; True when one answered (or will never answer)."""
        bugs = self.fake.engine.bugs
        if "hang" in bugs:
            self.fake.stopping.wait()
        elif "status_500" in bugs:
            self._send(500, b"Internal Server Error: the fake was told to fail", "text/plain")
        elif "redirect" in bugs:
            self.send_response(302)
            self.send_header("Location", REDIRECT_TARGET)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif "bad_json" in bugs:
            if streamed:
                self._stream([b'data: {"choices": [{"text": "x"}]}\n\n', b"data: {oops\n\n", b"data: [DONE]\n\n"])
            else:
                self._send(200, b'{"tokens": [1, 2', "application/json")
        elif "close" in bugs:
            self._begin(200, "text/event-stream" if streamed else "application/json",
                        None if streamed else 1000)
            self.wfile.write(_chunk(b'data: {"choices": []}\n\n') if streamed else b'{"tokens": [1, ')
            self.wfile.flush()
            self.close_connection = True
        elif "half_event" in bugs and streamed:
            self._stream([b'data: {"choices": []}\n\n', b'data: {"choices": [{"te'])
        elif "huge_body" in bugs:
            self._begin(200, "text/event-stream" if streamed else "application/json", None)
            block = (b"data: " if streamed else b"[") + b"1, " * 21845
            try:
                while not self.fake.stopping.is_set():
                    self.wfile.write(_chunk(block))
            except OSError:  # the client gave up, as it should
                pass
            self.close_connection = True
        else:
            return False
        return True

    def _json(self, status: int, value: dict) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        kind = "BadRequestError" if status == 400 else "NotFoundError"
        self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self._begin(status, content_type, len(data))
        self.wfile.write(data)

    def _begin(self, status: int, content_type: str, length: int | None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if length is None:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _stream(self, events: list[bytes]) -> None:
        self._begin(200, "text/event-stream", None)
        for event in events:
            self.wfile.write(_chunk(event))
        self.wfile.write(b"0\r\n\r\n")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)
