"""JavaScript reproducers for the node engines: a self-contained ``.mjs`` per signature of a run of
``textbound.adapters.js_tokenizers`` (``@huggingface/tokenizers``) or ``textbound.adapters.hf_jinja``
(``@huggingface/jinja``), with the data inline and the reference's answer inline beside it, computed
by the reference when the file is written and stamped with its version:

    $ npm install @huggingface/jinja@0.5.11 && node 01-chat-render-text-drops-at-the-start.mjs
    expected: {"text":" t"}
    actual:   {"text":"t"}
    $ echo $?
    1

A tokenizer script holds a minimized tokenizer.json (textbound.triage.reproducer.minimized_spec) and the
family's tokenizer_config.json, and compares the engine's ids or text with tokenizers'. A chat script
holds a minimized template (textbound.shrinking.template_shrink) and the context transformers'
apply_chat_template hands it (the request prepared as impl.chat.ChatRenderer prepares it, which is
what the adapter gives the engine), and compares the engine's rendering with jinja2's, configured as
transformers configures it; an error on the reference's side is expected as an error.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

JS_TOKENIZERS = "textbound.adapters.js_tokenizers"
HF_JINJA = "textbound.adapters.hf_jinja"
PACKAGES = {JS_TOKENIZERS: "@huggingface/tokenizers", HF_JINJA: "@huggingface/jinja"}
NODE_SECONDS = 60  # running one written script to see it fail: node starts and renders in well under that


def js(value) -> str:
    """A JSON value as JavaScript source (ASCII only, so any character survives any editor):
    ``js({"a": "é"}) == '{"a": "\\\\u00e9"}'``."""
    return json.dumps(value, ensure_ascii=True)


def package_version(package: str) -> str:
    """The installed version of ``package`` in engines/js ("?" where it is not installed)."""
    from ..adapters.hf_jinja import JS_ENGINES_DIR
    try:
        return json.loads((JS_ENGINES_DIR / "node_modules" / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


TOKENIZER_SCRIPT = '''// {title}
//
// {package} {version} against the reference, {oracle}, on a minimized tokenizer.json
// (from {origin}). EXPECTED was computed by the reference when this file was written. Needs only the engine: npm install {package}@{version} && node {name}
// Prints both answers and exits 1 while they differ.
import {{ Tokenizer }} from "{package}";

const TOKENIZER_JSON = {spec};
const TOKENIZER_CONFIG = {config};
const {given_name} = {given};
const {option_name} = {option};
const EXPECTED = {expected}; // {oracle}: {reference_call}

const tokenizer = new Tokenizer(TOKENIZER_JSON, TOKENIZER_CONFIG);
const actual = {engine_call};
console.log("expected:", JSON.stringify(EXPECTED));
console.log("actual:  ", JSON.stringify(actual));
process.exit(JSON.stringify(actual) === JSON.stringify(EXPECTED) ? 0 : 1);
'''

CHAT_SCRIPT = '''// {title}
//
// {package} {version} against the reference, jinja2 {jinja2} as transformers {transformers} configures
// it (apply_chat_template), on a minimized template (from {origin}).
// CONTEXT is what transformers hands the template for the request; EXPECTED was computed by the
// reference when this file was written. Needs only the engine:
// npm install {package}@{version} && node {name}
// Prints both answers and exits 1 while they differ.
import {{ Template }} from "{package}";

const TEMPLATE = {source};
const CONTEXT = {context};
const EXPECTED = {expected};

let actual;
try {{
\tactual = {{ text: new Template(TEMPLATE).render(CONTEXT) }};
}} catch (exc) {{
\tactual = {{ error: String(exc && exc.message !== undefined ? exc.message : exc) }};
}}
console.log("expected:", JSON.stringify(EXPECTED));
console.log("actual:  ", JSON.stringify(actual));
const same = "error" in EXPECTED ? "error" in actual : actual.text === EXPECTED.text;
process.exit(same ? 0 : 1);
'''


def origin(run: str, case) -> str:
    """Where a script's data comes from: ``"textbound's run reports/x, family qwen"``."""
    template = case.input.get("template")
    return f"textbound's run {run}, family {case.family}" + (f", template {template}" if template else "")


def tokenizer_script(target, spec: dict, config: dict, source: str, oracle: str, name: str) -> str:
    """The ``.mjs`` of a tokenizer target (textbound.triage.reproducer.Target) on its minimized ``spec``;
    ``source`` says where the data comes from (``origin``)."""
    import tokenizers

    encode = target.case.property == "encode"
    reference = tokenizers.Tokenizer.from_str(json.dumps(spec))
    if encode:
        given, option = target.case.input["text"], bool(target.case.input.get("add_special_tokens", False))
        expected = reference.encode(given, add_special_tokens=option).ids
        call = "encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS).ids"
        engine_call = "tokenizer.encode(TEXT, { add_special_tokens: ADD_SPECIAL_TOKENS }).ids"
    else:
        given, option = target.case.input["ids"], bool(target.case.input.get("skip_special_tokens", False))
        expected = reference.decode(given, skip_special_tokens=option)
        call = "decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)"
        engine_call = ("tokenizer.decode(IDS, { skip_special_tokens: SKIP_SPECIAL_TOKENS, "
                       "clean_up_tokenization_spaces: false })")
    package = PACKAGES[JS_TOKENIZERS]
    return TOKENIZER_SCRIPT.format(
        title=target.signature, package=package, version=package_version(package),
        oracle=oracle or f"tokenizers {tokenizers.__version__}", origin=source, name=name,
        spec=js(spec), config=js(config), given_name="TEXT" if encode else "IDS", given=js(given),
        option_name="ADD_SPECIAL_TOKENS" if encode else "SKIP_SPECIAL_TOKENS", option=js(option),
        expected=js(expected), reference_call=call, engine_call=engine_call)


def template_context(source: str, case_input: dict) -> dict | None:
    """What transformers' apply_chat_template hands ``source`` for the case's request, as
    impl.chat.ChatRenderer prepares it (and the hf_jinja adapter sends it); None where the request
    is refused before the template runs."""
    from textbound.oracles.chat_oracle import ChatRequest, frozen_clock

    from ..adapters import render_chat_through

    seen = {}

    class Recording:
        def compile(self, template: str) -> str:
            return template

        def render(self, template: str, context: dict) -> str:
            seen["context"] = context
            return ""
    request = ChatRequest.of(case_input)
    try:
        with frozen_clock():
            render_chat_through(Recording())(source, request.messages, **request.arguments())
    except Exception:  # noqa: BLE001 - finishing an empty rendering may fail; the context is what counts
        pass
    return seen.get("context")


def reference_answer(source: str, context: dict) -> dict:
    """jinja2's rendering of ``source`` on ``context``, compiled as transformers compiles a chat
    template: ``{"text": ...}``, or ``{"error": "class: message"}`` where it raises."""
    from transformers.utils.chat_template_utils import _compile_jinja_template

    from textbound.oracles.chat_oracle import Raised, frozen_clock

    try:
        with frozen_clock():
            return {"text": _compile_jinja_template(source).render(**context)}
    except Exception as exc:  # noqa: BLE001 - the reference's error is its answer
        return {"error": str(Raised.of(exc))}


def chat_script(target, source: str, context: dict, where: str, name: str) -> str:
    """The ``.mjs`` of a chat target on its minimized template ``source`` and ``context``; ``where``
    says where they come from (``origin``)."""
    import jinja2
    import transformers

    package = PACKAGES[HF_JINJA]
    return CHAT_SCRIPT.format(
        title=target.signature, package=package, version=package_version(package), jinja2=jinja2.__version__,
        transformers=transformers.__version__, origin=where, name=name,
        source=js(source), context=js(context), expected=js(reference_answer(source, context)))


def run_script(path: Path) -> subprocess.CompletedProcess | None:
    """``node path`` in a fresh folder that holds only engines/js' installed packages; None without
    node or the packages."""
    from ..adapters import EngineMissing
    from ..adapters.hf_jinja import JS_ENGINES_DIR, node_command

    try:
        node = node_command(path.name, PACKAGES[HF_JINJA])[0]
    except EngineMissing:
        return None
    with tempfile.TemporaryDirectory(prefix="textbound-js-") as folder:
        (Path(folder) / "node_modules").symlink_to(JS_ENGINES_DIR / "node_modules")
        shutil.copy(path, Path(folder) / path.name)
        return subprocess.run([node, path.name], cwd=folder, capture_output=True, text=True, timeout=NODE_SECONDS)
