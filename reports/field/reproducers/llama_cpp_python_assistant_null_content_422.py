"""llama-cpp-python's server refuses (422) an assistant message with `"content": null` and
`tool_calls`, the shape OpenAI's API returns for a tool call and clients send back on the next turn
(textbound's field run of its chat formatter through the server's request model: `chat/render/raised
ValueError`, among them `[{"role": "assistant", "content": null, "tool_calls": [...]}]`).

Where (llama-cpp-python 0.3.36): llama_cpp/llama_types.py, line 235,
`ChatCompletionRequestAssistantMessage.content: NotRequired[str]` (null is not a str), validated by
FastAPI through llama_cpp/server/types.py's `CreateChatCompletionRequest.messages`.

Usage: python llama_cpp_python_assistant_null_content_422.py
  Validates the request body with the server's own request model (no model file, no server needed).
  Exits 1 while it is refused, 0 once accepted.

The reference: OpenAI's chat completions API: an assistant message's `content` is "Required unless
`tool_calls` or `function_call` is specified", and may be null.
"""
import sys

import pydantic
from llama_cpp.server.types import CreateChatCompletionRequest

MESSAGES = [{"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]


def main() -> int:
    try:
        CreateChatCompletionRequest(messages=MESSAGES)
    except pydantic.ValidationError as exc:
        print(f"refused (the server answers 422): {len(exc.errors())} validation errors, e.g. "
              f"{'.'.join(map(str, exc.errors()[0]['loc']))}: {exc.errors()[0]['msg']}")
        return 1
    print("accepted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
