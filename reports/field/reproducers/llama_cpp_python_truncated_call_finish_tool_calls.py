"""llama-cpp-python: a tool call cut by max_tokens is answered with finish_reason "tool_calls" and its
cut-off text as `arguments`, so a client cannot tell it from a complete call (textbound's field run
of llama-cpp-python's server: `tools/server/arguments not JSON` on llama2's tiny model, tool_choice
naming the tool, max_tokens 160: `"{\\"text\\": \\"< slideslights..."` with finish_reason "tool_calls").

Where (llama-cpp-python 0.3.36): llama_cpp/llama_chat_format.py, `_convert_completion_to_chat_function`:
lines 450 and 458 put `completion["choices"][0]["text"]` as the call's `arguments` and line 466 sets
`"finish_reason": "tool_calls"` whatever the completion's own finish_reason ("length" here) was.

Usage: python llama_cpp_python_truncated_call_finish_tool_calls.py MODEL_GGUF
  MODEL_GGUF: any GGUF llama-cpp-python can sample from (the field run's tiny llama2 model). Calls
  `Llama.create_chat_completion` as the server does, with the tool named in tool_choice and
  max_tokens 4. Exits 1 while the answer says "tool_calls" with arguments that are not JSON, 0
  otherwise.

The reference: OpenAI's API: finish_reason "length" when max_tokens cut the output (the arguments of
a call then may be incomplete), "tool_calls" when the model called a tool.
"""
import json
import sys

from llama_cpp import Llama

TOOL = {"type": "function", "function": {"name": "note", "parameters": {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}


def main(model_path: str) -> int:
    llama = Llama(model_path=model_path, n_ctx=512, n_threads=1, verbose=False)
    choice = llama.create_chat_completion(messages=[{"role": "user", "content": "Take a note"}], tools=[TOOL],
                                          tool_choice={"type": "function", "function": {"name": "note"}},
                                          max_tokens=4, seed=0)["choices"][0]
    arguments = choice["message"]["tool_calls"][0]["function"]["arguments"]
    try:
        json.loads(arguments)
        complete = True
    except json.JSONDecodeError:
        complete = False
    print(f"finish_reason {choice['finish_reason']!r}; arguments {arguments!r} ({'JSON' if complete else 'not JSON'})")
    return 1 if choice["finish_reason"] == "tool_calls" and not complete else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
