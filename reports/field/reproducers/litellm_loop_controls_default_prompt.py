"""litellm renders Hugging Face templates without jinja2's loop-controls extension, which
transformers enables: a template using {% break %} or {% continue %} (Kimi K2 Thinking's, Command
R7B's, ...) fails to compile, and prompt_factory silently sends default_pt's prompt instead (the
message contents joined by spaces, no roles, no special tokens).

Needs: litellm (1.110.2) and jinja2 3.1 (the reference: transformers renders with
extensions=[jinja2.ext.loopcontrols]). No network. Exits 1 while the bug is there, 0 once fixed.

The code: factory.py hf_chat_template, `env = ImmutableSandboxedEnvironment()` (line 681: no
extensions), _render_chat_template's `env.from_string` (line 477) raising TemplateSyntaxError, and
prompt_factory's `except Exception: return default_pt(messages=messages)` (about line 6299).
"""
import os
import sys

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import prompt_factory  # noqa: E402

MODEL = "example/loop-controls"
TEMPLATE = ("{% for m in messages %}{% if m['role'] == 'system' %}{% continue %}{% endif %}"
            "<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]

reference = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
expected = reference.from_string(TEMPLATE).render(messages=MESSAGES, add_generation_prompt=True)
litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": {"chat_template": TEMPLATE}}
actual = prompt_factory(model=MODEL, messages=MESSAGES)
print("expected:", repr(expected))
print("actual:  ", repr(actual))
sys.exit(1 if actual != expected else 0)
