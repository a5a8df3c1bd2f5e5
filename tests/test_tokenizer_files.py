"""Bad input gets a clear error naming what and where: corrupt files, invalid ids, invalid text."""
from __future__ import annotations

import json

import pytest
import tokenizers

from textbound.impl import Tokenizer, TokenizerFileError


def minimal_spec(**changes) -> dict:
    spec = {
        "version": "1.0",
        "added_tokens": [{"id": 3, "content": "<s>", "special": True, "normalized": False,
                          "lstrip": False, "rstrip": False, "single_word": False}],
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
    }
    spec.update(changes)
    return spec


def load(spec: dict) -> Tokenizer:
    return Tokenizer.from_str(json.dumps(spec), source="t.json")


def test_minimal_tokenizer_works():
    tokenizer = load(minimal_spec())
    assert tokenizer.encode("ab<s>a", add_special_tokens=False) == [2, 3, 0]
    assert tokenizer.decode([2, 3, 0], skip_special_tokens=True) == "ab a"


@pytest.mark.parametrize("text, message", [
    ("{", "t.json: invalid JSON at line 1"),
    ("[]", "t.json: $: expected an object, found list"),
])
def test_not_a_tokenizer_json(text, message):
    with pytest.raises(TokenizerFileError, match=message.replace("$", r"\$").replace("[", r"\[")):
        Tokenizer.from_str(text, source="t.json")


@pytest.mark.parametrize("changes, where", [
    ({"model": {"type": "Unigram", "vocab": [], "unk_id": 0}}, r"\$\.model\.unk_id"),
    ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}}, r"\$\.normalizer\.precompiled_charsmap"),
    ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Bogus"}]}},
     r"\$\.normalizer\.normalizers\[1\]\.type"),
    ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated", "invert": False}},
     r"\$\.pre_tokenizer\.pattern"),
    ({"decoder": {"type": "Nope"}}, r"\$\.decoder\.type"),
    ({"post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}}],
                         "pair": [], "special_tokens": {}}}, r"\$\.post_processor"),
    ({"added_tokens": [{"content": "<s>"}]}, r"\$\.added_tokens\[0\]\.id"),
    ({"version": "2.0"}, r"\$\.version"),
])
def test_corrupt_or_unsupported_nodes_name_their_json_path(changes, where):
    with pytest.raises(TokenizerFileError, match=rf"t\.json: {where}"):
        load(minimal_spec(**changes))


def test_merge_naming_an_absent_token():
    spec = minimal_spec()
    spec["model"]["merges"] = ["a b", "a zz"]
    with pytest.raises(TokenizerFileError, match=r"\$\.model\.merges\[1\]"):
        load(spec)


def test_duplicate_id_in_vocab():
    spec = minimal_spec()
    spec["model"]["vocab"] = {"a": 0, "b": 0, "ab": 2}
    with pytest.raises(TokenizerFileError, match=r"\$\.model\.vocab"):
        load(spec)


def test_missing_folder_and_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no tokenizer.json"):
        Tokenizer.from_dir(tmp_path)
    (tmp_path / "tokenizer.json").write_bytes(b"\xff\xfe")
    with pytest.raises(TokenizerFileError, match="not UTF-8"):
        Tokenizer.from_dir(tmp_path)


@pytest.mark.parametrize("ids, message", [
    ([-1], "invalid token id -1 at position 0"),
    ([0, 2**32], "invalid token id 4294967296 at position 1"),
    (["a"], "invalid token id 'a' at position 0"),
    ([True], "invalid token id True at position 0"),
])
def test_invalid_ids(ids, message):
    with pytest.raises(ValueError, match=message):
        load(minimal_spec()).decode(ids)


def test_ids_the_vocabulary_lacks_drop_as_the_oracle_drops_them():
    spec = minimal_spec()
    oracle = tokenizers.Tokenizer.from_str(json.dumps(spec))
    ids = [0, 99, 1, 12345]
    assert load(spec).decode(ids) == oracle.decode(ids)


def test_strict_decode_names_the_first_id_the_vocabulary_lacks_and_its_position():
    tokenizer = load(minimal_spec())
    with pytest.raises(ValueError, match=r"^token id 99 at position 1 is not in the vocabulary \(this tokenizer has ids 0\.\."):
        tokenizer.decode([0, 99, 1, 12345], strict=True)
    assert tokenizer.decode([0, 1], strict=True) == tokenizer.decode([0, 1])


def test_text_that_is_not_valid_unicode():
    with pytest.raises(ValueError, match=r"lone surrogate U\+D800 at index 1"):
        load(minimal_spec()).encode("a\ud800", add_special_tokens=False)
    with pytest.raises(TypeError, match="encode takes a str, not bytes"):
        load(minimal_spec()).encode(b"ab", add_special_tokens=False)


def test_config_tokens_and_template(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps(minimal_spec()))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": {"content": "<s>", "__type": "AddedToken"}, "eos_token": "<s>",
        "chat_template": [{"name": "default", "template": "{{ x }}"}, {"name": "tool_use", "template": "t"}],
    }))
    tokenizer = Tokenizer.from_dir(tmp_path)
    assert (tokenizer.bos_token, tokenizer.eos_token, tokenizer.eos_token_id) == ("<s>", "<s>", 3)
    assert tokenizer.chat_template == "{{ x }}"


def test_token_bytes_when_the_decoder_rewrites_a_token_by_position():
    """BPEDecoder turns a suffix into a space only before a next token: found by pipeline fuzzing."""
    import tokenizers

    from textbound.impl import IncrementalDetokenizer

    spec = minimal_spec(decoder={"type": "BPEDecoder", "suffix": "_"})
    spec["model"]["vocab"] = {"x_y": 0, "b": 1, "ab_": 2}
    spec["model"]["merges"] = []
    tokenizer, oracle = load(spec), tokenizers.Tokenizer.from_str(json.dumps(spec))
    # "x_y" reads "x y" before another token and "xy" last: it has no bytes of its own
    assert tokenizer.token_bytes(0) == oracle.decode([0]).encode()
    ids = [0, 1, 2, 0]
    detokenizer = IncrementalDetokenizer(tokenizer, skip_special_tokens=False)
    streamed = "".join(detokenizer.add([i]) for i in ids) + detokenizer.flush()
    assert streamed == oracle.decode(ids, skip_special_tokens=False)
