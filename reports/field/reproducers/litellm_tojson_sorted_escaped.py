"""litellm renders Hugging Face templates with jinja2's own `tojson` filter where transformers
installs its own: keys come out sorted and `<`, `>`, `&`, `'` as \\u escapes, so a tool-calling
template writes the tools, or an assistant's call arguments, otherwise than the model was trained on.
And jinja2's `tojson` returns markupsafe.Markup, so a string a template adds to its result is
HTML-escaped: `(message | tojson) + "<|im_end|>"` (LFM2's template) ends in `&lt;|im_end|&gt;`.

Needs: litellm (1.110.2) and jinja2 3.1 (the reference: transformers' `tojson`, json.dumps with
ensure_ascii=False and the keys in their order). No network. Exits 1 while the bug is there, 0 once
fixed.

The code: factory.py hf_chat_template, `env = ImmutableSandboxedEnvironment()` (line 681): no
`env.filters["tojson"]` of its own, so jinja2's htmlsafe_json_dumps (sort_keys=True) is used.
"""
import json
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import prompt_factory  # noqa: E402

MODEL = "example/tojson"
MESSAGES = [{"role": "user", "content": "Hi"}]
# (template, what transformers renders for MESSAGES)
CASES = (
    ("{% for m in messages %}{{ m['content'] }}{{ {'name': 'f', 'arguments': {'q': '<b>'}} | tojson }}{% endfor %}",
     "Hi" + json.dumps({"name": "f", "arguments": {"q": "<b>"}}, ensure_ascii=False)),
    ("{% for m in messages %}{% set c = m | tojson %}{{ c + '<|im_end|>' }}{% endfor %}",
     json.dumps(MESSAGES[0], ensure_ascii=False) + "<|im_end|>"),
)

differ = 0
for template, expected in CASES:
    litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": {"chat_template": template}}
    actual = prompt_factory(model=MODEL, messages=MESSAGES)
    differ += actual != expected
    print("template:", template)
    print("expected:", repr(expected))
    print("actual:  ", repr(actual))
sys.exit(1 if differ else 0)
