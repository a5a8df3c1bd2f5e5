"""SGLang's Llama 3 tool-call detector (--tool-call-parser llama3), streamed as the OpenAI server
streams a chat completion: a call's name is streamed before its arguments, and when the call object
has no arguments (or never finishes) a real client is left with arguments '' (not JSON text), even
after the server's finish step, where the whole parse of the same text has a call with arguments
'{}' (or no call, the text kept as content):

- '{"name": "f"}' (a complete call without "arguments"/"parameters"): streamed f with arguments '';
  the whole parse: f with arguments '{}'.
- '<|python_tag|>{"name": "f"' (an unfinished object): streamed f with arguments ''; the whole
  parse: no call, content '{"name": "f"'.

Why the finish step sends nothing: base_format_detector.py ``parse_streaming_increment`` sends the
name with parameters '' (lines 244-269) and records the call in ``prev_tool_call_arr`` only when it
has arguments (lines 273-313), and ``_check_for_unstreamed_tool_args`` returns None while
``prev_tool_call_arr`` is empty (serving_chat.py 3758-3781). (Kimi K2's call cut after
``<|tool_call_argument_begin|>``, once in this script, gets '{}' from that finish step: a real
client sees JSON arguments there.)

The parsers are driven as ``OpenAIServingChat`` drives them (sglang/srt/entrypoints/openai/
serving_chat.py): ``parse_stream_chunk`` per chunk; on the chunk carrying the finish reason
``parse_stream_end`` (``_process_tool_call_stream(flush=True)``) and then the server's own
``_check_for_unstreamed_tool_args``, which sends the arguments the detector parsed but never
streamed. A real client sees all of these deltas.

Needs: sglang (0.5.23; the function-call parser runs on the CPU, no model) and what its OpenAI
serving module imports. Runs in an empty folder; exits 1 where a streamed call differs from the
whole parse's calls, 0 when they agree.

Expected: the server's own non-streamed answer on the same text (``parse_non_stream`` where
``has_tool_call`` sees a marker, as ``_process_tool_calls`` calls it). The reference,
transformers' response-parser rules as textbound's oracles.tool_reference applies them
(transformers 5.24.0), answers the same calls (REFERENCE: for the two unfinished outputs no call,
all of the text content; for the complete one f({})).
"""
import json
import logging
import sys

from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest, Tool
from sglang.srt.entrypoints.openai.serving_chat import OpenAIServingChat
from sglang.srt.function_call.function_call_parser import FunctionCallParser

logging.disable(logging.WARNING)
TOOLS = [Tool.model_validate({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}})]
# (--tool-call-parser, the output in the chunks a server streams, the reference's calls)
CASES = [
    ("llama3", ["<|python_tag|>", '{"name": "f"'], []),
    ("llama3", ['{"name": "f"}'], [("f", {})]),
]  # the reference's calls: oracles.tool_reference, transformers 5.24.0


def add(streamed: dict, calls) -> None:
    """Streamed call items joined per call index: (name, the arguments text sent)."""
    for call in calls:
        name, arguments = streamed.get(call.tool_index, (None, ""))
        streamed[call.tool_index] = (call.name or name, arguments + (call.parameters or ""))


failed = False
for parser_name, chunks, reference in CASES:
    text, whole_parser = "".join(chunks), FunctionCallParser(TOOLS, parser_name)
    # The server's whole parse (_process_tool_calls): calls only where the detector sees a marker.
    whole_content, whole_calls = whole_parser.parse_non_stream(text) if whole_parser.has_tool_call(text) else (text, [])
    parser = FunctionCallParser(TOOLS, parser_name)
    streamed = {}
    for chunk in chunks:
        add(streamed, parser.parse_stream_chunk(chunk)[1])
    add(streamed, parser.parse_stream_end()[1])
    # The server's finish step, called as the streaming generator calls it (its __init__ needs a
    # running tokenizer manager; the method reads only the parser, the request and the chunk's id).
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Hi"}], tools=TOOLS)
    chunk = OpenAIServingChat._check_for_unstreamed_tool_args(object.__new__(OpenAIServingChat), parser,
                                                              {"meta_info": {"id": "r"}}, request, 0, created=0)
    if chunk is not None:
        for call in json.loads(chunk.removeprefix("data: "))["choices"][0]["delta"]["tool_calls"]:
            name, arguments = streamed.get(call["index"], (None, ""))
            streamed[call["index"]] = (name, arguments + call["function"]["arguments"])
    expected = [(call.name, call.parameters) for call in whole_calls]
    actual = list(streamed.values())
    print(f"{parser_name} on {''.join(chunks)!r}")
    print("  expected:", expected, "(calls of parse_non_stream; content", repr(whole_content), "; the reference's calls:", reference, ")")
    print("  actual:  ", actual, "(calls streamed, with the finish step)")
    failed |= actual != expected
sys.exit(1 if failed else 0)
