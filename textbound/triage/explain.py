"""``textbound explain``: a reported tokenizer or chat-template mismatch triaged without writing a case.

The oracle's and the implementation's answers stage by stage (textbound.triage.stages), the first
difference marked with its shape, the mutants of the catalogue that reproduce the implementation's
answer (textbound.triage.explanation), and the counterfactual oracles that do (textbound.naming.counterfactuals):

    $ textbound explain --family qwen --text "律" --impl textbound.mutants.tokenizer_nfc_skipped
    textbound explain: encode '律' on qwen: tokenizers 0.23.3 (oracle) against mutants.tokenizer_nfc_skipped (impl)
    >> normalized text: text not NFC-normalized
          oracle: '律'
          impl:   '律'
    ...
    explained by tokenizer_nfc_skipped (the NFC normalizer skipped)
    counterfactual oracles giving impl's answer: the engine skips the normalizer

A conversation (``--conversation FILE``) is rendered by transformers' ``apply_chat_template`` and
by the implementation's, with the family's template or the file's ``chat_template``: the rendered
prompt and its ids side by side, the first difference marked, and the chat mutants that give the
implementation's answer:

    $ cat chat.json
    {"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true}
    $ textbound explain --family qwen --conversation chat.json --impl textbound.mutants.chat_generation_prompt_ignored
    textbound explain: render chat.json on qwen: transformers 5.24.0 (oracle) against mutants.chat_generation_prompt_ignored (impl)
    >> rendered prompt: drops mixed text before '\\n'
          oracle: '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'
          impl:   '<|im_start|>user\\nHi<|im_end|>\\n'
       prompt ids: same
    ...
    explained by chat_generation_prompt_ignored (add_generation_prompt ignored)

Exit status: 0 both sides agree, 1 they differ, 2 bad input (an unknown family, ids that are not
a JSON list of ids, a conversation file that cannot be read, an implementation or file that cannot
be loaded).
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..families import Family, FamilyError, resolve
from ..one_line import one_line
from ..plan.implementation import DEFAULT_IMPL, Implementation, ImplementationError
from ..run.pool import DEFAULT_CASE_TIMEOUT
from .stages import TIMED_OUT, Stage, difference, impl_stages, oracle_stages

EXIT_SAME, EXIT_DIFFERS, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """What ``explain`` was given cannot be explained: one line says why."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``textbound explain``."""
    parser.add_argument("--impl", default=DEFAULT_IMPL, metavar="MODULE",
                        help=f"module exposing impl's public names (default: {DEFAULT_IMPL})")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--family", metavar="NAME", help="an embedded family, or a folder name under $TEXTBOUND_MODELS")
    where.add_argument("--model-dir", metavar="DIR", help="a folder with tokenizer.json")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", help="a text to encode")
    given.add_argument("--ids", metavar="JSON", help="token ids to decode, as a JSON list such as [1, 2]")
    given.add_argument("--conversation", metavar="FILE",
                       help="a chat request to render: a JSON list of messages, or an object with messages "
                            "and apply_chat_template's options (tools, documents, add_generation_prompt, "
                            "continue_final_message, chat_template: a template's source)")


@dataclass
class Explanation:
    """Both sides' stages on one input, and what explains where they part."""

    operation: str  # "encode" or "decode"
    given: object
    oracle: list[Stage]
    impl: list[Stage]
    first: str | None = None  # the name of the first differing stage
    shape: str | None = None
    mutants: list = field(default_factory=list)
    counterfactuals: list[str] = field(default_factory=list)

    def pairs(self) -> list[tuple[Stage, Stage | None]]:
        """Each oracle stage with the implementation's stage of that name (None where it shows none)."""
        by_name = {stage.name: stage for stage in self.impl}
        return [(stage, by_name.get(stage.name)) for stage in self.oracle]


def parse_ids(text: str) -> list[int]:
    """``parse_ids("[1, 2]") == [1, 2]``; anything but a JSON list of whole numbers is bad input."""
    try:
        ids = json.loads(text)
    except json.JSONDecodeError:
        ids = None
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BadInput(f"--ids {text!r}: expected a JSON list of token ids, such as [1, 2]")
    return ids


def parse_text(text: str) -> str:
    """``--text`` as given; a command line holding bytes that are not UTF-8 (Python reads each as a
    lone surrogate, U+DC80 to U+DCFF) is bad input: ``parse_text("a\\udcff")`` names character 1."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadInput(f"--text is not UTF-8: character {exc.start} is U+{ord(text[exc.start]):04X}, "
                       "a byte of the command line that is not UTF-8 (or a lone surrogate)") from None
    return text


CHAT_OPTIONS = ("tools", "documents", "add_generation_prompt", "continue_final_message")


@dataclass(frozen=True)
class Conversation:
    """A chat request read from a file: the request, and the template source it names (None: the family's)."""

    path: str
    request: object  # oracles.chat_oracle.ChatRequest
    chat_template: str | None


def read_conversation(path: str) -> Conversation:
    """``[{"role": "user", "content": "Hi"}]`` in ``path``, or ``{"messages": [...], "tools": [...],
    "add_generation_prompt": true, "chat_template": "..."}``; anything else is bad input."""
    from textbound.oracles.chat_oracle import ChatRequest

    where = f"--conversation {path}"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"{where}: not a JSON file: {exc}") from None
    if isinstance(data, list):
        data = {"messages": data}
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list) \
            or not all(isinstance(m, dict) for m in data["messages"]):
        raise BadInput(f"{where}: expected a JSON list of messages (objects), or an object with one under \"messages\"")
    unknown = sorted(set(data) - {"messages", "chat_template", *CHAT_OPTIONS})
    if unknown:
        raise BadInput(f"{where}: unknown keys {', '.join(unknown)} (known: messages, chat_template, "
                       f"{', '.join(CHAT_OPTIONS)})")
    template = data.get("chat_template")
    if template is not None and not isinstance(template, str):
        raise BadInput(f"{where}: chat_template must be a template's source text")
    return Conversation(path, ChatRequest.of({k: v for k, v in data.items() if k != "chat_template"}), template)


def _family(args) -> Family:
    families = resolve([args.family] if args.family else [], [args.model_dir] if args.model_dir else [], [])
    return families[0]


def explain(family: Family, impl: Implementation, operation: str, given) -> Explanation:
    """Both sides' stages on ``given``, compared; on a difference, the catalogue and the
    counterfactual oracles are asked what reproduces the implementation's answer."""
    from textbound.oracles.tokenizers_oracle import TokenizersOracle

    from ..checks import Subject
    from ..naming.shape import Vocabulary

    subject = Subject(family.name, family.path, impl)
    oracle = subject.oracle.tokenizer
    try:
        expected = oracle_stages(oracle, operation, given)
    except BaseException as exc:  # noqa: BLE001 - tokenizers panics are BaseExceptions
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise BadInput(f"the oracle refuses this input: {type(exc).__name__}: {exc}") from None
    try:
        tokenizer = subject.tokenizer
    except Exception as exc:  # noqa: BLE001 - the implementation may fail to load the file in any way
        raise BadInput(f"{impl.name} cannot load {family.path}: {type(exc).__name__}: {exc}") from None
    try:
        actual = impl_stages(tokenizer, operation, given)
    except Exception as exc:  # noqa: BLE001 - the implementation's failure is its answer
        actual = [Stage(expected[-1].name, None, f"raised {type(exc).__name__}: {exc}")]
    found = Explanation(operation, given, expected, actual)
    differing = [(e, a) for e, a in found.pairs() if a is not None and e.value != a.value]
    if not differing:
        return found
    first_expected, first_actual = differing[0]
    found.first = first_expected.name
    found.shape = difference(first_expected, first_actual, Vocabulary(family.path))
    final = {stage.name: stage.value for stage in actual}
    if None not in final.values():
        found.mutants = _mutants(family, operation, given, final)
        found.counterfactuals = _counterfactuals(family, operation, given, final, TokenizersOracle)
    return found


def explain_conversation(family: Family, impl: Implementation, conversation: Conversation,
                         seconds: float = DEFAULT_CASE_TIMEOUT) -> Explanation:
    """The rendered prompt and its ids from transformers and from the implementation, each call given
    at most ``seconds`` (an oracle past it is an oracle failure, bad input here), compared; on a
    difference, the chat mutants of the catalogue that give the implementation's answer."""
    from textbound.oracles.chat_oracle import FamilyChatOracle, templates_for

    from ..naming.shape import Vocabulary
    from .stages import chat_stages

    try:
        oracle = FamilyChatOracle.of(family.path).tokenizer
    except Exception as exc:  # noqa: BLE001 - transformers may refuse the folder in any way
        raise BadInput(f"transformers cannot load {family.path}: {type(exc).__name__}: {exc}") from None
    template = conversation.chat_template or templates_for(family.path)[0].source
    try:
        tokenizer = impl.Tokenizer.from_dir(family.path)
    except Exception as exc:  # noqa: BLE001 - the implementation may fail to load the folder in any way
        raise BadInput(f"{impl.name} cannot load {family.path}: {type(exc).__name__}: {exc}") from None
    request, specials = conversation.request, FamilyChatOracle.of(family.path).special_token_variables()

    def ids(apply_chat_template):
        return lambda: apply_chat_template(copy.deepcopy(request.messages), chat_template=template, tokenize=True,
                                           return_dict=False, **request.arguments())
    expected = chat_stages(lambda: oracle.apply_chat_template(copy.deepcopy(request.messages), chat_template=template,
                                                              tokenize=False, **request.arguments()),
                           ids(oracle.apply_chat_template), oracle.convert_ids_to_tokens, seconds)
    if hung := next((stage.name for stage in expected if stage.value == TIMED_OUT), None):
        raise BadInput(f"the oracle gives no {hung} within {seconds:g} s: an oracle failure, nothing to compare "
                       f"impl with")
    # impl's text is its render_chat's, given the special-token variables transformers gives a template.
    actual = chat_stages(lambda: impl.render_chat(template, copy.deepcopy(request.messages),
                                                  **{**specials, **request.arguments()}),
                         ids(tokenizer.apply_chat_template), getattr(tokenizer, "id_to_token", lambda i: None),
                         seconds)
    found = Explanation("render", conversation.path, expected, actual)
    differing = [(e, a) for e, a in found.pairs() if e.value != a.value]
    if differing:
        found.first = differing[0][0].name
        found.shape = difference(*differing[0], Vocabulary(family.path))
        found.mutants = _chat_mutants(family, conversation, template, actual, specials)
    return found


def _chat_mutants(family: Family, conversation: Conversation, template: str, actual: list[Stage],
                  specials: dict) -> list:
    """The chat mutants whose rendered text (given the family's ``specials``) or ids are impl's."""
    from dataclasses import asdict

    from ..checks.chat import INLINE_TEMPLATE
    from .explanation import explaining_mutants

    request = {**asdict(conversation.request), "template": "conversation", INLINE_TEMPLATE: template}
    found = []
    for stage, prop, case_input in ((actual[0], "render", {**request, "variables": {**specials, **request["variables"]}}),
                                    (actual[1], "ids", request)):
        if isinstance(stage.value, tuple):
            continue
        record = {"component": "chat", "property": prop, "family": family.name, "minimized_input": case_input,
                  "actual": stage.value}
        found += [m for m in explaining_mutants(record, {family.name: str(family.path)}) if m not in found]
    return found


def _answers(operation: str) -> tuple[tuple[str, dict], tuple[str, dict]]:
    """The two final stages of an operation and the case input each answers."""
    if operation == "encode":
        return ("model tokens", {"add_special_tokens": False}), ("post-processed ids", {"add_special_tokens": True})
    return (("decoded text", {"skip_special_tokens": False}),
            ("decoded, special tokens skipped", {"skip_special_tokens": True}))


def _mutants(family: Family, operation: str, given, final: dict) -> list:
    from .explanation import explaining_mutants
    key = "text" if operation == "encode" else "ids"
    found = []
    for stage, options in _answers(operation):
        record = {"component": "tokenizer", "property": operation, "family": family.name,
                  "minimized_input": {key: given, **options}, "actual": final[stage]}
        found += [m for m in explaining_mutants(record, {family.name: str(family.path)}) if m not in found]
    return found


def _counterfactuals(family: Family, operation: str, given, final: dict, oracle_class) -> list[str]:
    from ..naming.counterfactuals import reproducing
    spec = json.loads((Path(family.path) / "tokenizer.json").read_text(encoding="utf-8"))
    (plain, _), (special, _) = _answers(operation)

    def answer(tokenizer) -> bool:
        oracle = oracle_class(tokenizer)
        if operation == "encode":
            return oracle.encode(given) == final[plain] and oracle.encode(given, True) == final[special]
        return oracle.decode(given) == final[plain] and oracle.decode(given, True) == final[special]
    return reproducing(spec, answer)


def render(found: Explanation, family: Family, impl: Implementation) -> str:
    if found.operation == "render":
        import transformers
        version, given = f"transformers {transformers.__version__}", found.given
    else:
        from textbound.oracles.tokenizers_oracle import VERSION
        version, given = VERSION, repr(found.given)
    lines = [f"textbound explain: {found.operation} {given} on {family.name}: {version} (oracle) "
             f"against {impl.name} (impl)"]
    for expected, actual in found.pairs():
        if actual is None:
            lines += [f"   {expected.name}: (impl shows no such stage)", f"      oracle: {expected.shown}"]
            continue
        same = expected.value == actual.value
        mark = ">>" if expected.name == found.first else "  " if same else "* "
        head = f"{expected.name}: {found.shape}" if expected.name == found.first else \
            f"{expected.name}: {'same' if same else 'differs'}"
        lines.append(f"{mark} {head}")
        lines += [f"      both:   {expected.shown}"] if same else \
            [f"      oracle: {expected.shown}", f"      impl:   {actual.shown}"]
    if found.first is None:
        lines.append("no difference: impl agrees with the oracle at every stage")
        return "\n".join(lines) + "\n"
    from .explanation import explanation_line
    lines.append(explanation_line(found.mutants))
    if found.operation == "render":
        return "\n".join(lines) + "\n"
    lines.append("counterfactual oracles giving impl's answer: " + (
        "; ".join(f"the engine {c}" for c in found.counterfactuals) if found.counterfactuals else "none"))
    return "\n".join(lines) + "\n"


def run_command(args: argparse.Namespace) -> int:
    """``textbound explain`` with parsed ``args`` (see ``add_arguments``)."""
    try:
        conversation = read_conversation(args.conversation) if args.conversation is not None else None
        family, impl = _family(args), Implementation(args.impl)
        if not impl.provides("tokenizer"):
            raise BadInput(f"--impl {args.impl}: provides no Tokenizer to explain")
        if conversation is not None:
            if impl.missing_for("chat", "render") or impl.missing_for("chat", "ids"):
                raise BadInput(f"--impl {args.impl}: provides no render_chat and Tokenizer.apply_chat_template")
            found = explain_conversation(family, impl, conversation, args.case_timeout)
        else:
            operation, given = ("encode", parse_text(args.text)) if args.text is not None else ("decode", parse_ids(args.ids))
            found = explain(family, impl, operation, given)
    except (BadInput, FamilyError, ImplementationError) as exc:
        print(f"textbound explain: {one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(render(found, family, impl), end="")
    return EXIT_SAME if found.first is None else EXIT_DIFFERS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="textbound explain", description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.set_defaults(case_timeout=DEFAULT_CASE_TIMEOUT)
    return run_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
