"""The Mistral families: every distinct vocabulary mistral-common ships becomes a tokenizer.json
folder through transformers' converters, built once and cached, and it is Mistral's vocabulary
(tokenizers reads it as mistral-common's own tokenizer does on plain text)."""
from __future__ import annotations

import json

import pytest

from textbound.oracles.mistral_source import SOURCE_MANIFEST, source_manifest
from textbound.families import FamilyError, mistral

pytest.importorskip("mistral_common", reason="the Mistral families need mistral-common")
PLAIN_TEXTS = ["Hello world", "The quick brown fox jumps over the lazy dog.", "naïve café, 12345 ¿qué?", "a\nb\tc"]


@pytest.mark.parametrize("filename, name", [
    ("tokenizer.model.v1", "mistral-v1"),
    ("mistral_instruct_tokenizer_241114.model.v7m1", "mistral-v7m1"),
    ("tekken_240911.json", "mistral-tekken-240911"),
    ("tekken.json", "mistral-tekken"),
    ("README.md", None),
    ("tekken_240911.json.bak", None),
])
def test_family_names_follow_the_shipped_file_names(filename, name):
    assert mistral.family_name(filename) == name


def test_every_distinct_shipped_vocabulary_is_a_family():
    names = mistral.mistral_family_names()
    shipped = sorted(p.name for p in mistral.data_dir().iterdir() if mistral.family_name(p.name))
    assert {"mistral-v1", "mistral-v2", "mistral-v3", "mistral-v7", "mistral-tekken-240911"} <= set(names)
    # .model.v7m1 has the bytes of .model.v7: one family, not two
    digests = {mistral.file_sha256(mistral.data_dir() / f) for f in shipped}
    assert len(names) == len(digests)


def test_unknown_family_names_what_there_is():
    with pytest.raises(FamilyError, match="mistral-v3"):
        mistral.mistral_family("mistral-v99")


@pytest.fixture(scope="module")
def built_v3(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return cache, mistral.mistral_family("mistral-v3", cache_dir=cache)


def test_a_build_is_a_family_folder_with_its_source_named(built_v3):
    cache, family = built_v3
    assert family.origin == "mistral" and family.name == "mistral-v3"
    files = {p.name for p in family.path.iterdir()}
    assert {"tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "mistral_source.json"} <= files
    manifest = source_manifest(family.path)
    assert manifest["source"].endswith(".model.v3") and manifest["kind"] == "sentencepiece"
    assert mistral.source_file(family.path).name == manifest["source"]
    assert "[INST]" in (family.path / "chat_template.jinja").read_text(encoding="utf-8")
    assert [p.name for p in (cache / "families").iterdir()] == [family.path.name]  # no staging left behind


def test_a_cached_build_is_reused(built_v3):
    cache, family = built_v3
    stamp = (family.path / "tokenizer.json").stat().st_mtime_ns
    again = mistral.mistral_family("mistral-v3", cache_dir=cache)
    assert again.path == family.path and (again.path / "tokenizer.json").stat().st_mtime_ns == stamp


def test_a_source_that_changed_since_the_build_is_an_error(built_v3, tmp_path):
    _, family = built_v3
    copy = tmp_path / "copy"
    copy.mkdir()
    manifest = source_manifest(family.path)
    (copy / SOURCE_MANIFEST).write_text(json.dumps({**manifest, "sha256": "0" * 64}))
    with pytest.raises(FamilyError, match="rebuild"):
        mistral.source_file(copy)
    assert mistral.source_file(tmp_path) is None  # not a Mistral family


def test_sentencepiece_families_read_plain_text_as_sentencepiece_does(built_v3):
    import sentencepiece
    import tokenizers

    _, family = built_v3
    converted = tokenizers.Tokenizer.from_file(str(family.path / "tokenizer.json"))
    original = sentencepiece.SentencePieceProcessor(model_file=str(mistral.source_file(family.path)))
    assert [converted.encode(t, add_special_tokens=False).ids for t in PLAIN_TEXTS] == original.encode(PLAIN_TEXTS)


def test_tekken_families_read_plain_text_as_mistral_common_does():
    import tokenizers
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    family = mistral.mistral_family("mistral-tekken-240911")
    converted = tokenizers.Tokenizer.from_file(str(family.path / "tokenizer.json"))
    original = Tekkenizer.from_file(mistral.source_file(family.path))
    assert converted.get_vocab_size(with_added_tokens=True) == original.n_words
    assert [converted.encode(t, add_special_tokens=False).ids for t in PLAIN_TEXTS] == \
        [original.encode(t, bos=False, eos=False) for t in PLAIN_TEXTS]
