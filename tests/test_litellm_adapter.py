"""textbound.adapters.litellm_adapter: how it reaches litellm's template factory (against a stand-in
``litellm`` that records the call, so this runs without litellm), and, where litellm is installed
(nox -s engine_litellm), what litellm 1.110.2 does with a request, pinned so that a fix shows.
"""
from __future__ import annotations

import importlib
import sys
import types

import jinja2
import pytest

from textbound.adapters import EngineMissing
from textbound.oracles.chat_oracle import outcome, render

ADAPTER = "textbound.adapters.litellm_adapter"
FACTORY = "litellm.litellm_core_utils.prompt_templates.factory"
MESSAGES = [{"role": "user", "content": "hi"}]


def fresh_adapter():
    sys.modules.pop(ADAPTER, None)
    return importlib.import_module(ADAPTER)


@pytest.fixture
def stand_in(monkeypatch):
    """A ``litellm`` whose ``prompt_factory`` records its arguments and renders the cached
    tokenizer_config's template with its bos and eos tokens; the calls are listed on the module."""
    litellm = types.ModuleType("litellm")
    litellm.known_tokenizer_config, litellm.calls = {}, []
    factory = types.ModuleType(FACTORY)

    def prompt_factory(model, messages, custom_llm_provider=None, api_key=None):
        litellm.calls.append({"model": model, "messages": messages, "custom_llm_provider": custom_llm_provider})
        config = litellm.known_tokenizer_config[model]["tokenizer"]
        return jinja2.Environment().from_string(config["chat_template"]).render(
            messages=messages, bos_token=config.get("bos_token", ""), eos_token=config.get("eos_token", ""))

    factory.prompt_factory = prompt_factory
    monkeypatch.setitem(sys.modules, "litellm", litellm)
    for name in ("litellm.litellm_core_utils", "litellm.litellm_core_utils.prompt_templates"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, FACTORY, factory)
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0-stand-in")
    yield litellm
    sys.modules.pop(ADAPTER, None)


def test_the_template_and_its_tokens_reach_prompt_factory_as_the_hubs_cached_config(stand_in):
    adapter = fresh_adapter()
    template = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}"
    assert adapter.render_chat(template, MESSAGES, bos_token="<s>", eos_token="</s>", pad_token="<pad>") == "<s>hi</s>"
    (call,) = stand_in.calls
    assert call == {"model": adapter.MODEL, "messages": MESSAGES, "custom_llm_provider": None}
    assert stand_in.known_tokenizer_config[adapter.MODEL] == {
        "status": "success", "tokenizer": {"chat_template": template, "bos_token": "<s>", "eos_token": "</s>"}}


def test_what_litellms_entry_point_takes_no_argument_for_is_not_passed_on(stand_in):
    adapter = fresh_adapter()
    tools = [{"type": "function", "function": {"name": "f"}}]
    assert adapter.render_chat("{{ tools }}|{{ add_generation_prompt }}", MESSAGES, tools=tools,
                               add_generation_prompt=True, enable_thinking=True) == "|"
    assert "tools" not in stand_in.known_tokenizer_config[adapter.MODEL]["tokenizer"]


def test_a_template_that_is_not_text_is_a_type_error_naming_it(stand_in):
    with pytest.raises(TypeError, match="a chat template is a str, not bytes"):
        fresh_adapter().render_chat(b"{{ x }}", MESSAGES)


def test_without_litellm_the_setup_says_what_installs_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)
    sys.modules.pop(ADAPTER, None)
    with pytest.raises(EngineMissing, match=r"pip install 'textbound\[litellm\]'"):
        importlib.import_module(ADAPTER)
    sys.modules.pop(ADAPTER, None)


# -- litellm itself ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def litellm_adapter():
    pytest.importorskip("litellm", reason="litellm is not installed (nox -s engine_litellm installs it)")
    sys.modules.pop(ADAPTER, None)
    return importlib.import_module(ADAPTER)


def test_litellm_renders_a_plain_template_as_transformers(litellm_adapter):
    template = "{{ bos_token }}{%- for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor -%}" \
               "{%- if add_generation_prompt %}<a>{% endif %}"
    assert (litellm_adapter.render_chat(template, MESSAGES, add_generation_prompt=True, bos_token="<s>")
            == render(template, MESSAGES, add_generation_prompt=True, bos_token="<s>") == "<s><user>hi<a>")


def test_litellm_prints_what_raise_exception_is_given(litellm_adapter):
    """factory.py's ``raise_exception`` is a lambda returning an Exception: the template prints it."""
    template = "{% if messages[0].role != 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    _, raised = outcome(lambda: render(template, MESSAGES))
    assert raised.error_class == "jinja2.exceptions.TemplateError"
    assert litellm_adapter.render_chat(template, MESSAGES) == "Error message - System role not supported"


def test_litellm_cannot_compile_loop_controls_and_sends_the_contents_joined(litellm_adapter):
    """No ``jinja2.ext.loopcontrols``: ``{% break %}`` is a syntax error, which prompt_factory turns
    into default_pt's prompt."""
    template = "{% for m in messages %}[{{ m.content }}]{% break %}{% endfor %}"
    messages = [*MESSAGES, {"role": "assistant", "content": "yo"}]
    assert render(template, messages) == "[hi]"
    assert litellm_adapter.render_chat(template, messages) == "hi yo"


def test_litellm_keeps_the_newline_after_a_block_tag(litellm_adapter):
    template = "{% if true %}\n  {% set x = 1 %}A{% endif %}"
    assert render(template, MESSAGES) == "A"
    assert litellm_adapter.render_chat(template, MESSAGES) == "\n  A"


def test_an_error_after_the_system_probe_fails_gives_an_empty_prompt(litellm_adapter):
    """The system probe renders a lone system message; where that and the real render both raise,
    _render_chat_template swallows the error and returns ''."""
    template = "{{ messages[1].content.upper() }}"
    _, raised = outcome(lambda: render(template, MESSAGES))
    assert raised.error_class == "jinja2.exceptions.UndefinedError"
    assert litellm_adapter.render_chat(template, MESSAGES) == ""
