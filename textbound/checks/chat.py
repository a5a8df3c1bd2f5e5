"""Checks of the ``chat`` component: chat templates rendered by the implementation against
transformers' ``apply_chat_template`` (oracles/chat_oracle.py), dates frozen on both sides.

- chat/render: ``render_chat(template, messages, ...)`` gives transformers' text byte for byte, or
  raises the same exception class where transformers raises; and leaves the caller's messages as
  they were.
- chat/ids, chat/sanitized_ids: ``Tokenizer.apply_chat_template(..., tokenize=True, return_dict=False)``
  gives transformers' ids, without and with ``sanitize_control_tokens``, errors compared the same way.
  A module whose Tokenizer lacks it has these reported as not provided: never a pass.

A case names its template (``template``, resolved by ``oracles.chat_oracle.resolve`` with the digest
it was made with) and holds the request (``ChatRequest``): for example

    {"template": "shared:zephyr", "template_digest": "...", "messages": [{"role": "user", "content": "Hi"}],
     "tools": null, "documents": null, "add_generation_prompt": true, "continue_final_message": false,
     "variables": {"eos_token": "</s>"}}

A minimized case also holds its minimized template's source (``template_source``), rendered instead.
A divergence names the template in ``first_difference`` and, for text, the first differing character
with both sides' text around it.

A divergence's kind says what the renderer does, whichever template or characters show it, so that
one bug gives one signature over every template: first a reading of the request that makes
transformers give impl's answer ("renders as if add_generation_prompt were false", "renders an
empty tools list as none", "reads content as vLLM's 'string' content format", "reads string call
arguments as objects (vLLM's chat preparation)"); else, where
transformers raises, "does not raise the error transformers raises" (whatever error the template
meets, impl rendering or raising another); else the texts' shape (``render_kind``): whitespace
alone ("inserts '\\n'"), \\u escapes alone, a JSON value's key order, or the first edit ("drops
text"). Ids are told by the rendered text where the two tokenizers render differently, and left to
chat/render where render_chat, given the same request, shows the same two texts.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import chain

from textbound.oracles.chat_oracle import (
    ChatRequest,
    ChatTemplate,
    FamilyChatOracle,
    Raised,
    frozen_clock,
    outcome,
    render,
    resolve,
)

from textbound.properties.conversations import decoded_arguments, joined_text_parts, with_call_arguments

from ..naming.divergence import Case, Divergence, first_index
from ..naming.shape import describe, first_change
from .registry import EVERY_SOURCE, Subject, check, ids_divergence, impl_outcome, text_divergence

TOKENIZER_PROPERTIES = {"ids": False, "sanitized_ids": True}  # property -> sanitize_control_tokens
INLINE_TEMPLATE = "template_source"  # a case's template given as source (a minimized one), beside its name


def case_template(subject: Subject, case: Case) -> ChatTemplate:
    """The case's template: its ``template_source`` where it has one (named ``minimized:`` and the
    template it was cut from, so that apply_chat_template gets the source), else the one its name
    resolves to."""
    if INLINE_TEMPLATE in case.input:
        return ChatTemplate(f"minimized:{case.input['template']}", case.input[INLINE_TEMPLATE])
    return subject.cached(f"chat template {case.input['template']}", lambda: resolve(
        case.input["template"], subject.path, case.input.get("template_digest")))


WHITESPACE = " \t\n\r"  # what trim_blocks, lstrip_blocks and str.strip act on
ESCAPES = re.compile(r"(?:\\u[0-9a-fA-F]{4})+")  # runs of JSON's \\u escapes (a surrogate pair is two)
JSON_STARTS = 64  # how many "{" and "[" before the first difference are tried as the start of its JSON value

Answer = Callable[[ChatRequest], tuple[object, "Raised | None"]]  # what the oracle gives for a request


def content_formats(messages: list) -> Iterator[tuple[str, list]]:
    """The messages as each of vLLM's content formats (--chat-template-content-format) gives them
    to a template where it differs from what was sent: "string" joins a content's text parts with
    "\\n", "openai" makes a string content one text part."""
    formats = {"string": (list, joined_text_parts),
               "openai": (str, lambda content: [{"type": "text", "text": content}])}
    for name, (shape, convert) in formats.items():
        if any(isinstance(m, dict) and isinstance(m.get("content"), shape) for m in messages):
            yield name, [{**m, "content": convert(m["content"])} if isinstance(m, dict) and
                         isinstance(m.get("content"), shape) else m for m in messages]


# How a server may hand an earlier call's string arguments to the template, by what it says of the renderer.
ARGUMENT_READINGS = {
    "reads string call arguments as objects (vLLM's chat preparation)": decoded_arguments,
    "reads string call arguments JSON-encoded again": json.dumps,
}


def _string_read(read: Callable, arguments):
    return read(arguments) if isinstance(arguments, str) else arguments


def argument_readings(messages: list) -> Iterator[tuple[str, list]]:
    """The messages with every string ``arguments`` of an earlier call read as each of
    ARGUMENT_READINGS does, where there is one; and with content given as parts read as the list's
    Python repr."""
    for description, read in ARGUMENT_READINGS.items():
        read_messages = with_call_arguments(messages, functools.partial(_string_read, read))
        if read_messages != messages:
            yield description, read_messages
    if any(isinstance(m, dict) and isinstance(m.get("content"), list) for m in messages):
        yield "reads content parts as their Python repr", [
            {**m, "content": str(m["content"])} if isinstance(m, dict) and isinstance(m.get("content"), list) else m
            for m in messages]


def without_variable(name: str) -> str:
    """What a reading leaving out the variable ``name``, or giving it as "", says of a renderer."""
    return f"renders without the variable {name}"


def blank_variables(request: ChatRequest) -> Iterator[tuple[str, ChatRequest]]:
    """(name, the request with it given as "") for each string variable that is not "" already: a
    server leaving out the BOS its tokenizer adds renders so."""
    variables = request.variables or {}
    for name, value in variables.items():
        if isinstance(value, str) and value:
            yield name, dataclasses.replace(request, variables={**variables, name: ""})


def request_readings(request: ChatRequest) -> Iterator[tuple[str, ChatRequest]]:
    """The request read otherwise in one way, as a server may read it, and what each says of a
    renderer it reproduces: a flag flipped (never into a pair transformers refuses), tools or
    documents given as the other kind of nothing, or left out; one variable left out, or a string
    one given as "" (both "without" it: a template may test it or write it); content in the other of
    vLLM's content formats."""
    replace = dataclasses.replace
    if request.add_generation_prompt or not request.continue_final_message:
        flag = not request.add_generation_prompt
        yield (f"renders as if add_generation_prompt were {json.dumps(flag)}",
               replace(request, add_generation_prompt=flag))
    if request.continue_final_message:
        yield "renders as if continue_final_message were false", replace(request, continue_final_message=False)
    for name in ("tools", "documents"):
        given = getattr(request, name)
        if given is None:
            yield f"renders no {name} as an empty list", replace(request, **{name: []})
        else:
            yield (f"renders an empty {name} list as none" if given == [] else f"renders without the {name}",
                   replace(request, **{name: None}))
    variables = request.variables or {}
    for name in variables:
        yield without_variable(name), replace(
            request, variables={key: value for key, value in variables.items() if key != name})
    for name, blank in blank_variables(request):
        yield without_variable(name), blank
    for name, messages in content_formats(request.messages):
        yield f"reads content as vLLM's {name!r} content format", replace(request, messages=messages)
    for description, messages in argument_readings(request.messages):
        yield description, replace(request, messages=messages)


def readings_after_a_blank_variable(request: ChatRequest) -> Iterator[tuple[str, ChatRequest]]:
    """The request's readings (request_readings) made after a string variable is given as "": a
    server leaving out the BOS its tokenizer adds may read the request otherwise too, and each of
    its bugs is then named, not the two as one "drops text". With ``bos_token`` "<s>" and content
    given as parts, one is "renders without the variable bos_token and reads content as vLLM's
    'string' content format"."""
    for name, blank in blank_variables(request):
        first = without_variable(name)
        for description, reading in request_readings(blank):
            if description != first:
                yield f"{first} and {description.removeprefix('renders ')}", reading


def read_otherwise(answer: Answer, request: ChatRequest, actual, impl_error: Raised | None) -> str | None:
    """What the first reading of the request whose oracle answer is impl's says: the same text
    (or ids), or the same error, class and message (a class alone is raised for many reasons); a
    reading in one way first, then one after a blank variable (readings_after_a_blank_variable)."""
    for description, reading in chain(request_readings(request), readings_after_a_blank_variable(request)):
        value, error = answer(reading)
        if ((error.error_class, error.message) == (impl_error.error_class, impl_error.message) if error and impl_error
                else not error and not impl_error and value == actual):
            return description
    return None


def whitespace_kind(expected: str, actual: str) -> str | None:
    """Where two renders differ in whitespace alone: all the whitespace at the render's ends
    dropped (a render stripped) or added where it had none, whichever whitespace; else which
    whitespace is inserted or dropped (a block tag's newline or indentation kept or cut), wherever
    the template put it.
    ``whitespace_kind("a\\nb", "a\\n\\nb") == "inserts '\\\\n'"``,
    ``whitespace_kind("\\na\\n", "a") == "drops the whitespace at the render's ends"``."""
    def bare(text: str) -> str:
        return "".join(c for c in text if c not in WHITESPACE)

    if bare(expected) != bare(actual):
        return None
    theirs = Counter(c for c in expected if c in WHITESPACE)
    mine = Counter(c for c in actual if c in WHITESPACE)
    dropped, added = theirs - mine, mine - theirs
    at_ends = expected.strip(WHITESPACE) == actual.strip(WHITESPACE)
    if added and not dropped:
        bare_ends = at_ends and expected == expected.strip(WHITESPACE)
        return "inserts whitespace at the render's ends" if bare_ends else f"inserts {describe(''.join(added))}"
    if dropped and not added:
        bare_ends = at_ends and actual == actual.strip(WHITESPACE)
        return "drops the whitespace at the render's ends" if bare_ends else f"drops {describe(''.join(dropped))}"
    return "moves whitespace"


def _unescaped(text: str) -> str:
    return ESCAPES.sub(lambda m: json.loads(f'"{m.group()}"'), text)


def escape_kind(expected: str, actual: str) -> str | None:
    """Where two renders differ in \\u escapes alone (tojson's ensure_ascii): which side escapes.
    ``escape_kind('"\u00e9"', '"\\\\u00e9"') == "escapes non-ASCII characters where transformers does not"``."""
    if _unescaped(expected) != _unescaped(actual):
        return None
    if len(ESCAPES.findall(actual)) >= len(ESCAPES.findall(expected)):
        return "escapes non-ASCII characters where transformers does not"
    return "does not escape the non-ASCII characters transformers escapes"


def _key_orders(value) -> list:
    """Every object's keys in order, depth first."""
    if isinstance(value, dict):
        return [list(value), *(order for item in value.values() for order in _key_orders(item))]
    if isinstance(value, list):
        return [order for item in value for order in _key_orders(item)]
    return []


def json_kind(expected: str, actual: str) -> str | None:
    """Where the first difference lies inside a JSON value (a tool's schema given by tojson) that
    both sides hold equal: its keys in another order (sorted), or another layout."""
    at = first_index(expected, actual)
    decoder = json.JSONDecoder()
    starts = [i for i in range(at, -1, -1) if i < len(expected) and expected[i] in "{["][:JSON_STARTS]
    for start in starts:
        try:
            theirs, their_end = decoder.raw_decode(expected, start)
            mine, my_end = decoder.raw_decode(actual, start)
        except ValueError:
            continue
        if min(their_end, my_end) <= at:
            continue  # a value ending before the difference: one that holds it starts further back
        if theirs != mine:
            return None
        mine_orders = _key_orders(mine)
        if _key_orders(theirs) != mine_orders:
            sorted_keys = all(keys == sorted(keys) for keys in mine_orders)
            return "sorts JSON object keys" if sorted_keys else "gives JSON object keys in another order"
        return "lays JSON out otherwise"
    return None


def edit_kind(expected: str, actual: str) -> str:
    """The first edit between two renders, by what it does alone: what a template renders around
    it (a special token, a role, a message's words, the end of the render) is the template's, not
    the bug's. ``edit_kind("ab", "aXb") == "inserts text"``."""
    a0, a1, b0, b1 = first_change(expected, actual)
    return "inserts text" if a0 == a1 else "drops text" if b0 == b1 else "replaces text"


def render_kind(expected: str, actual: str) -> str:
    """How impl's render differs from transformers': in whitespace alone, in \\u escapes alone, in
    a JSON value's layout or key order, else by its first edit."""
    return (whitespace_kind(expected, actual) or escape_kind(expected, actual) or json_kind(expected, actual)
            or edit_kind(expected, actual))


def blank_variable_kind(answer: Answer, request: ChatRequest, expected: str, actual: str) -> str | None:
    """Where transformers' render holds a string variable's value and impl's does not (a BOS left
    out) and no reading gives impl's render, what else differs once that variable is given as "":
    llama-server's render of a message ``"a\\u2008"`` lacks the BOS and keeps the space ``trim`` takes
    off, ``"renders without the variable bos_token, then text: inserts text"`` (the first edit alone
    is the BOS: "drops text", whatever else the server did)."""
    for name, blank in blank_variables(request):
        value = request.variables[name]
        if value in expected and value not in actual:
            with frozen_clock():
                rendered, error = answer(blank)
            if not error and isinstance(rendered, str) and rendered != actual:
                return f"{without_variable(name)}, then text: {render_kind(rendered, actual)}"
    return None


def _text_divergence(case: Case, expected: str, actual: str, kind: str | None = None) -> Divergence:
    found = text_divergence(case, expected, actual)
    found.kind = kind or f"text: {render_kind(expected, actual)}"
    return found


def _error_kind(oracle_error: Raised | None, impl_error: Raised | None) -> str:
    """An error on either side: where transformers raises, impl rendering instead or raising
    another class is one failure to refuse as the template does, whichever error the template
    meets; else impl's error class."""
    return "does not raise the error transformers raises" if oracle_error else f"raised {impl_error.error_class}"


def render_answer(source: str) -> Answer:
    """transformers' outcome of a request on the template ``source``, dates frozen by the caller."""
    return lambda asked: outcome(lambda: render(source, asked.messages, **asked.arguments()))


def _divergence(case: Case, answer: Answer, request: ChatRequest, expected, oracle_error: Raised | None,
                actual, impl_error: Raised | None, text_kind: Callable[[], Divergence]) -> Divergence | None:
    """What differs between the two outcomes, or None: a reading of the request that gives impl's
    outcome names it first, then an error, then ``text_kind`` (the texts' or ids' own shape; None
    where another check shows the difference)."""
    if oracle_error and impl_error and oracle_error.error_class == impl_error.error_class:
        return None
    if not oracle_error and not impl_error and actual == expected:
        return None
    found = (text_kind() if not oracle_error and not impl_error else
             Divergence(case, str(oracle_error) if oracle_error else expected,
                        str(impl_error) if impl_error else actual, _error_kind(oracle_error, impl_error),
                        {"where": impl_error.where} if impl_error else {}))
    if found is None:
        return None
    if oracle_error and impl_error:
        return found  # a reading that gets past transformers' refusal meets the template's own error
    with frozen_clock():
        reading = read_otherwise(answer, request, actual, impl_error)
    if reading is not None:
        found.kind = reading
    return found


def _named(template: ChatTemplate, divergence: Divergence | None) -> Divergence | None:
    if divergence is not None:
        divergence.first_difference = {"template": template.name, **divergence.first_difference}
    return divergence


@check("chat", "render", minimize="messages", sources=EVERY_SOURCE)
def check_render(subject: Subject, case: Case) -> Divergence | None:
    template, request = case_template(subject, case), ChatRequest.of(case.input)
    messages = copy.deepcopy(request.messages)
    answer = render_answer(template.source)
    with frozen_clock():
        expected, oracle_error = answer(request)
        actual, impl_error = impl_outcome(lambda: subject.impl.render_chat(template.source, messages,
                                                                      **request.arguments()))
    found = _divergence(case, answer, request, expected, oracle_error, actual, impl_error,
                        lambda: _text_divergence(case, expected, actual,
                                                 blank_variable_kind(answer, request, expected, actual)))
    if found is None and messages != request.messages:
        found = Divergence(case, request.messages, messages, "changed the caller's messages")
    return _named(template, found)


def chat_template_argument(template: ChatTemplate) -> str | None:
    """What apply_chat_template's ``chat_template=`` gets: nothing for the family's own template (the
    tokenizer selects it), the name of one of its named templates, else the source itself."""
    if template.name == "family":
        return None
    if template.name.startswith("family:"):
        return template.name.removeprefix("family:")
    return template.source


@check("chat", "ids", minimize="messages", sources=EVERY_SOURCE)
@check("chat", "sanitized_ids", minimize="messages", sources=EVERY_SOURCE)
def check_ids(subject: Subject, case: Case) -> Divergence | None:
    template, request = case_template(subject, case), ChatRequest.of(case.input)
    sanitize = TOKENIZER_PROPERTIES[case.property]
    chat_template = chat_template_argument(template)
    oracle = FamilyChatOracle.of(subject.path)

    def answer(asked: ChatRequest):
        return outcome(lambda: oracle.ids(asked.messages, chat_template, sanitize, **asked.arguments()))

    def texts() -> tuple[str, str] | None:
        """Both tokenizers' rendered text of the request, where both give one (a server's prompt
        has none: the ids are then told by themselves)."""
        def text(tokenizer):
            return outcome(lambda: tokenizer.apply_chat_template(
                copy.deepcopy(request.messages), chat_template=chat_template, tokenize=False, **request.arguments()))
        (theirs, their_error), (mine, my_error) = text(oracle.tokenizer), text(subject.tokenizer)
        return None if their_error or my_error else (theirs, mine)

    def ids_kind() -> Divergence | None:
        with frozen_clock():
            rendered = texts()
        if rendered is None or rendered[0] == rendered[1]:
            return ids_divergence(subject, case, expected, actual, subject.oracle.decode(expected))
        if _rendered_alike(subject, template, request, *rendered):
            return None
        return _text_divergence(case, *rendered)

    with frozen_clock():
        expected, oracle_error = answer(request)
        actual, impl_error = impl_outcome(lambda: subject.tokenizer.apply_chat_template(
            copy.deepcopy(request.messages), chat_template=chat_template, tokenize=True, return_dict=False,
            sanitize_control_tokens=sanitize, **request.arguments()))
    return _named(template, _divergence(case, answer, request, expected, oracle_error, actual, impl_error, ids_kind))


def _rendered_alike(subject: Subject, template: ChatTemplate, request: ChatRequest, theirs: str, mine: str) -> bool:
    """Whether render_chat, given the family's special tokens as the render case of the same request
    has them, renders the two texts the tokenizers did: then chat/render shows the difference, and
    the ids, which follow the text, add nothing to it. Never, without a render_chat (chat/render is
    then not provided)."""
    if subject.impl.missing_for("chat", "render"):
        return False
    arguments = {**FamilyChatOracle.of(subject.path).special_token_variables(), **request.arguments()}
    with frozen_clock():
        oracle_text, _ = outcome(lambda: render(template.source, request.messages, **arguments))
        impl_text, _ = outcome(lambda: subject.impl.render_chat(template.source, copy.deepcopy(request.messages),
                                                                **arguments))
    return (oracle_text, impl_text) == (theirs, mine)
