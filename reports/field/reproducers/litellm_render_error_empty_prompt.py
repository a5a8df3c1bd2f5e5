"""litellm swallows a template's error and sends an empty prompt: where the template cannot render
a lone system message (litellm's probe) and then fails on the request itself, _render_chat_template
catches the exception, finds it is not the role-alternation one, and returns "".

Needs: litellm (1.110.2) and jinja2 3.1 (the reference: transformers raises the template's error,
here jinja2.exceptions.UndefinedError). No network. Exits 1 while the bug is there, 0 once fixed.

The code: factory.py _render_chat_template: `rendered_text = ""` (line 495), the probe
_is_system_in_template (line 481) false, then the render in `try` whose `except Exception as e:`
(line 519) acts only on "Conversation roles must alternate user/assistant" and otherwise falls
through to `return rendered_text` (line 533).
"""
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import prompt_factory  # noqa: E402

MODEL = "example/second-message"
# Reads the second message: a lone system message (the probe) and a lone user message both fail.
TEMPLATE = "<|user|>{{ messages[1]['content'].upper() }}<|assistant|>"
MESSAGES = [{"role": "user", "content": "Hi"}]

litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": {"chat_template": TEMPLATE}}
actual = prompt_factory(model=MODEL, messages=MESSAGES)
print("expected: the template's error raised (transformers: jinja2.exceptions.UndefinedError)")
print("actual:   prompt", repr(actual))
sys.exit(1 if actual == "" else 0)
