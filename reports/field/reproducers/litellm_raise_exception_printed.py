"""litellm's Hugging Face template rendering prints what a template's raise_exception() is given
instead of raising: a Gemma-style template refusing a system message sends
"Error message - System role not supported" to the model as part of the prompt.

Needs: litellm (1.110.2) and jinja2 (the reference: transformers' chat-template environment raises
jinja2.exceptions.TemplateError). No network (litellm's cost map is read locally; the template is
put where litellm caches the tokenizer_config.json it fetches from the Hub). Exits 1 while the bug
is there, 0 once it is fixed.

The entry point: prompt_factory(model, messages), as litellm's sagemaker, replicate and triton
completion handlers call it; it calls hf_chat_template, which renders with factory.py's
`env.globals["raise_exception"] = lambda msg: Exception(f"Error message - {msg}")` (lines 682 and 655).
"""
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import prompt_factory  # noqa: E402

MODEL = "example/gemma-style"
TEMPLATE = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
            "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
            "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]

litellm.known_tokenizer_config[MODEL] = {"status": "success", "tokenizer": {"chat_template": TEMPLATE}}
prompt = prompt_factory(model=MODEL, messages=MESSAGES)
print("expected: the template's error raised (transformers: jinja2.exceptions.TemplateError: System role not supported)")
print("actual:   prompt", repr(prompt))
sys.exit(1 if "Error message - System role not supported" in prompt else 0)
