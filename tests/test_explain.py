"""``textbound explain``: both sides stage by stage, the first difference marked, the catalogue's
and the counterfactual oracles' explanation; exit 0 same, 1 differs, 2 bad input."""
from __future__ import annotations

import json

import pytest

from textbound.cli import main

DECOMPOSED = "cafe\u0301"  # NFC composes it: a family with an NFC normalizer encodes "café"


def explain(capsys, *argv) -> tuple[int, str, str]:
    code = main(["explain", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_mutant_is_caught_at_its_stage_and_explained(capsys):
    code, out, _ = explain(capsys, "--family", "qwen", "--text", DECOMPOSED, "--impl", "textbound.mutants.tokenizer_nfc_skipped")
    assert code == 1
    assert ">> normalized text: text not NFC-normalized" in out
    assert "*  model tokens: differs" in out
    assert "explained by tokenizer_nfc_skipped (the NFC normalizer skipped)" in out
    assert "the engine skips the normalizer" in out


def test_an_engine_without_stages_is_explained_by_a_counterfactual_oracle(capsys):
    code, out, _ = explain(capsys, "--family", "qwen", "--text", DECOMPOSED,
                           "--impl", "tests.one_bug.stageless_no_normalizer")
    assert code == 1
    assert "normalized text: (impl shows no such stage)" in out
    assert ">> model tokens: " in out
    assert "counterfactual oracles giving impl's answer: the engine skips the normalizer" in out


def test_a_broken_decode_is_marked_at_the_decoded_text(capsys):
    code, out, _ = explain(capsys, "--family", "gpt2", "--ids", "[1010, 281]",
                           "--impl", "tests.one_bug.decode_drops_leading_space")
    assert code == 1
    assert "   tokens: same" in out and ">> decoded text: drops ' ' at the start" in out
    assert "not explained by the mutation catalogue" in out


def test_agreement_exits_0(capsys):
    code, out, _ = explain(capsys, "--family", "gpt2", "--text", "hello world")
    assert code == 0 and "no difference: impl agrees with the oracle at every stage" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--family", "gpt2", "--ids", "[1, x]"], "--ids '[1, x]': expected a JSON list of token ids"),
    (["--family", "gpt2", "--ids", "[-5]"], "the oracle refuses this input"),
    (["--family", "gpt2", "--text", "a\udcff"], "--text is not UTF-8: character 1 is U+DCFF"),  # argv byte 0xff
    (["--family", "no-such-family", "--text", "a"], "unknown family no-such-family"),
    (["--family", "gpt2", "--text", "a", "--impl", "no_such_module"], "--impl no_such_module: cannot import"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = explain(capsys, *argv)
    assert code == 2 and not out
    assert err.startswith("textbound explain: ") and message in err and err.count("\n") == 1


def test_text_and_ids_together_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["explain", "--family", "gpt2", "--text", "a", "--ids", "[1]"])
    assert exit_.value.code == 2


def test_counterfactual_oracles_name_the_option_an_engine_ignores():
    import json

    from textbound.families import build_family
    from textbound.naming.counterfactuals import reproducing
    from textbound.oracles.tokenizers_oracle import TokenizersOracle
    from textbound.plan.implementation import Implementation

    folder = build_family("roberta")
    spec = json.loads((folder / "tokenizer.json").read_text())
    before = json.dumps(spec)
    engine = Implementation("textbound.mutants.tokenizer_prefix_space_ignored").Tokenizer.from_dir(folder)
    ids = engine.encode("hello", add_special_tokens=False)
    found = reproducing(spec, lambda tokenizer: TokenizersOracle(tokenizer).encode("hello") == ids)
    assert "reads pre_tokenizer.add_prefix_space as false" in found
    assert json.dumps(spec) == before  # each counterfactual changed a copy


def test_an_implementation_that_raises_differs_at_its_answer(tmp_path, monkeypatch, capsys):
    (tmp_path / "raising_impl.py").write_text(
        "from textbound import impl\nfrom textbound.impl import *  # noqa: F403\n\n\n"
        "class Tokenizer(impl.Tokenizer):\n"
        "    def encode(self, text, add_special_tokens=False):\n"
        "        raise RuntimeError('no encoding today')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = explain(capsys, "--family", "gpt2", "--text", "a", "--impl", "raising_impl")
    assert code == 1
    assert ">> post-processed ids: raised RuntimeError: no encoding today" in out


CONVERSATION = {"messages": [{"role": "system", "content": "Be brief"}, {"role": "user", "content": "Hi"}],
                "add_generation_prompt": True}


def _conversation_file(tmp_path, data) -> str:
    path = tmp_path / "conversation.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_a_chat_mutant_is_marked_at_the_rendered_prompt_and_explained(capsys, tmp_path):
    code, out, _ = explain(capsys, "--family", "qwen", "--conversation", _conversation_file(tmp_path, CONVERSATION),
                           "--impl", "textbound.mutants.chat_generation_prompt_ignored")
    assert code == 1
    # qwen's template opens thinking in its generation prompt: the text dropped ends in '<think>\n'
    assert ">> rendered prompt: drops mixed text before symbols" in out
    assert "      impl:   '<|im_start|>system\\nBe brief<|im_end|>\\n<|im_start|>user\\nHi<|im_end|>\\n'" in out
    assert "   prompt ids: same" in out
    assert "explained by chat_generation_prompt_ignored (add_generation_prompt ignored)" in out


def test_a_conversation_with_its_own_template_agrees_with_impl(capsys, tmp_path):
    data = {**CONVERSATION, "chat_template": "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"}
    code, out, _ = explain(capsys, "--family", "gpt2", "--conversation", _conversation_file(tmp_path, data))
    assert code == 0 and "both:   '[system] Be brief\\n[user] Hi\\n'" in out
    assert "no difference: impl agrees with the oracle at every stage" in out


@pytest.mark.parametrize(("data", "message"), [
    ("[{\"role\": \"user\"", "not a JSON file"),
    ({"messages": [1]}, "expected a JSON list of messages (objects)"),
    ({"messages": [], "tool": []}, "unknown keys tool"),
    ({"messages": [], "chat_template": 3}, "chat_template must be a template's source text"),
])
def test_a_bad_conversation_file_is_one_line_and_exit_2(capsys, tmp_path, data, message):
    code, out, err = explain(capsys, "--family", "gpt2", "--conversation", _conversation_file(tmp_path, data))
    assert code == 2 and not out
    assert err.startswith("textbound explain: --conversation ") and message in err and err.count("\n") == 1


def test_a_missing_conversation_file_is_exit_2(capsys, tmp_path):
    code, _, err = explain(capsys, "--family", "gpt2", "--conversation", str(tmp_path / "absent.json"))
    assert code == 2 and "cannot read it" in err and err.count("\n") == 1
