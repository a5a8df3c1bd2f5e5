"""Standalone reproducers: for each signature of a run, a script a maintainer runs with only the
engine and the reference installed. For an ``--impl`` module, Python in the module's own public API
(textbound.triage.scripts: the tokenizer, the detokenizer, the stop checker, render_chat and
apply_chat_template, the tool-call parser, the schema's pattern), with the reference's answer
inline, computed now by the oracle and stamped with its version; for the node engines, JavaScript
(textbound.triage.js_reproducer, which also scripts a template engine's chat signatures).

A script whose property needs a tokenizer holds a *minimized* tokenizer.json inline: delta
debugging (textbound.shrinking.minimize.ddmin) over the pipeline nodes, the added tokens, the merges and the
vocabulary, keeping each removal after which the oracle still loads the file and the check still
gives the record's signature (a chat/ids script holds the family's tokenizer_config.json beside
it); a chat script holds its template shrunk the same way. It prints the reference's answer and
the engine's and exits 1 while they differ; a script is kept only when it was run and seen to exit 1:

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
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ..naming.counterfactuals import SEQUENCE_MEMBERS, STAGES
from ..naming.divergence import Case, is_oracle_disagreement
from ..plan.implementation import DEFAULT_IMPL
from .explanation import recorded_case
from .js_reproducer import HF_JINJA, JS_TOKENIZERS, origin
from .scripts import SCRIPTED, ScriptPlan, Unscripted, script_text

PROPERTIES = ("encode", "decode")  # the properties a node tokenizer's script reproduces
MAX_TRIES = 600  # checks per minimized file: a few seconds on an embedded family
ENGINE_ADAPTERS = "textbound.adapters."  # modules driving other engines: their scripts are not written here
SCRIPT_SECONDS = 120  # running one written script to see it fail: loading a minimized file takes well under that


@dataclass
class Target:
    """What a reproducer reproduces: a record's minimized case on an implementation module."""

    case: Case
    signature: str
    impl: str  # the module name, as --impl gave it
    config: dict | None = None  # the family's tokenizer_config.json, for engines that read it
    prompt: str | None = None  # a chat case's prompt as transformers renders it: its tokens a minimized file keeps


def _diverges(target: Target, spec: dict) -> bool:
    """Whether the check on ``spec`` (written to a fresh folder, beside the target's
    tokenizer_config.json if it has one) still gives the target's signature."""
    from ..checks import run_check

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
        finally:
            if target.case.component == "chat":  # transformers' tokenizer of a folder gone now, kept by path
                from textbound.oracles.chat_oracle import FamilyChatOracle
                FamilyChatOracle.of.cache_clear()
    return found is not None and found.signature == target.signature


def _subject(target: Target, folder: Path):
    """The check's subject on ``folder``; for the node tokenizers, one engine process loads every
    candidate file in turn (a process per file would be hundreds of node starts)."""
    from ..checks import Subject
    from ..plan.implementation import Implementation

    subject = Subject(target.case.family, folder, Implementation(target.impl))
    if target.impl == JS_TOKENIZERS:
        from ..adapters.hf_jinja import node_engine
        from ..adapters.js_tokenizers import TOKENIZER_ENGINE, TOKENIZER_PACKAGE, Tokenizer
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
    from ..shrinking.minimize import ddmin

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
    if "text" in target.case.input or target.prompt is not None:  # an encode, model output, a chat prompt
        wanted = oracle.encode(target.case.input.get("text", target.prompt), add_special_tokens=True).tokens
    elif "ids" in target.case.input:
        ids = [*target.case.input.get("prompt_ids", []), *target.case.input["ids"]]  # a stream's prompt too
        wanted = [oracle.id_to_token(i) for i in ids if isinstance(i, int) and i >= 0]
    else:
        return None
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


def reproducer_script(target: Target, spec: dict, run: str, oracle: str) -> str:
    """The Python script of a target on an ``--impl`` module (textbound.triage.scripts; see the module's
    example), ``spec`` the minimized tokenizer.json where its property needs a tokenizer."""
    from ..plan.implementation import is_file_path

    # An --impl file (./engine.py) is imported by its name, from its folder on the path.
    module = Path(target.impl).stem if is_file_path(target.impl) else target.impl
    return script_text(ScriptPlan(target.case, target.signature, module, origin(run, target.case), oracle, spec,
                                  target.config))


def script_name(number: int, signature: str, suffix: str = ".py") -> str:
    """``script_name(1, "tokenizer/decode/text: drops ' ' at the start")`` ==
    "01-tokenizer-decode-text-drops-at-the-start.py"."""
    slug = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:80].rstrip("-")
    return f"{number:02d}-{slug}{suffix}"


def write_reproducers(run, out: Path) -> list[str]:
    """One script per signature of ``run`` (textbound.triage.causes.Run) in ``out``, from each signature's
    smallest record: for an impl-like module, Python in its own API for every scripted property
    (textbound.triage.scripts.SCRIPTED); for the node engines, JavaScript (textbound.triage.js_reproducer) for
    their tokenizer or chat signatures. Each script is kept only once it was run and seen to exit 1;
    returns a line per signature saying what was written or why not."""
    from ..naming.signatures import signature_groups, split_records

    out.mkdir(parents=True, exist_ok=True)
    impl, families = run.summary.get("impl", DEFAULT_IMPL), run.summary.get("families", {})
    lines = []
    groups = [g for g in signature_groups(split_records(run.records)[0])
              if _listed(impl, g.smallest["component"]) and not is_oracle_disagreement(g.signature)]
    for number, group in enumerate(groups, 1):
        record = group.smallest
        folder = families.get(record["family"])
        reason = _unscripted(impl, record, folder)
        if reason is None:
            job = Job(Target(recorded_case(record), group.signature, impl), Path(folder),
                      out / script_name(number, group.signature, _suffix(impl)), str(run.dir),
                      record.get("oracle_version", ""))
            written, reason = WRITERS.get(impl, _write_python)(job)
        lines.append(f"{group.signature}: {written}" if reason is None else f"{group.signature}: no reproducer ({reason})")
    return lines


@dataclass
class Job:
    """One script to write: its target, the family's folder, the file, and where the data comes from."""

    target: Target
    folder: Path
    path: Path
    run: str  # the run's folder, named in the script
    oracle: str  # the oracle's version, as the record has it


def _listed(impl: str, component: str) -> bool:
    """Whether a run of ``impl`` lists ``component``'s signatures: an impl-like module's all, a node
    engine's or another engine's only those of the component it stands for."""
    if impl == HF_JINJA:
        return component == "chat"
    return component == "tokenizer" or not impl.startswith(ENGINE_ADAPTERS)


def _suffix(impl: str) -> str:
    return ".mjs" if impl in (HF_JINJA, JS_TOKENIZERS) else ".py"


def _unscripted(impl: str, record: dict, folder: str | None) -> str | None:
    """Why a record gets no script (None: it gets one)."""
    key = (record["component"], record["property"])
    if impl == HF_JINJA:
        if record["property"] != "render":
            return "only chat/render is scripted for a template engine"
    elif impl == JS_TOKENIZERS:
        if record["property"] not in PROPERTIES:
            return "only encode and decode are scripted"
    elif impl.startswith(ENGINE_ADAPTERS):
        return f"{impl} drives another engine; its API is not scripted"
    elif key not in SCRIPTED:
        return f"{'/'.join(key)} is not scripted; scripted are {', '.join('/'.join(k) for k in sorted(SCRIPTED))}"
    tokenizer = impl == JS_TOKENIZERS or (impl != HF_JINJA and SCRIPTED[key].tokenizer)
    if not folder or not Path(folder).is_dir() or (tokenizer and not (Path(folder) / "tokenizer.json").is_file()):
        return f"the family folder {folder} is gone"
    return None


def _minimized(job: Job) -> tuple[dict | None, str | None]:
    """The family's tokenizer.json minimized for the job's target, or why not."""
    spec = json.loads((job.folder / "tokenizer.json").read_text(encoding="utf-8"))
    if not _diverges(job.target, spec):
        return None, "the recorded case no longer diverges"
    return minimized_spec(job.target, spec), None


def _write_python(job: Job) -> tuple[Path | None, str | None]:
    """The Python script of an impl-like module at the job's path, or why not."""
    from ..plan.implementation import import_module

    try:
        import_module(job.target.impl)  # an --impl file's folder joins the path the script is run with
    except Exception as exc:  # noqa: BLE001 - the module may fail to import in any way here
        return None, f"{job.target.impl} cannot be imported here: {type(exc).__name__}: {exc}"
    target, spec = job.target, None
    if target.case.component == "chat":
        case, reason = _shrunk_chat_case(job)
        if reason:
            return None, reason
        target = replace(target, case=case)
    if SCRIPTED[(target.case.component, target.case.property)].tokenizer:
        if target.case.component == "chat":
            target = _with_chat_files(target, job.folder)
        spec, reason = _minimized(replace(job, target=target))
        if reason:
            return None, reason
    try:
        job.path.write_text(reproducer_script(target, spec, job.run, job.oracle), encoding="utf-8")
    except Unscripted as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - the reference failing on the case: one line, the others still written
        return None, f"the reference's answer could not be computed: {type(exc).__name__}: {exc}"
    return _seen_failing(job.path)


def _with_chat_files(target: Target, folder: Path) -> Target:
    """A chat ids target with what its script holds beside the minimized tokenizer.json: the family's
    tokenizer_config.json (less its chat template: the case's inline one is given), and the prompt
    transformers renders, whose tokens the minimized file keeps."""
    from textbound.oracles.chat_oracle import ChatRequest, FamilyChatOracle, frozen_clock

    from ..checks.chat import INLINE_TEMPLATE

    config = folder / "tokenizer_config.json"
    config = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    request = ChatRequest.of(target.case.input)
    try:
        with frozen_clock():
            prompt = FamilyChatOracle.of(folder).tokenizer.apply_chat_template(
                copy.deepcopy(request.messages), chat_template=target.case.input[INLINE_TEMPLATE], tokenize=False,
                **request.arguments())
    except Exception:  # noqa: BLE001 - a request transformers refuses: the file is minimized without its tokens
        prompt = None
    return replace(target, config={k: v for k, v in config.items() if k != "chat_template"}, prompt=prompt)


def _write_js_tokenizer(job: Job) -> tuple[Path | None, str | None]:
    """The node tokenizer's script at the job's path, or why not."""
    from .js_reproducer import tokenizer_script

    config = job.folder / "tokenizer_config.json"
    job.target.config = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    spec, reason = _minimized(job)
    if reason:
        return None, reason
    job.path.write_text(tokenizer_script(job.target, spec, job.target.config, origin(job.run, job.target.case),
                                         job.oracle, job.path.name), encoding="utf-8")
    return _seen_failing(job.path)


def _shrunk_chat_case(job: Job) -> tuple[Case | None, str | None]:
    """The target's case with its template's source inline (``template_source``), shrunk further by
    the engine itself (beyond what the run's time allowed), or why not."""
    from ..checks import Subject, run_check
    from ..checks.chat import INLINE_TEMPLATE, case_template
    from ..plan.implementation import Implementation
    from ..shrinking.template_shrink import shrink_template

    target = job.target
    subject = Subject(target.case.family, job.folder, Implementation(target.impl))
    case, budget = target.case, _Budget(MAX_TRIES)

    def diverges(source: str) -> bool:
        found = budget.spend() and run_check(subject, replace(case, input={**case.input, INLINE_TEMPLATE: source}))
        return bool(found) and found.signature == target.signature
    try:
        source = case_template(subject, case).source
    except LookupError as exc:
        return None, f"its template cannot be found: {exc}"
    return replace(case, input={**case.input, INLINE_TEMPLATE: shrink_template(source, diverges)}), None


def _write_js_chat(job: Job) -> tuple[Path | None, str | None]:
    """The template engine's script at the job's path, on the record's template shrunk further, or why not."""
    from ..checks.chat import INLINE_TEMPLATE
    from .js_reproducer import chat_script, template_context

    case, reason = _shrunk_chat_case(job)
    if reason:
        return None, reason
    context = template_context(case.input[INLINE_TEMPLATE], case.input)
    if context is None:
        return None, "the request is refused before the template runs"
    job.path.write_text(chat_script(replace(job.target, case=case), case.input[INLINE_TEMPLATE], context,
                                    origin(job.run, job.target.case), job.path.name), encoding="utf-8")
    return _seen_failing(job.path)


WRITERS = {JS_TOKENIZERS: _write_js_tokenizer, HF_JINJA: _write_js_chat}  # else _write_python


def _seen_failing(path: Path) -> tuple[Path | None, str | None]:
    """A written script, kept when it is run and seen to exit 1 (a JavaScript one also where node
    cannot run it here: the check that found it ran elsewhere)."""
    from .js_reproducer import run_script

    try:
        result = run_script(path) if path.suffix == ".mjs" else run_python_script(path)
    except subprocess.TimeoutExpired as exc:
        path.unlink()
        return None, f"the written script did not finish in {exc.timeout:g} s"
    # A script that exits 1 without its verdict crashed before it (an import it lacks).
    if result is None or (result.returncode == 1 and result.stdout.startswith("expected:")):
        return path, None
    path.unlink()
    return None, (f"the written script exits {result.returncode} on the engine: "
                  f"{(result.stdout + result.stderr).strip().splitlines()[-1:]}")


def run_python_script(path: Path) -> subprocess.CompletedProcess:
    """``python path`` in a fresh folder, importing what this process imports (the --impl module)."""
    with tempfile.TemporaryDirectory(prefix="textbound-py-") as folder:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())}
        return subprocess.run([sys.executable, str(path.resolve())], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=SCRIPT_SECONDS)
