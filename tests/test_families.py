"""The embedded families build, deterministically, into tokenizer.json files that really contain
what their specs name; together they use every component the harness must cover. Also the corpora
that train them. Structural checks only: implementation-vs-oracle comparisons live elsewhere."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer

from textbound import corpora
from textbound.corpora import charsmaps
from textbound.families import cache, embedded

NAMES = embedded.embedded_family_names()
STAGES = ("normalizer", "pre_tokenizer", "decoder")
CHILDREN = ("normalizers", "pretokenizers", "processors", "decoders")

# "stage:Type" alone means the component is used; "stage:Type:field=value" a particular setting.
REQUIRED = {
    *(f"normalizer:{t}" for t in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Strip", "StripAccents",
                                  "Prepend", "Sequence", "Precompiled", "Nmt", "BertNormalizer")),
    *(f"model:{t}" for t in ("BPE", "Unigram", "WordPiece", "WordLevel")),
    "normalizer:Replace:pattern=String", "normalizer:Replace:pattern=Regex",
    "pre_tokenizer:ByteLevel:add_prefix_space=True", "pre_tokenizer:ByteLevel:add_prefix_space=False",
    "pre_tokenizer:ByteLevel:use_regex=True", "pre_tokenizer:ByteLevel:use_regex=False",
    *(f"pre_tokenizer:Split:behavior={b}" for b in ("Removed", "Isolated", "MergedWithPrevious",
                                                    "MergedWithNext", "Contiguous")),
    "pre_tokenizer:Split:invert=True", "pre_tokenizer:Split:invert=False",
    *(f"pre_tokenizer:Metaspace:prepend_scheme={s}" for s in ("always", "first", "never")),
    "pre_tokenizer:Metaspace:split=True", "pre_tokenizer:Metaspace:split=False",
    *(f"pre_tokenizer:{t}" for t in ("Whitespace", "WhitespaceSplit", "Punctuation", "Digits", "Sequence",
                                     "BertPreTokenizer", "CharDelimiterSplit")),
    "model:byte_fallback", "model:ignore_merges", "model:unk_token", "model:fuse_unk",
    "model:continuing_subword_prefix", "model:end_of_word_suffix",
    "added:special=True", "added:special=False", "added:normalized=True", "added:normalized=False",
    "added:lstrip", "added:rstrip", "added:single_word",
    *(f"post_processor:{t}" for t in ("TemplateProcessing", "ByteLevel", "RobertaProcessing",
                                      "BertProcessing", "Sequence")),
    *(f"decoder:{t}" for t in ("ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip",
                               "BPEDecoder", "Sequence", "WordPiece", "CTC")),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    cache_dir = tmp_path_factory.mktemp("cache")
    return {name: embedded.build_family(name, cache_dir) for name in NAMES}


def saved_json(directory: Path) -> dict[str, Any]:
    return json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))


def contains(expected: Any, actual: Any) -> bool:
    """Every key the spec gives is in the saved node with the same value; lists match item by item."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and contains(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) \
            and all(contains(e, a) for e, a in zip(expected, actual))
    return type(expected) is type(actual) and expected == actual


def components(stage: str, node: dict[str, Any] | None) -> Iterator[str]:
    if node is None:
        return
    kind = node["type"]
    yield f"{stage}:{kind}"
    for field in ("add_prefix_space", "use_regex", "behavior", "invert", "prepend_scheme", "split"):
        if field in node:
            yield f"{stage}:{kind}:{field}={node[field]}"
    if "pattern" in node:
        yield f"{stage}:{kind}:pattern={next(iter(node['pattern']))}"
    for child in CHILDREN:
        for item in node.get(child, []):
            yield from components(stage, item)


def covered(tokenizer_json: dict[str, Any]) -> set[str]:
    found = {c for stage in (*STAGES, "post_processor") for c in components(stage, tokenizer_json[stage])}
    model = tokenizer_json["model"]
    found.add(f"model:{model['type']}")
    found |= {f"model:{option}" for option in ("byte_fallback", "ignore_merges", "fuse_unk", "unk_token",
                                               "continuing_subword_prefix", "end_of_word_suffix")
              if model["type"] == "BPE" and model[option]}
    for token in tokenizer_json["added_tokens"]:
        found |= {f"added:special={token['special']}", f"added:normalized={token['normalized']}"}
        found |= {f"added:{flag}" for flag in ("lstrip", "rstrip", "single_word") if token[flag]}
    return found


def test_family_names_and_specs() -> None:
    assert len(NAMES) >= 8
    assert {"qwen", "llama3", "gpt2", "sentencepiece", "metaspace", "unigram", "wordpiece", "wordlevel"} <= set(NAMES)
    for name in NAMES:
        assert embedded.load_spec(name)["model"]["type"] in embedded.EMPTY_MODELS
    with pytest.raises(ValueError, match="unknown family 'nope'"):
        embedded.load_spec("nope")


@pytest.mark.parametrize("name", NAMES)
def test_saved_tokenizer_contains_the_spec(built: dict[str, Path], name: str) -> None:
    spec = embedded.load_spec(name)
    saved = saved_json(built[name])
    tokenizer = Tokenizer.from_file(str(built[name] / "tokenizer.json"))
    for stage in STAGES:
        assert contains(charsmaps.resolve_charsmaps(spec[stage]), saved[stage]), stage
    expected_post = embedded.resolve_token_ids(spec["post_processor"], tokenizer.token_to_id)
    assert contains(expected_post, saved["post_processor"])
    assert contains(spec["model"], {k: v for k, v in saved["model"].items() if k not in ("vocab", "merges")})
    assert saved["model"].get("merges", True), "training produced no merges"
    added = {token["content"]: token for token in saved["added_tokens"]}
    assert len(added) == len(spec["added_tokens"])
    for token in spec["added_tokens"]:
        assert contains(token, added[token["content"]])
    vocab = saved["model"]["vocab"]
    if isinstance(vocab, list):  # Unigram's pieces and scores
        assert saved["model"]["unk_id"] == [piece for piece, _ in vocab].index(spec["trainer"]["unk_token"])
        vocab = {piece for piece, _ in vocab}
    for reserved in spec["trainer"].get("special_tokens", []):
        assert reserved in vocab
    if spec["model"].get("unk_token"):
        assert spec["model"]["unk_token"] in vocab
    if spec["model"].get("byte_fallback"):
        assert all(f"<0x{b:02X}>" in vocab for b in range(256))
    if spec["trainer"].get("initial_alphabet") == "byte_level":
        assert all(tokenizer.encode(chr(c), add_special_tokens=False).ids for c in range(0x20, 0x2FF))
    config = json.loads((built[name] / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config == spec["tokenizer_config"]
    # tokenizers reads the file back to the very same JSON: nothing in it was ignored or rewritten.
    assert json.loads(tokenizer.to_str()) == saved


def test_every_required_component_is_covered(built: dict[str, Path]) -> None:
    found: set[str] = set()
    for directory in built.values():
        found |= covered(saved_json(directory))
    assert not REQUIRED - found, sorted(REQUIRED - found)


def test_chat_template_for_chatml() -> None:
    template = embedded.load_spec("qwen")["tokenizer_config"]["chat_template"]
    assert "<|im_start|>" in template and "<|im_end|>" in template


def test_cached_build_is_reused(built: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    def no_training(spec: dict[str, Any]) -> str:
        raise AssertionError("a cached family was trained again")

    monkeypatch.setattr(embedded, "train", no_training)
    cache_dir = built[NAMES[0]].parent.parent
    assert {name: embedded.build_family(name, cache_dir) for name in NAMES} == built


def test_cache_key_follows_the_spec(built: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    name = "metaspace_never"
    spec = embedded.load_spec(name)
    spec["trainer"]["vocab_size"] -= 1
    monkeypatch.setattr(embedded, "load_spec", lambda _: spec)
    other = embedded.build_family(name, built[name].parent.parent)
    assert other != built[name]
    assert saved_json(other)["model"]["vocab"] != saved_json(built[name])["model"]["vocab"]


def test_default_cache_dir_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TEXTBOUND_CACHE", str(tmp_path))
    assert cache.default_cache_dir() == tmp_path
    monkeypatch.delenv("TEXTBOUND_CACHE")
    assert cache.default_cache_dir() == Path.home() / ".cache" / "textbound"


def test_other_processes_build_the_same_bytes(built: dict[str, Path], tmp_path: Path) -> None:
    """Two processes (other hash seeds) race on one family, then build the rest from opposite ends."""
    script = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        from textbound.families import embedded
        names = embedded.embedded_family_names()
        order = ["metaspace_never"] + (names if sys.argv[2] == "forward" else names[::-1])
        print(json.dumps({n: str(embedded.build_family(n, Path(sys.argv[1]))) for n in order}))
    """)
    root = Path(__file__).resolve().parent.parent
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), order], stdout=subprocess.PIPE,
                              text=True, cwd=root, env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)})
             for order, seed in (("forward", "1"), ("backward", "2"))]
    outputs = [json.loads(proc.communicate(timeout=120)[0]) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert outputs[0] == outputs[1]
    for name, directory in outputs[0].items():
        assert Path(directory).name == built[name].name
        for filename in embedded.FILES:
            assert (Path(directory) / filename).read_bytes() == (built[name] / filename).read_bytes(), name
    # No staging directory is left behind by either the winner or the loser of a race.
    assert sorted(p.name for p in (tmp_path / "families").iterdir()) == sorted(p.name for p in built.values())


def test_losing_a_publish_race_keeps_the_winner(tmp_path: Path) -> None:
    target = tmp_path / "families" / "x-0"
    cache.publish(target, {"tokenizer.json": "first", "tokenizer_config.json": "{}"})
    cache.publish(target, {"tokenizer.json": "second", "tokenizer_config.json": "{}"})
    assert (target / "tokenizer.json").read_text() == "first"
    assert [p.name for p in target.parent.iterdir()] == ["x-0"]


def test_corpus_files_keep_their_exact_characters() -> None:
    texts = corpora.text_files()
    assert len([name for name in texts if name.startswith("prose_")]) >= 12
    assert len([name for name in texts if name.startswith("code_")]) >= 5
    assert sum(len(text.encode("utf-8")) for text in texts.values()) < 200_000
    assert "\r\n" in texts["whitespace"] and "\r" in texts["whitespace"].replace("\r\n", "")
    for char in ("\x00", "\x1b", "\x7f", "\x85", "\x9f"):
        assert char in texts["control"]
    for char in ("\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", *map(chr, range(0x2000, 0x200B))):
        assert char in texts["whitespace"]
    assert "<|im_start|>" in texts["special_tokens"] and "[INST]" in texts["special_tokens"]


@pytest.mark.parametrize("max_len", [1, 64, 256, 100_000])
def test_text_cases_are_whole_lines_then_whole_files(max_len: int) -> None:
    texts = corpora.text_files()
    cases = corpora.text_cases(max_len=max_len)
    snippets, whole = cases[:-len(texts)], cases[-len(texts):]
    assert whole == list(texts.items())
    for category, text in texts.items():
        pieces = [snippet for name, snippet in snippets if name == category]
        assert "".join(pieces) == text
        for piece in pieces:
            assert len(piece) <= max_len or len(corpora.split_lines(piece)) == 1
            assert "\n" not in piece[:-1] or max_len > 1
    with pytest.raises(ValueError):
        corpora.text_cases(max_len=0)
