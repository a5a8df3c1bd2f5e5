"""Chat templates, rendered and encoded as transformers does it.

- render: messages to a prompt (render_chat, ChatRenderer, apply_chat_template)
- environment: transformers' Jinja environment (filters, globals, the frozen clock)
- sandbox: the sandbox and resource limits templates run under
- schema: Python functions given as tools, to JSON schemas
- control: a chat's control tokens, marked so they encode as plain text
- encode: the rendered text to ids, offsets and assistant masks

    >>> render_chat(CHATML_TEMPLATE, [{"role": "user", "content": "Hi"}], enable_thinking=False)
    '<|im_start|>user\\nHi<|im_end|>\\n'
"""
from .render import CHATML_TEMPLATE, ChatRenderer, apply_chat_template, render_chat
from .sandbox import RenderLimitError, RenderLimits

__all__ = ["CHATML_TEMPLATE", "ChatRenderer", "RenderLimitError", "RenderLimits", "apply_chat_template",
           "render_chat"]
