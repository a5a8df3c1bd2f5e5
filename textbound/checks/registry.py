"""The registry of component checks and case builders: the single definition of "diverges".

A leaf module: component modules register here, and nothing here imports them (the package's
``__init__`` imports each component module by name). Each check runs one case on the
implementation under test and on the oracle and returns None or a Divergence. pytest properties
(properties/) and ``textbound check`` both call ``run_check``, so they cannot disagree about what
a divergence is, and either can replay what the other found.

    @check("stops", "stream", minimize="text")      # CHECKS[("stops", "stream")] = fn
    def check_stops_stream(subject, case): ...       # -> None or Divergence

    @cases("stops")                                  # CASE_BUILDERS["library", "stops"] = fn
    def stop_cases(family, budget, seed, subject): ...  # -> Iterator[Case]

A check names the oracle libraries it cannot do without (``needs``: a property whose library is not
installed is not provided, said once a run with the extra that installs it, never passed) and those
it asks only for a second opinion (``consults``: without one the check runs, and a run says once
what is not looked for); ``missing_oracles`` tells them apart before any case.

Case builders are keyed by the source of the implementation's answers (textbound.plan.implementation:
LIBRARY for impl's names, SERVER for a running server's wire): ``@cases("stops", source=SERVER)``; a
check names the sources whose builders make its cases (``@check(..., sources=(SERVER,))``), so that
``properties`` lists what a run of either source checks before any case is built.
"""
from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager, nullcontext
from fnmatch import fnmatchcase
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from textbound.oracles import MissingExtra, lacking
from textbound.oracles.chat_oracle import Raised
from textbound.oracles.tokenizers_oracle import TokenizersOracle

from ..adapters.contract import ContractViolation, checked
from ..families import Family
from ..naming.divergence import COMPONENTS, CONTRACT, SERVER_ERROR, Case, Divergence, first_index
from ..naming.shape import NOTHING_NAMED, Named, Vocabulary, ids_shape, text_shape
from ..plan.budget import Budget
from ..plan.implementation import LIBRARY, SERVER, FamilyUnloadable, Implementation, PropertyNotProvided
from ..server.dialect import NotProvided, ServerError

PIECE_WINDOW = 3  # token pieces shown on each side of where two id lists part
TEXT_WINDOW = 8  # characters shown on each side of where two texts part
VALUE_SHOWN = 200  # characters of the repr of a value breaking the contract kept in its record


@dataclass
class Subject:
    """One family as both sides see it: the implementation's tokenizer and the oracle's. The
    implementation is reached through its contract (textbound.adapters.contract.checked): what its
    names and objects return is checked where the checks call them."""

    family: str
    path: Path
    impl: Implementation | None  # None where only the oracle is needed: generating cases
    cache: dict = field(default_factory=dict, repr=False)  # per-family facts checks compute once
    ready: set = field(default_factory=set, repr=False)  # (component, property) provided and loaded (ready_for)
    # What a per-family fact is computed under: a worker sets its loading phase here, so that the
    # case that first asks for one (naming a divergence loads a copy of tokenizer.json per reading,
    # minutes for a large vocabulary) is not timed out for the family's setup.
    outside_case_clock: Callable[[], ContextManager] = field(default=nullcontext, repr=False)

    def __post_init__(self):
        if self.impl is not None:
            self.impl = checked(self.impl)

    @cached_property
    def oracle(self) -> TokenizersOracle:
        return TokenizersOracle.from_dir(self.path)

    @cached_property
    def tokenizer(self):
        return self.impl.Tokenizer.from_dir(self.path)

    def load_tokenizer(self) -> None:
        """Loads the implementation's tokenizer of the family, once; FamilyUnloadable naming what
        ``Tokenizer.from_dir`` raised (or returned) when it cannot: a run on a family the engine cannot
        load is not set up, where every case would otherwise fail alike."""
        if "tokenizer" in self.__dict__:
            return
        cannot = f"--impl {self.impl.name} cannot load family {self.family} ({self.path})"
        try:
            self.tokenizer
        except KeyboardInterrupt:
            raise
        except ContractViolation as exc:
            raise FamilyUnloadable(f"{cannot}: {exc}") from exc
        except BaseException as exc:  # noqa: BLE001 - an engine may fail in any way: a panic, sys.exit()
            raise FamilyUnloadable(f"{cannot}: Tokenizer.from_dir raised {type(exc).__name__}: {exc}") from exc

    def ready_for(self, component: str, prop: str) -> None:
        """Refuses a property the implementation does not provide (PropertyNotProvided), and loads the
        tokenizer where the property calls it (load_tokenizer); once per property, a run asks per case.
        A subject without an implementation (the oracle's side alone) has nothing to get ready."""
        if self.impl is None or (component, prop) in self.ready:
            return
        if missing := self.impl.missing_for(component, prop):
            raise PropertyNotProvided(f"--impl {self.impl.name} does not provide {component}/{prop} "
                                      f"(missing {', '.join(missing)})")
        if self.impl.loads_families(component, prop):
            self.load_tokenizer()
        self.ready.add((component, prop))

    def cached(self, key: str, compute: Callable[[], object]):
        """A per-family fact, computed once: ``subject.cached("survey", lambda: Survey.of(subject))``."""
        if key not in self.cache:
            with self.outside_case_clock():
                self.cache[key] = compute()
        return self.cache[key]


Check = Callable[[Subject, Case], "Divergence | None"]
CaseBuilder = Callable[[Family, Budget, int, Subject], Iterator[Case]]
CHECKS: dict[tuple[str, str], Check] = {}
# The input field that delta debugging shrinks, per property.
MINIMIZED_FIELD: dict[tuple[str, str], str] = {}
# The properties whose answer depends on the case's input alone, never on the family's files (a
# schema's regex, a tool-call parse): a run checks each such input once, whichever families share it.
FAMILY_INDEPENDENT: set[tuple[str, str]] = set()
CASE_BUILDERS: dict[tuple[str, str], CaseBuilder] = {}  # (source, component) -> builder
# The sources whose case builders make cases of each check: LIBRARY alone unless the check says.
CHECK_SOURCES: dict[tuple[str, str], tuple[str, ...]] = {}
EVERY_SOURCE = (LIBRARY, SERVER)
# The oracle libraries (textbound.oracles.LIBRARIES' names) a property cannot be checked without,
# and those it consults for a second opinion only.
NEEDS: dict[tuple[str, str], tuple[str, ...]] = {}
CONSULTS: dict[tuple[str, str], tuple[str, ...]] = {}
# What an oracle does once per worker process before its cases (starting an engine that takes a
# minute): run while the worker loads a family, outside any case's clock.
WORKER_SETUP: list[Callable[[], object]] = []


def check(component: str, prop: str, minimize: str | None = None, family_independent: bool = False,
          sources: tuple[str, ...] = (LIBRARY,), needs: tuple[str, ...] = (), consults: tuple[str, ...] = ()):
    """Registers a check of ``component``/``prop``; ``minimize`` names the input field to shrink;
    ``family_independent`` says that the check never reads the family (the subject's tokenizers,
    files or name), so one input gets one answer on every family; ``sources`` are the sources whose
    case builders make its cases; ``needs`` and ``consults`` name oracle libraries (see the module
    docstring)."""
    def register(fn: Check) -> Check:
        CHECKS[(component, prop)] = fn
        CHECK_SOURCES[(component, prop)] = sources
        if minimize:
            MINIMIZED_FIELD[(component, prop)] = minimize
        if family_independent:
            FAMILY_INDEPENDENT.add((component, prop))
        NEEDS[(component, prop)], CONSULTS[(component, prop)] = needs, consults
        return fn
    return register


@dataclass(frozen=True)
class MissingOracles:
    """What a property lacks of its oracles' libraries in this installation: ``needed`` (the property
    is not provided) and ``consulted`` (a second opinion not asked), each a MissingExtra or None."""

    needed: MissingExtra | None
    consulted: MissingExtra | None


def missing_oracles(component: str, prop: str) -> MissingOracles:
    """``missing_oracles("structured", "mask").needed`` is None where llguidance and outlines-core
    are installed, else a MissingExtra naming ``textbound[second-oracles]``."""
    key = (component, prop)
    return MissingOracles(lacking(NEEDS.get(key, ())), lacking(CONSULTS.get(key, ())))


def cases(component: str, source: str = LIBRARY):
    """Registers the builder of every case of ``component`` on one family, for implementations of ``source``."""
    def register(fn: CaseBuilder) -> CaseBuilder:
        CASE_BUILDERS[(source, component)] = fn
        return fn
    return register


def checked_components() -> list[str]:
    """The components that have checks, in the order reports list components."""
    return [c for c in COMPONENTS if any(component == c for component, _ in CHECKS)]


def properties(component: str, source: str = LIBRARY) -> list[str]:
    """The properties of ``component`` whose cases the builders of ``source`` make, in the order their
    checks registered: ``properties("stops") == ["stream", "pipeline"]``, ``properties("stops", SERVER) == ["server"]``."""
    return [prop for (c, prop), sources in CHECK_SOURCES.items() if c == component and source in sources]


class UnknownProperty(ValueError):
    """A ``--property`` pattern matches no property of the components checked."""


def selected_properties(patterns: list[str], components: list[str]) -> list[str]:
    """The properties of ``components`` that ``--property`` patterns select, as ``component/property``
    in registry order: each pattern is a glob over that name (``stops/*``, ``chat/ids``, ``*/server*``),
    or over the property alone when it holds no ``/`` (``encode``). A pattern selecting none raises
    UnknownProperty naming the properties there are:
    ``selected_properties(["stops/*"], ["stops"]) == ["stops/pipeline", "stops/server", "stops/stream"]``."""
    names = [f"{component}/{prop}" for component, prop in sorted(CHECKS) if component in components]
    selected: set[str] = set()
    for pattern in patterns:
        matching = {name for name in names if fnmatchcase(name if "/" in pattern else name.split("/")[1], pattern)}
        if not matching:
            raise UnknownProperty(f"--property {pattern}: no property of {', '.join(components)} matches it "
                                  f"(properties: {', '.join(names)})")
        selected |= matching
    return [name for name in names if name in selected]


def case_source(family: Family, component: str, budget: Budget, seed: int, source: str = LIBRARY) -> Iterator[Case]:
    """Every case of ``component`` on ``family`` for ``source``; none for a component that has no builder."""
    build = CASE_BUILDERS.get((source, component))
    if build is None:
        return iter(())
    return build(family, budget, seed, Subject(family.name, family.path, impl=None))


class UnknownCheck(ValueError):
    """A case names a component and property no check has (a replayed case typed by hand)."""


def run_check(subject: Subject, case: Case) -> Divergence | None:
    """The case checked on the subject: None, or the divergence. The implementation breaking its
    contract (textbound.adapters.contract) anywhere in the check, a value of the wrong type, a member
    missing or an exception no check expected, is its divergence of kind ``contract: ...``; a case of
    a property the implementation does not provide (PropertyNotProvided) or of a family it cannot load
    (FamilyUnloadable) is refused, since it cannot be checked at all; a property whose oracle library
    is not installed raises MissingExtra (never a pass)."""
    try:
        fn = CHECKS[(case.component, case.property)]
    except KeyError:
        known = ", ".join(f"{c}/{p}" for c, p in sorted(CHECKS))
        raise UnknownCheck(f"no check {case.component}/{case.property} (known: {known})") from None
    subject.ready_for(case.component, case.property)
    needed = lacking(NEEDS.get((case.component, case.property), ()))  # not missing_oracles: a second opinion is the run's to note
    if needed:
        raise needed
    try:
        return fn(subject, case)
    except ServerError as exc:  # a check lets a misbehaving server through (impl_outcome): recorded, never a crash
        return server_error(case, None, exc)
    except NotProvided as exc:
        return not_provided(case, exc)
    except ContractViolation as exc:
        return contract_divergence(case, exc)
    except BaseException as exc:  # an engine's exception that the check did not expect is its contract's breach
        violation = ContractViolation.raised(exc)
        if violation is None:
            raise  # the harness's (or the oracle's): a harness error, or a replayed case that is not valid
        return contract_divergence(case, violation)


def contract_divergence(case: Case, violation: ContractViolation) -> Divergence:
    """``contract: Tokenizer.apply_chat_template returned list, expected str``: one signature per
    member and pair of types, whatever the case (textbound.naming.divergence.CONTRACT)."""
    return Divergence(case, violation.expected, violation.actual or violation.what, f"{CONTRACT}: {violation}",
                      {"member": violation.member, "value": repr(violation.value)[:VALUE_SHOWN]})


def server_error(case: Case, expected, exc: ServerError) -> Divergence:
    """The divergence of a request the server failed: ``server error: status 500``, with the request."""
    return Divergence(case, expected, str(exc), kind=f"{SERVER_ERROR}: {exc.what}", first_difference={"request": exc.request})


def impl_call(case: Case, expected, call: Callable):
    """Runs the implementation; an exception is a divergence of its own kind, never a crash. A server
    that misbehaved gives "server error: <what>", the request it was sent in first_difference; one
    lacking what the case asks "not provided: <what>" (never a pass)."""
    try:
        return call(), None
    except ServerError as exc:
        return None, server_error(case, expected, exc)
    except NotProvided as exc:
        return None, not_provided(case, exc)
    except (KeyboardInterrupt, ContractViolation):
        raise  # a breach of the contract is no answer to judge: run_check records it
    except BaseException as exc:  # noqa: BLE001 - impl may fail in any way: a Rust engine's panic, sys.exit()
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        return None, Divergence(case, expected, f"{type(exc).__name__}: {exc}",
                                kind=f"raised {type(exc).__name__}", first_difference={"where": where})


def not_provided(case: Case, exc: NotProvided) -> Divergence:
    """A case asking what the server lacks (a property's feature it has, a case's option it has not)."""
    return Divergence(case, None, None, f"not provided: {exc}")


def impl_outcome(call: Callable) -> tuple[object, Raised | None]:
    """oracles.chat_oracle.outcome of impl's side, whose exceptions are compared by class: a server's
    misbehaviour, or its lack of what was asked, is no such answer, so it goes up to run_check."""
    try:
        return call(), None
    except (ServerError, NotProvided, ContractViolation, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - impl may fail in any way (a panic, sys.exit()); its class is compared
        return None, Raised.of(exc)


def oracle_call(call: Callable):
    """The oracle's answer, or the error it raised (tokenizers panics surface as BaseException)."""
    try:
        return call(), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001
        return None, f"{type(exc).__name__}: {exc}"


def text_window(text: str, index: int) -> str:
    """``text`` around ``index``, TEXT_WINDOW characters on each side:
    ``text_window("abcdefghijklmnopqrstuvwxyz", 10) == "cdefghijklmnopqr"``."""
    return text[max(0, index - TEXT_WINDOW): index + TEXT_WINDOW]


def family_vocabulary(subject: Subject) -> Vocabulary:
    """The family's vocabulary (textbound.naming.shape), read once per subject."""
    return subject.cached("vocabulary", lambda: Vocabulary(subject.path))


def text_divergence(case: Case, expected: str, actual: str, named: Named = NOTHING_NAMED) -> Divergence:
    """Where two texts part, the kind naming the shape of their difference, told by ``named``."""
    index = first_index(expected, actual)
    kind = f"text: {text_shape(expected, actual, named)}"
    return Divergence(case, expected, actual, kind, {
        "index": index, "expected_window": text_window(expected, index),
        "actual_window": text_window(actual, index),
    })


def ids_divergence(subject: Subject, case: Case, expected: list[int], actual: list[int], text: str) -> Divergence:
    """Where two id lists part: the index, the text position and a window of token pieces on each side."""
    index = first_index(expected, actual)
    lo, hi = max(0, index - PIECE_WINDOW), index + PIECE_WINDOW + 1
    # An implementation without a vocabulary (a server's /tokenize) is shown in the oracle's pieces.
    pieces = getattr(subject.tokenizer, "id_to_token", subject.oracle.id_to_token)
    impl_pieces = [pieces(i) if isinstance(i, int) else repr(i) for i in actual[lo:hi]]
    # Where in the text the sides part: the length of what the agreed-on prefix decodes to.
    at = len(subject.oracle.decode(expected[:index])) if index else 0
    kind = f"ids: {ids_shape(expected, actual, family_vocabulary(subject))}"
    return Divergence(case, expected, actual, kind, {
        "index": index, "text_index": at, "text_window": text_window(text, at),
        "expected_window": subject.oracle.pieces(expected[lo:hi]), "actual_window": impl_pieces,
    })
