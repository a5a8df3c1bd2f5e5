"""nox sessions: tests, one check per family, fuzz (the fuzzed pipelines), gate (check against the
committed baseline), bench, mutants (the harness's own mutation score), field (the field report of
every adapter), and the engines that need heavy optional installs: engines_js (node packages),
engine_llama_cpp (a source build), server_llama_cpp (a llama-server build, checked over HTTP),
server_llama_cpp_python (llama-cpp-python's own server over HTTP and its chat formatter),
server_dynamo (NVIDIA Dynamo's front end over HTTP), server_smg (SGLang's model gateway over
HTTP), server_transformers (transformers serve over HTTP), engine_vllm, engine_sglang and
engine_xgrammar (vllm, sglang and xgrammar, each in an environment of its own), engine_mlx_lm
(mlx-lm with mlx's CPU wheels), server_mlx_lm (mlx-lm's server over HTTP), engine_litellm
(litellm's template factory), engine_mistralrs (mistral.rs's GGUF tokenizer); oracle_env
(textbound installed beside an engine's older oracle pins, judged in the oracle environment it
builds).

The shared models and templates are found through $TEXTBOUND_MODELS and $TEXTBOUND_TEMPLATES; when
they are unset, the folders beside the repository (../shared) are used if they exist.
"""
from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "venv"


def _shared_env() -> dict[str, str]:
    env = {}
    for var, sub in (("TEXTBOUND_MODELS", "models"), ("TEXTBOUND_TEMPLATES", "templates")):
        value = os.environ.get(var) or str(ROOT.parent / "shared" / sub)
        if Path(value).is_dir():
            env[var] = value
    return env


def _embedded_names() -> list[str]:
    specs = ROOT / "corpora" / "tokenizer_specs"
    return sorted(p.stem for p in specs.glob("*.json"))


def _shared_names() -> list[str]:
    models = _shared_env().get("TEXTBOUND_MODELS")
    if not models:
        return []
    return sorted(p.name for p in Path(models).iterdir() if (p / "tokenizer.json").is_file())


# What a session installs textbound with: every oracle and family source, so that a check session
# checks every property the baseline lists; sessions that run pytest take the test suite's extra.
CHECK_EXTRAS = "oracles,second-oracles,families"
TEST_EXTRAS = "dev"


def _install(session: nox.Session, extras: str = CHECK_EXTRAS) -> None:
    session.install("-e", f".[{extras}]")


@nox.session
def tests(session: nox.Session) -> None:
    _install(session, TEST_EXTRAS)
    session.run("pytest", "-n", "auto", *session.posargs, env=_shared_env())


def _mistral_names() -> list[str]:
    """mistral-common's vocabularies, converted on first use; none where nox runs without the project."""
    try:
        from textbound.families import mistral_family_names
    except ImportError:
        return []
    return mistral_family_names()


@nox.session
@nox.parametrize("family", _embedded_names() + _shared_names() + _mistral_names())
def check(session: nox.Session, family: str) -> None:
    """textbound check on one family (embedded, under $TEXTBOUND_MODELS, or from mistral-common)."""
    _install(session)
    session.run("textbound", "check", "--family", family,
                "--report-dir", f"reports/runs/nox-{family}", *session.posargs, env=_shared_env())


@nox.session
def fuzz(session: nox.Session) -> None:
    """textbound check on the budget's fuzzed pipelines alone (families have sessions of their own)."""
    _install(session)
    session.run("textbound", "check", "--fuzzed-only", "--report-dir", "reports/runs/nox-fuzz",
                *session.posargs, env=_shared_env())


@nox.session
def gate(session: nox.Session) -> None:
    """The CI gate for a tokenizer change: every family, the default budget, the committed baseline."""
    _install(session)
    session.run("textbound", "check", "--baseline", "reports/baseline.json",
                "--report-dir", "reports/runs/gate", *session.posargs, env=_shared_env())


@nox.session
def bench(session: nox.Session) -> None:
    _install(session)
    session.run("textbound", "bench", *session.posargs, env=_shared_env())


@nox.session
def mutants(session: nox.Session) -> None:
    """The mutation score: every mutant of mutants/ checked at the quick budget."""
    _install(session)
    session.run("textbound", "mutate", "--jobs", str(os.cpu_count() or 1),
                "--report", "reports/runs/mutants.json", *session.posargs, env=_shared_env())


@nox.session
def field(session: nox.Session) -> None:
    """reports/field/: every adapter on every family it applies to; triage.json is kept."""
    _install(session, f"engines,{CHECK_EXTRAS}")
    session.run("python", "tools/field_report.py", *session.posargs, env=_shared_env())


@nox.session
def oracle_upgrade(session: nox.Session) -> None:
    """compare under two versions of the oracle libraries, the gate before a pin bump:
    nox -s oracle_upgrade -- FAMILY tokenizers==0.23.1,tokenizers==0.23.3 [compare options]."""
    if len(session.posargs) < 2:
        session.error("usage: nox -s oracle_upgrade -- FAMILY A,B [compare options]")
    family, sides, *options = session.posargs
    _install(session)
    session.run("textbound", "compare", family, "--oracle-versions", sides,
                "--report-dir", "reports/runs/oracle-upgrade", *options, env=_shared_env())


# vLLM 0.33's side of the clash, installed in this order: pip refuses the two together (transformers
# 5.20.2 asks for tokenizers 0.23.1 or newer), and an engine's environment holds them so all the same.
ENGINE_PINS = ("transformers==5.20.2", "tokenizers==0.22.2")
# Run by the engine environment's python after its check: the pins kept, the run complete without
# a harness error, and judged by the supported oracles.
KEPT_AND_JUDGED = """
import json, sys
from importlib.metadata import version
from textbound.oracles import SUPPORTED_VERSIONS
report, *pins = sys.argv[1:]
kept = {pin: version(pin.partition("==")[0]) for pin in pins}
assert all(pin.endswith("==" + found) for pin, found in kept.items()), f"pins not kept: {kept}"
summary = json.load(open(f"{report}/summary.json", encoding="utf-8"))
assert summary["completed"] and not summary["errors"], {key: summary[key] for key in ("completed", "errors")}
judged = summary["oracles"]["tokenizer"]
assert judged == f"tokenizers {SUPPORTED_VERSIONS['tokenizers']}", f"judged by {judged}"
print(f"pins kept: {kept}; judged by: {summary['oracles']}")
"""


@nox.session
def oracle_env(session: nox.Session) -> None:
    """textbound installed (not editable) in an environment holding ENGINE_PINS keeps them, and
    `textbound check --impl mymod` of a module wrapping impl runs to a verdict judged in the oracle
    environment it builds under $TEXTBOUND_CACHE (the registry, 430 MB, the first time)."""
    engine_env = ROOT / ".nox" / "oracle_env-engine"
    python = engine_env / "bin" / "python"
    session.run("python", "-m", "venv", "--clear", str(engine_env))
    for pin in ENGINE_PINS:
        session.run(str(python), "-m", "pip", "install", "-q", pin, external=True)
    session.run(str(python), "-m", "pip", "install", "-q", str(ROOT), external=True)
    work, report = Path(session.create_tmp()), ROOT / "reports" / "runs" / "nox-oracle_env"
    (work / "mymod.py").write_text("from textbound.impl import *  # noqa: F403\n"
                                   "from textbound.impl import __version__  # noqa: F401\n", encoding="utf-8")
    session.chdir(work)
    session.run(str(engine_env / "bin" / "textbound"), "check", "--impl", "mymod", "--budget", "quick", "--jobs", "1",
                "--report-dir", str(report), *session.posargs, env=_shared_env(), external=True,
                success_codes=[0, 1])  # impl's divergences are findings; KEPT_AND_JUDGED checks the run
    session.run(str(python), "-c", KEPT_AND_JUDGED, str(report), *ENGINE_PINS, external=True)


JS_ENGINES = ROOT / "engines" / "js"


def _engine_checks(session: nox.Session, name: str, modules: dict[str, str], env: dict[str, str]) -> None:
    session.run("pytest", "-q", "tests/test_engine_adapters.py", env=env)
    for module, components in modules.items():
        session.run("textbound", "check", "--impl", module, "--component", components, "--budget", "quick",
                    "--report-dir", f"reports/runs/{name}-{module.rsplit('.', 1)[1]}", *session.posargs,
                    env=env, success_codes=[0, 1])  # divergences are findings, not a failed session


@nox.session
def engines_js(session: nox.Session) -> None:
    """@huggingface/jinja (chat) and @huggingface/tokenizers (tokenizer, detokenizer) through node."""
    _install(session, TEST_EXTRAS)
    session.run("npm", "ci", "--prefix", str(JS_ENGINES), "--no-audit", "--no-fund", external=True)
    _engine_checks(session, "engines_js", {"textbound.adapters.hf_jinja": "chat",
                                           "textbound.adapters.js_tokenizers": "tokenizer,detokenizer"},
                   {**_shared_env(), "TEXTBOUND_ENGINE_TESTS": "js"})


@nox.session
def engine_llama_cpp(session: nox.Session) -> None:
    """llama.cpp's tokenizer through llama-cpp-python, built from its sdist (minutes)."""
    _install(session, f"llama-cpp,{TEST_EXTRAS}")
    _engine_checks(session, "engine_llama_cpp", {"textbound.adapters.llama_cpp_adapter": "tokenizer,detokenizer"},
                   {**_shared_env(), "TEXTBOUND_ENGINE_TESTS": "llama_cpp"})


@nox.session
def engine_litellm(session: nox.Session) -> None:
    """litellm's own chat-template rendering (its prompt_factory) in the session's environment (its pins
    leave the oracles' as they are): the adapter's tests, then its field-report row
    (tools/field_report.py --engines litellm, options after --)."""
    _install(session, f"litellm,{TEST_EXTRAS}")
    env = _shared_env()
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_litellm_adapter.py", env=env)
    session.run("python", "tools/field_report.py", "--engines", "litellm", "--jobs", "1", *session.posargs, env=env)



@nox.session
def engine_mistralrs(session: nox.Session) -> None:
    """mistral.rs's GGUF tokenizer (mistralrs, no dependencies) on the tiny GGUFs llama-server's rows
    serve: the adapter's tests, then its field-report row (tools/field_report.py --engines mistral.rs)."""
    _install(session, f"mistralrs,{TEST_EXTRAS}")
    env = {**_shared_env(), "TEXTBOUND_ENGINE_TESTS": "mistralrs"}
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_mistralrs_adapter.py", env=env)
    session.run("python", "tools/field_report.py", "--engines", "mistral.rs", "--jobs", "1", *session.posargs, env=env)


SERVER_FAMILIES = ("qwen3", "llama3_1", "llama2", "sentencepiece")  # shared ones where present; an embedded one


@nox.session
def server_llama_cpp(session: nox.Session) -> None:
    """llama.cpp's llama-server, built from the llama-cpp-python sdist's source (cached; tens of
    minutes the first time), serving each family's tiny model on 127.0.0.1 while
    ``textbound check --server`` checks it; stopped after each."""
    _install(session, TEST_EXTRAS)
    env = _shared_env()
    session.run("pytest", "-q", "tests/test_server_llama_cpp.py", env=env)
    names = [name for name in SERVER_FAMILIES if name in _shared_names() + _embedded_names()]
    for family in session.posargs or names:
        session.run("python", "tools/build_llama_server.py", "--family", family, "--",
                    "textbound", "check", "--server", "{url}", "--server-dialect", "llama.cpp", "--family", family,
                    "--budget", "quick", "--report-dir", f"reports/runs/server_llama_cpp-{family}",
                    env=env, success_codes=[0, 1])  # divergences are findings, not a failed session


FIELD_RUNS = ROOT / "reports" / "runs" / "field"  # tools/field_report.py's --work-dir
FIELD_REPORT = ROOT / "reports" / "field"
SERVER_RUN_FILES = ("summary.json", "report.md")  # what reports/field/ENGINE/FAMILY keeps of a server's run


def _server_field_runs(session: nox.Session, engine: str, families: list[str], serve: list[str],
                       check_options: list[str], env: dict[str, str]) -> None:
    """``textbound check --server`` (with ``check_options``: its dialect...) of each family served by
    ``serve`` (a command that runs the rest with {url}), into the field report's work folder; its
    summary and report kept under reports/field/ENGINE/FAMILY, as tools/field_report.py reads a
    server engine's runs."""
    for family in families:
        run = FIELD_RUNS / engine / family
        session.run(*serve, "--family", family, "--", "textbound", "check", "--server", "{url}", *check_options,
                    "--family", family, "--budget", "quick", "--jobs", "1", "--report-dir", str(run),
                    env=env, success_codes=[0, 1])  # divergences are findings, not a failed session
        kept = FIELD_REPORT / engine / family
        kept.mkdir(parents=True, exist_ok=True)
        for name in SERVER_RUN_FILES:
            if (run / name).is_file():
                (kept / name).write_bytes((run / name).read_bytes())


# Its tokenizer is llama.cpp's, checked in-process by engine_llama_cpp; its routes always add the special
# tokens (/extras/tokenize) and answer about 10 cases a second here, so the field run leaves it out.
LLAMA_CPP_PYTHON_COMPONENTS = "detokenizer,stops,tools,structured"


@nox.session
def server_llama_cpp_python(session: nox.Session) -> None:
    """llama-cpp-python 0.3.36's own server (``python -m llama_cpp.server``, not llama-server) serving
    each family's tiny model over HTTP (the llama-cpp-python dialect), and its chat formatter
    in-process (textbound.adapters.llama_cpp_python_chat): the tests, then both field-report rows
    (llama-cpp-python-server, llama-cpp-python-chat). Built from the sdist (minutes, cached by pip)."""
    _install(session, f"llama-cpp,{TEST_EXTRAS}")
    env = _shared_env()
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_llama_cpp_python.py", env=env)
    names = [name for name in SERVER_FAMILIES if name in _shared_names() + _embedded_names()]
    _server_field_runs(session, "llama-cpp-python-server", session.posargs or names,
                       ["python", "tools/serve_engine.py", "--engine", "llama-cpp-python"],
                       ["--server-dialect", "llama-cpp-python", "--component", LLAMA_CPP_PYTHON_COMPONENTS], env)
    session.run("python", "tools/field_report.py", "--engines", "llama-cpp-python-chat,llama-cpp-python-server",
                "--jobs", "1", env=env)


DYNAMO_VERSION = "1.6.1"
# Dynamo's worker here is noise that constrains nothing (engines/dynamo/serve.py): its tools and
# structured checks would judge the worker, not Dynamo, so they are not run. Its tokenizer is checked
# through chat ids: it tokenizes a text prompt only with the special tokens added, and the tokenizer
# checks ask without them first (textbound/server/features.py), so tokenizer/encode is not provided.
DYNAMO_COMPONENTS = "detokenizer,chat,stops"
# Its front end serves no model without a chat template (llama2's, sentencepiece's): see the dynamo row.
DYNAMO_FAMILIES = ("qwen3", "llama3_1")


@nox.session
def server_dynamo(session: nox.Session) -> None:
    """NVIDIA Dynamo's OpenAI front end (ai-dynamo-runtime, in an environment of its own: 75 MB, no
    GPU needed) on each family's tokenizer and template, in front of a seeded random-token worker:
    the tests (the real front end among them), then its field-report row (dynamo)."""
    _worker_served_session(session, "dynamo", [f"ai-dynamo-runtime=={DYNAMO_VERSION}"], DYNAMO_FAMILIES,
                           DYNAMO_COMPONENTS)


def _worker_served_session(session: nox.Session, engine: str, packages: list[str], families: tuple[str, ...],
                           components: str) -> None:
    """An engine served by engines/ENGINE/serve.py before a random-token worker (tools/serve_engine.py
    --engine ENGINE), run by the python of an environment of its own holding ``packages``
    ($TEXTBOUND_ENGINE_PYTHON where given): tests/test_ENGINE.py, then its field-report row on the
    shared ``families`` (or the session's arguments), checked over its own dialect."""
    _install(session, TEST_EXTRAS)
    variable = f"TEXTBOUND_{engine.upper()}_PYTHON"
    python = str(_engine_python(session, variable, f"server_{engine}-{engine}", [packages]))
    env = {**_shared_env(), variable: python}
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"tests/test_{engine}.py", env=env)
    names = [name for name in families if name in _shared_names()]
    _server_field_runs(session, engine, session.posargs or names, ["python", "tools/serve_engine.py", "--engine", engine],
                       ["--server-dialect", engine, "--model", "m", "--component", components], env)
    session.run("python", "tools/field_report.py", "--engines", engine, "--jobs", "1", env=env)


SMG_VERSION = "1.13.0"
SMG_GRPC_PROTO_VERSION = "0.4.27"  # the SglangScheduler stubs engines/smg/serve.py's worker answers with
# smg's worker here is noise and the router forwards no steering to it (engines/smg/serve.py): its tools
# and structured checks would judge the worker, not smg, so they are not run. Its chat ids are the ones
# the router sends that worker, which reports them (textbound/server/dialects/smg.py).
SMG_COMPONENTS = "tokenizer,detokenizer,chat,stops"
SMG_FAMILIES = ("qwen3", "llama3_1", "llama2")  # llama2: no chat template, no chat cases


@nox.session
def server_smg(session: nox.Session) -> None:
    """SGLang's model gateway (smg, a Rust wheel, in an environment of its own) in gRPC mode on each
    family's tokenizer and template, in front of a seeded random-token SglangScheduler worker: the
    tests, then its field-report row (smg)."""
    _worker_served_session(session, "smg", [f"smg=={SMG_VERSION}", f"smg-grpc-proto=={SMG_GRPC_PROTO_VERSION}",
                                            "tokenizers"], SMG_FAMILIES, SMG_COMPONENTS)


VLLM_VERSION = "0.33.0"
SGLANG_VERSION = "0.5.23"
# What SGLang's parsers, OpenAI chat serving and detokenizer manager import on the CPU: its wheel pins GPU-only packages
# (flashinfer, sgl-kernel...), so it installs --no-deps, with these beside it.
SGLANG_IMPORTS = ("numpy", "orjson", "psutil", "pybase64", "requests", "torch==2.14.1", "torchvision", "triton",
                  "packaging", "pillow", "starlette", "msgspec", "pydantic", "pyzmq", "tqdm", "IPython", "aiohttp",
                  "openai", "partial-json-parser", "regex", "xgrammar", "transformers", "setproctitle", "dill",
                  "sentencepiece", "compressed-tensors", "gguf", "fastapi", "uvicorn", "uvloop", "einops", "jsonschema")


def _engine_python(session: nox.Session, variable: str, name: str, installs: list[list[str]]) -> Path:
    """The python of an engine's environment: ``$variable``'s when it names one, else ``.nox/NAME``,
    built with ``pip install`` of each of ``installs`` (engines pin packages below the oracles', so
    they never share the harness's environment)."""
    given = os.environ.get(variable, "").strip()
    if given and Path(given).is_file():
        return Path(given)
    engine_env = ROOT / ".nox" / name
    python = engine_env / "bin" / "python"
    if not python.is_file():
        session.run("python", "-m", "venv", str(engine_env))
    for packages in installs:
        session.run(str(python), "-m", "pip", "install", "-q", *packages, external=True)
    return python


@nox.session
def engine_vllm(session: nox.Session) -> None:
    """vLLM's tokenizer, detokenizer, stops, chat preparation and tool parsers in an environment of its
    own (vllm pins transformers below the oracles'): the adapter's tests, its field-report rows
    (tools/field_report.py --engines vllm,vllm-parsers, options after --), then impl's tools checked
    with vLLM's parsers as a second oracle (reports/runs/engine_vllm-oracle)."""
    _install(session, TEST_EXTRAS)
    # About 10 minutes and 6 GB the first time: vllm pins a CUDA build of torch, which imports without a GPU.
    python = str(_engine_python(session, "TEXTBOUND_VLLM_PYTHON", "engine_vllm-vllm", [[f"vllm=={VLLM_VERSION}"]]))
    env = {**_shared_env(), "TEXTBOUND_VLLM_PYTHON": python}
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_vllm_adapter.py", "tests/test_tools_vllm_oracle.py",
                env=env)
    for rows in ("vllm-parsers", "vllm"):  # the short one first: a long run cut off still leaves it
        session.run("python", "tools/field_report.py", "--engines", rows, "--jobs", "1", *session.posargs, env=env)
    session.run("textbound", "check", "--family", "qwen", "--component", "tools", "--budget", "quick", "--jobs", "1",
                "--report-dir", "reports/runs/engine_vllm-oracle", env={**env, "TEXTBOUND_VLLM_ORACLE_PYTHON": python},
                success_codes=[0, 1])  # impl's divergences are findings here, not a failed session


@nox.session
def engine_sglang(session: nox.Session) -> None:
    """SGLang's tool and reasoning parsers, tokenizer loading and detokenizer manager in an environment
    of its own: the adapter's tests, its field-report row (tools/field_report.py --engines sglang,
    options after --), then its tokenizer and detokenizer on every embedded and shared family
    (reports/runs/engine_sglang)."""
    _install(session, TEST_EXTRAS)
    python = str(_engine_python(session, "TEXTBOUND_SGLANG_PYTHON", "engine_sglang-sglang",
                                [["--no-deps", f"sglang=={SGLANG_VERSION}"], list(SGLANG_IMPORTS)]))
    env = {**_shared_env(), "TEXTBOUND_SGLANG_PYTHON": python}
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_sglang_adapter.py", env=env)
    session.run("python", "tools/field_report.py", "--engines", "sglang", "--jobs", "1", *session.posargs, env=env)
    families = [option for family in _embedded_names() + _shared_names() for option in ("--family", family)]
    session.run("textbound", "check", "--impl", "textbound.adapters.sglang", *families, "--component",
                "tokenizer,detokenizer", "--budget", "quick", "--jobs", "1", "--report-dir", "reports/runs/engine_sglang",
                env=env, success_codes=[0, 1])  # divergences are findings, not a failed session


@nox.session
def engine_mlx_lm(session: nox.Session) -> None:
    """mlx-lm's streaming detokenizers, its server's chat preparation and tool-call handling, in process
    (the mlx-lm extra: mlx's Linux CPU wheels, no torch; its transformers floor is below the oracles'):
    the adapter's tests, then its field-report rows (tools/field_report.py --engines
    mlx-lm-server,mlx-lm, options after --)."""
    _install(session, f"mlx-lm,{TEST_EXTRAS}")
    env = _shared_env()
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_mlx_lm_adapter.py", env=env)
    session.run("python", "tools/field_report.py", "--engines", "mlx-lm-server,mlx-lm", "--jobs", "1",
                *session.posargs, env=env)


# mlx_lm.server reads no tool_choice and no response_format (mlx_lm/server.py 0.32.2 names neither): the
# tools and structured checks would judge a random-weight model's free text against a forced call or
# schema, so they are not run. Its chat prompt has no route (the openai dialect): chat is checked in
# process by engine_mlx_lm.
MLX_LM_SERVER_COMPONENTS = "detokenizer,stops"
MLX_LM_SERVER_FAMILIES = ("qwen3", "llama3_1", "llama2")


@nox.session
def server_mlx_lm(session: nox.Session) -> None:
    """mlx-lm's own server (``python -m mlx_lm.server``; the mlx-lm extra: mlx's Linux CPU wheels, no
    torch) serving each family's tiny random-weight model written with mlx (tools/serve_engine.py
    --engine mlx-lm), checked over HTTP with the openai dialect: the tests, then its field-report row
    (mlx-lm-http)."""
    _install(session, f"mlx-lm,{TEST_EXTRAS}")
    env = _shared_env()
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_mlx_lm_server.py", env=env)
    names = [name for name in MLX_LM_SERVER_FAMILIES if name in _shared_names()]
    _server_field_runs(session, "mlx-lm-http", session.posargs or names,
                       ["python", "tools/serve_engine.py", "--engine", "mlx-lm"],
                       ["--server-dialect", "openai", "--component", MLX_LM_SERVER_COMPONENTS], env)
    session.run("python", "tools/field_report.py", "--engines", "mlx-lm-http", "--jobs", "1", env=env)


XGRAMMAR_VERSION = "0.2.9"
# xgrammar needs torch, which the harness's environment never holds: the CPU build where its index
# answers (a few hundred MB), else PyPI's.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def _torch_install() -> list[str]:
    return ["torch", "--extra-index-url", TORCH_CPU_INDEX]


@nox.session
def engine_xgrammar(session: nox.Session) -> None:
    """xgrammar's token masks (vLLM's xgrammar backend's calls) in an environment of its own (it
    needs torch): the adapter's tests, then its field-report row (tools/field_report.py --engines
    xgrammar, options after --)."""
    _install(session, TEST_EXTRAS)
    python = str(_engine_python(session, "TEXTBOUND_XGRAMMAR_PYTHON", "engine_xgrammar-xgrammar",
                                [_torch_install(), [f"xgrammar=={XGRAMMAR_VERSION}", "transformers"]]))
    env = {**_shared_env(), "TEXTBOUND_XGRAMMAR_PYTHON": python}
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_xgrammar_adapter.py", env=env)
    session.run("python", "tools/field_report.py", "--engines", "xgrammar", "--jobs", "1", *session.posargs, env=env)


TRANSFORMERS_SERVE_VERSION = "5.25.0"
# The torch its field row was run with; an unpinned torch can resolve to a CUDA build.
TRANSFORMERS_SERVE_TORCH = "2.13.0"


@nox.session
def server_transformers(session: nox.Session) -> None:
    """transformers' own OpenAI server (``transformers serve``) in an environment of its own (torch),
    serving each family's tiny random-weight model (written by transformers itself) on 127.0.0.1
    while ``textbound check --server --server-dialect transformers-serve`` checks it (the openai
    dialect read past its streams' missing ``data: [DONE]``); stopped after each. The runs'
    summaries go to reports/field/transformers-serve/FAMILY, then its field-report row is written."""
    _install(session, TEST_EXTRAS)
    python = str(_engine_python(session, "TEXTBOUND_TRANSFORMERS_SERVE_PYTHON", "server_transformers-transformers",
                                [[f"torch=={TRANSFORMERS_SERVE_TORCH}", "--extra-index-url", TORCH_CPU_INDEX],
                                 [f"transformers[serving]=={TRANSFORMERS_SERVE_VERSION}"]]))
    env = _shared_env()
    for family in session.posargs or ("qwen3", "llama3_1", "llama2"):
        runs = ROOT / "reports" / "runs" / "field" / "transformers-serve" / family
        session.run("python", "tools/transformers_serve.py", "--python", python, "--family", family, "--",
                    "textbound", "check", "--server", "{url}", "--server-dialect", "transformers-serve", "--family", family,
                    "--budget", "quick", "--jobs", "1", "--report-dir", str(runs),
                    env=env, success_codes=[0, 1])  # divergences are findings, not a failed session
        kept = ROOT / "reports" / "field" / "transformers-serve" / family
        kept.mkdir(parents=True, exist_ok=True)
        for name in ("summary.json", "report.md"):
            (kept / name).write_bytes((runs / name).read_bytes())
    session.run("python", "tools/field_report.py", "--engines", "transformers-serve", env=env)
