"""impl's chat rendering against transformers' apply_chat_template, run at test time (no stored answers).

Every comparison is of outcomes: the text (or ids, or dict) when both render, the exception class
when both raise. Dates are frozen on both sides.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import json
import os
import shutil
import typing
from pathlib import Path

import jinja2
import pytest
import tokenizers
import transformers
import transformers.utils.chat_template_utils as oracle_chat
from transformers import AutoTokenizer, PreTrainedTokenizerFast

import textbound.impl.chat.environment as environment
import textbound.impl.chat.render as render
from textbound.impl import CHATML_TEMPLATE, Tokenizer, render_chat
from textbound.impl.chat import ChatRenderer
from textbound.impl.chat.sandbox import RenderLimitError, RenderLimits
from textbound.impl.chat.schema import function_schema
from textbound.oracles.chat_oracle import TEMPLATES_ENV
from textbound.families import MODELS_ENV

MOMENT = datetime.datetime(2025, 3, 4, 5, 6, 7)

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather — today",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City"}},
                   "required": ["city"]}}}]


def _call(arguments) -> list[dict]:
    return [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]


CONVERSATIONS = {
    "system_multi_turn": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"},
                          {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "How are you?"}],
    "tool_call_dict": [{"role": "user", "content": "Weather in Paris?"},
                       {"role": "assistant", "content": "", "tool_calls": _call({"city": "Paris"})},
                       {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"t": 20}'}],
    "tool_call_string": [{"role": "user", "content": "Weather?"},
                         {"role": "assistant", "content": "", "tool_calls": _call('{"city": "Paris"}')},
                         {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
                         {"role": "assistant", "content": "It is sunny."}],
    "non_ascii_syntax_control": [{"role": "user", "content": "Grüße 你好 {{ x }} {% if %} <|im_end|></s>"},
                                 {"role": "assistant", "content": "Ça va 🙂", "reasoning_content": "é"},
                                 {"role": "user", "content": "again"}],
    "none_content": [{"role": "user", "content": "Weather?"},
                     {"role": "assistant", "content": None, "tool_calls": _call({"city": "Paris"})}],
    "text_blocks": [{"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}],
    "reasoning_alias": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "reasoning": "why"}],
    "final_assistant": [{"role": "user", "content": "Write a poem"}, {"role": "assistant", "content": "Roses are  "}],
}
OPTIONS = [
    {"add_generation_prompt": True},
    {"add_generation_prompt": True, "tools": TOOLS, "enable_thinking": False},
    {"continue_final_message": True},
    {"documents": [{"title": "Doc", "text": "Some text"}], "date_string": "26 Jul 2024"},
]


@pytest.fixture(autouse=True)
def frozen_dates(monkeypatch):
    class Frozen(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return MOMENT

    monkeypatch.setattr(oracle_chat, "datetime", Frozen)
    with environment.frozen_clock(MOMENT):
        yield


@pytest.fixture(scope="module")
def bare_oracle():
    """A transformers tokenizer with no special tokens and no template: render_chat's oracle."""
    model = tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")
    return PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(model))


def outcome(action):
    """What an action gave: ("ok", value), or ("raised", exception class name)."""
    try:
        value = action()
    except Exception as exc:  # any exception is an outcome to compare
        return ("raised", type(exc).__name__)
    return ("ok", dict(value) if hasattr(value, "keys") else value)


def render_divergences(oracle, render, templates: dict[str, str], cases=None) -> list[str]:
    """Each (template, conversation, options) where ``render`` and the oracle's renderer disagree."""
    found = []
    for name, template in templates.items():
        for conversation_name, conversation in (cases or CONVERSATIONS).items():
            for options in OPTIONS:
                expected = outcome(lambda: oracle.apply_chat_template(
                    conversation, chat_template=template, tokenize=False, **options))
                before = copy.deepcopy((conversation, options))
                actual = outcome(lambda: render(template, conversation, **options))
                assert (conversation, options) == before, "the caller's messages or options were changed"
                if actual != expected:
                    found.append(f"{name}/{conversation_name}/{sorted(options)}: {expected!r:.200} != {actual!r:.200}")
    return found


def shared_templates() -> dict[str, str]:
    root = os.environ.get(TEMPLATES_ENV)
    if not root:
        return {}
    manifest = json.loads((Path(root) / "MANIFEST.json").read_text(encoding="utf-8"))
    return {t["name"]: (Path(root) / t["file"]).read_text(encoding="utf-8") for t in manifest["templates"]}


@pytest.mark.skipif(not os.environ.get(TEMPLATES_ENV), reason=f"${TEMPLATES_ENV} is not set")
@pytest.mark.parametrize("name", sorted(shared_templates()) or ["none"])
def test_shared_template_renders_as_transformers(bare_oracle, name):
    assert render_divergences(bare_oracle, render_chat, {name: shared_templates()[name]}) == []


def test_own_chatml_template_renders_as_transformers(bare_oracle):
    assert render_divergences(bare_oracle, render_chat, {"chatml": CHATML_TEMPLATE}) == []
    text = bare_oracle.apply_chat_template(CONVERSATIONS["tool_call_dict"], chat_template=CHATML_TEMPLATE,
                                           tools=TOOLS, tokenize=False)
    assert "<tool_call>" in text and "<tools>" in text  # transformers renders it, tools and all


def test_a_broken_renderer_is_caught(bare_oracle, monkeypatch):
    templates = {"tojson": "{{ messages | tojson }}", "chatml": CHATML_TEMPLATE}
    monkeypatch.setattr(environment, "_tojson", lambda value, **_: json.dumps(value))  # escapes non-ASCII
    broken = ChatRenderer(RenderLimits())  # a new environment, built with the broken filter
    assert render_divergences(bare_oracle, broken.render_chat, templates)


def test_a_renderer_that_keeps_none_values_is_caught(bare_oracle, monkeypatch):
    monkeypatch.setattr(render, "normalize_messages", lambda conversation: list(conversation))
    templates = {"content": "{% for m in messages %}{{ m.content }}|{% endfor %}"}
    assert render_divergences(bare_oracle, render_chat, templates, {"none": CONVERSATIONS["none_content"]})


def test_environment_features(bare_oracle):
    template = ("{% set ns = namespace(n=0) %}{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}"
                "{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }} {{ dict(a=1) | tojson(indent=2, sort_keys=true) }}"
                " {{ dict.fromkeys(['x']) }} {{ strftime_now('%Y-%m-%d') }} {{ {'b': 'é', 'a': [1]} | tojson("
                "separators=(',', ':')) }}\n  {% if true %}\n    kept\n  {% endif %}\n")
    messages = [{"role": "user", "content": "x"}]
    assert render_chat(template, messages) == bare_oracle.apply_chat_template(
        messages, chat_template=template, tokenize=False)
    for failing in ("{{ raise_exception('no') }}", "{% set ns = namespace(_x=1) %}",
                    "{% for %}", "{{ messages.append(1) }}", "{{ x | tojson }}"):
        assert outcome(lambda: render_chat(failing, messages)) == outcome(
            lambda: bare_oracle.apply_chat_template(messages, chat_template=failing, tokenize=False)), failing
    with pytest.raises(jinja2.TemplateError):
        render_chat("{{ raise_exception('no') }}", messages)


def test_each_template_is_compiled_once():
    source = "{{ messages | length }} compiled once"
    render_chat(source, [{"role": "user", "content": "a"}])
    hits = environment.DEFAULT_ENVIRONMENT.compile.cache_info().hits
    render_chat(source, [{"role": "user", "content": "b"}])
    assert environment.DEFAULT_ENVIRONMENT.compile.cache_info().hits == hits + 1


def test_a_renderer_with_limits_refuses_what_the_defaults_allow():
    messages = [{"role": "user", "content": "x" * 5000}]
    assert len(render_chat(CHATML_TEMPLATE, messages)) > 5000
    with pytest.raises(RenderLimitError):
        ChatRenderer(RenderLimits(max_output_chars=1000)).render_chat(CHATML_TEMPLATE, messages)
    with pytest.raises(RenderLimitError):
        ChatRenderer(RenderLimits(max_output_chars=1000)).render_conversations(
            CHATML_TEMPLATE, [messages], None, None, False, False, True, {})


@dataclasses.dataclass
class Message:
    role: str
    content: typing.Any
    name: str | None = None


class Mood(str, enum.Enum):
    HAPPY = "happy"


def test_message_objects_and_odd_values(bare_oracle):
    template = "{% for m in messages %}{{ m | tojson }}{{ m.content is string }}{% endfor %}{{ extra }}"
    conversation = [Message("user", Mood.HAPPY), {"role": "assistant", "content": ("a", 1.5, True, None),
                                                  "tool_calls": None, "weird": object()}]
    expected = bare_oracle.apply_chat_template(conversation, chat_template=template, tokenize=False, extra=Mood.HAPPY)
    assert render_chat(template, conversation, extra=Mood.HAPPY) == expected


def get_weather(city: str, unit: typing.Literal["c", "f"] = "c", days: list[int] | None = None) -> dict:
    """Get the weather.

    Args:
        city: The city,
            on two lines
        unit (str): The unit (choices: ["c", "f"])
        days: Which days

    Returns:
        The forecast
    """


def no_docstring(x: int):
    pass


def missing_hint(x):
    """Doc.

    Args:
        x: An x
    """


def one_tuple(x: tuple[int]):
    """Doc.

    Args:
        x: An x
    """


def undescribed(x: int, y: dict[str, float]):
    """Doc.

    Args:
        x: An x
    """


@pytest.mark.parametrize("function", [get_weather, no_docstring, missing_hint, one_tuple, undescribed])
def test_function_tools_become_transformers_schemas(bare_oracle, function):
    assert outcome(lambda: function_schema(function)) == outcome(lambda: transformers.utils.get_json_schema(function))
    template = "{{ tools | tojson }}"
    messages = [{"role": "user", "content": "x"}]
    assert outcome(lambda: render_chat(template, messages, tools=[function])) == outcome(
        lambda: bare_oracle.apply_chat_template(messages, tools=[function], chat_template=template, tokenize=False))


# --- Tokenizer.apply_chat_template ------------------------------------------------------------

GENERATION_TEMPLATE = (
    "{% for m in messages %}{% if m.role == 'assistant' %}<|im_start|>assistant\n{% generation %}"
    "{{ m.content }}<|im_end|>{% endgeneration %}\n{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    "{% endif %}{% endfor %}")
CALLS = [{}, {"tokenize": False}, {"return_dict": False}, {"sanitize_control_tokens": True},
         {"sanitize_control_tokens": True, "return_dict": False}, {"sanitize_control_tokens": True, "tokenize": False},
         {"return_assistant_tokens_mask": True, "chat_template": GENERATION_TEMPLATE},
         {"return_assistant_tokens_mask": True, "chat_template": CHATML_TEMPLATE},
         {"return_assistant_tokens_mask": True, "tokenize": False},
         {"add_generation_prompt": True, "tools": TOOLS, "chat_template": CHATML_TEMPLATE},
         {"continue_final_message": True, "add_generation_prompt": True}, {"chat_template": "tool_use"}]


def models() -> list[Path]:
    root = os.environ.get(MODELS_ENV)
    return sorted(p for p in Path(root).iterdir() if (p / "tokenizer.json").is_file()) if root else []


@pytest.mark.skipif(not os.environ.get(MODELS_ENV), reason=f"${MODELS_ENV} is not set")
@pytest.mark.parametrize("model", models() or ["none"], ids=lambda p: getattr(p, "name", p))
def test_apply_chat_template_as_transformers(model):
    oracle, tokenizer = AutoTokenizer.from_pretrained(model), Tokenizer.from_dir(model)
    assert tokenizer.chat_template == oracle.chat_template
    mismatches = []
    for conversation_name, conversation in CONVERSATIONS.items():
        for batched in (False, True):
            conversations = [conversation, CONVERSATIONS["system_multi_turn"]] if batched else conversation
            for call in CALLS:
                expected = outcome(lambda: oracle.apply_chat_template(conversations, **call))
                actual = outcome(lambda: tokenizer.apply_chat_template(conversations, **call))
                if actual != expected:
                    mismatches.append(f"{conversation_name} batched={batched} {call}: {expected!r:.300} != "
                                      f"{actual!r:.300}")
    assert mismatches == []


@pytest.mark.skipif(not os.environ.get(MODELS_ENV), reason=f"${MODELS_ENV} is not set")
def test_control_tokens_in_user_text_are_encoded_as_text():
    model = next(p for p in models() if "<|im_end|>" in (p / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_dir(model)
    conversation = [{"role": "user", "content": "<|im_end|>"}]
    sanitized = tokenizer.apply_chat_template(conversation, sanitize_control_tokens=True, return_dict=False)
    plain = tokenizer.apply_chat_template(conversation, return_dict=False)
    im_end = tokenizer.token_to_id("<|im_end|>")
    assert plain.count(im_end) == sanitized.count(im_end) + 1


@pytest.mark.skipif(not os.environ.get(MODELS_ENV), reason=f"${MODELS_ENV} is not set")
def test_template_files_and_named_templates(tmp_path):
    config = {"eos_token": "</x>", "image_token": "<img>",
              "chat_template": [{"name": "default", "template": "config {{ eos_token }}"}]}
    message = [{"role": "user", "content": "x"}]
    layouts = [{}, {"chat_template.jinja": "file {{ image_token }}"},
               {"chat_template.jinja": "file", "additional_chat_templates/tool_use.jinja": "tools {{ tools | length }}"},
               {"additional_chat_templates/other.jinja": "other"}]
    for index, files in enumerate(layouts):
        folder = tmp_path / str(index)
        (folder / "additional_chat_templates").mkdir(parents=True)
        shutil.copy(models()[0] / "tokenizer.json", folder)
        (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        for path, text in files.items():
            (folder / path).write_text(text, encoding="utf-8")
        oracle, tokenizer = AutoTokenizer.from_pretrained(folder), Tokenizer.from_dir(folder)
        for call in ({}, {"tools": TOOLS}, {"chat_template": "other"}, {"chat_template": "tool_use"},
                     {"chat_template": "literal {{ bos_token }}"}):
            assert outcome(lambda: tokenizer.apply_chat_template(message, tokenize=False, **call)) == outcome(
                lambda: oracle.apply_chat_template(message, tokenize=False, **call)), (files, call)
    tokenizer.chat_template = "set by the user"
    assert tokenizer.apply_chat_template(message, tokenize=False) == "set by the user"
