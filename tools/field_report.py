"""Regenerates reports/field/: every adapter (textbound/adapters) checked on every family it applies to.

    python tools/field_report.py                      # run every engine, then write the report
    python tools/field_report.py --engines minijinja  # rerun one engine, keep the others' runs
    python tools/field_report.py --write-only         # rewrite README.md from the runs and triage.json
    python tools/field_report.py --write-only --rekind  # re-triage the recorded signatures under today's kinds

For each engine it runs ``textbound check --impl MODULE --component ...`` once over the embedded
families, the shared ones ($TEXTBOUND_MODELS) and the Mistral families (mistral-common's vocabularies,
as --model-dir), at the quick budget unless told otherwise, into ``--work-dir`` (one folder per
engine). A family whose tokenizer the engine cannot load at all (tiktoken and a SentencePiece
model, mistral-common and a vocabulary it does not ship) is listed as not applicable with the
engine's own words, not run. Then it writes

- reports/field/field.json: per engine its version, and per family × component the cases and
  divergences; per root-cause signature its count, families and smallest example;
- reports/field/README.md: the same as tables, each signature with its minimized example, the
  replay command and its triage line from reports/field/triage.json (keyed ``ENGINE | SIGNATURE``:
  ``{"verdict": "engine bug" | "reference changed" | "policy" | "not applicable" | "textbound bug",
  "note": ..., "upstream": URL, "reproducer": "reproducers/FILE", "report": "upstream/ENGINE/SLUG.md"}``
  (reproducer and report: a path under reports/field/, or a list of them; a path that does not
  exist stops the report); a key may be a glob, ``mistral-common | tokenizer/decode/*``, for one root
  cause behind several signatures), written by hand and kept across regenerations. A signature
  without one is marked untriaged. At its end: the engine-bug signatures whose triage names no
  reproducer, with their counts.

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
import json
import os
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
from textbound.naming.divergence import is_oracle_disagreement, signature_of  # noqa: E402
from textbound.plan.implementation import Implementation  # noqa: E402
from textbound.triage.causes import rekinded  # noqa: E402

FIELD_DIR = ROOT / "reports" / "field"
TRIAGE_FILE = FIELD_DIR / "triage.json"
EXAMPLE_CHARS = 400  # of a minimized input, expected or actual value quoted in the README
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
    # llama.cpp's llama-server serving each family's tiny GGUF (nox -s server_llama_cpp)
    Engine("llama-server", "textbound.adapters.server",
           ("tokenizer", "detokenizer", "chat", "stops", "tools", "structured"), False,
           families=("llama3_1", "qwen3", "llama2"), server=True),
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
    if engine.server:
        print(f"field: {engine.name} is run by its nox session; its reports are read from {FIELD_DIR / engine.name}",
              flush=True)
        return {"missing": None, "not_applicable": {}}
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


def triage_line(triage: dict, engine: str, signature: str) -> str:
    entry = triage_entry(triage, engine, signature)
    if not entry:
        return "**untriaged**"
    links = [f"[upstream]({entry['upstream']})"] if entry.get("upstream") else []
    links += [f"[{field}: {Path(path).name}]({path})" for field in LINKS for path in linked_paths(entry, field)]
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
        lines += [f"- {name}: " + "; ".join(f"`{cell(signature)}` ({count})" for signature, count in found)]
    return lines + ([""] if total else [])


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(field: dict, triage: dict) -> str:
    lines = ["# Engines in the field", "",
             "Every adapter in `textbound/adapters` checked with `textbound check --impl MODULE` on every "
             "family it applies to (embedded, shared under `$TEXTBOUND_MODELS`, and the Mistral families). "
             "Regenerate with `nox -s field` (`python tools/field_report.py`); triage lines come from "
             "`triage.json`, written by hand.", "",
             "Divergences of kind `not provided` are properties whose names the engine lacks (e.g. chat ids "
             "for a template engine): counted apart.", "",
             "| engine | version | components | families run | cases | divergences | not provided | signatures "
             "| untriaged |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, entry in field["engines"].items():
        if entry.get("missing"):
            lines.append(f"| {name} | not installed | {', '.join(entry['components'])} | skipped: "
                         f"{cell(entry['missing'])} | | | | | |")
            continue
        known = all(c["cases"] is not None for c in entry["counts"])
        cases = sum(c["cases"] for c in entry["counts"]) if known else "unknown"
        divergences = sum(c["divergences"] for c in entry["counts"])
        families = sorted({c["family"] for c in entry["counts"]})
        absent = sum(g["count"] for s, g in entry["signatures"].items() if s.split("/", 2)[2].startswith(NOT_PROVIDED))
        untriaged = sum(1 for s in entry["signatures"] if triage_entry(triage, name, s) is None)
        lines.append(f"| {name} | {entry['version']} | {', '.join(entry['components'])} | {len(families)} | {cases} | "
                     f"{divergences - absent} | {absent} | {len(entry['signatures'])} | {untriaged} |")
    lines += ["", f"Budget `{field['budget']}`, seed 0.", ""]
    for name, entry in field["engines"].items():
        lines += _engine_section(name, entry, triage)
    lines += _gap_section(field, triage)
    return "\n".join(lines) + "\n"


def _engine_section(name: str, entry: dict, triage: dict) -> list[str]:
    oracles = ", ".join(f"{component}: {version}" for component, version in (entry.get("oracles") or {}).items())
    lines = [f"## {name}", "", f"`--impl {entry['module']}`, version {entry.get('version')}; oracles: {oracles}.", ""]
    if entry.get("missing"):
        return lines + [f"Not run: {entry['missing']}", ""]
    if not entry.get("completed", True):
        lines += ["**The run did not complete**; counts are what it checked.", ""]
    if entry.get("harness_errors"):
        lines += [f"Harness errors: {cell(json.dumps(entry['harness_errors'], ensure_ascii=False)[:EXAMPLE_CHARS])}", ""]
    lines += ["| family | component | cases | divergences |", "| --- | --- | --- | --- |"]
    lines += [f"| {c['family']} | {c['component']} | {c['cases'] if c['cases'] is not None else 'unknown'} | "
              f"{c['divergences']} |" for c in entry["counts"]]
    for family, reason in sorted(entry.get("not_applicable", {}).items()):
        lines.append(f"| {family} | {', '.join(entry['components'])} | not applicable | {cell(reason)} |")
    lines.append("")
    if not entry["signatures"]:
        return lines + ["No divergence.", ""]
    lines += ["### Root causes", ""]
    if entry.get("regrouped_from_examples"):
        lines += ["Regrouped under today's kinds from each recorded signature's smallest example (the run folder "
                  "was not kept): a recorded signature's divergences all count under its example's new signature.", ""]
    for signature, group in entry["signatures"].items():
        example = group["example"]
        formerly = f" Recorded as {', '.join(f'`{cell(old)}`' for old in group['formerly'])}." if group.get("formerly") else ""
        explained = (" Reproduced exactly by the mutation catalogue's " + " or ".join(
            f"`{mutant}` ({BY_NAME[mutant].bug})" for mutant in group["explained_by"] if mutant in BY_NAME) + "."
            if group.get("explained_by") else "")
        lines += [f"#### `{signature}`", "",
                  f"{group['count']} divergences on {', '.join(group['families'])}. "
                  f"Triage: {triage_line(triage, name, signature)}{formerly}{explained}", "",
                  "```", f"family:   {example['family']}", f"input:    {_clip(example['input'])}",
                  f"expected: {_clip(example['expected'])}", f"actual:   {_clip(example['actual'])}",
                  f"first difference: {_clip(example['first_difference'] or {})}", "```", ""]
        if example.get("reproduce"):
            lines += ["Replay:", "", "```sh", example["reproduce"], "```", ""]
    return lines


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", help="comma-separated engine names (default: all): "
                        + ", ".join(e.name for e in ENGINES))
    parser.add_argument("--budget", default="quick", choices=["quick", "default"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work-dir", type=Path, default=ROOT / "reports" / "runs" / "field")
    parser.add_argument("--write-only", action="store_true", help="rewrite the report from the runs already made")
    parser.add_argument("--rekind", action="store_true", help="re-triage the signatures of engines without a run "
                        "folder from their examples, and carry triage.json's verdicts over to the new signatures")
    options = parser.parse_args(argv)
    chosen = set(options.engines.split(",")) if options.engines else {e.name for e in ENGINES}
    unknown = chosen - {e.name for e in ENGINES}
    if unknown:
        parser.error(f"unknown engines {sorted(unknown)}")
    field_file = FIELD_DIR / "field.json"
    previous = json.loads(field_file.read_text(encoding="utf-8")) if field_file.is_file() else {"engines": {}}
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
        if engine.server or not options.write_only:
            setup = run_engine(engine, families, options.work_dir, options.budget, options.jobs)
        else:
            setup = json.loads(setup_file.read_text(encoding="utf-8")) if setup_file.is_file() else {
                "missing": "not run (no run folder)", "not_applicable": {}}
        engines[engine.name] = collect(engine, options.work_dir, setup, folders)
    field = {"budget": options.budget, "engines": engines}
    triage = json.loads(TRIAGE_FILE.read_text(encoding="utf-8")) if TRIAGE_FILE.is_file() else {}
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
    (FIELD_DIR / "README.md").write_text(markdown(field, triage), encoding="utf-8")
    print(f"field: wrote {FIELD_DIR / 'README.md'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
