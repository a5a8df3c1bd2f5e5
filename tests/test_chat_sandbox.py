"""impl.chat.sandbox: hostile templates are refused within limits; legitimate ones render exactly as in
transformers' own sandbox.

The reference environment is transformers' (compiled by transformers itself); impl's ChatSandbox gets
the same options, extensions, globals and filters taken from it, so the only difference under test is
the sandbox.
"""
from __future__ import annotations

import copy
import json
import resource
import threading
import time
from pathlib import Path

import jinja2
import pytest
import transformers.utils.chat_template_utils as oracle_chat
from jinja2.sandbox import ImmutableSandboxedEnvironment

from textbound.impl.chat.sandbox import SAFE_ATTRIBUTES, ChatSandbox, RenderLimitError, RenderLimits, render_within_limits
from textbound.oracles.chat_oracle import family_templates, frozen_clock, outcome, shared_templates, templates_dir
from textbound.oracles.chat_oracle import TEMPLATES_ENV
from textbound.families import MODELS_ENV, models_dir
from tools.record_transformers_hostile import OUTCOMES, catalogue

CATALOGUE_DIR = Path(__file__).resolve().parent.parent / "corpora" / "hostile_templates"
INDEX = catalogue()
ATTACKS = {"sandbox escape", "mutation of the caller's data", "resource bomb"}
# Small limits keep the suite fast; a refusal must come within them (plus scheduling slack).
TEST_LIMITS = RenderLimits(seconds=1.0, max_output_chars=1_000_000, max_memory_bytes=256 * 2**20)
SLACK_SECONDS = 2.0
# What a refusal may raise: the sandbox's and the template engine's errors, and the three Python
# errors transformers raises for the same templates (Jinja's range cap, recursion, Python's
# integer-digit limit and nesting limit), each with a message naming what was refused.
REFUSALS = (jinja2.TemplateError, OverflowError, RecursionError, ValueError, SyntaxError)
NO_LOADER = "no loader for this environment specified"  # include/import: Jinja's TypeError, as transformers


def oracle_environment() -> jinja2.Environment:
    """transformers' chat-template environment, built by transformers."""
    return oracle_chat._cached_compile_jinja_template("").environment


def sandbox_like_oracle(limits: RenderLimits = RenderLimits(), sandbox: type = ChatSandbox) -> jinja2.Environment:
    """A ``sandbox`` with transformers' options, extensions, globals and ``tojson``."""
    oracle = oracle_environment()
    environment = sandbox(limits=limits, trim_blocks=True, lstrip_blocks=True,
                          extensions=[type(extension) for extension in oracle.extensions.values()])
    environment.filters["tojson"] = oracle.filters["tojson"]
    for name in ("raise_exception", "strftime_now", "dict", "namespace"):
        environment.globals[name] = oracle.globals[name]
    if isinstance(environment, ChatSandbox):
        environment.safe_attributes[type(oracle.globals["dict"])] = frozenset({"fromkeys"})
    return environment


class _UnlimitedSandbox(ImmutableSandboxedEnvironment):
    """A broken implementation for the checks to catch: Jinja's sandbox with no limits or allow-list."""

    def __init__(self, limits: RenderLimits, **options):
        super().__init__(**options)


def _render_unlimited(template: jinja2.Template, context: dict, limits: RenderLimits) -> str:
    return template.render(context)


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def assert_refused(environment: jinja2.Environment, source: str, render=render_within_limits,
                   limits: RenderLimits = TEST_LIMITS) -> BaseException:
    """Compiling and rendering ``source`` raises a clear refusal within the limits, and leaves the
    caller's context as it was."""
    context = copy.deepcopy(INDEX["context"])
    before = copy.deepcopy(context)
    peak_before, start = _peak_rss_bytes(), time.monotonic()
    with pytest.raises((*REFUSALS, TypeError)) as raised:
        render(environment.from_string(source), context, limits)
    elapsed = time.monotonic() - start
    error = raised.value
    assert not isinstance(error, TypeError) or str(error) == NO_LOADER, f"not a refusal: {error!r}"
    assert str(error), f"{type(error).__name__} names nothing"
    assert elapsed < limits.seconds + SLACK_SECONDS, f"refused only after {elapsed:.1f} s"
    assert _peak_rss_bytes() - peak_before < limits.max_memory_bytes + 64 * 2**20
    assert context == before, "the template changed the caller's data"
    return error


# --- the catalogue ----------------------------------------------------------------------------------

def test_catalogue_index_names_every_file_once():
    names = [entry["name"] for entry in INDEX["templates"]]
    assert len(names) == len(set(names)) >= 40
    assert {entry["file"] for entry in INDEX["templates"]} == {p.name for p in CATALOGUE_DIR.glob("*.jinja")}
    assert {entry["attack"] for entry in INDEX["templates"]} == ATTACKS
    assert all(entry["tries"] for entry in INDEX["templates"])


@pytest.mark.parametrize("entry", INDEX["templates"], ids=lambda entry: entry["name"])
def test_hostile_template_is_refused_within_limits(entry):
    source = (CATALOGUE_DIR / entry["file"]).read_text(encoding="utf-8")
    assert_refused(sandbox_like_oracle(TEST_LIMITS), source)


def test_the_refusal_check_fires_on_an_unlimited_sandbox():
    # Jinja's own sandbox renders an unsafe attribute as an empty undefined, and lets a list grow.
    environment = sandbox_like_oracle(TEST_LIMITS, sandbox=_UnlimitedSandbox)
    for source in ("{{ ''.__class__ }}", "{{ ([0] * 2000000)|length }}"):
        with pytest.raises(pytest.fail.Exception):
            assert_refused(environment, source, render=_render_unlimited)


def test_committed_transformers_outcomes_cover_the_catalogue():
    recorded = json.loads(OUTCOMES.read_text(encoding="utf-8"))
    assert recorded["oracle"].startswith("transformers ")
    assert set(recorded["outcomes"]) == {entry["name"] for entry in INDEX["templates"]}
    assert {o["outcome"] for o in recorded["outcomes"].values()} <= {"allows", "refuses", "timed out", "out of memory"}


# --- limits, errors and their lines ---------------------------------------------------------------

@pytest.mark.parametrize("source, limit, line", [
    ("line one\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "seconds", 2),
    ("a\nb\n{{ 'x' * 10**9 }}", "max_output_chars", 3),
    ("\n{% for i in range(100000) %}{{ 'x' * 1000 }}\n{% endfor %}", "max_output_chars", 2),
    ("{% set ns = namespace(n=3) %}\n{% for i in range(64) %}{% set ns.n = ns.n * ns.n %}{% endfor %}", "MAX_INT_BITS", 2),
])
def test_limit_errors_name_the_limit_and_the_line(source, limit, line):
    error = assert_refused(sandbox_like_oracle(TEST_LIMITS), source)
    assert isinstance(error, RenderLimitError) and isinstance(error, jinja2.exceptions.SecurityError)
    assert (error.limit, error.lineno) == (limit, line)
    assert f"at line {line}" in str(error) and limit in str(error)


def test_unsafe_attribute_error_names_the_attribute_and_the_line():
    error = assert_refused(sandbox_like_oracle(), "ok\n\n{{ messages.append(1) }}")
    assert isinstance(error, jinja2.exceptions.SecurityError)
    assert "'append'" in str(error) and "line 3" in str(error)


def test_memory_limit_trips_on_many_live_values_each_within_the_size_limit():
    # Every level of the recursion keeps three fresh 900,000-character strings: each value is within
    # max_output_chars, so only the memory limit can stop it.
    source = ("{% macro f(s, n) %}{% set a = s ~ 'a' %}{% set b = s ~ 'b' %}{% set c = s ~ 'c' %}"
              "{% if n %}{{ f(s, n - 1) }}{% endif %}{% endmacro %}{{ f('x' * 900000, 150) }}")
    limits = RenderLimits(seconds=5, max_output_chars=1_000_000, max_memory_bytes=64 * 2**20)
    error = assert_refused(sandbox_like_oracle(limits), source, limits=limits)
    assert isinstance(error, RenderLimitError) and error.limit == "max_memory_bytes"


def test_concurrent_renders_keep_their_own_limits():
    # Each render's budget is its own (a context variable): a bomb in one thread trips its own short
    # deadline while a legitimate render in another thread, sharing the environment, completes.
    environment = sandbox_like_oracle()
    bomb = environment.from_string("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
    legitimate = environment.from_string("{% for m in messages %}{{ m.role }}{% endfor %}")
    outcomes = {}

    def render(name, template, limits):
        outcomes[name] = outcome(lambda: render_within_limits(template, copy.deepcopy(INDEX["context"]), limits))

    threads = [threading.Thread(target=render, args=("bomb", bomb, RenderLimits(seconds=0.5))),
               threading.Thread(target=render, args=("legitimate", legitimate, RenderLimits(seconds=30)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes["legitimate"] == ("systemuserassistanttool", None)
    assert outcomes["bomb"][1].error_class == "textbound.impl.chat.sandbox.RenderLimitError"


def test_render_limits_must_be_positive():
    with pytest.raises(ValueError, match="seconds"):
        RenderLimits(seconds=0)
    with pytest.raises(ValueError, match="max_output_chars"):
        RenderLimits(max_output_chars=-1)


def test_direct_render_still_bounds_sizes():
    # Template.render (no deadline) goes through the same size checks.
    with pytest.raises(RenderLimitError):
        ChatSandbox(limits=TEST_LIMITS).from_string("{{ 'x' * 10**8 }}").render()


def test_allow_list_holds_no_private_or_mutating_names():
    mutating = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                "setdefault", "popitem", "add", "discard"}
    for names in SAFE_ATTRIBUTES.values():
        assert not {name for name in names if name.startswith("_")} and not names & mutating


# --- legitimate templates render exactly as in transformers -------------------------------------

TOOLS = INDEX["context"]["tools"]
CONVERSATIONS = {
    "multi_turn": [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"},
                   {"role": "assistant", "content": "Hello!", "reasoning_content": "greet"},
                   {"role": "user", "content": "Thanks {{ x }} {% if %} <|im_end|>"}],
    "tool_calls": INDEX["context"]["messages"],
    # Long enough that a size or time limit set too low would trip on it (some templates take
    # time quadratic in the number of messages: transformers needs about a second here for them).
    "long": [{"role": "system", "content": "system " * 200}]
            + [message for turn in range(60)
               for message in ({"role": "user", "content": f"question {turn} " + "word " * 200},
                               {"role": "assistant", "content": f"answer {turn} " + "text " * 200})]
            + [{"role": "user", "content": "last"}],
}


def _legitimate_templates() -> list:
    templates = list(shared_templates()) if templates_dir() is not None else []
    root = models_dir()
    if root is not None:
        for folder in sorted(p for p in root.iterdir() if (p / "tokenizer_config.json").exists()):
            templates.extend(family_templates(folder))
    return templates


LEGITIMATE = _legitimate_templates()


def _outcome(render) -> tuple:
    text, raised = outcome(render)
    return text, raised and raised.error_class


def assert_renders_like_oracle(source: str, environment: jinja2.Environment, render=render_within_limits):
    """For every sample conversation, with and without tools: the same text, or the same exception
    class, as transformers' compiled template; and the context is left as it was."""
    oracle_template, oracle_raised = outcome(lambda: oracle_chat._cached_compile_jinja_template(source))
    template, raised = outcome(lambda: environment.from_string(source))
    if oracle_raised or raised:  # a template neither side can compile
        assert (raised and raised.error_class) == (oracle_raised and oracle_raised.error_class)
        return
    for name, messages in CONVERSATIONS.items():
        for tools in (None, TOOLS):
            context = {"messages": messages, "tools": tools, "documents": None, "add_generation_prompt": True,
                       "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": True}
            before = copy.deepcopy(context)
            expected = _outcome(lambda: oracle_template.render(copy.deepcopy(context)))
            actual = _outcome(lambda: render(template, context, RenderLimits()))
            assert actual == expected, f"{name}, tools={tools is not None}"
            assert context == before


@pytest.mark.skipif(not LEGITIMATE, reason=f"needs ${TEMPLATES_ENV} or ${MODELS_ENV} (the real chat templates)")
@pytest.mark.parametrize("chat_template", LEGITIMATE, ids=lambda t: t.name)
def test_legitimate_template_renders_like_transformers(chat_template):
    with frozen_clock():
        assert_renders_like_oracle(chat_template.source, sandbox_like_oracle())


def test_conformance_check_fires_on_a_narrower_allow_list():
    environment = sandbox_like_oracle()
    environment.safe_attributes[str] = SAFE_ATTRIBUTES[str] - {"strip"}
    with pytest.raises(AssertionError):
        assert_renders_like_oracle("{{ messages[0].content.strip() }}", environment)

