"""Standalone reproducers: for each tokenizer signature of a run, a Python script a maintainer runs
with only the engine and the reference (`tokenizers`) installed.

The script holds the divergence's minimized input and a *minimized* tokenizer.json inline: delta
debugging (textbound.minimize.ddmin) over the pipeline nodes, the added tokens, the merges and the
vocabulary, keeping each removal after which the oracle still loads the file and the check still
gives the record's signature. It prints the reference's answer and the engine's and exits 1 while
they differ:

    $ python 01-tokenizer-decode-text-drops-at-the-start.py
    expected: ' th'
    actual:   'th'
    $ echo $?
    1

``textbound triage DIR --reproducers OUT/`` writes them (``write_reproducers``).
"""
from __future__ import annotations

import copy
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .counterfactuals import SEQUENCE_MEMBERS, STAGES
from .divergence import Case, is_oracle_disagreement
from .explanation import recorded_case

PROPERTIES = ("encode", "decode")  # the tokenizer properties a script reproduces
MAX_TRIES = 600  # checks per minimized file: a few seconds on an embedded family
ENGINE_ADAPTERS = "textbound.adapters."  # modules driving other engines: their scripts are not written here


@dataclass
class Target:
    """What a reproducer reproduces: a record's minimized case on an implementation module."""

    case: Case
    signature: str
    impl: str  # the module name, as --impl gave it


def _diverges(target: Target, spec: dict) -> bool:
    """Whether the check on ``spec`` (written to a fresh folder) still gives the target's signature."""
    from .checks import Subject, run_check
    from .implementation import Implementation

    with tempfile.TemporaryDirectory(prefix="textbound-repro-") as folder:
        (Path(folder) / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        try:
            found = run_check(Subject(target.case.family, Path(folder), Implementation(target.impl)), target.case)
        except BaseException as exc:  # noqa: BLE001 - a file the oracle refuses (tokenizers panics)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return False
    return found is not None and found.signature == target.signature


class _Budget:
    """Checks left for one minimization."""

    def __init__(self, tries: int):
        self.left = tries

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def minimized_spec(target: Target, spec: dict, tries: int = MAX_TRIES) -> dict:
    """The smallest tokenizer.json found on which the oracle loads and the target still diverges:
    stages removed, Sequence members, added tokens, merges and vocabulary entries shrunk."""
    from .minimize import ddmin

    budget = _Budget(tries)
    spec = copy.deepcopy(spec)
    spec["truncation"] = spec["padding"] = None  # the oracle never applies them

    def keeps(candidate: dict) -> bool:
        return budget.spend() and _diverges(target, candidate)

    def shrink_list(get, put) -> None:
        nonlocal spec
        items = get(spec)
        if not items:
            return

        def fails(smaller) -> bool:
            if budget.left <= 0:
                return False
            candidate = copy.deepcopy(spec)
            put(candidate, list(smaller))
            return keeps(candidate)
        if fails([]):
            put(spec, [])
        elif len(items) > 1:
            put(spec, list(ddmin(list(items), fails)))

    for stage in STAGES:
        if spec.get(stage) is not None and keeps({**spec, stage: None}):
            spec[stage] = None
        for key in SEQUENCE_MEMBERS:
            if isinstance(spec.get(stage), dict) and isinstance(spec[stage].get(key), list):
                shrink_list(lambda s, st=stage, k=key: s[st][k], lambda s, v, st=stage, k=key: s[st].__setitem__(k, v))
    shrink_list(lambda s: s.get("added_tokens"), lambda s, v: s.__setitem__("added_tokens", v))
    model = spec["model"]
    if isinstance(model.get("vocab"), dict) and isinstance(model.get("merges"), list):
        closure = _merge_closure(spec, target)
        if closure is not None and keeps(closure):
            spec = closure
        shrink_list(lambda s: s["model"]["merges"], lambda s, v: s["model"].__setitem__("merges", v))
    if isinstance(model.get("vocab"), dict):
        shrink_list(lambda s: list(s["model"]["vocab"].items()), lambda s, v: s["model"].__setitem__("vocab", dict(v)))
    return spec


def _merge_closure(spec: dict, target: Target) -> dict | None:
    """A BPE file cut to the tokens the divergence can need: the added tokens, the single
    characters, the tokens of the reference's answer and impl's, and, for each, the merges that
    build it (recursively); None where that cannot be worked out."""
    import tokenizers

    model = spec["model"]
    merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in model["merges"]]
    made_by = {}
    for pair in merges:
        if len(pair) == 2:
            made_by.setdefault(pair[0] + pair[1], pair)
    try:
        oracle = tokenizers.Tokenizer.from_str(json.dumps(spec))
    except BaseException:  # noqa: BLE001
        return None
    if target.case.property == "encode":
        wanted = oracle.encode(target.case.input["text"], add_special_tokens=True).tokens
    else:
        wanted = [oracle.id_to_token(i) for i in target.case.input["ids"] if isinstance(i, int) and i >= 0]
    needed, stack = set(), [t for t in wanted if t]
    while stack:
        token = stack.pop()
        if token in needed:
            continue
        needed.add(token)
        stack += made_by.get(token, [])
    vocab = {t: i for t, i in model["vocab"].items() if t in needed or len(t) == 1 or t == model.get("unk_token")}
    kept = [m for m, pair in zip(model["merges"], merges) if len(pair) == 2 and pair[0] + pair[1] in needed
            and pair[0] in vocab and pair[1] in vocab]
    closure = copy.deepcopy({k: v for k, v in spec.items() if k != "model"})
    closure["model"] = {**model, "vocab": vocab, "merges": kept}
    return closure


SCRIPT = '''#!/usr/bin/env python3
"""{title}

The engine, {module}, against the reference, {oracle}, on a minimized tokenizer.json
(from textbound's run {run}, family {family}).
Needs only the engine and tokenizers; prints both answers and exits 1 while they differ.
"""
import sys
import tempfile
from pathlib import Path

import tokenizers

import {module} as engine

TOKENIZER_JSON = {spec}
{given_name} = {given}
{option_name} = {option}

reference = tokenizers.Tokenizer.from_str(TOKENIZER_JSON)
expected = {reference_call}
with tempfile.TemporaryDirectory() as folder:
    Path(folder, "tokenizer.json").write_text(TOKENIZER_JSON, encoding="utf-8")
    tokenizer = engine.Tokenizer.from_dir(folder)
    actual = {engine_call}
print("expected:", {shown}(expected))
print("actual:  ", {shown}(actual))
sys.exit(1 if actual != expected else 0)
'''


def reproducer_script(target: Target, spec: dict, run: str, oracle: str) -> str:
    """The script's text (see the module's example)."""
    encode = target.case.property == "encode"
    given_name, option_name = ("TEXT", "ADD_SPECIAL_TOKENS") if encode else ("IDS", "SKIP_SPECIAL_TOKENS")
    given = target.case.input["text" if encode else "ids"]
    option = bool(target.case.input.get("add_special_tokens" if encode else "skip_special_tokens", False))
    if encode:
        reference_call = "reference.encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS).ids"
        engine_call = "list(tokenizer.encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS))"
    else:
        reference_call = "reference.decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)"
        engine_call = "tokenizer.decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)"
    return SCRIPT.format(
        title=target.signature, oracle=oracle or "tokenizers", run=run,
        family=target.case.family, module=target.impl, spec=repr(json.dumps(spec, ensure_ascii=False)),
        given_name=given_name, given=repr(given), option_name=option_name, option=option,
        reference_call=reference_call, engine_call=engine_call, shown="str" if encode else "repr")


def script_name(number: int, signature: str) -> str:
    """``script_name(1, "tokenizer/decode/text: drops ' ' at the start")`` ==
    "01-tokenizer-decode-text-drops-at-the-start.py"."""
    slug = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:80].rstrip("-")
    return f"{number:02d}-{slug}.py"


def write_reproducers(run, out: Path) -> list[str]:
    """One script per tokenizer signature of ``run`` (textbound.triage.Run) in ``out``, from each
    signature's smallest record; returns a line per signature saying what was written or why not."""
    from .triage import signature_groups, split_records

    out.mkdir(parents=True, exist_ok=True)
    impl, families = run.summary.get("impl", "impl"), run.summary.get("families", {})
    lines = []
    groups = [g for g in signature_groups(split_records(run.records)[0])
              if g.smallest["component"] == "tokenizer" and not is_oracle_disagreement(g.signature)]
    for number, group in enumerate(groups, 1):
        record = group.smallest
        folder = families.get(record["family"])
        if record["property"] not in PROPERTIES:
            lines.append(f"{group.signature}: no reproducer (only encode and decode are scripted)")
        elif impl.startswith(ENGINE_ADAPTERS):
            lines.append(f"{group.signature}: no reproducer ({impl} drives another engine; its API is not scripted)")
        elif not folder or not (Path(folder) / "tokenizer.json").is_file():
            lines.append(f"{group.signature}: no reproducer (the family folder {folder} is gone)")
        else:
            target = Target(recorded_case(record), group.signature, impl)
            spec = json.loads((Path(folder) / "tokenizer.json").read_text(encoding="utf-8"))
            if not _diverges(target, spec):
                lines.append(f"{group.signature}: no reproducer (the recorded case no longer diverges)")
                continue
            path = out / script_name(number, group.signature)
            path.write_text(reproducer_script(target, minimized_spec(target, spec), str(run.dir),
                                              record.get("oracle_version", "")), encoding="utf-8")
            lines.append(f"{group.signature}: {path}")
    return lines
