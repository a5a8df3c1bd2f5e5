"""litellm renders Hugging Face templates without trim_blocks and lstrip_blocks, which transformers
sets: a template written with plain `{% ... %}` tags on lines of their own sends the model the
newlines and indentation between them (a different prompt, and different tokens, from the one the
model was trained on).

Needs: litellm (1.110.2) and jinja2 3.1 (the reference: transformers' ImmutableSandboxedEnvironment
with trim_blocks=True, lstrip_blocks=True). No network. Exits 1 while the bug is there, 0 once fixed.

The code: factory.py hf_chat_template, `env = ImmutableSandboxedEnvironment()` (line 681).
"""
import os
import sys

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import prompt_factory  # noqa: E402

MODEL = "example/plain-tags"
TEMPLATE = ("{% for message in messages %}\n"
            "    {% if message['role'] == 'user' %}\n"
            "<|user|>{{ message['content'] }}<|end|>\n"
            "    {% endif %}\n"
            "{% endfor %}\n"
            "{% if add_generation_prompt %}\n"
            "<|assistant|>\n"
            "{% endif %}")
MESSAGES = [{"role": "user", "content": "Hi"}]

reference = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
expected = reference.from_string(TEMPLATE).render(messages=MESSAGES, add_generation_prompt=True)
litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": {"chat_template": TEMPLATE}}
actual = prompt_factory(model=MODEL, messages=MESSAGES)
print("expected:", repr(expected))
print("actual:  ", repr(actual))
sys.exit(1 if actual != expected else 0)
