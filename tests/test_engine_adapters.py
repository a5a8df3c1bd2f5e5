"""The adapters of heavy optional engines: @huggingface/jinja and @huggingface/tokenizers under node,
llama.cpp through llama-cpp-python. They run in their own nox sessions (nox -s engines_js, nox -s
engine_llama_cpp), which name them in $TEXTBOUND_ENGINE_TESTS ("js", "llama_cpp"); elsewhere they
skip, saying so. A test also skips, saying what to install, when its engine is missing; when it is
there, a few cases go through the adapter and agree with the oracles, or disagree where the engine
is known to.
"""
from __future__ import annotations

import os

import pytest

from textbound.checks import Subject, run_check
from textbound.families import build_family
from textbound.oracles.chat_oracle import frozen_clock, outcome, render
from textbound.plan.implementation import Implementation

from .families import NEEDS_MODELS, SHARED
from .test_adapters import some_cases

ENGINE_TESTS_ENV = "TEXTBOUND_ENGINE_TESTS"
CHOSEN = set(os.environ.get(ENGINE_TESTS_ENV, "").split(","))
JS = pytest.mark.skipif("js" not in CHOSEN, reason=f"the JavaScript engines run in nox -s engines_js ({ENGINE_TESTS_ENV}=js)")
LLAMA_CPP = pytest.mark.skipif("llama_cpp" not in CHOSEN,
                               reason=f"llama.cpp runs in nox -s engine_llama_cpp ({ENGINE_TESTS_ENV}=llama_cpp)")
MESSAGES = [{"role": "user", "content": "é <b>"}, {"role": "assistant", "content": "ok"}]


def adapter(module: str):
    """The adapter module, or a skip with its EngineMissing message (what to install)."""
    return pytest.importorskip(f"textbound.adapters.{module}", exc_type=ImportError)


def divergences(module: str, family: str, component: str, count: int) -> list[str]:
    """The kinds of the divergences the first ``count`` quick cases of an embedded family show."""
    subject = Subject(family, build_family(family), Implementation(f"textbound.adapters.{module}"))
    return [found.kind for case in some_cases(family, component, count) if (found := run_check(subject, case))]


# -- @huggingface/jinja ---------------------------------------------------------------------------

@JS
def test_hf_jinja_renders_as_transformers_on_a_plain_template():
    hf_jinja = adapter("hf_jinja")
    template = ("{%- for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor -%}"
                "{% if add_generation_prompt %}<assistant>{% endif %}{{ strftime_now('%Y-%m-%d') }}")
    with frozen_clock():
        expected = render(template, MESSAGES, add_generation_prompt=True)
        assert hf_jinja.render_chat(template, MESSAGES, add_generation_prompt=True) == expected


@JS
def test_hf_jinja_continues_the_final_message_as_transformers():
    hf_jinja = adapter("hf_jinja")
    template = "{% for m in messages %}[{{ m.content }}]{% endfor %}"
    assert (hf_jinja.render_chat(template, MESSAGES, continue_final_message=True)
            == render(template, MESSAGES, continue_final_message=True) == "[é <b>][ok")


@JS
def test_hf_jinja_errors_are_named_as_jinja2_names_them():
    hf_jinja = adapter("hf_jinja")
    _, raised = outcome(lambda: hf_jinja.render_chat("{{ raise_exception('no') }}", MESSAGES))
    assert (raised.error_class, raised.message) == ("jinja2.exceptions.TemplateError", "no")
    _, raised = outcome(lambda: hf_jinja.render_chat("{% if %}", MESSAGES))
    assert raised.error_class == "jinja2.exceptions.TemplateSyntaxError"


@JS
def test_hf_jinja_prints_none_as_nothing_where_jinja2_prints_none():
    """A known difference of the engine (field report: hf-jinja), pinned so that a fix shows."""
    hf_jinja = adapter("hf_jinja")
    template = "[{{ tools }}]"
    assert render(template, MESSAGES) == "[None]"
    assert hf_jinja.render_chat(template, MESSAGES) == "[]"


@JS
def test_transformers_js_render_chat_leaves_continue_final_message_to_the_template(monkeypatch):
    """Through the generic adapter the engine renders as transformers.js' apply_chat_template does:
    continue_final_message is only a variable, so the final message is closed as any other."""
    hf_jinja = adapter("hf_jinja")
    monkeypatch.setenv("TEXTBOUND_ENGINE_CMD", " ".join(hf_jinja.node_command(hf_jinja.CHAT_ENGINE, hf_jinja.CHAT_PACKAGE)))
    engine = Implementation("textbound.adapters.jsonl_engine")
    template = "{% for m in messages %}[{{ m.content }}]{% endfor %}{{ continue_final_message }}"
    assert engine.render_chat(template, MESSAGES, continue_final_message=True) == "[é <b>][ok]true"


# -- @huggingface/tokenizers ------------------------------------------------------------------

@pytest.mark.parametrize("family", ["gpt2", "llama3"])
@pytest.mark.parametrize("component", ["tokenizer", "detokenizer"])
@JS
def test_js_tokenizers_agree_on_byte_level_families(family, component):
    adapter("js_tokenizers")
    assert divergences("js_tokenizers", family, component, 40) == []


@JS
def test_js_tokenizers_ignore_a_bpe_continuing_subword_prefix():
    """A known bug (field report: tokenizers.js), pinned so that a fix shows: the '##' merges of a
    BPE with continuing_subword_prefix never apply."""
    adapter("js_tokenizers")
    assert divergences("js_tokenizers", "bert", "tokenizer", 200)


@JS
def test_js_tokenizers_reads_a_family_from_disk():
    js_tokenizers = adapter("js_tokenizers")
    import tokenizers
    path = build_family("gpt2")
    oracle = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer = js_tokenizers.Tokenizer.from_dir(path)
    text = "Hello wörld 12"
    assert tokenizer.encode(text) == oracle.encode(text, add_special_tokens=False).ids
    assert tokenizer.vocab_size == oracle.get_vocab_size(with_added_tokens=True)
    token = oracle.id_to_token(100)
    assert (tokenizer.id_to_token(100), tokenizer.token_to_id(token)) == (token, 100)


# -- llama.cpp --------------------------------------------------------------------------------

@NEEDS_MODELS
@LLAMA_CPP
def test_llama_cpp_encodes_and_decodes_qwen3_as_tokenizers():
    llama_cpp_adapter = adapter("llama_cpp_adapter")
    import tokenizers
    oracle = tokenizers.Tokenizer.from_file(str(SHARED["qwen3"] / "tokenizer.json"))
    tokenizer = llama_cpp_adapter.Tokenizer.from_dir(SHARED["qwen3"])
    text = "Hello wörld 12345 <|im_start|>user\n  x"
    ids = oracle.encode(text, add_special_tokens=False).ids
    assert tokenizer.encode(text, add_special_tokens=False) == ids
    assert tokenizer.decode(ids) == text
    assert tokenizer.vocab_size == oracle.get_vocab_size(with_added_tokens=True)


@NEEDS_MODELS
@LLAMA_CPP
def test_llama_cpp_applies_no_normalizer():
    """A known difference (field report: llama.cpp), pinned so that a fix shows: qwen3's NFC turns
    the compatibility ideograph U+F9D8 into U+5F8B before BPE; llama.cpp encodes its own bytes."""
    llama_cpp_adapter = adapter("llama_cpp_adapter")
    import tokenizers
    oracle = tokenizers.Tokenizer.from_file(str(SHARED["qwen3"] / "tokenizer.json"))
    tokenizer = llama_cpp_adapter.Tokenizer.from_dir(SHARED["qwen3"])
    assert tokenizer.encode("\uf9d8") != oracle.encode("\uf9d8", add_special_tokens=False).ids
    assert tokenizer.encode("\u5f8b") == oracle.encode("\u5f8b", add_special_tokens=False).ids


@NEEDS_MODELS
@LLAMA_CPP
def test_llama_cpp_streams_pieces_holding_unfinished_characters():
    llama_cpp_adapter = adapter("llama_cpp_adapter")
    tokenizer = llama_cpp_adapter.Tokenizer.from_dir(SHARED["qwen3"])
    ids = tokenizer.encode("a😀b", add_special_tokens=False)
    stream = llama_cpp_adapter.IncrementalDetokenizer(tokenizer, prompt_ids=ids[:1])
    shown = [stream.add([i]) for i in ids[1:]]
    assert stream.prompt_text == "a" and "".join(shown) + stream.flush() == "😀b"
    assert all("\ufffd" not in delta for delta in shown)


@NEEDS_MODELS
@LLAMA_CPP
def test_llama_cpp_refuses_an_id_outside_the_vocabulary():
    llama_cpp_adapter = adapter("llama_cpp_adapter")
    tokenizer = llama_cpp_adapter.Tokenizer.from_dir(SHARED["qwen3"])
    with pytest.raises(ValueError, match="at position 1"):
        tokenizer.decode([1, tokenizer.vocab_size])
