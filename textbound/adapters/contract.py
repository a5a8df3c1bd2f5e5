"""The contract of an ``--impl`` module, written once: every public name's signature and return type.

A ``typing.Protocol`` per component lists the names a module exposes for it (``TokenizerNames``, ...,
``StructuredNames``): its functions as methods, its classes as ``type[...]`` of the protocol their
objects follow (``Tokenizer``, ``IncrementalDetokenizer``, ``StopChecker``, ``OutputParser``,
``Constraint``). impl/ is the reference implementation of all of it (its docstrings give the
semantics); textbound.plan.implementation's PROPERTY_NAMES says which names each property calls.

The checks reach the implementation only through ``checked(implementation)`` (textbound.checks.Subject
does it): every public name handed out, every member of the objects they make, and every value those
return is checked against the annotations here, where the harness makes the call:

    >>> class Engine:                                  # an engine's tokenizer, decoding to bytes
    ...     def decode(self, ids, skip_special_tokens=False):
    ...         return b"Hi"
    >>> checked_as(Engine(), Tokenizer).decode([17250])  # doctest: +SKIP
    ContractViolation: Tokenizer.decode returned bytes, expected str

A value of the wrong type, or a member the engine lacks (an AttributeError too, so ``hasattr`` and
``getattr(..., default)`` still ask after optional ones), raises ContractViolation, which the checks
record as the engine's divergence of kind ``contract: ...`` (textbound.checks.registry), never a
harness error. An exception the engine raises goes through as it is, for the checks to judge where
they expect one, and carries the member that raised it (``raised_in``): one that escapes a check is
the engine's contract divergence as well (``ContractViolation.raised``).

Members not written here (an engine's own extras) are handed out unchecked. A set's members are
checked in full, as a list's: a mask is at most a vocabulary, and it is listed to be compared anyway.

A leaf: imports nothing of the harness.
"""
from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Hashable, Set
from pathlib import Path
from typing import Any, Literal, Protocol, overload

# -- the objects --------------------------------------------------------------------------------


class Tokenizer(Protocol):
    """A family's tokenizer (tokenizer.json and tokenizer_config.json of a folder); impl.Tokenizer.

    ``vocab_bytes`` and ``apply_chat_template`` are optional: the properties calling them (structured's
    mask and guarantee; chat's ids) are not provided without them. An engine without a vocabulary of
    its own (a server's /tokenize) may lack ``id_to_token``: divergences then show the oracle's pieces.
    """

    @classmethod
    def from_dir(cls, path: Path) -> Tokenizer:
        """The tokenizer of a family folder; raising here means the run cannot be set up (exit 2)."""

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """True by default, as in tokenizers and transformers; the harness always passes it."""

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        """impl's also takes ``strict=True`` (raising on an id the vocabulary lacks); the harness never passes it."""

    def token_to_id(self, token: str) -> int | None: ...

    def id_to_token(self, id: int) -> str | None: ...

    @property
    def vocab_size(self) -> int:
        """Distinct tokens, added ones included."""

    def vocab_bytes(self) -> list[bytes]:
        """The bytes each id adds mid-sequence, b"" for ids not in the vocabulary (structured's masks are
        compared over them)."""

    @overload
    def apply_chat_template(self, conversation: list[dict], chat_template: str | None = None, *,
                            tokenize: Literal[True] = True, return_dict: Literal[False] = False,
                            sanitize_control_tokens: bool = False, tools: list[dict] | None = None,
                            documents: list[dict] | None = None, add_generation_prompt: bool = False,
                            continue_final_message: bool = False, **variables) -> list[int]: ...

    @overload
    def apply_chat_template(self, conversation: list[dict], chat_template: str | None = None, *,
                            tokenize: Literal[False], return_dict: bool = False,
                            sanitize_control_tokens: bool = False, tools: list[dict] | None = None,
                            documents: list[dict] | None = None, add_generation_prompt: bool = False,
                            continue_final_message: bool = False, **variables) -> str: ...

    def apply_chat_template(self, conversation, chat_template=None, *, tokenize=True, return_dict=False,
                            sanitize_control_tokens=False, tools=None, documents=None, add_generation_prompt=False,
                            continue_final_message=False, **variables) -> list[int] | str:
        """transformers' ``apply_chat_template``: the ids (``tokenize=True, return_dict=False``), or the
        rendered text (``tokenize=False``; an engine that renders none may raise instead).
        ``chat_template``: None for the family's own, a name of one of its named templates, or a
        template's source."""


class IncrementalDetokenizer(Protocol):
    """Generated ids streamed to text; impl.IncrementalDetokenizer (impl/streaming/detokenizer.py).

    After ``flush``, ``prompt_text + text == decode(prompt_ids + ids)``; before it, what was shown is
    a prefix of that for every continuation."""

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True,
                 prompt_ids: list[int] | None = None): ...

    def add(self, ids: list[int]) -> str:
        """The newly settled text."""

    def flush(self) -> str:
        """The rest."""

    text: str  # every delta so far
    prompt_text: str  # what streaming the prompt showed


class StopChecker(Protocol):
    """Stop strings over streamed text; impl.StopChecker."""

    def __init__(self, stops: list[str], include_stop: bool = False): ...

    def add(self, delta: str) -> str:
        """The text released."""

    def finish(self) -> str:
        """The text held at the end."""

    stopped: bool
    stop_string: str | None  # the stop that ended the stream (OpenAI's stop reason), None while none did


class OutputParser(Protocol):
    """Tool calls and reasoning in streamed model output; impl.OutputParser (impl/tools/__init__.py)."""

    def __init__(self, format: str, *, tools: list[dict] | None = None, reasoning: bool = True,
                 starts_in_reasoning: bool = False): ...

    def feed(self, text: str, final: bool = False) -> list[dict]:
        """OpenAI chat-completion deltas."""


class Constraint(Protocol):
    """A token mask following a pattern over a tokenizer's vocabulary; impl.Constraint
    (impl/structured/constraint.py). States are the engine's own, hashable."""

    def __init__(self, pattern: str, tokenizer: Tokenizer): ...

    def start(self) -> Hashable: ...

    def advance(self, state: Hashable, id: int) -> Hashable: ...

    def allowed_tokens(self, state: Hashable) -> Set[int]: ...

    def is_complete(self, state: Hashable) -> bool: ...


# -- the names of a module, per component ---------------------------------------------------------


class TokenizerNames(Protocol):
    """``tokenizer``: encode, decode and the vocabulary against `tokenizers`."""

    Tokenizer: type[Tokenizer]


class DetokenizerNames(Protocol):
    """``detokenizer``: streamed decoding against tokenizers' whole decode and DecodeStream."""

    Tokenizer: type[Tokenizer]
    IncrementalDetokenizer: type[IncrementalDetokenizer]


class StopsNames(Protocol):
    """``stops``: stop strings over streamed text (stops/pipeline streams ids through the detokenizer first)."""

    StopChecker: type[StopChecker]
    Tokenizer: type[Tokenizer]
    IncrementalDetokenizer: type[IncrementalDetokenizer]


class ChatNames(Protocol):
    """``chat``: rendered text against transformers; the ids through ``Tokenizer.apply_chat_template``."""

    def render_chat(self, template: str, messages: list[dict], *, tools: list[dict] | None = None,
                    documents: list[dict] | None = None, add_generation_prompt: bool = False,
                    continue_final_message: bool = False, **variables) -> str:
        """The text transformers' ``apply_chat_template(..., tokenize=False)`` renders, or an exception
        of the same class (module-qualified: ``jinja2.exceptions.TemplateError``)."""

    Tokenizer: type[Tokenizer]


class ToolsNames(Protocol):
    """``tools``: tool calls and reasoning in model output, whole and streamed."""

    OutputParser: type[OutputParser]

    def parse_response(self, text: str, format: str, *, tools: list[dict] | None = None, reasoning: bool = True,
                       starts_in_reasoning: bool = False) -> dict:
        """The whole message."""

    def assemble(self, deltas: list[dict]) -> dict:
        """The message a stream of deltas makes."""

    Tokenizer: type[Tokenizer]
    IncrementalDetokenizer: type[IncrementalDetokenizer]


class StructuredNames(Protocol):
    """``structured``: schema-forced tool calls (the guarantee reads decoded text with ``parse_response``)."""

    def json_schema_to_regex(self, schema: dict) -> str: ...

    def tool_call_pattern(self, tools: list[dict], name: str | None = None, format: str = "hermes") -> str: ...

    Constraint: type[Constraint]
    Tokenizer: type[Tokenizer]

    def parse_response(self, text: str, format: str, *, tools: list[dict] | None = None, reasoning: bool = True,
                       starts_in_reasoning: bool = False) -> dict: ...


COMPONENT_NAMES: dict[str, type] = {
    "tokenizer": TokenizerNames, "detokenizer": DetokenizerNames, "stops": StopsNames, "chat": ChatNames,
    "tools": ToolsNames, "structured": StructuredNames,
}


# -- checking -------------------------------------------------------------------------------------


class ContractViolation(BaseException):
    """An engine's answer breaks the contract: ``Tokenizer.decode returned bytes, expected str``.

    A BaseException, so that no ``except Exception`` of a check (one that reads an engine's failure
    as its answer) takes it for an answer; the checks' registry records it as a divergence."""

    def __init__(self, member: str, what: str, actual: str, expected: str, value: object = None):
        super().__init__(f"{member} {what}{' ' + actual if actual else ''}, expected {expected}")
        self.member, self.what, self.actual, self.expected, self.value = member, what, actual, expected, value

    @classmethod
    def raised(cls, exc: BaseException) -> ContractViolation | None:
        """The violation an engine's exception is when it escapes a check (one the check did not
        expect): ``Tokenizer.vocab_bytes raised KeyError, expected list[bytes]``; None for an exception
        no engine call raised."""
        where = raised_in(exc)
        return None if where is None else cls(where[0], "raised", type(exc).__name__, where[1], str(exc))


class MissingMember(AttributeError, ContractViolation):
    """A member of the contract the engine lacks: ``StopChecker.stop_string is missing, expected str | None``."""

    def __init__(self, member: str, expected: str):
        ContractViolation.__init__(self, member, "is missing", "", expected)


RAISED_IN = "__textbound_raised_in__"  # the attribute an engine's exception carries: (member, expected type)


def raised_in(exc: BaseException) -> tuple[str, str] | None:
    """The member whose call raised ``exc`` and the type it should have returned, when an engine call did."""
    return getattr(exc, RAISED_IN, None)


def _tag(exc: BaseException, member: str, expected: str) -> None:
    if isinstance(exc, (ContractViolation, KeyboardInterrupt)) or raised_in(exc) is not None:
        return  # the innermost engine call is the one that raised
    try:
        setattr(exc, RAISED_IN, (member, expected))
    except (AttributeError, TypeError):  # an exception class that takes no attributes stays untagged
        pass


def type_name(annotation) -> str:
    """An annotation as the contract writes it: ``type_name(int | None) == "int | None"``,
    ``type_name(list[int]) == "list[int]"``, ``type_name(type(None)) == "None"``."""
    if annotation is None or annotation is type(None):
        return "None"
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(map(type_name, arguments))
    if origin is not None:
        return f"{origin.__name__}[{', '.join(map(type_name, arguments))}]"
    return getattr(annotation, "__name__", repr(annotation))


def _is_protocol(annotation) -> bool:
    return isinstance(annotation, type) and getattr(annotation, "_is_protocol", False)


def _elements(annotation) -> tuple[type, object] | None:
    """(container class, element annotation) of ``list[int]``, ``Set[int]``; None for other annotations."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, Set) and len(arguments) == 1:
        return origin, arguments[0]
    return None


def conforms(value, annotation) -> bool:
    """Whether ``value`` is of the annotation's type: ``conforms([1, 2], list[int]) is True``,
    ``conforms((1, 2), list[int]) is False``, ``conforms(True, int) is False`` (a bool is no id)."""
    return type_test(annotation)(value)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@functools.cache
def type_test(annotation) -> Callable[[object], bool]:
    """The test of ``conforms`` for one annotation, made once: the checks ask it at every call."""
    if annotation is Any or annotation is object:
        return lambda value: True
    if annotation is None or annotation is type(None):
        return lambda value: value is None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        arms = tuple(map(type_test, typing.get_args(annotation)))
        return lambda value: any(arm(value) for arm in arms)
    if origin is type:
        return callable
    if _is_protocol(annotation):
        return lambda value: value is not None
    if annotation is int:
        return _is_int
    container = _elements(annotation)
    if container is None:
        return lambda value: isinstance(value, origin or annotation)
    kind, element = container
    each = type_test(element)
    if element is int:  # ids: their types listed at C speed, each one looked at only when one is not int
        return lambda value: isinstance(value, kind) and (set(map(type, value)) <= {int} or all(map(each, value)))
    return lambda value: isinstance(value, kind) and all(map(each, value))


def actual_name(value, annotation) -> str:
    """How a value that does not conform is named: by its type, and where it is the container the
    annotation asks for, by the types of its members that do not conform (one name per kind of
    mistake, whatever the values): ``actual_name((1,), list[int]) == "tuple"``,
    ``actual_name([1, "a", "b"], list[int]) == "list[str]"``."""
    if value is None:
        return "None"
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    arms = typing.get_args(annotation) if union else (annotation,)
    for arm in arms:
        container = _elements(arm)
        if container is not None and isinstance(value, container[0]):
            wrong = sorted({actual_name(item, container[1]) for item in value if not conforms(item, container[1])})
            return f"{type(value).__name__}[{' | '.join(wrong)}]"
    return type(value).__name__


@functools.cache
def _hints(function) -> dict:
    return typing.get_type_hints(function)


class Member:
    """One checked member: its name as messages write it (``Tokenizer.decode``), what it returns (an
    annotation, or for an overloaded method the overloads' signatures and returns, chosen by the
    arguments of each call), and whether it is called or read."""

    def __init__(self, qualified: str, returns, called: bool, overloads: tuple = ()):
        self.qualified, self.returns, self.called, self.overloads = qualified, returns, called, overloads
        self.test = type_test(returns)  # made once: asked at every call
        # what it hands out: an object of a protocol, checked in turn, or for ``type[...]`` a class of one
        self.protocol = _protocol_of(returns) if not overloads else None
        self.is_class = typing.get_origin(returns) is type

    def expected(self, args: tuple, kwargs: dict):
        """The return annotation for a call with these arguments: the first overload they bind to
        whose Literal parameters they match, else the member's own."""
        for signature, returns in self.overloads:  # (none but for apply_chat_template)
            try:
                bound = signature.bind(None, *args, **kwargs)
            except TypeError:
                continue
            bound.apply_defaults()
            literals = {name: typing.get_args(p.annotation) for name, p in signature.parameters.items()
                        if typing.get_origin(p.annotation) is Literal}
            if all(bound.arguments.get(name) in values for name, values in literals.items()):
                return returns
        return self.returns


def _overloads(function) -> tuple:
    """(signature, return annotation) of each ``@overload`` of ``function``. Python 3.10 keeps no
    overloads (typing.get_overloads is 3.11's): there a member is checked against its own, wider, type."""
    found = []
    for variant in getattr(typing, "get_overloads", lambda _: ())(function):
        hints = _hints(variant)
        signature = inspect.signature(variant)
        signature = signature.replace(parameters=[p.replace(annotation=hints.get(p.name, p.annotation))
                                                  for p in signature.parameters.values()])
        found.append((signature, hints["return"]))
    return tuple(found)


@functools.cache
def members_of(protocol: type | None, objects: bool) -> dict[str, Member]:
    """The checked members of an object following ``protocol`` (``objects``), or of the class handing
    such objects out (its classmethods, and its call, which makes one); for no protocol, every public
    name a module may expose, from all components' protocols."""
    if protocol is None:
        return {name: member for names in COMPONENT_NAMES.values() for name, member in members_of(names, False).items()}
    found: dict[str, Member] = {}
    owner = "" if protocol in COMPONENT_NAMES.values() else f"{protocol.__name__}."  # a module's names stand alone
    if not objects and owner:
        found["__call__"] = Member(f"{protocol.__name__}()", protocol, called=True)
    if objects or not owner:  # a class's annotations are its objects' attributes
        found.update((name, Member(owner + name, annotation, called=False))
                     for name, annotation in typing.get_type_hints(protocol).items())
    for name, attribute in vars(protocol).items():
        if name.startswith("_"):
            continue
        if isinstance(attribute, classmethod) and not objects:
            found[name] = Member(owner + name, _hints(attribute.__func__)["return"], called=True)
        elif isinstance(attribute, property) and objects:
            found[name] = Member(owner + name, _hints(attribute.fget)["return"], called=False)
        elif inspect.isfunction(attribute) and (objects or not owner):
            found[name] = Member(owner + name, _hints(attribute)["return"], called=True,
                                 overloads=_overloads(attribute))
    return found


def _protocol_of(annotation) -> type | None:
    """The protocol a value of this annotation follows (``Tokenizer``, or ``type[Tokenizer]`` for its class)."""
    if _is_protocol(annotation):
        return annotation
    if typing.get_origin(annotation) is type:
        return typing.get_args(annotation)[0]
    return None


class _Checked:
    """A stand-in for an engine's module, class or object (its ``_checked_target``): each member of
    the contract is a property of its class (``_stand_in``) that hands out the target's, checked (see
    the module docstring); any other attribute is the target's own. Arguments reach the engine as its
    own objects."""

    __slots__ = ("_checked_target", "_checked_calls")
    _checked_members: dict[str, Member] = {}

    def __init__(self, target):
        self._checked_target = target
        self._checked_calls: dict[str, Callable] = {}  # each method handed out, made once

    def __getattr__(self, name: str):
        member = self._checked_members.get(name)
        if member is not None:  # its property raised AttributeError: raised again, as it was
            return _read(member, name, self)
        return getattr(self._checked_target, name)

    def __call__(self, *args, **kwargs):
        return _call(self._checked_members["__call__"], self._checked_target, *args, **kwargs)

    def __repr__(self) -> str:
        return f"checked({self._checked_target!r})"


@functools.cache
def _stand_in(protocol: type | None, objects: bool) -> type:
    """The class of the stand-ins for ``members_of(protocol, objects)``: a property per member, so that
    reading one is as cheap as a property (a stream reads ``stopped`` after every delta)."""
    members = members_of(protocol, objects)
    namespace = {name: property(functools.partial(_read, member, name)) for name, member in members.items()
                 if name != "__call__"}
    name = "module" if protocol is None else protocol.__name__ + ("" if objects else "Class")
    return type(f"Checked{name}", (_Checked,), {"__slots__": (), "_checked_members": members, **namespace})


def _read(member: Member, name: str, stand_in: _Checked):
    """The target's ``name``: checked (a value), checking (a callable, or a class), or the contract's
    breach (missing; an engine's exception tagged with the member)."""
    call = stand_in._checked_calls.get(name)
    if call is not None:  # a stream calls add per delta
        return call
    target = stand_in._checked_target
    try:
        value = getattr(target, name)
    except AttributeError as exc:
        if exc.name in (None, name):  # lacking the member itself, not failing inside a property
            raise MissingMember(member.qualified, type_name(member.returns)) from None
        _tag(exc, member.qualified, type_name(member.returns))
        raise
    except BaseException as exc:  # a property of the engine's that raised
        _tag(exc, member.qualified, type_name(member.returns))
        raise
    if member.called:
        call = stand_in._checked_calls[name] = functools.partial(_call, member, value)
        return call
    if member.is_class and callable(value):  # a module's class
        return _stand_in(member.protocol, False)(value)
    return _conforming(member, value, member.returns, member.test)


def _conforming(member: Member, value, annotation, test: Callable[[object], bool]):
    """``value``, checked by ``test``, the type_test of ``annotation`` (an object of a protocol comes
    back checked itself)."""
    if not test(value):
        raise ContractViolation(member.qualified, "returned" if member.called else "is",
                                actual_name(value, annotation), type_name(annotation), value)
    return _stand_in(member.protocol, True)(value) if member.protocol is not None else value


def _call(member: Member, function: Callable, *args, **kwargs):
    for arg in args:
        if isinstance(arg, _Checked):
            args = tuple(map(unchecked, args))
            break
    for given in kwargs.values():
        if isinstance(given, _Checked):
            kwargs = {name: unchecked(value) for name, value in kwargs.items()}
            break
    expected = member.expected(args, kwargs) if member.overloads else member.returns
    try:
        value = function(*args, **kwargs)
    except BaseException as exc:
        _tag(exc, member.qualified, type_name(expected))
        raise
    return _conforming(member, value, expected, member.test if expected is member.returns else type_test(expected))


def checked(implementation):
    """The implementation (a module, or textbound.plan.implementation.Implementation) with every public
    name of the contract checked where it is used; the same stand-in when given one."""
    return implementation if isinstance(implementation, _Checked) else _stand_in(None, False)(implementation)


def checked_as(value, protocol: type):
    """An engine's object checked as one following ``protocol`` (``checked_as(tokenizer, Tokenizer)``)."""
    return _stand_in(protocol, True)(unchecked(value))


def unchecked(value):
    """The engine's own object behind a checked stand-in (any other value as it is)."""
    return value._checked_target if isinstance(value, _Checked) else value
