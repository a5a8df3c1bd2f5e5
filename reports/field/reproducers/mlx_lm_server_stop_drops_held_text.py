"""mlx_lm.server drops the end of a reply when generation stops at the end-of-sequence token: the
text its TextStateMachine holds back as a possible start of a marker ('<' of '<think>' or
'<tool_call>') and the text the detokenizer still holds (a lone space token) are discarded, so a
reply ending "... is x <" comes back as "... is x ", streamed or not.

APIHandler.handle_completion meets finish_reason "stop" with TextStateMachine.discard and drops
that step's text (server.py:1615-1617, "Drop the remaining buffer (use on finish_reason="stop")",
generate.py:1032); the batch loop has just put the detokenizer's finalize() segment in that very
step (server.py:975-978). "stop" is also the finish of a stop-word match, where dropping the
buffered part of the stop word is right; at the end-of-sequence token the buffer is the reply.

Driven as the server drives it, without a model: the tokenizer is loaded by mlx_lm.utils.load_tokenizer
(a byte-level BPE written here, with Qwen3's <think> and <tool_call> tokens and a Hermes template,
so the server reads reasoning and json_tools calls), the steps are what ResponseGenerator._generate
puts on the request's queue for each generated id (the wrapper's detokenizer: add_token,
last_segment) and for the end-of-sequence id (finalize, last_segment, finish "stop"), and
APIHandler.handle_completion itself writes the answer, on a handler made without a socket.

Needs: mlx-lm 0.32.2 (on Linux: pip install 'mlx-lm[cpu]==0.32.2'). Runs in an empty folder;
exits 1 while the bug is there.

Expected: the reply's text, tokenizer.decode of the generated ids (no marker in it), as content
(transformers' response-parser rules, the reference textbound's oracle applies).
"""
import io
import json
import logging
import sys
import tempfile
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

from mlx_lm import server
from mlx_lm.generate import make_text_state_machine
from mlx_lm.utils import load_tokenizer

logging.disable(logging.WARNING)
EOS = "<|im_end|>"
folder = Path(tempfile.mkdtemp())
byte_level = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))},
                                  merges=[]))
byte_level.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
byte_level.decoder = decoders.ByteLevel()
byte_level.add_special_tokens([AddedToken(EOS, special=True)])
byte_level.add_tokens([AddedToken(t, special=False) for t in ("<think>", "</think>", "<tool_call>", "</tool_call>")])
byte_level.save(str(folder / "tokenizer.json"))
(folder / "tokenizer_config.json").write_text(json.dumps({
    "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOS,
    "chat_template": "{% for tool_call in calls %}<tool_call>{{ tool_call.name }}</tool_call>{% endfor %}"}))
tokenizer = load_tokenizer(folder)
assert tokenizer.has_thinking and tokenizer.init_kwargs["tool_parser_type"] == "json_tools"


class Generation:
    """The request's side of ResponseGenerator: the context _serve_single/_generate build, and the
    Responses the batch loop puts on the queue for ``ids`` then the end-of-sequence id."""

    def __init__(self, ids):
        self.ids = ids

    def generate(self, request, args, progress_callback=None):
        context = server.GenerationContext(
            has_tool_calling=tokenizer.has_tool_calling, has_thinking=tokenizer.has_thinking,
            tool_parser=tokenizer.tool_parser, text_sm=make_text_state_machine(tokenizer, []),
            initial_state="normal", prompt=[])
        return context, self.steps()

    def steps(self):
        detokenizer = tokenizer.detokenizer
        for token in self.ids:
            detokenizer.add_token(token)
            yield server.Response(detokenizer.last_segment, token, 0.0, None, ())
        detokenizer.finalize()  # finish_reason "stop": the end-of-sequence id is not added
        yield server.Response(detokenizer.last_segment, tokenizer.eos_token_id, 0.0, "stop", ())


class Handler(server.APIHandler):
    """The server's handler without a socket: what handle_completion reads, headers nowhere."""

    def __init__(self, stream, generation):
        self.stream, self.stream_options, self.wfile, self.response_generator = stream, None, io.BytesIO(), generation
        self.requested_model = self.requested_draft_model = "default_model"
        self.adapter, self.request_id, self.created, self.system_fingerprint = None, "chatcmpl-1", 0, "fp"
        self.object_type = "chat.completion.chunk" if stream else "chat.completion"
        self.max_tokens, self.num_draft_tokens, self.seed, self.chat_template_kwargs = 512, 0, None, None
        self.temperature, self.top_p, self.top_k, self.min_p = 0.0, 1.0, 0, 0.0
        self.xtc_probability, self.xtc_threshold, self.logit_bias = 0.0, 0.0, None
        self.repetition_penalty = self.presence_penalty = self.frequency_penalty = 0.0
        self.repetition_context_size = self.presence_context_size = self.frequency_context_size = 20
        self.logprobs, self.top_logprobs = False, -1

    def _set_stream_headers(self, status_code=200): pass
    def _set_completion_headers(self, status_code=200): pass
    def send_header(self, keyword, value): pass
    def end_headers(self): pass


def content(stream, ids):
    handler = Handler(stream, Generation(ids))
    handler.handle_completion(server.CompletionRequest("chat", "", [], None, None), [])
    written = handler.wfile.getvalue().decode()
    if not stream:
        return json.loads(written)["choices"][0]["message"]["content"]
    events = [json.loads(line[6:]) for line in written.split("\n\n") if line.startswith("data: {")]
    return "".join(event["choices"][0]["delta"].get("content", "") for event in events)


failed = False
for reply in ("The answer is x <", "Sure "):
    ids = tokenizer.encode(reply, add_special_tokens=False)
    expected = tokenizer.decode(ids)
    for stream in (False, True):
        actual = content(stream, ids)
        print(f"{'streamed' if stream else 'whole'} reply {reply!r}: expected content {expected!r}, actual {actual!r}")
        failed |= actual != expected
sys.exit(1 if failed else 0)
