"""Changes of the tokenizer, detokenizer and stops components between two family versions.

- the vocabulary (entries added, removed, renumbered), BPE merges, the pipeline stages;
- added tokens (gone, new, and each flag: lstrip, rstrip, normalized, single_word, special);
- special tokens and their ids, add_bos_token / add_eos_token, the post-processor;
- the ids of the same texts (corpus snippets, every added token in context, the sweeps), by
  `tokenizers` without special tokens and by transformers with them, each minimized by ddmin;
- the text the same ids decode to;
- the EOS set a server stops on: the tokenizer's EOS and generation_config.json's eos_token_id.

    >>> first_difference(["a", "b", "c", "d"], ["a", "bc", "d"])
    "['b', 'c'] → ['bc']"
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from textbound.properties.sweeps import sweep_texts

from ..checks.tokenizer_cases import added_token_texts, corpus_snippets
from ..plan.budget import Budget
from ..shrinking.minimize import ddmin
from .changes import Change, Changes
from .version import FamilyVersion

ADDED_TOKEN_FLAGS = ("lstrip", "rstrip", "normalized", "single_word", "special")
SPECIAL_TOKEN_NAMES = ("bos_token", "eos_token", "pad_token", "unk_token")
CONFIG_SETTINGS = ("add_bos_token", "add_eos_token")
PIPELINE_STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
LISTED = 20  # vocabulary entries or merges shown per change; the rest are counted
DECODE_CHUNK = 512
# Differing texts minimized per kind of encode change (shortest first); the rest are counted apart.
MINIMIZED_TEXTS = 200

Encoded = tuple[list[int], list[str]]  # ids and their pieces


def first_difference(old: list[str], new: list[str]) -> str:
    """The pieces between the common start and the common end, OLD's → NEW's (how encode changes
    are grouped)."""
    start = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    end = 0
    while end < min(len(old), len(new)) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    return f"{old[start:len(old) - end]} → {new[start:len(new) - end]}"


def _pairs(version: FamilyVersion, ids: Iterable[int]) -> list[list]:
    return [[i, version.oracle.id_to_token(i)] for i in ids]


def vocabulary_changes(old: FamilyVersion, new: FamilyVersion, changes: Changes) -> None:
    old_vocab, new_vocab = old.oracle.vocab(), new.oracle.vocab()
    changes.ran("tokenizer", "vocab")
    removed = sorted((old_vocab[t], t) for t in old_vocab.keys() - new_vocab.keys())
    added = sorted((new_vocab[t], t) for t in new_vocab.keys() - old_vocab.keys())
    renumbered = sorted((old_vocab[t], new_vocab[t], t) for t in old_vocab.keys() & new_vocab.keys()
                        if old_vocab[t] != new_vocab[t])
    if removed:
        changes.add(Change("tokenizer", "vocab: entries removed", f"{len(removed)} entries",
                           [[i, t] for i, t in removed[:LISTED]], None))
    if added:
        changes.add(Change("tokenizer", "vocab: entries added", f"{len(added)} entries",
                           None, [[i, t] for i, t in added[:LISTED]]))
    if renumbered:
        changes.add(Change("tokenizer", "vocab: entries renumbered", f"{len(renumbered)} entries",
                           [[a, t] for a, _, t in renumbered[:LISTED]], [[b, t] for _, b, t in renumbered[:LISTED]]))
    old_model, new_model = old.tokenizer_json.get("model", {}), new.tokenizer_json.get("model", {})
    old_merges, new_merges = _merges(old_model), _merges(new_model)
    if old_merges != new_merges:
        old_set, new_set = set(old_merges), set(new_merges)
        gone, came = [m for m in old_merges if m not in new_set], [m for m in new_merges if m not in old_set]
        changes.add(Change("tokenizer", "vocab: merges changed", f"{len(gone)} removed, {len(came)} added"
                           + ("" if gone or came else ", reordered"), gone[:LISTED], came[:LISTED]))
    for key in sorted((old_model.keys() | new_model.keys()) - {"vocab", "merges"}):
        if old_model.get(key) != new_model.get(key):
            changes.add(Change("tokenizer", "vocab: model option changed", f"model.{key}", old_model.get(key),
                               new_model.get(key)))
    for stage in PIPELINE_STAGES:
        if old.tokenizer_json.get(stage) != new.tokenizer_json.get(stage):
            changes.add(Change("tokenizer", "vocab: pipeline stage changed", stage, old.tokenizer_json.get(stage),
                               new.tokenizer_json.get(stage)))


def _merges(model: dict) -> list[str]:
    return [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]


def _added_tokens(version: FamilyVersion) -> dict[str, dict]:
    return {token.content: {"id": token_id, **{flag: getattr(token, flag) for flag in ADDED_TOKEN_FLAGS}}
            for token_id, token in version.oracle.tokenizer.get_added_tokens_decoder().items()}


def added_token_changes(old: FamilyVersion, new: FamilyVersion, changes: Changes) -> None:
    """Added tokens gone, new, renumbered or with a flag flipped, each with a text that encodes
    differently because of it when one of the token's contexts shows it."""
    old_added, new_added = _added_tokens(old), _added_tokens(new)
    changes.ran("tokenizer", "added_tokens", len(old_added.keys() | new_added.keys()))
    for content in sorted(old_added.keys() | new_added.keys()):
        before, after = old_added.get(content), new_added.get(content)
        texts = added_token_texts([content])
        if before is None or after is None:
            kind = "added_tokens: token removed" if after is None else "added_tokens: token added"
            changes.add(Change("tokenizer", kind, repr(content), before, after, _example(old, new, texts)))
            continue
        for flag in ("id", *ADDED_TOKEN_FLAGS):
            if before[flag] != after[flag]:
                changes.add(Change("tokenizer", f"added_tokens: {flag} changed", repr(content), before[flag],
                                   after[flag], _example(old, new, texts)))


def _example(old: FamilyVersion, new: FamilyVersion, texts: list[str]) -> dict | None:
    """The first of ``texts`` that encodes differently, minimized, with both encodings."""
    for text in texts:
        before, after = _plain(old, [text])[0], _plain(new, [text])[0]
        if before[0] != after[0]:
            group = first_difference(before[1], after[1])
            smallest = ddmin(text, lambda t: first_difference(*(_plain(v, [t])[0][1] for v in (old, new))) == group)
            (old_ids, old_pieces), (new_ids, new_pieces) = _plain(old, [smallest])[0], _plain(new, [smallest])[0]
            return {"text": smallest, "old_ids": old_ids, "new_ids": new_ids,
                    "old_pieces": old_pieces, "new_pieces": new_pieces}
    return None


def special_token_changes(old: FamilyVersion, new: FamilyVersion, changes: Changes) -> None:
    """The special tokens transformers reads, their ids, and tokenizer_config's add_*_token."""
    changes.ran("tokenizer", "special_tokens", len(SPECIAL_TOKEN_NAMES) + len(CONFIG_SETTINGS))
    for name in SPECIAL_TOKEN_NAMES:
        before, after = (_special(v, name) for v in (old, new))
        if before != after:
            changes.add(Change("tokenizer", "special_tokens: token changed", name, before, after))
    for name in CONFIG_SETTINGS:
        if old.config.get(name) != new.config.get(name):
            changes.add(Change("tokenizer", "special_tokens: tokenizer_config setting changed", name, old.config.get(name),
                               new.config.get(name)))


def _special(version: FamilyVersion, name: str) -> list | None:
    token = getattr(version.transformers_tokenizer, name, None)
    return None if token is None else [str(token), version.transformers_tokenizer.convert_tokens_to_ids(str(token))]


def eos_ids(version: FamilyVersion) -> list[int]:
    """The ids a server stops on: the tokenizer's EOS and generation_config.json's eos_token_id."""
    configured = version.generation_config.get("eos_token_id")
    ids = set(configured if isinstance(configured, list) else [] if configured is None else [configured])
    if version.transformers_tokenizer.eos_token_id is not None:
        ids.add(version.transformers_tokenizer.eos_token_id)
    return sorted(i for i in ids if isinstance(i, int))


def stop_changes(old: FamilyVersion, new: FamilyVersion, changes: Changes) -> None:
    changes.ran("stops", "eos_set")
    before, after = eos_ids(old), eos_ids(new)
    if before != after:
        changes.add(Change("stops", "eos_set: changed", "eos ids", _pairs(old, before), _pairs(new, after)))


# -- encode and decode ---------------------------------------------------------------------------

def _plain(version: FamilyVersion, texts: list[str]) -> list[Encoded]:
    """`tokenizers` without special tokens."""
    return [(e.ids, e.tokens) for e in version.oracle.tokenizer.encode_batch(texts, add_special_tokens=False)]


def _with_specials(version: FamilyVersion, texts: list[str]) -> list[Encoded]:
    """transformers with special tokens: what a prompt gets from ``tokenizer(text)``."""
    tokenizer = version.transformers_tokenizer
    return [(ids, tokenizer.convert_ids_to_tokens(ids)) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]


ENCODERS: dict[str, Callable[[FamilyVersion, list[str]], list[Encoded]]] = {
    "encode": _plain, "encode_with_special_tokens": _with_specials}


def encode_texts(old: FamilyVersion, budget: Budget) -> dict[str, list[str]]:
    """The texts each encoder runs on: corpus snippets, added tokens in context and, without special
    tokens, the sweeps (of OLD's vocabulary: NEW's new entries show in the vocabulary changes)."""
    snippets = corpus_snippets(budget)
    added = sorted(t.content for t in old.oracle.tokenizer.get_added_tokens_decoder().values() if t.content)
    plain = snippets + added_token_texts(added) + sweep_texts(old.oracle, stride=budget.sweep_stride)
    return {"encode": list(dict.fromkeys(plain)), "encode_with_special_tokens": snippets}


def encode_changes(old: FamilyVersion, new: FamilyVersion, budget: Budget, changes: Changes) -> None:
    for prop, texts in encode_texts(old, budget).items():
        encode = ENCODERS[prop]
        changes.ran("tokenizer", prop, len(texts))
        differing = [(t, a, b) for t, a, b in zip(texts, encode(old, texts), encode(new, texts)) if a[0] != b[0]]
        minimized: dict[str, int] = {}
        for text, before, after in sorted(differing, key=lambda d: len(d[0])):
            kind, _ = _encode_group(prop, before, after)
            if minimized.get(kind, 0) >= MINIMIZED_TEXTS:
                changes.add(Change("tokenizer", kind, "more texts (not minimized)", before[0], after[0], {"text": text}))
                continue
            minimized[kind] = minimized.get(kind, 0) + 1

            def same_kind(candidate: str) -> bool:
                return _encode_group(prop, *(encode(v, [candidate])[0] for v in (old, new)))[0] == kind

            smallest = ddmin(text, same_kind)
            before, after = encode(old, [smallest])[0], encode(new, [smallest])[0]
            changes.add(Change("tokenizer", kind, _encode_group(prop, before, after)[1], before[0], after[0],
                               {"text": smallest}))


def _encode_group(prop: str, before: Encoded, after: Encoded) -> tuple[str, str]:
    """A change's kind and subject: renumbered ids of the same pieces, or the first differing pieces."""
    if before[0] == after[0]:
        return "", ""
    if before[1] == after[1]:
        return f"{prop}: same pieces, other ids", "ids"
    return f"{prop}: different pieces", first_difference(before[1], after[1])


def decode_changes(old: FamilyVersion, new: FamilyVersion, budget: Budget, changes: Changes) -> None:
    """The same ids decoded by both: every id both know (at the sweep stride), alone, and the ids
    of OLD's corpus encodings, with and without skip_special_tokens."""
    both = sorted(set(old.oracle.vocab().values()) & set(new.oracle.vocab().values()))
    sequences = [[i] for i in both[::budget.sweep_stride]]
    known = set(both)
    sequences += [ids for ids, _ in _plain(old, corpus_snippets(budget)) if ids and set(ids) <= known]
    for skip in (False, True):
        changes.ran("detokenizer", "decode", len(sequences))
        for start in range(0, len(sequences), DECODE_CHUNK):
            chunk = sequences[start:start + DECODE_CHUNK]
            texts = zip(chunk, old.oracle.decode_batch(chunk, skip), new.oracle.decode_batch(chunk, skip))
            for ids, before, after in texts:
                if before != after:
                    _decode_change(old, new, ids, skip, changes)


def _decode_change(old: FamilyVersion, new: FamilyVersion, ids: list[int], skip: bool, changes: Changes) -> None:
    subject = f"skip_special_tokens={skip}"
    if changes.examples_wanted("detokenizer/decode: text differs", subject):
        ids = ddmin(ids, lambda c: old.oracle.decode(list(c), skip) != new.oracle.decode(list(c), skip))
    ids = list(ids)
    changes.add(Change("detokenizer", "decode: text differs", subject, old.oracle.decode(ids, skip),
                       new.oracle.decode(ids, skip), {"ids": ids, "pieces": old.oracle.pieces(ids)}))


def tokenizer_changes(old: FamilyVersion, new: FamilyVersion, budget: Budget, components: list[str],
                      changes: Changes) -> None:
    if "tokenizer" in components:
        vocabulary_changes(old, new, changes)
        added_token_changes(old, new, changes)
        special_token_changes(old, new, changes)
        encode_changes(old, new, budget, changes)
    if "detokenizer" in components:
        decode_changes(old, new, budget, changes)
    if "stops" in components:
        stop_changes(old, new, changes)

