"""mistral-common's ChatCompletionRequest.from_openai answers a malformed OpenAI message (a user message
without "content", a tool message without "tool_call_id") with a bare KeyError, not with one of its
own validation errors.

Needs: mistral-common (1.13.1). Runs anywhere; exits 1 while either message raises KeyError, 0
once both are refused by a validation error (mistral_common.exceptions or pydantic's).

The reference: OpenAI's chat-completions API requires "content" on a user message and
"tool_call_id" on a tool message, and answers a request lacking one with a 400 naming the field;
mistral-common's own validators raise InvalidRequestException and its subclasses for such input.
"""
import sys

from mistral_common.protocol.instruct.request import ChatCompletionRequest

CALL = {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": "{}"}}
MALFORMED = {
    "user message without content": [{"role": "user"}],
    "tool message without tool_call_id": [{"role": "user", "content": "Hi"},
                                          {"role": "assistant", "content": None, "tool_calls": [CALL]},
                                          {"role": "tool", "content": "r"}],
}
bare = []
for what, messages in MALFORMED.items():
    try:
        ChatCompletionRequest.from_openai(messages)
        answer = "accepted"
    except KeyError as exc:
        answer, _ = f"KeyError {exc}", bare.append(what)
    except Exception as exc:  # a validation error: the expected kind of answer
        answer = f"{type(exc).__module__}.{type(exc).__name__}"
    print(f"{what}: expected a validation error; actual: {answer}")
sys.exit(1 if bare else 0)
