"""Standalone reproducers: for each tokenizer signature of a run, a Python script a maintainer runs
with only the engine and the reference (`tokenizers`) installed (for the node engines, a JavaScript
one: textbound.js_reproducer, which also scripts a template engine's chat signatures).

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
from dataclasses import dataclass, replace
from pathlib import Path

from .counterfactuals import SEQUENCE_MEMBERS, STAGES
from .divergence import Case, is_oracle_disagreement
from .explanation import recorded_case
from .js_reproducer import HF_JINJA, JS_TOKENIZERS

PROPERTIES = ("encode", "decode")  # the tokenizer properties a script reproduces
MAX_TRIES = 600  # checks per minimized file: a few seconds on an embedded family
ENGINE_ADAPTERS = "textbound.adapters."  # modules driving other engines: their scripts are not written here


@dataclass
class Target:
    """What a reproducer reproduces: a record's minimized case on an implementation module."""

    case: Case
    signature: str
    impl: str  # the module name, as --impl gave it
    config: dict | None = None  # the family's tokenizer_config.json, for engines that read it


def _diverges(target: Target, spec: dict) -> bool:
    """Whether the check on ``spec`` (written to a fresh folder, beside the target's
    tokenizer_config.json if it has one) still gives the target's signature."""
    from .checks import run_check

    with tempfile.TemporaryDirectory(prefix="textbound-repro-") as folder:
        (Path(folder) / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        if target.config is not None:
            (Path(folder) / "tokenizer_config.json").write_text(json.dumps(target.config), encoding="utf-8")
        try:
            found = run_check(_subject(target, Path(folder)), target.case)
        except BaseException as exc:  # noqa: BLE001 - a file the oracle refuses (tokenizers panics)
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return False
    return found is not None and found.signature == target.signature


def _subject(target: Target, folder: Path):
    """The check's subject on ``folder``; for the node tokenizers, one engine process loads every
    candidate file in turn (a process per file would be hundreds of node starts)."""
    from .checks import Subject
    from .implementation import Implementation

    subject = Subject(target.case.family, folder, Implementation(target.impl))
    if target.impl == JS_TOKENIZERS:
        from .adapters.hf_jinja import node_engine
        from .adapters.js_tokenizers import TOKENIZER_ENGINE, TOKENIZER_PACKAGE, Tokenizer
        process = node_engine(TOKENIZER_ENGINE, TOKENIZER_PACKAGE)
        process.request("load", path=str(folder))
        subject.__dict__["tokenizer"] = Tokenizer(process, folder)  # the cached_property, given
    return subject


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


def script_name(number: int, signature: str, suffix: str = ".py") -> str:
    """``script_name(1, "tokenizer/decode/text: drops ' ' at the start")`` ==
    "01-tokenizer-decode-text-drops-at-the-start.py"."""
    slug = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:80].rstrip("-")
    return f"{number:02d}-{slug}{suffix}"


def write_reproducers(run, out: Path) -> list[str]:
    """One script per signature of ``run`` (textbound.triage.Run) in ``out``, from each signature's
    smallest record: Python for impl-like modules' tokenizer signatures, JavaScript (textbound.js_reproducer)
    for the node engines' tokenizer and chat ones; returns a line per signature saying what was
    written or why not."""
    from .triage import signature_groups, split_records

    out.mkdir(parents=True, exist_ok=True)
    impl, families = run.summary.get("impl", "impl"), run.summary.get("families", {})
    component = "chat" if impl == HF_JINJA else "tokenizer"
    lines = []
    groups = [g for g in signature_groups(split_records(run.records)[0])
              if g.smallest["component"] == component and not is_oracle_disagreement(g.signature)]
    for number, group in enumerate(groups, 1):
        record = group.smallest
        folder = families.get(record["family"])
        reason = _unscripted(impl, record, folder)
        if reason is None:
            target = Target(recorded_case(record), group.signature, impl)
            write = _write_chat if component == "chat" else _write_tokenizer
            written, reason = write(target, Path(folder), out / script_name(number, group.signature, _suffix(impl)),
                                    str(run.dir), record.get("oracle_version", ""))
        lines.append(f"{group.signature}: {written}" if reason is None else f"{group.signature}: no reproducer ({reason})")
    return lines


def _suffix(impl: str) -> str:
    return ".mjs" if impl in (HF_JINJA, JS_TOKENIZERS) else ".py"


def _unscripted(impl: str, record: dict, folder: str | None) -> str | None:
    """Why a record gets no script (None: it gets one)."""
    if impl == HF_JINJA:
        if record["property"] != "render":
            return "only chat/render is scripted for a template engine"
    elif record["property"] not in PROPERTIES:
        return "only encode and decode are scripted"
    if impl.startswith(ENGINE_ADAPTERS) and impl not in (HF_JINJA, JS_TOKENIZERS):
        return f"{impl} drives another engine; its API is not scripted"
    if not folder or not Path(folder).is_dir() or (impl != HF_JINJA and not (Path(folder) / "tokenizer.json").is_file()):
        return f"the family folder {folder} is gone"
    return None


def _write_tokenizer(target: Target, folder: Path, path: Path, run: str, oracle: str) -> tuple[Path | None, str | None]:
    """The tokenizer script at ``path`` (Python, or JavaScript for the node tokenizers), or why not."""
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    if target.impl == JS_TOKENIZERS:
        config = folder / "tokenizer_config.json"
        target.config = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    if not _diverges(target, spec):
        return None, "the recorded case no longer diverges"
    spec = minimized_spec(target, spec)
    if target.impl != JS_TOKENIZERS:
        path.write_text(reproducer_script(target, spec, run, oracle), encoding="utf-8")
        return path, None
    from .js_reproducer import origin, tokenizer_script
    path.write_text(tokenizer_script(target, spec, target.config, origin(run, target.case), oracle, path.name),
                    encoding="utf-8")
    return _seen_failing(path)


def _write_chat(target: Target, folder: Path, path: Path, run: str, oracle: str) -> tuple[Path | None, str | None]:
    """The template engine's script at ``path``, on the record's template shrunk further (by the
    engine itself, beyond what the run's time allowed), or why not."""
    from .checks import Subject, run_check
    from .checks.chat import INLINE_TEMPLATE, case_template
    from .implementation import Implementation
    from .js_reproducer import chat_script, origin, template_context
    from .template_shrink import shrink_template

    subject = Subject(target.case.family, folder, Implementation(target.impl))
    case, budget = target.case, _Budget(MAX_TRIES)

    def diverges(source: str) -> bool:
        found = budget.spend() and run_check(subject, replace(case, input={**case.input, INLINE_TEMPLATE: source}))
        return bool(found) and found.signature == target.signature
    try:
        source = case_template(subject, case).source
    except LookupError as exc:
        return None, f"its template cannot be found: {exc}"
    case = replace(case, input={**case.input, INLINE_TEMPLATE: shrink_template(source, diverges)})
    context = template_context(case.input[INLINE_TEMPLATE], case.input)
    if context is None:
        return None, "the request is refused before the template runs"
    path.write_text(chat_script(replace(target, case=case), case.input[INLINE_TEMPLATE], context,
                                origin(run, target.case), path.name), encoding="utf-8")
    return _seen_failing(path)


def _seen_failing(path: Path) -> tuple[Path | None, str | None]:
    """A written JavaScript script, kept when node runs it and sees it exit 1 (or cannot run it here)."""
    from .js_reproducer import run_script

    result = run_script(path)
    if result is None:
        return path, None  # written where node cannot run it: the check that found it ran elsewhere
    if result.returncode == 1:
        return path, None
    path.unlink()
    return None, (f"the written script exits {result.returncode} on the engine: "
                  f"{(result.stdout + result.stderr).strip().splitlines()[-1:]}")
