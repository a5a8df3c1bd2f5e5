"""Counterfactual oracles: the family's tokenizer.json with one stage removed or one option flipped.

An engine that shows no stages is diagnosed by which changed file makes the oracle give the
engine's answer: the normalizer removed reproducing it says "the engine skips the normalizer".

    >>> [c.description for c in counterfactuals({"normalizer": {"type": "NFC"}, "model": {...}})][:1]
    ['skips the normalizer']
"""
from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")
SEQUENCE_MEMBERS = ("normalizers", "pretokenizers", "processors", "decoders")
ADDED_TOKEN_FLAGS = ("normalized", "special", "lstrip", "rstrip", "single_word")  # the first reproducing names a divergence
PREPEND_SCHEMES = ("always", "first", "never")
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
CHOICES = {"prepend_scheme": PREPEND_SCHEMES, "behavior": BEHAVIORS}  # string options and their values
SKIPPED_KEYS = frozenset({"vocab", "merges", "precompiled_charsmap"})  # data, not options


@dataclass
class Counterfactual:
    """One changed tokenizer.json and what the change says of an engine it reproduces."""

    description: str
    spec: dict


def _options(node, path: str) -> Iterator[tuple[str, dict, str]]:
    """(path, node, key) of every option in a pipeline node tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SKIPPED_KEYS:
                continue
            if isinstance(value, (bool, str)) and key != "type":
                yield f"{path}.{key}", node, key
            else:
                yield from _options(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _options(value, f"{path}[{index}]")


def _changed(spec: dict, top: str, change) -> dict:
    """``spec`` with ``change`` applied to a copy of its ``top`` part (the vocabulary and merges,
    never changed, are shared rather than copied)."""
    part = spec.get(top)
    if isinstance(part, dict):
        part = {k: v if k in SKIPPED_KEYS else copy.deepcopy(v) for k, v in part.items()}
    changed = {**spec, top: copy.deepcopy(part) if isinstance(part, list) else part}
    change(changed)
    return changed


def counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """Every one-change variant of ``spec``: a stage removed, one member of a Sequence stage
    removed, one option flipped (booleans, prepend_scheme, a split's behavior), an added-token flag flipped
    on every added token, and the model's boolean options flipped."""
    for stage in STAGES:
        node = spec.get(stage)
        if not node:
            continue
        name = stage.replace("_", " ")
        yield Counterfactual(f"skips the {name}", {**spec, stage: None})
        for key in SEQUENCE_MEMBERS:
            for index, member in enumerate(node.get(key) or []):
                def drop(s, st=stage, k=key, i=index):
                    del s[st][k][i]
                yield Counterfactual(f"skips the {member.get('type')} {name} ({stage}.{key}[{index}])",
                                     _changed(spec, stage, drop))
    for top in (*STAGES, "model"):
        for path, node, key in _options(spec.get(top), top):
            value = node[key]
            choices = [not value] if isinstance(value, bool) else [v for v in CHOICES.get(key, ()) if v != value]
            for choice in choices:
                def flip(s, p=path, k=key, c=choice):
                    _node_at(s, p)[k] = c
                yield Counterfactual(f"reads {path} as {json.dumps(choice)}", _changed(spec, top, flip))
    yield from added_token_counterfactuals(spec)


def type_counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """The pipeline changes an engine makes by node type rather than by node: one option set alike
    on every node of a type (a pre-tokenizer's and a decoder's Metaspace both), then a stage skipped,
    then every Sequence member of one type skipped, so that an engine ignoring an option is named
    once whichever of its nodes an input meets, and by the option where skipping a stage gives the
    same answer: ``[c.description for c in type_counterfactuals(spec)]`` holds "reads every Split's
    behavior as \"Isolated\"" for a spec with Split pre-tokenizers."""
    groups: dict[tuple[str, str], list[tuple[str, str, object]]] = {}  # (type, key) -> (top, path, value)
    for top in (*STAGES, "model"):
        for path, node, key in _options(spec.get(top), top):
            groups.setdefault((node.get("type", top), key), []).append((top, path, node[key]))
    for (type_name, key), found in groups.items():
        values = [value for _, _, value in found]
        for choice in ((True, False) if isinstance(values[0], bool) else CHOICES.get(key, ())):
            if all(value == choice for value in values):
                continue
            changed = spec
            for top in dict.fromkeys(top for top, _, _ in found):
                def set_all(s, t=top, k=key, c=choice):
                    for where, path, _ in found:
                        if where == t:
                            _node_at(s, path)[k] = c
                changed = _changed(changed, top, set_all)
            yield Counterfactual(f"reads every {type_name}'s {key} as {json.dumps(choice)}", changed)
    for stage in STAGES:
        if spec.get(stage):
            yield Counterfactual(f"skips the {stage.replace('_', ' ')}", {**spec, stage: None})
    for stage in STAGES:
        for key in SEQUENCE_MEMBERS:
            for type_name in dict.fromkeys(m.get("type") for m in (spec.get(stage) or {}).get(key) or []):
                def drop(s, st=stage, k=key, t=type_name):
                    s[st][k] = [m for m in s[st][k] if m.get("type") != t]
                yield Counterfactual(f"skips every {type_name} {stage.replace('_', ' ')}", _changed(spec, stage, drop))


def added_token_counterfactuals(spec: dict) -> Iterator[Counterfactual]:
    """An added-token flag set on every added token, for each flag and value some token lacks:
    ``[c.description for c in added_token_counterfactuals({"added_tokens": [{"normalized": False}]})]``
    == ``["reads every added token's normalized as true", ...]``."""
    tokens = spec.get("added_tokens") or []
    for flag in ADDED_TOKEN_FLAGS:
        for value in (True, False):
            if any(t.get(flag) != value for t in tokens):
                def set_flag(s, f=flag, v=value):
                    for token in s["added_tokens"]:
                        token[f] = v
                yield Counterfactual(f"reads every added token's {flag} as {json.dumps(value)}",
                                     _changed(spec, "added_tokens", set_flag))


def _node_at(spec: dict, path: str) -> dict:
    """The node holding the option at ``path`` ("pre_tokenizer.pretokenizers[1].add_prefix_space")."""
    node = spec
    for part in path.replace("[", ".[").split(".")[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


class AddedTokenReadings:
    """The family's oracle with each added-token flag flipped (``added_token_counterfactuals``; with
    ``pipeline``, each pipeline change of ``type_counterfactuals``), loaded one by one as asked:
    what names a divergence by the flag or option the engine reads otherwise, whatever the text
    (``reading(answer)`` == "reads every added token's normalized as true" when that variant's
    ``answer`` is the engine's)."""

    def __init__(self, spec: dict, pipeline: bool = False):
        self.variants = list((type_counterfactuals if pipeline else added_token_counterfactuals)(spec))
        self.loaded: dict[str, object] = {}

    @classmethod
    def of(cls, folder, pipeline: bool = False) -> "AddedTokenReadings":
        """The readings of a family folder's tokenizer.json."""
        return cls(json.loads((Path(folder) / "tokenizer.json").read_text(encoding="utf-8")), pipeline)

    def reading(self, answer) -> str | None:
        """The first variant whose ``answer(tokenizer)`` is truthy; None when none is."""
        return next((description for description, _ in self.matching(answer)), None)

    def matching(self, answer) -> Iterator[tuple[str, object]]:
        """(description, tokenizer) of each variant whose ``answer(tokenizer)`` is truthy, in order."""
        import tokenizers
        for variant in self.variants:
            if variant.description not in self.loaded:
                try:
                    self.loaded[variant.description] = tokenizers.Tokenizer.from_str(json.dumps(variant.spec))
                except Exception:  # noqa: BLE001 - a variant tokenizers refuses explains nothing
                    self.loaded[variant.description] = None
            tokenizer = self.loaded[variant.description]
            if tokenizer is not None and answer(tokenizer):
                yield variant.description, tokenizer


def reproducing(spec: dict, answer) -> list[str]:
    """The descriptions of the counterfactual oracles whose ``answer(tokenizer)`` is truthy
    (it compares their output with the engine's); a variant `tokenizers` refuses to load is left out."""
    import tokenizers
    found = []
    for counterfactual in counterfactuals(spec):
        try:
            tokenizer = tokenizers.Tokenizer.from_str(json.dumps(counterfactual.spec))
            if answer(tokenizer):
                found.append(counterfactual.description)
        except BaseException as exc:  # noqa: BLE001 - tokenizers panics are BaseExceptions
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
    return found
