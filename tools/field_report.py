"""Regenerates reports/field/: every adapter (textbound/adapters) checked on every family it applies to.

    python tools/field_report.py                      # run every engine, then write the report
    python tools/field_report.py --engines minijinja  # rerun one engine, keep the others' runs
    python tools/field_report.py --write-only         # render again from field.json, the runs and triage.json
    python tools/field_report.py --write-only --rekind  # re-triage the recorded signatures under today's kinds

For each engine it runs ``textbound check --impl MODULE --component ...`` once over the embedded
families, the shared ones ($TEXTBOUND_MODELS) and the Mistral families (mistral-common's vocabularies,
as --model-dir), at the quick budget unless told otherwise, into ``--work-dir`` (one folder per
engine). A family whose tokenizer the engine cannot load at all (tiktoken and a SentencePiece
model, mistral-common and a vocabulary it does not ship) is listed as not applicable with the
engine's own words, not run. Then it writes

- reports/field/field.json: per engine its version, and per family × component the cases and
  divergences; per root-cause signature its count, families and smallest example;
- reports/field/README.md, an index: per engine its totals, the engines × components table (each
  cell's divergences of cases and its finding: the most pressing verdict of its signatures), the
  signatures per verdict, the root causes (one per upstream report: the engine bugs, references
  changed and textbound bugs) and the engine bugs without a reproducer, each linking to
- reports/field/engines/ENGINE.md, one page per engine: its runs per family and component, each
  signature (an anchor per component and per signature) with its minimized example, the
  replay command and its triage line from reports/field/triage.json (keyed ``ENGINE | SIGNATURE``:
  ``{"verdict": "engine bug" | "reference changed" | "policy" | "not applicable" | "textbound bug",
  "note": ..., "upstream": URL, "reproducer": "reproducers/FILE", "report": "upstream/ENGINE/SLUG.md"}``
  (reproducer and report: a path under reports/field/, or a list of them; a path that does not
  exist stops the report); a key may be a glob, ``mistral-common | tokenizer/decode/*``, for one root
  cause behind several signatures), written by hand and kept across regenerations. A signature
  without one is marked untriaged;
- reports/field/matrix.html: the engines × components table as one self-contained page (no
  network), each cell coloured by its finding and linking to the component on the engine's page.

``--write-only`` with no run folder under --work-dir (they are not committed) runs no engine: it
renders these files again from field.json and triage.json alone, byte for byte what site() gives.

Signatures are computed afresh from the records (textbound.triage.causes.rekinded), so a run recorded
under an older wording of kinds is grouped as today's checks group it, tools kinds led by the
format (an engine's tool parsers are one per format: ``engine_kind``); each signature lists the
recorded signatures it was made of (``formerly``); then each is put to the mutation catalogue, and
the signatures of one property whose smallest examples the same classes reproduce exactly are one,
named by them (``explained_signatures``). ``--rekind`` does the same for an engine whose
run folder is gone, from each recorded signature's smallest example (the group's count carried
whole), and carries each triage verdict over to the signatures its divergences now have.

A server engine (llama-server) is not run here: its runs are report folders, one per family, under
reports/field/ENGINE/FAMILY (``nox -s server_llama_cpp`` starts the server and writes them); their
summaries give the counts, and records, where a run folder of the same layout under --work-dir
holds them, the signatures.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textbound.families import build_family, embedded_family_names, folder_families, models_dir  # noqa: E402
from textbound.mutants import BY_NAME  # noqa: E402
from textbound.naming.divergence import COMPONENTS, is_oracle_disagreement, signature_of  # noqa: E402
from textbound.plan.implementation import Implementation  # noqa: E402
from textbound.triage.causes import rekinded  # noqa: E402

FIELD_DIR = ROOT / "reports" / "field"
TRIAGE_FILE = FIELD_DIR / "triage.json"
EXAMPLE_CHARS = 400  # of a minimized input, expected or actual value quoted on an engine's page
NOT_PROVIDED = "not provided"  # the kind of a property whose names the engine lacks
EXPLAINED = "explained by "  # the kind of the signatures the same catalogue classes reproduce, made one
SETUP_FILE = "field_setup.json"  # in an engine's run folder: the families not run, and why
VERDICTS = ("engine bug", "reference changed", "policy", "not applicable", "textbound bug")
LINKS = ("reproducer", "report")  # triage fields naming files under FIELD_DIR


@dataclass(frozen=True)
class Engine:
    name: str
    module: str
    components: tuple[str, ...]
    loads_tokenizer: bool  # families are tried by loading the engine's Tokenizer first
    environment: tuple[tuple[str, str], ...] = ()  # what its adapter reads, e.g. the subprocess engine's command
    families: tuple[str, ...] = ()  # the only families it is run on (none: every family)
    server: bool = False  # checked over HTTP, run per family elsewhere (see the module's docstring)
    refuses: tuple[tuple[str, str], ...] = ()  # a server's families it cannot serve, with its own words
    unavailable: str = ""  # why it is not run here: the commands tried and what they printed
    case_timeout: float | None = None  # its check's --case-timeout, where the default is too short

    def environ(self):
        """os.environ with the engine's variables, for the setup done in this process."""
        return mock.patch.dict(os.environ, dict(self.environment))


ENGINES = (
    Engine("tokenizers", "textbound.adapters.tokenizers_adapter", ("tokenizer", "detokenizer"), True),
    Engine("tiktoken", "textbound.adapters.tiktoken_adapter", ("tokenizer", "detokenizer"), True),
    Engine("minijinja", "textbound.adapters.minijinja_adapter", ("chat",), False),
    Engine("mistral-common", "textbound.adapters.mistral_common_adapter", ("tokenizer", "chat"), True),
    Engine("outlines-core", "textbound.adapters.outlines_core_adapter", ("structured",), False),
    Engine("llguidance", "textbound.adapters.llguidance_adapter", ("structured",), False),
    # Heavy engines (nox -s engines_js / engine_llama_cpp / engine_vllm install them); skipped, saying why, without.
    Engine("hf-jinja", "textbound.adapters.hf_jinja", ("chat",), False),
    # transformers.js' own apply_chat_template (messages as given) through the generic protocol
    Engine("transformers.js-chat", "textbound.adapters.jsonl_engine", ("chat",), False,
           (("TEXTBOUND_ENGINE_CMD", f"node {ROOT / 'engines' / 'js' / 'chat_engine.mjs'}"),)),
    Engine("tokenizers.js", "textbound.adapters.js_tokenizers", ("tokenizer", "detokenizer"), True),
    Engine("llama.cpp", "textbound.adapters.llama_cpp_adapter", ("tokenizer", "detokenizer"), True),
    # vLLM in an environment of its own, named by $TEXTBOUND_VLLM_PYTHON (nox -s engine_vllm builds one).
    # It loads every family folder, and probing one starts an engine (a minute): none is probed. Its
    # stop check reads text and its tool parsers get one tokenizer whatever the family
    # (TEXTBOUND_VLLM_TOOLS_TOKENIZER, default qwen): those two run on that family alone.
    Engine("vllm", "textbound.adapters.vllm", ("tokenizer", "detokenizer", "chat"), False),
    Engine("vllm-parsers", "textbound.adapters.vllm", ("stops", "tools"), False, families=("qwen",)),
    # SGLang's tool and reasoning parsers ($TEXTBOUND_SGLANG_PYTHON; textbound/adapters/sglang.py says how)
    Engine("sglang", "textbound.adapters.sglang", ("tools",), False, families=("qwen",)),
    # mlx-lm in process (pip install -e '.[mlx-lm]'; nox -s engine_mlx_lm): its streaming detokenizers
    # and its server's chat preparation on every family; its server's tool handling gets one
    # tokenizer per format whatever the family.
    Engine("mlx-lm", "textbound.adapters.mlx_lm_adapter", ("detokenizer", "chat"), True),
    Engine("mlx-lm-server", "textbound.adapters.mlx_lm_adapter", ("tools",), False, families=("qwen",)),
    # litellm's own rendering of HF templates for completion backends (nox -s engine_litellm), on
    # every family as the other chat engines: a family gives the template its bos and eos tokens.
    Engine("litellm", "textbound.adapters.litellm_adapter", ("chat",), False),
    # mistral.rs's GGUF tokenizer on the tiny GGUFs llama-server's rows serve (nox -s engine_mistralrs);
    # a family without one cached is converted first (llama.cpp's sdist, fetched once). Naming a
    # worker's first divergence on qwen3 or llama3_1 loads up to 24 or 27 changed copies of their
    # large tokenizer.json inside the case's clock (textbound.checks.tokenizer._read_otherwise):
    # 127 s and 174 s at a load average of 11 on 2 cores, past the default 30 s.
    Engine("mistral.rs", "textbound.adapters.mistralrs_adapter", ("tokenizer",), False,
           families=("qwen3", "llama3_1", "llama2"), case_timeout=600.0),
    # SGLang's model gateway (nox -s server_smg): its Rust router in gRPC mode before a random-token
    # worker, which reports the chat ids it is sent. It constrains nothing and nothing steers it, so
    # tools and structured are not checked (noxfile.py's SMG_COMPONENTS).
    Engine("smg", "textbound.adapters.server", ("tokenizer", "detokenizer", "chat", "stops"), False,
           families=("qwen3", "llama3_1", "llama2"), server=True),
    # xgrammar's masks in an environment of its own ($TEXTBOUND_XGRAMMAR_PYTHON; nox -s engine_xgrammar)
    Engine("xgrammar", "textbound.adapters.xgrammar_adapter", ("structured",), False),
    # llama.cpp's llama-server serving each family's tiny GGUF (nox -s server_llama_cpp)
    Engine("llama-server", "textbound.adapters.server",
           ("tokenizer", "detokenizer", "chat", "stops", "tools", "structured"), False,
           families=("llama3_1", "qwen3", "llama2"), server=True),
    # llama-cpp-python's own server and chat formatter (nox -s server_llama_cpp_python): the server has
    # no chat text route, so its chat is checked in-process through the server's request model. Its
    # tokenizer is llama.cpp's (the llama.cpp row) behind routes that always add special tokens: not run
    # here (noxfile.py's LLAMA_CPP_PYTHON_COMPONENTS).
    Engine("llama-cpp-python-chat", "textbound.adapters.llama_cpp_python_chat", ("chat",), False),
    Engine("llama-cpp-python-server", "textbound.adapters.server", ("detokenizer", "stops", "tools", "structured"), False,
           families=("llama3_1", "qwen3", "llama2", "sentencepiece"), server=True),
    # NVIDIA Dynamo's front end before a random-token worker (nox -s server_dynamo); the worker
    # constrains nothing, so tools and structured are not checked, and its tokenizer is checked
    # through chat ids (noxfile.py's DYNAMO_COMPONENTS).
    Engine("dynamo", "textbound.adapters.server", ("detokenizer", "chat", "stops"), False,
           families=("llama3_1", "qwen3"), server=True,
           refuses=tuple((family, "its front end does not serve the model: 'Model materialization failed ... "
                                  "prompt_formatter_from_mdc: chat_template field is required in the "
                                  "tokenizer_config.json file' (the family has no chat template)")
                         for family in ("llama2", "sentencepiece"))),
    # transformers' own OpenAI server (transformers serve) on each family's tiny random-weight model
    # (nox -s server_transformers): no tokenize endpoint, no chat rendering, so those components are not its
    Engine("transformers-serve", "textbound.adapters.server", ("detokenizer", "stops", "tools", "structured"), False,
           families=("qwen3", "llama3_1", "llama2"), server=True),
    # mlx-lm's own server (python -m mlx_lm.server) on each family's tiny random-weight model written with mlx
    # (nox -s server_mlx_lm): it reads no tool_choice and no response_format, so tools and structured are not its
    Engine("mlx-lm-http", "textbound.adapters.server", ("detokenizer", "stops"), False,
           families=("qwen3", "llama3_1", "llama2"), server=True),
)
SERVER_VERSION_END = " serving "  # a server's impl_version goes on with its model file and URL, per run


@dataclass(frozen=True)
class FieldFamily:
    name: str
    path: Path
    option: tuple[str, str]  # how `textbound check` is told of it


def field_families() -> list[FieldFamily]:
    """The embedded families, the shared ones, and the Mistral families (when mistral-common is installed)."""
    families = [FieldFamily(name, build_family(name), ("--family", name)) for name in embedded_family_names()]
    models = models_dir()
    if models:
        families += [FieldFamily(f.name, f.path, ("--family", f.name)) for f in folder_families(models)]
    try:
        from textbound.families import build_mistral_family, mistral_family_names
    except ImportError:
        return families
    for name in mistral_family_names():
        path = build_mistral_family(name)
        families.append(FieldFamily(path.name, path, ("--model-dir", str(path))))
    return families


def applicable(engine: Engine, family: FieldFamily) -> str | None:
    """None when ``engine`` can be run on ``family``, else why not (the engine's own error)."""
    if not engine.loads_tokenizer:
        return None
    try:
        with engine.environ():
            Implementation(engine.module).Tokenizer.from_dir(family.path)
    except Exception as exc:  # noqa: BLE001 - whatever the engine says is the reason
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def run_engine(engine: Engine, families: list[FieldFamily], work_dir: Path, budget: str, jobs: int) -> dict:
    """Runs the engine's check over the families it applies to; returns what was not run and why."""
    if engine.unavailable:
        return {"missing": engine.unavailable, "not_applicable": {}}
    if engine.server:
        print(f"field: {engine.name} is run by its nox session; its reports are read from {FIELD_DIR / engine.name}",
              flush=True)
        return {"missing": None, "not_applicable": dict(engine.refuses)}
    try:
        with engine.environ():
            Implementation(engine.module)
    except Exception as exc:  # noqa: BLE001 - a missing engine skips, saying why
        return {"missing": f"{type(exc).__name__}: {exc}", "not_applicable": {}}
    out = work_dir / engine.name
    families = [f for f in families if not engine.families or f.name in engine.families]
    not_applicable = {f.name: reason for f in families if (reason := applicable(engine, f))}
    chosen = [f for f in families if f.name not in not_applicable]
    shutil.rmtree(out, ignore_errors=True)  # a report folder's divergences.jsonl is appended to, never reset
    out.mkdir(parents=True)
    command = [sys.executable, "-m", "textbound.cli", "check", "--impl", engine.module, "--component",
               ",".join(engine.components), "--budget", budget, "--jobs", str(jobs), "--report-dir", str(out)]
    if engine.case_timeout:
        command += ["--case-timeout", str(engine.case_timeout)]
    for family in chosen:
        command += family.option
    print(f"field: {engine.name} on {len(chosen)} families ({len(not_applicable)} not applicable)", flush=True)
    subprocess.run(command, cwd=ROOT, check=False, env={**os.environ, **dict(engine.environment)})
    setup = {"missing": None, "not_applicable": not_applicable}
    (out / SETUP_FILE).write_text(json.dumps(setup, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return setup


def _clip(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS] + f"... ({len(text)} characters)"


def _read_records(path: Path) -> list[dict]:
    # Lines end in "\n" only: a record may hold U+2028 and the like, which splitlines() would split at.
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


# An engine's tool parsers are one per format (vLLM's, SGLang's, llama.cpp's): a bug in its hermes
# parser and one in its mistral parser are different upstream bugs, though the checks' kinds, made
# for impl's shared code, name them alike; the report names the format the case's input gives.
PER_FORMAT_COMPONENTS = ("tools",)


def engine_kind(record: dict, kind: str) -> str:
    """``kind`` led by the record's format where its component's parsers are one per format:
    ``engine_kind({"component": "tools", "input": {"format": "hermes"}, ...}, "content differs") ==
    "hermes: content differs"``; a kind already led by it (recorded so), oracle disagreements, and a
    recorded group's example (``weight``: its group was made whatever the formats) are kept."""
    fmt = (record.get("minimized_input") or record.get("input") or {}).get("format")
    if ("weight" in record or record["component"] not in PER_FORMAT_COMPONENTS or not fmt or kind.startswith(f"{fmt}: ")
            or is_oracle_disagreement(kind) or kind.startswith(NOT_PROVIDED)):
        return kind
    return f"{fmt}: {kind}"


def group_signatures(records: list[dict], folders: dict[str, str]) -> dict[str, dict]:
    """Records grouped by the signature today's checks give them (textbound.triage.causes.rekinded): per
    signature its count, families, smallest example and, where they differ from it, the recorded
    signatures it was made of. A record may stand for several (``weight``, ``families``: a recorded
    signature's smallest example standing for its group)."""
    signatures: dict[str, dict] = {}
    for record in records:
        kind = engine_kind(record, rekinded(record, folders.get(record["family"])))
        group = signatures.setdefault(signature_of(record["component"], record["property"], kind),
                                      {"count": 0, "families": [], "example": None, "formerly": []})
        group["count"] += record.get("weight", 1)
        group["families"] += [f for f in record.get("families", [record["family"]]) if f not in group["families"]]
        # the signature it was recorded under and the ones before it: triage.json may name any of them
        group["formerly"] += [old for old in [*(record.get("formerly") or []), record["signature"]]
                              if old not in group["formerly"]]
        size = len(json.dumps(record["minimized_input"] or record["input"], ensure_ascii=False))
        if group["example"] is None or size < group["example"]["size"]:
            group["example"] = {"size": size, "family": record["family"], "property": record["property"],
                                "input": record["minimized_input"] or record["input"],
                                "expected": record["expected"], "actual": record["actual"],
                                "first_difference": record.get("first_difference"),
                                "reproduce": record.get("reproduce")}
    for signature, group in signatures.items():
        group["formerly"] = sorted(old for old in group["formerly"] if old != signature)
    return dict(sorted(signatures.items()))


def explained_signatures(signatures: dict[str, dict], folders: dict[str, str]) -> dict[str, dict]:
    """``signatures`` put to the mutation catalogue (textbound.triage.explanation): each gets the classes
    whose output on its smallest example is the engine's (``explained_by``), and the signatures of
    one component and property that the same classes reproduce are one, named by them (one bug, one
    signature): llama-server's seven ``tokenizer/encode/ids: splits ...`` signatures on llama2 are
    ``tokenizer/encode/explained by tokenizer_merge_ranks_ignored``. Only an explanation by one
    class merges (several reproducing an example say little of its cause: any structured mutant
    rejecting an instance reproduces a rejection), and only within a format where the engine's
    parsers are one per format (PER_FORMAT_COMPONENTS). Oracle disagreements and properties an
    engine lacks are not put to it."""
    from textbound.triage.explanation import explaining_mutants

    by_cause: dict[tuple, list[str]] = {}
    for signature, group in signatures.items():
        component, prop, kind = signature.split("/", 2)
        if is_oracle_disagreement(kind) or kind.startswith(NOT_PROVIDED):
            continue
        (record,) = example_records({"signatures": {signature: group}})
        names = [mutant.name for mutant in explaining_mutants(record, folders)]
        if names:
            group["explained_by"] = names
        if len(names) == 1:
            fmt = (record["input"] or {}).get("format") if component in PER_FORMAT_COMPONENTS else None
            by_cause.setdefault((component, prop, fmt, names[0]), []).append(signature)
    for (component, prop, fmt, name), members in by_cause.items():
        named = f"{component}/{prop}/{f'{fmt}: ' if fmt else ''}{EXPLAINED}{name}"
        if len(members) < 2 and named not in signatures[members[0]]["formerly"]:
            continue  # one signature keeps its own words, unless it was named so before (regrouped from its example)
        groups = [signatures.pop(signature) for signature in members]
        signatures[named] = {
            "count": sum(g["count"] for g in groups),
            "families": list(dict.fromkeys(f for g in groups for f in g["families"])),
            "example": min((g["example"] for g in groups), key=lambda e: e["size"]),
            "formerly": sorted({*members, *(old for g in groups for old in g["formerly"])} - {named}),
            "explained_by": [name]}
    return dict(sorted(signatures.items()))


def example_records(entry: dict) -> list[dict]:
    """An engine's recorded signatures as records: each one's smallest example, weighing its count."""
    return [{"signature": signature, "component": signature.split("/", 2)[0],
             # the example's own property: a FILE_READING signature stands for several
             "property": group["example"]["property"],
             "family": group["example"]["family"], "families": group["families"], "weight": group["count"],
             "formerly": group.get("formerly"),
             "input": group["example"]["input"], "minimized_input": group["example"]["input"],
             **{key: group["example"].get(key) for key in ("expected", "actual", "first_difference", "reproduce")}}
            for signature, group in entry["signatures"].items()]


def _run_folders(engine: Engine, work_dir: Path) -> list[tuple[Path, Path]]:
    """(summary folder, records folder) of each of the engine's runs: one, or one per family for a server."""
    if engine.server:
        return [(FIELD_DIR / engine.name / family, work_dir / engine.name / family) for family in engine.families]
    return [(work_dir / engine.name, work_dir / engine.name)]


def collect(engine: Engine, work_dir: Path, setup: dict, folders: dict[str, str]) -> dict:
    """One engine's part of field.json, from its run folders (a server's: one per family, their
    summaries merged; its version the part of impl_version the runs share)."""
    entry = {"module": engine.module, "components": list(engine.components), **setup}
    runs = [(summary / "summary.json", records / "divergences.jsonl") for summary, records in _run_folders(engine, work_dir)]
    runs = [(summary, records) for summary, records in runs if summary.is_file() or records.is_file()]
    if setup.get("missing") or not runs:
        return {**entry, "version": None, "counts": [], "signatures": {}}
    records, summaries = [], []
    for summary_file, records_file in runs:
        found = _read_records(records_file) if records_file.is_file() else []
        records += found
        summaries.append(json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.is_file()
                         else _summary_of_records(found))
    versions = {str(s.get("impl_version")).split(SERVER_VERSION_END)[0] for s in summaries}
    if len(versions) > 1:
        raise SystemExit(f"field: {engine.name}'s runs were made by different versions: {sorted(versions)}")
    return {**entry, "version": versions.pop(), "oracles": {k: v for s in summaries for k, v in (s.get("oracles") or {}).items()},
            "budget": summaries[0].get("budget"), "completed": all(s.get("completed", True) for s in summaries),
            "harness_errors": [e for s in summaries for e in s.get("harness_errors") or []] or None,
            "skipped": [k for s in summaries for k in s.get("skipped") or []] or None,
            "counts": [c for s in summaries for c in s.get("counts", [])],
            "signatures": explained_signatures(group_signatures(records, folders), folders)}


def _summary_of_records(records: list[dict]) -> dict:
    """What a run that died before writing summary.json still tells: its records (cases unknown)."""
    counts: dict[tuple[str, str], dict] = {}
    for record in records:
        key = (record["family"], record["component"])
        counts.setdefault(key, {"family": key[0], "component": key[1], "cases": None, "divergences": 0})
        counts[key]["divergences"] += 1
    first = records[0] if records else {}
    return {"impl_version": first.get("impl_version"), "oracles": {first.get("component"): first.get("oracle_version")},
            "completed": False, "harness_errors": ["the run ended before writing summary.json"],
            "counts": list(counts.values())}


def triage_entry(triage: dict, engine: str, signature: str) -> dict | None:
    """The triage of ``ENGINE | SIGNATURE``: its own entry, else the first whose key is a glob
    (``fnmatch``) matching it, for one root cause behind many kinds of first difference."""
    key = f"{engine} | {signature}"
    if key in triage:
        return triage[key]
    return next((entry for pattern, entry in triage.items() if fnmatch.fnmatchcase(key, pattern)), None)


def linked_paths(entry: dict, field: str) -> list[str]:
    """The files a triage entry's ``field`` names, a path or a list of paths under FIELD_DIR:
    ``{"reproducer": "reproducers/a.py"}`` -> ``["reproducers/a.py"]``."""
    value = entry.get(field) or []
    return [value] if isinstance(value, str) else list(value)


def dangling_links(triage: dict) -> dict[str, list[str]]:
    """Per triage key, the reproducer and report paths it names that do not exist under FIELD_DIR:
    ``{"e | s": {"reproducer": "reproducers/gone.py"}}`` -> ``{"e | s": ["reproducers/gone.py"]}``."""
    missing = {key: [path for field in LINKS for path in linked_paths(entry, field) if not (FIELD_DIR / path).is_file()]
               for key, entry in triage.items()}
    return {key: paths for key, paths in missing.items() if paths}


def triage_line(triage: dict, engine: str, signature: str, to_field: str = "") -> str:
    """A signature's triage as a line of markdown, its links reached from a page ``to_field`` away
    from FIELD_DIR: ``triage_line({"e | a/b/c": {"verdict": "policy", "note": "n", "reproducer":
    "reproducers/r.py"}}, "e", "a/b/c", "../") == "**policy**: n ([reproducer: r.py](../reproducers/r.py))"``."""
    entry = triage_entry(triage, engine, signature)
    if not entry:
        return f"**{UNTRIAGED}**"
    links = [f"[upstream]({entry['upstream']})"] if entry.get("upstream") else []
    links += [f"[{field}: {Path(path).name}]({to_field}{path})"
              for field in LINKS for path in linked_paths(entry, field)]
    return f"**{entry['verdict']}**: {entry['note']}" + (f" ({', '.join(links)})" if links else "")


def unreproduced(field: dict, triage: dict) -> dict[str, list[tuple[str, int]]]:
    """Per engine, its engine-bug signatures whose triage names no reproducer, with their counts."""
    gaps: dict[str, list[tuple[str, int]]] = {}
    for name, entry in field["engines"].items():
        for signature, group in entry["signatures"].items():
            found = triage_entry(triage, name, signature)
            if found and found["verdict"] == "engine bug" and not linked_paths(found, "reproducer"):
                gaps.setdefault(name, []).append((signature, group["count"]))
    return gaps


def _gap_section(field: dict, triage: dict) -> list[str]:
    gaps = unreproduced(field, triage)
    total = sum(len(found) for found in gaps.values())
    lines = ["## Engine bugs without a reproducer", "",
             f"{total} engine-bug signatures ({sum(c for found in gaps.values() for _, c in found)} divergences) "
             "have no standalone reproducer in `reproducers/` yet:" if total else
             "Every engine-bug signature has a standalone reproducer.", ""]
    for name, found in gaps.items():
        lines += [f"- [{name}]({page_of(name)}): " + "; ".join(
            f"[`{cell(signature)}`]({page_of(name)}#{signature_anchor(signature)}) ({count})"
            for signature, count in found)]
    return lines + ([""] if total else [])


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# The site: README.md, an index; one page per engine under engines/; matrix.html, engines × components.
INDEX_FILE = "README.md"
MATRIX_FILE = "matrix.html"
ENGINE_PAGES = "engines"  # the folder of the engine pages, under FIELD_DIR
ANCHOR_WORDS = 60  # characters of a signature's words in its anchor
UNTRIAGED = "untriaged"  # the verdict of a signature triage.json does not name
NO_DIVERGENCE = "no divergence"
NOT_CHECKED = "not checked"  # a component the engine does not have
NOT_RUN = "not run"  # a component of the engine with no case run: not installed, or no family applicable
# A component's finding: the first of these its signatures' verdicts hold (most pressing first),
# else why it has none; each drawn in matrix.html in its colour.
FINDING_COLOURS = {
    "engine bug": "#f28b82", "textbound bug": "#d7aefb", UNTRIAGED: "#fdbd5c", "reference changed": "#aecbfa",
    "policy": "#fff1a8", "not applicable": "#e8eaed", NO_DIVERGENCE: "#a8dab5", NOT_RUN: "#bdc1c6",
    NOT_CHECKED: "#ffffff",
}
ROOT_CAUSE_VERDICTS = ("engine bug", "reference changed", "textbound bug")  # a cause in an engine or a reference


def page_of(engine: str) -> str:
    """An engine's page, relative to FIELD_DIR: ``page_of("llama.cpp") == "engines/llama.cpp.md"``."""
    return f"{ENGINE_PAGES}/{engine}.md"


def signature_anchor(signature: str) -> str:
    """The id of a signature's heading on its engine's page: its words, then a digest of it that keeps
    signatures apart whose words are alike: ``signature_anchor("chat/render/text: drops '\\n'") ==
    "chat-render-text-drops-n-052259"``."""
    words = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:ANCHOR_WORDS].rstrip("-")
    return f"{words}-{hashlib.sha256(signature.encode('utf-8')).hexdigest()[:6]}"


def engine_components(entry: dict) -> list[str]:
    """The components an engine was checked on, in COMPONENTS' order: those it names and any its
    counts or signatures hold: ``engine_components({"components": ["tools", "stops"], "counts": [],
    "signatures": {}}) == ["stops", "tools"]``."""
    named = ({*entry["components"]} | {c["component"] for c in entry["counts"]}
             | {signature.split("/", 1)[0] for signature in entry["signatures"]})
    return [c for c in COMPONENTS if c in named] + sorted(named - set(COMPONENTS))


@dataclass(frozen=True)
class ComponentFindings:
    """What an engine's run found on one component: a cell of the matrix, a section of its page."""
    engine: str
    component: str
    finding: str  # a key of FINDING_COLOURS
    cases: int | None  # None: a run that ended before counting them
    divergences: int
    verdicts: dict[str, str]  # per signature, its triage verdict or UNTRIAGED

    def numbers(self) -> str:
        """``"118 / 1320"``: divergences of cases."""
        return f"{self.divergences} / {'unknown' if self.cases is None else self.cases}"


def component_findings(name: str, entry: dict, component: str, triage: dict) -> ComponentFindings:
    """The engine's counts and signatures on ``component`` and its finding: minijinja's chat, 118
    divergences in 1320 cases whose signatures are engine bugs and policies, is an ``engine bug``; a
    component with divergences but no signature (records not kept) is ``untriaged``."""
    counts = [c for c in entry["counts"] if c["component"] == component]
    cases = None if any(c["cases"] is None for c in counts) else sum(c["cases"] for c in counts)
    divergences = sum(c["divergences"] for c in counts)
    verdicts = {signature: found["verdict"] if (found := triage_entry(triage, name, signature)) else UNTRIAGED
                for signature in entry["signatures"] if signature.split("/", 1)[0] == component}
    if component not in engine_components(entry):
        finding = NOT_CHECKED
    elif entry.get("missing") or not counts:
        finding = NOT_RUN
    else:
        found = {*verdicts.values(), *([UNTRIAGED] if divergences and not verdicts else [])}
        finding = next((f for f in FINDING_COLOURS if f in found), NO_DIVERGENCE)
    return ComponentFindings(name, component, finding, cases, divergences, verdicts)


def field_components(field: dict) -> list[str]:
    """The matrix's columns: every component some engine was checked on, in COMPONENTS' order."""
    found = {c for entry in field["engines"].values() for c in engine_components(entry)}
    return [c for c in COMPONENTS if c in found] + sorted(found - set(COMPONENTS))


def matrix(field: dict, triage: dict) -> dict[str, list[ComponentFindings]]:
    """Per engine, its findings on each of the field's components (field_components)."""
    columns = field_components(field)
    return {name: [component_findings(name, entry, component, triage) for component in columns]
            for name, entry in field["engines"].items()}


@dataclass
class RootCause:
    """A cause the triage names in an engine or a reference, and the signatures it is behind."""
    name: str  # the upstream report's title, else the reproducer's file, else the triage note
    key: str  # the report or reproducer path under FIELD_DIR, else the triage note
    triaged: list[tuple[dict, bool]]  # each triage entry naming it, and whether it names it alone
    signatures: dict[str, list[tuple[str, int]]]  # per engine, its signatures behind it and their counts

    def links(self) -> dict:
        """Its report (the one it is named by), reproducers and upstream link: those of the entries
        naming it alone, where any does (an entry naming two causes names both causes' files)."""
        links = _links([entry for entry, alone in self.triaged if alone] or [entry for entry, _ in self.triaged])
        named_by_report = any(self.key in linked_paths(entry, "report") for entry, _ in self.triaged)
        return {**links, "report": self.key} if named_by_report else links

    def verdict(self) -> str:
        return " / ".join(dict.fromkeys(entry["verdict"] for entry, _ in self.triaged))


def root_causes(field: dict, triage: dict) -> list[RootCause]:
    """The causes in an engine or a reference (ROOT_CAUSE_VERDICTS) triage.json names: one per upstream
    report, else per reproducer, else per note; a signature whose triage names two reports is behind
    both. In the order the engines and their signatures come."""
    causes: dict[str, RootCause] = {}
    for name, entry in field["engines"].items():
        for signature, group in entry["signatures"].items():
            found = triage_entry(triage, name, signature)
            if not found or found["verdict"] not in ROOT_CAUSE_VERDICTS:
                continue
            keys = linked_paths(found, "report") or linked_paths(found, "reproducer") or [found["note"]]
            for key in keys:
                if key not in causes:
                    causes[key] = RootCause(_cause_name(key, found), key, [], {})
                cause = causes[key]
                if (found, len(keys) == 1) not in cause.triaged:
                    cause.triaged.append((found, len(keys) == 1))
                cause.signatures.setdefault(name, []).append((signature, group["count"]))
    return list(causes.values())


def _cause_name(key: str, entry: dict) -> str:
    """What ``entry`` names the cause ``key`` by: a report's title (its first line), a reproducer's
    file name, or the note's first sentence."""
    if key in linked_paths(entry, "report"):
        return (FIELD_DIR / key).read_text(encoding="utf-8").split("\n", 1)[0].lstrip("# ").strip()
    if key in linked_paths(entry, "reproducer"):
        return f"`{Path(key).name}`"
    return _clip(key.split(". ", 1)[0])


def _index(field: dict, triage: dict) -> str:
    lines = ["# Engines in the field", "",
             "Every adapter in `textbound/adapters` checked with `textbound check --impl MODULE` on every "
             "family it applies to (embedded, shared under `$TEXTBOUND_MODELS`, and the Mistral families). "
             "Regenerate with `nox -s field` (`python tools/field_report.py`; `--write-only` renders these pages "
             "again from `field.json`, the run folders and `triage.json`, running no engine); triage lines come "
             "from `triage.json`, written by hand. Each engine's page (linked below) holds its runs per family, "
             "every signature with its minimized example, replay command and triage; "
             f"[{MATRIX_FILE}]({MATRIX_FILE}) draws the engines × components table coloured by findings; "
             "[FINDINGS.md](FINDINGS.md) says what was found in words.", "",
             "Divergences of kind `not provided` are properties whose names the engine lacks (e.g. chat ids "
             "for a template engine): counted apart.", "",
             "| engine | version | components | families run | cases | divergences | not provided | signatures "
             "| untriaged |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, entry in field["engines"].items():
        link = f"[{name}]({page_of(name)})"
        if entry.get("missing"):
            lines.append(f"| {link} | not installed | {', '.join(entry['components'])} | skipped: "
                         f"{cell(entry['missing'])} | | | | | |")
            continue
        known = all(c["cases"] is not None for c in entry["counts"])
        cases = sum(c["cases"] for c in entry["counts"]) if known else "unknown"
        divergences = sum(c["divergences"] for c in entry["counts"])
        families = sorted({c["family"] for c in entry["counts"]})
        absent = sum(g["count"] for s, g in entry["signatures"].items() if s.split("/", 2)[2].startswith(NOT_PROVIDED))
        untriaged = sum(1 for s in entry["signatures"] if triage_entry(triage, name, s) is None)
        lines.append(f"| {link} | {entry['version']} | {', '.join(entry['components'])} | {len(families)} | {cases} | "
                     f"{divergences - absent} | {absent} | {len(entry['signatures'])} | {untriaged} |")
    lines += ["", f"Budget `{field['budget']}`, seed 0.", ""]
    lines += _matrix_section(field, triage) + _verdict_section(field, triage) + _cause_section(field, triage)
    lines += _gap_section(field, triage)
    return "\n".join(lines) + "\n"


def _matrix_section(field: dict, triage: dict) -> list[str]:
    columns = field_components(field)
    lines = ["## Engines × components", "",
             "Divergences of cases, and the cell's finding: the most pressing verdict its signatures have "
             f"({', '.join(f for f in FINDING_COLOURS if f not in (NO_DIVERGENCE, NOT_RUN, NOT_CHECKED))}), "
             f"else `{NO_DIVERGENCE}`; `·`: {NOT_CHECKED}. Each links to the component on the engine's page.", "",
             "| engine | " + " | ".join(columns) + " |", "| --- |" + " --- |" * len(columns)]
    for name, row in matrix(field, triage).items():
        lines.append(f"| [{name}]({page_of(name)}) | " + " | ".join(
            "·" if found.finding == NOT_CHECKED else
            f"[{found.numbers()}: {found.finding}]({page_of(name)}#{found.component})" for found in row) + " |")
    return lines + [""]


def _verdict_section(field: dict, triage: dict) -> list[str]:
    verdicts = [*VERDICTS, UNTRIAGED]
    lines = ["## Signatures by verdict", "", "| engine | " + " | ".join(verdicts) + " |",
             "| --- |" + " --- |" * len(verdicts)]
    for name, row in matrix(field, triage).items():
        found = [verdict for findings in row for verdict in findings.verdicts.values()]
        lines.append(f"| [{name}]({page_of(name)}) | " + " | ".join(str(found.count(v)) for v in verdicts) + " |")
    return lines + [""]


def _cause_section(field: dict, triage: dict) -> list[str]:
    causes = root_causes(field, triage)
    lines = ["## Root causes", "",
             f"{len(causes)} causes triaged as {', '.join(ROOT_CAUSE_VERDICTS)}, one per upstream report (else "
             "reproducer): the engines whose signatures it is behind, each signature linked on the engine's page.", ""]
    for cause in causes:
        links = cause.links()
        named = [f"[upstream]({links['upstream']})"] if links.get("upstream") else []
        named += [f"[{field}: {Path(path).name}]({path})" for field in LINKS for path in linked_paths(links, field)]
        behind = "; ".join(
            f"{name}: {_counted(len(found), 'signature')}, {_counted(sum(count for _, count in found), 'divergence')} ("
            + ", ".join(f"[{number}]({page_of(name)}#{signature_anchor(signature)})"
                        for number, (signature, _) in enumerate(found, 1)) + ")"
            for name, found in cause.signatures.items())
        lines.append(f"- **{cause.verdict()}**: {cause.name}" + (f" ({', '.join(named)})" if named else "")
                     + f". {behind}.")
    return lines + [""]


def _counted(number: int, noun: str) -> str:
    """``_counted(1, "signature") == "1 signature"``, ``_counted(2, "signature") == "2 signatures"``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _engine_page(name: str, entry: dict, triage: dict, findings: list[ComponentFindings]) -> str:
    oracles = ", ".join(f"{component}: {version}" for component, version in (entry.get("oracles") or {}).items())
    lines = [f"# {name}", "", f"[Field report](../{INDEX_FILE}) · [engines × components](../{MATRIX_FILE})", "",
             f"`--impl {entry['module']}`, version {entry.get('version')}; oracles: {oracles}.", ""]
    if entry.get("missing"):
        lines += [f"Not run: {entry['missing']}", ""]
    if not entry.get("completed", True):
        lines += ["**The run did not complete**; counts are what it checked.", ""]
    if entry.get("harness_errors"):
        lines += [f"Harness errors: {cell(json.dumps(entry['harness_errors'], ensure_ascii=False)[:EXAMPLE_CHARS])}", ""]
    if entry.get("not_applicable"):
        lines += [f"Not applicable ({', '.join(entry['components'])} not run):", ""]
        lines += [f"- {family}: {reason}" for family, reason in sorted(entry["not_applicable"].items())] + [""]
    if entry.get("regrouped_from_examples"):
        lines += ["Regrouped under today's kinds from each recorded signature's smallest example (the run folder "
                  "was not kept): a recorded signature's divergences all count under its example's new signature.", ""]
    shown = [found for found in findings if found.finding != NOT_CHECKED]
    lines += ["| component | divergences / cases | signatures | finding |", "| --- | --- | --- | --- |"]
    lines += [f"| [{found.component}](#{found.component}) | {found.numbers()} | {len(found.verdicts)} | "
              f"{found.finding} |" for found in shown]
    lines.append("")
    for found in shown:
        lines += _component_section(name, entry, triage, found)
    return "\n".join(lines) + "\n"


def _component_section(name: str, entry: dict, triage: dict, found: ComponentFindings) -> list[str]:
    lines = [f'## <a id="{found.component}"></a>{found.component}', ""]
    counts = [c for c in entry["counts"] if c["component"] == found.component]
    if counts:
        lines += ["| family | cases | divergences |", "| --- | --- | --- |"]
        lines += [f"| {c['family']} | {c['cases'] if c['cases'] is not None else 'unknown'} | {c['divergences']} |"
                  for c in counts] + [""]
    if found.finding == NOT_RUN:
        return lines + ["Not run.", ""]
    if not found.verdicts:
        return lines + (["No divergence.", ""] if not found.divergences else
                        ["Its divergences' records were not kept: no signature.", ""])
    for signature in found.verdicts:
        group = entry["signatures"][signature]
        example = group["example"]
        formerly = f" Recorded as {', '.join(f'`{cell(old)}`' for old in group['formerly'])}." if group.get("formerly") else ""
        explained = (" Reproduced exactly by the mutation catalogue's " + " or ".join(
            f"`{mutant}` ({BY_NAME[mutant].bug})" for mutant in group["explained_by"] if mutant in BY_NAME) + "."
            if group.get("explained_by") else "")
        lines += [f'### <a id="{signature_anchor(signature)}"></a>`{signature}`', "",
                  f"{group['count']} divergences on {', '.join(group['families'])}. "
                  f"Triage: {triage_line(triage, name, signature, '../')}{formerly}{explained}", "",
                  "```", f"family:   {example['family']}", f"input:    {_clip(example['input'])}",
                  f"expected: {_clip(example['expected'])}", f"actual:   {_clip(example['actual'])}",
                  f"first difference: {_clip(example['first_difference'] or {})}", "```", ""]
        if example.get("reproduce"):
            lines += ["Replay:", "", "```sh", example["reproduce"], "```", ""]
    return lines


MATRIX_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #999; padding: 4px 10px; text-align: left; vertical-align: top; }
td.cell { text-align: right; font-variant-numeric: tabular-nums; min-width: 7em; white-space: nowrap; }
td.cell a { color: inherit; text-decoration: none; display: block; }
td.cell a:hover { text-decoration: underline; }
td.finding-not-checked { text-align: center; color: #888; }
small { color: #444; }
"""
# The colour each cell is drawn in, read back from the browser into the cell, so that a test can
# compare what is shown with the cell's finding.
MATRIX_SCRIPT = """
for (const cell of document.querySelectorAll("td[data-finding]")) {
  cell.dataset.shownColour = getComputedStyle(cell).backgroundColor;
}
"""


def _finding_class(finding: str) -> str:
    """``_finding_class("engine bug") == "finding-engine-bug"``."""
    return "finding-" + finding.replace(" ", "-")


def _matrix_html(field: dict, triage: dict) -> str:
    e = html.escape
    columns = field_components(field)
    style = MATRIX_STYLE + "".join(f"td.{_finding_class(f)} {{ background: {colour}; }}\n"
                                   for f, colour in FINDING_COLOURS.items())
    rows = []
    for name, row in matrix(field, triage).items():
        entry = field["engines"][name]
        cells = []
        for found in row:
            attributes = (f'class="cell {_finding_class(found.finding)}" data-engine="{e(name)}" '
                          f'data-component="{e(found.component)}" data-finding="{e(found.finding)}"')
            if found.finding == NOT_CHECKED:
                cells.append(f"<td {attributes}>·</td>")
                continue
            verdicts = ", ".join(f"{sum(1 for v in found.verdicts.values() if v == verdict)} {verdict}"
                                 for verdict in dict.fromkeys(found.verdicts.values()))
            title = f"{name} on {found.component}: {found.numbers()} divergences / cases" + (
                f"; signatures: {verdicts}" if verdicts else "")
            cells.append(f'<td {attributes} data-divergences="{found.divergences}" title="{e(title)}">'
                         f'<a href="{e(page_of(name))}#{e(found.component)}">{found.divergences}'
                         f'<small> / {"unknown" if found.cases is None else found.cases}</small><br>'
                         f"<small>{e(found.finding)}</small></a></td>")
        rows.append(f'<tr data-engine="{e(name)}"><th><a href="{e(page_of(name))}">{e(name)}</a><br>'
                    f"<small>{e(str(entry.get('version') or 'not installed'))}</small></th>{''.join(cells)}</tr>")
    legend = "".join(f'<tr><td class="cell {_finding_class(f)}"></td><td>{e(f)}</td></tr>' for f in FINDING_COLOURS)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>textbound: engines × components</title><style>{style}</style></head><body>",
        "<h1>Engines × components</h1>",
        f"<p>Every engine's divergences of cases per component, budget <code>{e(field['budget'])}</code>, seed 0; "
        "a cell is coloured by the most pressing verdict its signatures have (the legend's order) and links to "
        f'the component on the engine\'s page. The index: <a href="{INDEX_FILE}">{INDEX_FILE}</a>.</p>',
        '<table id="matrix"><thead><tr><th>engine</th>'
        + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr></thead><tbody>",
        *rows, "</tbody></table>",
        f'<table id="legend"><thead><tr><th colspan="2">finding</th></tr></thead><tbody>{legend}</tbody></table>',
        f"<script>{MATRIX_SCRIPT}</script></body></html>", ""])


def site(field: dict, triage: dict) -> dict[str, str]:
    """The field report's files, by path under FIELD_DIR: README.md (the index), matrix.html, and
    ``engines/NAME.md`` per engine: ``site(field, triage)["engines/minijinja.md"]`` starts
    ``"# minijinja"``."""
    found = matrix(field, triage)
    pages = {page_of(name): _engine_page(name, entry, triage, found[name]) for name, entry in field["engines"].items()}
    return {INDEX_FILE: _index(field, triage), MATRIX_FILE: _matrix_html(field, triage), **pages}


def write_site(field: dict, triage: dict) -> None:
    """Writes site() under FIELD_DIR, removing the page of an engine no longer in ``field``."""
    files = site(field, triage)
    (FIELD_DIR / ENGINE_PAGES).mkdir(parents=True, exist_ok=True)
    for stale in (FIELD_DIR / ENGINE_PAGES).glob("*.md"):
        if f"{ENGINE_PAGES}/{stale.name}" not in files:
            stale.unlink()
    for path, text in files.items():
        (FIELD_DIR / path).write_text(text, encoding="utf-8")


def _links(entries: list[dict]) -> dict:
    """The reproducers and reports of entries carried into one, each kept (a list where several):
    ``_links([{"reproducer": "a.py"}, {"reproducer": "b.py", "upstream": "u"}]) == {"reproducer":
    ["a.py", "b.py"], "upstream": "u"}``; the first upstream link."""
    links: dict = {}
    for field in LINKS:
        paths = list(dict.fromkeys(path for entry in entries for path in linked_paths(entry, field)))
        if paths:
            links[field] = paths[0] if len(paths) == 1 else paths
    upstream = next((entry["upstream"] for entry in entries if entry.get("upstream")), None)
    return {**links, **({"upstream": upstream} if upstream else {})}


def carried_triage(triage: dict, field: dict) -> dict:
    """triage.json for the signatures ``field`` now has: each key that still names one of them, and
    for a signature no such key names, the verdict of the recorded signatures it was made of (their
    notes joined where they were triaged apart)."""
    names = [(engine, signature) for engine, entry in field["engines"].items() for signature in entry["signatures"]]
    kept = {key: entry for key, entry in triage.items()
            if any(key == f"{e} | {s}" or fnmatch.fnmatchcase(f"{e} | {s}", key) for e, s in names)}
    for engine, entry in field["engines"].items():
        for signature, group in entry["signatures"].items():
            formerly = [found for old in group.get("formerly") or [] if (found := triage_entry(triage, engine, old))]
            distinct = list({json.dumps(f, sort_keys=True): f for f in formerly}.values())  # links may be lists
            if not distinct or f"{engine} | {signature}" in kept:
                continue  # a verdict written for today's signature is kept over one carried from its parts,
                # which are kept over a glob's (a glob is written for the kinds it then matched)
            carried = distinct[0] if len(distinct) == 1 else {
                "verdict": distinct[0]["verdict"],
                "note": "triaged apart before the shape grouping: " + " / ".join(
                    f"{d['verdict']}: {d['note']}" for d in distinct),
                **_links(distinct)}
            kept[f"{engine} | {signature}"] = carried
    return kept


def _read_json(parser: argparse.ArgumentParser, path: Path, absent: dict) -> dict:
    """``path``'s JSON, ``absent`` when there is no such file; one line and exit 2 when it is not JSON."""
    if not path.is_file():
        return absent
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        parser.error(f"{path}: not JSON ({exc})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", help="comma-separated engine names (default: all): "
                        + ", ".join(e.name for e in ENGINES))
    parser.add_argument("--budget", default="quick", choices=["quick", "default"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work-dir", type=Path, default=ROOT / "reports" / "runs" / "field")
    parser.add_argument("--write-only", action="store_true", help="render the report again from field.json "
                        "and the runs already made, running no engine")
    parser.add_argument("--rekind", action="store_true", help="re-triage the signatures of engines without a run "
                        "folder from their examples, and carry triage.json's verdicts over to the new signatures")
    options = parser.parse_args(argv)
    chosen = set(options.engines.split(",")) if options.engines else {e.name for e in ENGINES}
    unknown = chosen - {e.name for e in ENGINES}
    if unknown:
        parser.error(f"unknown engines {sorted(unknown)}")
    field_file = FIELD_DIR / "field.json"
    previous = _read_json(parser, field_file, {"engines": {}})
    families = field_families()
    folders = {family.name: str(family.path) for family in families}
    engines = {}
    for engine in ENGINES:
        recorded = previous["engines"].get(engine.name)
        setup_file = options.work_dir / engine.name / SETUP_FILE
        records_kept = any((records / "divergences.jsonl").is_file() for _, records in _run_folders(engine, options.work_dir))
        if recorded and (not records_kept if engine.server else options.write_only and not setup_file.is_file()):
            chosen.discard(engine.name)  # no run folder: what field.json recorded is all there is
        if engine.name not in chosen:
            if recorded and options.rekind:
                regrouped = group_signatures(example_records(recorded), folders)
                recorded = {**recorded, "signatures": explained_signatures(regrouped, folders),
                            "regrouped_from_examples": True}
            if recorded:
                engines[engine.name] = recorded
            continue
        if engine.server or engine.unavailable or not options.write_only:
            setup = run_engine(engine, families, options.work_dir, options.budget, options.jobs)
        else:
            setup = json.loads(setup_file.read_text(encoding="utf-8")) if setup_file.is_file() else {
                "missing": "not run (no run folder)", "not_applicable": {}}
        engines[engine.name] = collect(engine, options.work_dir, setup, folders)
    field = {"budget": options.budget, "engines": engines}
    triage = _read_json(parser, TRIAGE_FILE, {})
    bad = {key: entry.get("verdict") for key, entry in triage.items() if entry.get("verdict") not in VERDICTS}
    if bad:
        parser.error(f"{TRIAGE_FILE}: verdicts must be one of {VERDICTS}: {bad}")
    dangling = dangling_links(triage)
    if dangling:
        parser.error(f"{TRIAGE_FILE}: reproducer or report paths that do not exist under {FIELD_DIR}: {dangling}")
    if options.rekind:
        triage = carried_triage(triage, field)
        TRIAGE_FILE.write_text(json.dumps(triage, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    FIELD_DIR.mkdir(parents=True, exist_ok=True)
    field_file.write_text(json.dumps(field, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_site(field, triage)
    print(f"field: wrote {FIELD_DIR / INDEX_FILE}, {FIELD_DIR / MATRIX_FILE} and {len(field['engines'])} engine pages "
          f"under {FIELD_DIR / ENGINE_PAGES}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
