"""impl.tokenizer.post_processors against the post-processors of `tokenizers`, built from the same JSON node.

The oracle's processor (taken from a Tokenizer loaded with the node) post-processes an Encoding
of known ids; impl's processor gets the same ids. Ids must agree with and without special
tokens, for single inputs and (through process_encodings) for pairs; where tokenizers panics
impl must raise PostProcessorPanic. Faulty nodes must be refused, impl naming the JSON path.
"""
from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st

from textbound.impl.errors import TokenizerFileError
from textbound.impl.tokenizer.post_processors import (
    POST_PROCESSORS,
    PostProcessorPanic,
    post_processor_from_json,
)
from tests.families import SHARED_MODEL_DIRS
from tests.stage_oracle import assert_refused_by_both, oracle_with

os.environ.setdefault("RUST_BACKTRACE", "0")  # keep expected panics short in captured output

WHERE = "tokenizer.json: $.post_processor"
WORDS = [f"w{i}" for i in range(10)]


def oracle_tokenizer(post_processor: dict | None) -> tokenizers.Tokenizer:
    return oracle_with("post_processor", post_processor, vocab={w: i for i, w in enumerate(WORDS)}, unk="w0")


BASE = oracle_tokenizer(None)


@functools.lru_cache(maxsize=None)
def _oracle_processor(node_json: str):
    return oracle_tokenizer(json.loads(node_json)).post_processor


def oracle_process(node: dict, ids: list[int], pair: list[int] | None, add: bool) -> list[int] | type:
    """The processed ids, or PostProcessorPanic when tokenizers panics."""
    encode = functools.partial(BASE.encode, is_pretokenized=True, add_special_tokens=False)
    encoding = encode([WORDS[i] for i in ids])
    pair_encoding = None if pair is None else encode([WORDS[i] for i in pair])
    try:
        return _oracle_processor(json.dumps(node)).process(encoding, pair_encoding, add).ids
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if type(exc).__name__ != "PanicException":
            raise
        return PostProcessorPanic


def impl_process(node: dict, ids: list[int], pair: list[int] | None, add: bool) -> list[int] | type:
    processor = post_processor_from_json(node, WHERE)
    try:
        if pair is None:
            return processor.process(ids, add)
        return [i for encoding in processor.process_encodings([ids, pair], add) for i in encoding]
    except PostProcessorPanic:
        return PostProcessorPanic


def special(name: str, type_id: int = 0) -> dict:
    return {"SpecialToken": {"id": name, "type_id": type_id}}


def sequence(name: str, type_id: int = 0) -> dict:
    return {"Sequence": {"id": name, "type_id": type_id}}


SPECIAL_TOKENS = {
    "<s>": {"id": "<s>", "ids": [100], "tokens": ["<s>"]},
    "</s>": {"id": "</s>", "ids": [101], "tokens": ["</s>"]},
    "multi": {"id": "multi", "ids": [7, 8, 9], "tokens": ["a", "b", "c"]},
    "none": {"id": "none", "ids": [], "tokens": []},
}


def template(single: list[dict], pair: list[dict]) -> dict:
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": SPECIAL_TOKENS}


LLAMA_TEMPLATE = template(
    [special("<s>"), sequence("A")], [special("<s>"), sequence("A"), special("<s>", 1), sequence("B", 1)])
BERT = {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}
ROBERTA = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
           "trim_offsets": True, "add_prefix_space": True}
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
NODES = [
    LLAMA_TEMPLATE,
    template([special("multi"), sequence("A"), special("</s>", 1), special("none")],
             [sequence("B", 1), special("multi"), sequence("A")]),
    template([sequence("A"), sequence("A")], [sequence("A"), sequence("A"), sequence("B")]),
    template([special("<s>")], [sequence("B"), special("</s>")]),
    template([], []),
    BERT,
    ROBERTA,
    # tokenizers reads these by shape: the first as BertProcessing, the others as RobertaProcessing.
    {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": "yes"},
    {**BERT, "trim_offsets": False, "add_prefix_space": False},
    {"type": "Sequence", "processors": [LLAMA_TEMPLATE, {**ROBERTA, "type": "BertProcessing"}]},
    BYTE_LEVEL,
    {"type": "Sequence", "processors": [BYTE_LEVEL, LLAMA_TEMPLATE]},
    {"type": "Sequence", "processors": [LLAMA_TEMPLATE, BERT]},
    {"type": "Sequence", "processors": [template([special("<s>"), sequence("A")], [sequence("A")]), ROBERTA]},
    # The first template yields two encodings, so the second applies its pair template.
    {"type": "Sequence", "processors": [
        template([special("multi"), sequence("A")], [sequence("A"), sequence("B")]),
        template([sequence("A")], [sequence("B"), special("</s>"), sequence("A", 1)]),
    ]},
    # The first template yields three or no encodings: tokenizers panics in the second.
    {"type": "Sequence", "processors": [
        template([special("<s>"), sequence("A"), special("</s>")], [sequence("A"), sequence("B")]), LLAMA_TEMPLATE]},
    {"type": "Sequence", "processors": [template([], [sequence("A"), sequence("B")]), LLAMA_TEMPLATE]},
    {"type": "Sequence", "processors": []},
]

id_lists = st.lists(st.integers(0, len(WORDS) - 1), max_size=6)


def node_id(node: dict) -> str:
    return json.dumps(node)[:120]


@pytest.mark.parametrize("node", NODES, ids=node_id)
@settings(max_examples=40, deadline=None)
@given(ids=id_lists, pair=st.none() | id_lists, add=st.booleans())
def test_process_matches_tokenizers(node: dict, ids: list[int], pair: list[int] | None, add: bool) -> None:
    assert impl_process(node, ids, pair, add) == oracle_process(node, ids, pair, add)


@pytest.mark.parametrize("node", NODES, ids=node_id)
@pytest.mark.parametrize("add", [True, False])
def test_empty_input(node: dict, add: bool) -> None:
    assert impl_process(node, [], None, add) == oracle_process(node, [], None, add)


def test_every_post_processor_type_is_exercised() -> None:
    assert {node["type"] for node in NODES} == {name for name, _, _ in POST_PROCESSORS}


def test_ids_come_from_the_file_not_the_vocabulary() -> None:
    processor = post_processor_from_json(BERT, WHERE)
    assert processor.process([5], True) == oracle_process(BERT, [5], None, True)


# ---- faulty nodes ----------------------------------------------------------------------------

SP = "special_tokens"
BAD_NODES = [
    ({"type": "Nope"}, f"{WHERE}.type", "unsupported post-processor type 'Nope'"),
    ({"type": "BertProcessing", "sep": ["[SEP]", 102]}, f"{WHERE}.cls", "required field is missing"),
    ({**BERT, "sep": ["[SEP]", -1]}, f"{WHERE}.sep[1]", "expected an id in 0..4294967295"),
    ({**BERT, "sep": ["[SEP]", 2**32]}, f"{WHERE}.sep[1]", "expected an id in 0..4294967295"),
    ({**BERT, "sep": ["[SEP]", 1.0]}, f"{WHERE}.sep[1]", "expected an id in 0..4294967295"),
    ({**BERT, "sep": ["[SEP]", True]}, f"{WHERE}.sep[1]", "expected an id in 0..4294967295"),
    ({**BERT, "sep": ["[SEP]", 102, 3]}, f"{WHERE}.sep", "expected [token, id]"),
    ({**BERT, "sep": [102, "[SEP]"]}, f"{WHERE}.sep", "expected [token, id]"),
    ({**ROBERTA, "cls": "<s>"}, f"{WHERE}.cls", "expected list"),
    ({"type": "ByteLevel"}, f"{WHERE}.add_prefix_space", "required field is missing"),
    ({**BYTE_LEVEL, "trim_offsets": None}, f"{WHERE}.trim_offsets", "expected bool"),
    ({**BYTE_LEVEL, "use_regex": None}, f"{WHERE}.use_regex", "expected bool"),
    ({**LLAMA_TEMPLATE, "single": [{"Sequence": {"id": "A", "type_id": True}}]},
     f"{WHERE}.single[0].Sequence.type_id", "expected an id in 0..4294967295"),
    ({"type": "TemplateProcessing", "single": [], "pair": []}, f"{WHERE}.{SP}", "required field is missing"),
    ({**LLAMA_TEMPLATE, "single": "<s> $A"}, f"{WHERE}.single", "expected list"),
    ({**LLAMA_TEMPLATE, "single": ["$A"]}, f"{WHERE}.single[0]", "expected {"),
    ({**LLAMA_TEMPLATE, "single": [{"Sequence": {"id": "A", "type_id": 0}, "SpecialToken": {}}]},
     f"{WHERE}.single[0]", "expected {"),
    ({**LLAMA_TEMPLATE, "single": [sequence("C")]}, f"{WHERE}.single[0].Sequence.id", "expected \"A\" or \"B\""),
    ({**LLAMA_TEMPLATE, "single": [{"Sequence": {"id": "A"}}]}, f"{WHERE}.single[0].Sequence.type_id",
     "required field is missing"),
    ({**LLAMA_TEMPLATE, "pair": [special("<s>", -1)]}, f"{WHERE}.pair[0].SpecialToken.type_id", "expected an id in 0..4294967295"),
    ({**LLAMA_TEMPLATE, SP: {"<s>": {"id": "<s>", "ids": [1, -2], "tokens": ["<s>", "x"]}}},
     f"{WHERE}.{SP}.<s>.ids[1]", "expected an id in 0..4294967295"),
    ({**LLAMA_TEMPLATE, SP: {"<s>": {"id": "<s>", "ids": [1]}}}, f"{WHERE}.{SP}.<s>.tokens", "required field"),
    ({"type": "Sequence"}, f"{WHERE}.processors", "required field is missing"),
    ({"type": "Sequence", "processors": [BERT, {"type": "Bert"}]}, f"{WHERE}.processors[1].type", "unsupported"),
    ({"sep": ["[SEP]", 102]}, f"{WHERE}.type", "matches no post-processor shape"),
    ({"add_prefix_space": True, "trim_offsets": True, "use_regex": True}, f"{WHERE}.type", "matches no"),
    ({"processors": []}, f"{WHERE}.type", "matches no"),
    ([BERT], WHERE, "expected an object"),
]


# The oracle reads post-processors by shape: Roberta, Bert and Template whatever their "type".
BY_SHAPE = [
    ({k: v for k, v in BERT.items() if k != "type"}, "BertProcessing"),
    ({k: v for k, v in ROBERTA.items() if k != "type"}, "RobertaProcessing"),
    ({**ROBERTA, "type": "BertProcessing"}, "RobertaProcessing"),
    ({**BERT, "type": "RobertaProcessing"}, "BertProcessing"),
    ({**ROBERTA, "type": "RobertaProcessing", "add_prefix_space": None}, "BertProcessing"),
    ({**BERT, "type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True}, "RobertaProcessing"),
    ({**LLAMA_TEMPLATE, "type": "Foo"}, "TemplateProcessing"),
    ({k: v for k, v in LLAMA_TEMPLATE.items() if k != "type"}, "TemplateProcessing"),
]


@pytest.mark.parametrize(("node", "kind"), BY_SHAPE, ids=[node_id(node) for node, _ in BY_SHAPE])
def test_post_processor_chosen_by_shape(node: dict, kind: str) -> None:
    oracle = oracle_tokenizer(node)
    assert json.loads(oracle.to_str())["post_processor"]["type"] == kind
    processor = post_processor_from_json(node, WHERE)
    assert type(processor).__name__ == kind
    for ids, pair in (([5, 6], [7]), ([5], None)):
        for add in (True, False):
            assert impl_process(node, ids, pair, add) == oracle_process(node, ids, pair, add)


@pytest.mark.parametrize(("node", "path", "message"), BAD_NODES, ids=lambda v: node_id(v) if isinstance(v, dict) else "")
def test_faulty_node_is_refused_with_its_path(node: dict, path: str, message: str) -> None:
    assert_refused_by_both(lambda: oracle_tokenizer(node), lambda: post_processor_from_json(node, WHERE), path, message)


# tokenizers loads these and panics on use; impl refuses them when loading.
PANIC_ON_USE = [
    ({**LLAMA_TEMPLATE, "single": [special("<unk>"), sequence("A")]}, False,
     f"{WHERE}.single[0].SpecialToken.id", "special token '<unk>' is not in special_tokens"),
    ({**LLAMA_TEMPLATE, "pair": [special("<unk>"), sequence("A"), sequence("B")]}, None,
     f"{WHERE}.pair[0].SpecialToken.id", "special token '<unk>' is not in special_tokens"),
    ({**LLAMA_TEMPLATE, "single": [sequence("B")]}, True,
     f"{WHERE}.single", "uses sequence B"),
]


@pytest.mark.parametrize(("node", "panics_without_special_tokens", "path", "message"), PANIC_ON_USE,
                         ids=["single-missing-token", "pair-missing-token", "single-uses-B"])
def test_template_that_tokenizers_cannot_apply_is_refused(
        node: dict, panics_without_special_tokens: bool | None, path: str, message: str) -> None:
    if panics_without_special_tokens is not None:  # the oracle's single-input behaviour
        assert oracle_process(node, [1], None, True) is PostProcessorPanic
        expected = PostProcessorPanic if panics_without_special_tokens else [1]
        assert oracle_process(node, [1], None, False) == expected
    with pytest.raises(TokenizerFileError) as raised:
        post_processor_from_json(node, WHERE)
    assert raised.value.where == path
    assert message in str(raised.value)


def test_null_post_processor_is_none() -> None:
    assert post_processor_from_json(None, WHERE) is None


# ---- the post-processors of real tokenizer.json files ---------------------------------------



@functools.lru_cache(maxsize=None)
def real_tokenizer(path: Path):
    """The file's oracle processor, an oracle without it, and impl's processor."""
    spec = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    oracle = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    processor = oracle.post_processor
    oracle.post_processor = None
    return processor, oracle, post_processor_from_json(spec["post_processor"], WHERE)


@pytest.mark.parametrize("path", SHARED_MODEL_DIRS)
@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=20), add=st.booleans())
def test_real_post_processor_matches_tokenizers(path: Path, text: str, add: bool) -> None:
    oracle_processor, bare_oracle, processor = real_tokenizer(path)
    encoding = bare_oracle.encode(text, add_special_tokens=False)
    assert processor.process(encoding.ids, add) == oracle_processor.process(encoding, None, add).ids
