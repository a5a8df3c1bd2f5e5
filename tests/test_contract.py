"""The contract of an --impl module never cries wolf: each property needs only the names it calls
(PROPERTY_NAMES, derived here by running each property on a module holding only those names), a
value of the wrong type, a missing member or an exception no check expected is the engine's
``contract`` divergence naming the member and both types (one signature, whatever the case), a
family the engine cannot load is one line and exit 2, and a contract divergence replays."""
from __future__ import annotations

import functools
import json
import os
import re
import shlex
import sys
import types
from collections.abc import Set

import pytest

import textbound.impl as impl
from textbound.adapters.contract import (
    ContractViolation,
    MissingMember,
    Tokenizer,
    actual_name,
    checked_as,
    conforms,
    type_name,
)
from textbound.checks import CHECK_SOURCES, CHECKS, Subject, case_source, run_check
from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main
from textbound.families import Family
from textbound.naming.divergence import Case, kind_of, signature_of
from textbound.plan.budget import BUDGETS
from textbound.plan.implementation import (
    PROPERTY_NAMES,
    LIBRARY,
    FamilyUnloadable,
    Implementation,
    PropertyNotProvided,
)

from .families import family_path

FAMILY = "gpt2"
ENGINES = "tests.contract_engines"
# The members of impl.Tokenizer that PROPERTY_NAMES may ask for by name: the optional ones.
OPTIONAL_TOKENIZER_MEMBERS = ("vocab_bytes", "apply_chat_template")


def library_properties() -> list[tuple[str, str]]:
    # A server's own properties (checks/server_output.py, server_shapes.py) run over its wire: no
    # module names of theirs.
    return sorted(key for key in CHECKS if LIBRARY in CHECK_SOURCES[key])


def engine_module(monkeypatch, names, name: str = "engine_under_test") -> Implementation:
    """An --impl module exposing ``names``: a dict of them, or impl's names listed, ``Tokenizer.vocab_bytes``
    naming the Tokenizer with that optional member (its other optional members hidden)."""
    if not isinstance(names, dict):
        members = tuple(n.partition(".")[2] for n in names if n.startswith("Tokenizer."))
        names = {n.partition(".")[0]: tokenizer_with(members) if n.startswith("Tokenizer") else given_impl_tokenizers(n)
                 for n in names}
    module = types.ModuleType(name)
    module.__dict__.update(names)
    monkeypatch.setitem(sys.modules, name, module)
    return Implementation(name)


def given_impl_tokenizers(name: str):
    """impl's ``name``, given impl's own tokenizer where the harness passes tokenizer_with's: what an
    engine does with its own tokenizer is its business; what the harness asks of it, the contract's."""
    def call(*args, **kwargs):
        return getattr(impl, name)(*(getattr(arg, "inner", arg) for arg in args), **kwargs)
    return call


def tokenizer_with(members: tuple[str, ...]) -> type:
    """A Tokenizer class whose objects are impl's with, of its optional members, only ``members``."""
    def from_dir(cls, path):
        restricted = cls()
        restricted.inner = impl.Tokenizer.from_dir(path)
        return restricted

    def other(self, name):
        if name in OPTIONAL_TOKENIZER_MEMBERS:
            raise AttributeError(name)
        return getattr(self.inner, name)

    # the members given are methods of the class, for hasattr(Tokenizer, ...) to find
    given = {member: lambda self, *args, _member=member, **kwargs: getattr(self.inner, _member)(*args, **kwargs)
             for member in members}
    return type("Tokenizer", (), {"from_dir": classmethod(from_dir), "__getattr__": other, **given})


@functools.cache
def sample() -> dict[tuple[str, str], list[Case]]:
    """The first quick case of every library property on FAMILY; of structured's, whose cases hold a
    schema or tools (a pattern of either), the first of each kind, all its few cases read."""
    family = Family(FAMILY, family_path(FAMILY), "embedded")
    found: dict[tuple[str, str], dict[bool, Case]] = {}
    for component in sorted({c for c, _ in library_properties()}):
        wanted = {p for c, p in library_properties() if c == component}
        for case in case_source(family, component, BUDGETS["quick"], 0):
            found.setdefault((component, case.property), {}).setdefault("tools" in case.input, case)
            if component != "structured" and wanted <= {p for c, p in found if c == component}:
                break
    return {key: list(cases.values()) for key, cases in found.items()}


def test_property_names_list_every_library_property():
    assert sorted(PROPERTY_NAMES) == library_properties()


@pytest.mark.parametrize("key", sorted(PROPERTY_NAMES), ids="/".join)
def test_each_property_runs_on_a_module_with_only_its_names_and_calls_each(monkeypatch, key):
    """Completeness: on a module holding only PROPERTY_NAMES[key], the property answers as on impl
    itself. Each name is called: without it, a case of the property meets it missing."""
    samples = sample()
    if key not in samples:  # tools/round_trip's cases are the shared templates' round trips
        assert not os.environ.get("TEXTBOUND_TEMPLATES"), f"no quick case of {'/'.join(key)}"
        pytest.skip(f"no quick case of {'/'.join(key)} without $TEXTBOUND_TEMPLATES")
    names, cases = PROPERTY_NAMES[key], samples[key]
    full = Subject(FAMILY, family_path(FAMILY), Implementation("textbound.impl"))
    only = Subject(FAMILY, family_path(FAMILY), engine_module(monkeypatch, names))
    for case in cases:
        assert getattr(run_check(only, case), "signature", None) == getattr(run_check(full, case), "signature", None)
    met = set()
    for name in names:  # without a member, its owner stays: "Tokenizer.vocab_bytes" taken leaves "Tokenizer"
        rest = [n if n != name else n.partition(".")[0] for n in names if n != name or "." in n]
        lacking = Subject(FAMILY, family_path(FAMILY), engine_module(monkeypatch, rest))
        assert lacking.impl.missing_for(*key) == [name]
        for case in cases:
            try:
                CHECKS[key](lacking, case)  # past run_check, which refuses the case for the name it lacks
            except MissingMember as exc:
                met.add(exc.member)
    assert met == set(names)


def test_a_stops_only_engine_passes_its_stops_and_the_rest_is_not_provided(tmp_path, capsys):
    """The engine team's 122 false failures: stops/pipeline needs a detokenizer the module lacks."""
    code = main(["check", "--impl", f"{ENGINES}.stops_only", "--family", FAMILY, "--component", "stops",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert code == EXIT_OK, (tmp_path / "report.md").read_text()
    assert summary["harness_errors"] == [] and summary["signatures"] == {}
    assert {(p["property"], p["cases"] > 0) for p in summary["properties"]} == {("stream", True), ("interleaved", True)}
    assert summary["skipped"] == [{"family": FAMILY, "component": "stops", "property": "pipeline",
                                   "reason": f"not provided by {ENGINES}.stops_only (missing Tokenizer, "
                                             "IncrementalDetokenizer)"}]
    stops_only = Implementation(f"{ENGINES}.stops_only")
    assert [c for c in ("tokenizer", "detokenizer", "chat", "tools", "structured") if stops_only.provides(c)] == []


def test_a_wrong_return_type_is_a_contract_divergence_that_replays(tmp_path, capsys):
    code = main(["check", "--impl", f"{ENGINES}.finish_returns_none", "--family", FAMILY, "--component", "stops",
                 "--budget", "quick", "--jobs", "1", "--report-dir", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    records = [json.loads(line) for line in (tmp_path / "divergences.jsonl").read_text().splitlines()]
    assert code == EXIT_DIVERGED
    assert summary["harness_errors"] == [] and summary["completed"] is True
    signature = "stops/contract/StopChecker.finish returned None, expected str"
    assert summary["new"] == [signature] and {r["signature"] for r in records} == {signature}
    assert all(p["cases"] > 0 for p in summary["properties"])  # every case checked: nothing abandoned
    smallest = min(records, key=lambda r: len(r["minimized_input"].get("text", "")))
    assert (smallest["expected"], smallest["actual"]) == ("str", "None")
    assert smallest["first_difference"]["member"] == "StopChecker.finish"
    capsys.readouterr()
    assert main(shlex.split(smallest["reproduce"])[1:]) == EXIT_DIVERGED
    assert capsys.readouterr().out.startswith(f"{signature} on {FAMILY}: ")


def test_a_family_the_engine_cannot_load_is_one_line_and_exit_2(tmp_path, capsys):
    report = tmp_path / "report"
    code = main(["check", "--impl", f"{ENGINES}.unloadable", "--family", FAMILY, "--budget", "quick",
                 "--jobs", "2", "--report-dir", str(report)])
    err = capsys.readouterr().err
    assert code == EXIT_SETUP and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"textbound: --impl {ENGINES}.unloadable cannot load family {FAMILY} (")
    assert err.strip().endswith("Tokenizer.from_dir raised RuntimeError: this engine reads no tokenizer.json")
    summary = json.loads((report / "summary.json").read_text())  # the report says why too
    assert summary["completed"] is False and "Tokenizer.from_dir raised RuntimeError" in summary["interrupted"]
    assert summary["counts"] == [] and (report / "divergences.jsonl").read_text() == ""
    case = Case("tokenizer", "encode", FAMILY, {"text": "a", "add_special_tokens": False}).to_json()
    assert main(["replay", "--impl", f"{ENGINES}.unloadable", "--family", FAMILY, case]) == EXIT_SETUP
    assert "Tokenizer.from_dir raised RuntimeError" in capsys.readouterr().err


def test_a_case_of_a_property_the_engine_lacks_is_refused_not_failed():
    subject = Subject(FAMILY, family_path(FAMILY), Implementation(f"{ENGINES}.stops_only"))
    case = Case("stops", "pipeline", FAMILY, {"ids": [1, 2], "stops": ["x"]})
    with pytest.raises(PropertyNotProvided, match="does not provide stops/pipeline .missing Tokenizer, "
                                                   "IncrementalDetokenizer."):
        run_check(subject, case)


def test_from_dir_returning_nothing_is_a_family_not_loaded(monkeypatch):
    class Tokenizer(impl.Tokenizer):
        @classmethod
        def from_dir(cls, path):
            return None
    subject = Subject(FAMILY, family_path(FAMILY), engine_module(monkeypatch, {"Tokenizer": Tokenizer}))
    with pytest.raises(FamilyUnloadable, match=r": Tokenizer.from_dir returned None, expected Tokenizer$"):
        run_check(subject, Case("tokenizer", "encode", FAMILY, {"text": "a"}))


# -- each way of breaking it, as run_check records it ----------------------------------------------

def _tokenizer(**overrides):
    """impl's Tokenizer with some methods replaced."""
    return type("Tokenizer", (impl.Tokenizer,), overrides)


ENCODE = Case("tokenizer", "encode", FAMILY, {"text": "Hello 12", "add_special_tokens": False})
ENCODE_OTHER = Case("tokenizer", "encode", FAMILY, {"text": "über alles", "add_special_tokens": True})
DECODE = Case("tokenizer", "decode", FAMILY, {"ids": [15496, 11], "skip_special_tokens": False})
STREAM = Case("detokenizer", "stream", FAMILY, {"ids": [15496, 11], "splits": [1]})
STOPS = Case("stops", "stream", FAMILY, {"text": "abc", "stops": ["x"], "splits": [1]})


def _dropping_last(self, text, add_special_tokens=True):
    return impl.Tokenizer.encode(self, text, add_special_tokens)[:-1]


def _id_to_token_raising(self, token_id):
    raise KeyError(token_id)


class _StopStringMissing:
    def __init__(self, stops, include_stop=False):
        self._inner = impl.StopChecker(stops, include_stop)

    def add(self, delta):
        return self._inner.add(delta)

    def finish(self):
        return self._inner.finish()

    stopped = property(lambda self: self._inner.stopped)


@pytest.mark.parametrize(("names", "cases", "kind"), [
    ({"Tokenizer": _tokenizer(decode=lambda self, ids, skip_special_tokens=False: b"bytes")}, [DECODE],
     "contract: Tokenizer.decode returned bytes, expected str"),
    ({"Tokenizer": _tokenizer(encode=lambda self, text, add_special_tokens=True: tuple(text))}, [ENCODE, ENCODE_OTHER],
     "contract: Tokenizer.encode returned tuple, expected list[int]"),
    ({"Tokenizer": _tokenizer(encode=lambda self, text, add_special_tokens=True: [1, *text])}, [ENCODE, ENCODE_OTHER],
     "contract: Tokenizer.encode returned list[str], expected list[int]"),
    ({"Tokenizer": impl.Tokenizer, "IncrementalDetokenizer": type(
        "IncrementalDetokenizer", (impl.IncrementalDetokenizer,), {"add": lambda self, ids: None})}, [STREAM],
     "contract: IncrementalDetokenizer.add returned None, expected str"),
    ({"StopChecker": _StopStringMissing}, [STOPS], "contract: StopChecker.stop_string is missing, expected str | None"),
    # raised where no check expects an exception: naming a divergence's token pieces
    ({"Tokenizer": _tokenizer(encode=_dropping_last, id_to_token=_id_to_token_raising)}, [ENCODE],
     "contract: Tokenizer.id_to_token raised KeyError, expected str | None"),
], ids=["decode bytes", "encode tuple", "encode strs", "add None", "member missing", "raised unexpected"])
def test_each_breach_is_a_contract_divergence_of_one_signature(monkeypatch, names, cases, kind):
    subject = Subject(FAMILY, family_path(FAMILY), engine_module(monkeypatch, names))
    found = [run_check(subject, case) for case in cases]
    assert {divergence.kind for divergence in found} == {kind}
    assert len({divergence.signature for divergence in found}) == 1
    assert found[0].signature == f"{cases[0].component}/contract/{kind.removeprefix('contract: ')}"
    assert found[0].first_difference["member"] in kind


def test_a_member_failing_inside_is_the_engine_raising_not_a_member_missing(monkeypatch):
    """An AttributeError a property of the engine's raises about another name is its exception, judged
    where the check expects one (impl_call: "raised ..."), not the member missing."""
    class StopChecker(impl.StopChecker):
        stop_string = property(lambda self: self.no_such_attribute)
    found = run_check(Subject(FAMILY, family_path(FAMILY), engine_module(monkeypatch, {"StopChecker": StopChecker})),
                      STOPS)
    assert found.kind == "raised AttributeError"


def test_text_asked_of_apply_chat_template_as_ids_is_a_contract_divergence(monkeypatch):
    """The engine team's chat: ids asked as text (tokenize=False) came back as ids; the harness fed
    them to a comparison of texts and stopped chat after 8 cases."""
    def apply_chat_template(self, conversation, *args, tokenize=True, return_dict=False, **kwargs):
        ids = impl.Tokenizer.apply_chat_template(self, conversation, *args, tokenize=True, return_dict=False, **kwargs)
        return ids[:-1]  # and the ids are wrong, so that the check asks for the text to name how
    subject = Subject(FAMILY, family_path(FAMILY),
                      engine_module(monkeypatch, {"Tokenizer": _tokenizer(apply_chat_template=apply_chat_template)}))
    case = next(case for case in sample()[("chat", "ids")])
    found = run_check(subject, case)
    assert found.kind == "contract: Tokenizer.apply_chat_template returned list, expected str"
    assert (found.expected, found.actual) == ("str", "list")


# -- the checking itself ---------------------------------------------------------------------------

def test_types_are_named_as_the_contract_writes_them():
    names = [type_name(t) for t in (int | None, list[int], type(None), dict)]
    assert names == ["int | None", "list[int]", "None", "dict"]
    assert conforms([1, 2], list[int]) and not conforms((1, 2), list[int]) and not conforms(True, int)
    assert conforms(frozenset({1, 2}), Set[int]) and not conforms({1, "2"}, Set[int])
    assert actual_name((1,), list[int]) == "tuple" and actual_name([1, "a", True], list[int]) == "list[bool | str]"


def test_apply_chat_template_is_checked_by_the_overload_its_arguments_choose():
    class Engine:
        def apply_chat_template(self, conversation, tokenize=True, **kwargs):
            return "text" if tokenize else [1]
    engine = checked_as(Engine(), Tokenizer)
    for tokenize, expected in ((True, "list[int]"), (False, "str")):
        with pytest.raises(ContractViolation, match=f"returned .*, expected {re.escape(expected)}$"):
            engine.apply_chat_template([], tokenize=tokenize)


def test_an_optional_member_an_engine_lacks_is_absent_to_hasattr():
    engine = checked_as(object(), Tokenizer)
    assert not hasattr(engine, "vocab_bytes")
    with pytest.raises(MissingMember, match="^Tokenizer.vocab_bytes is missing, expected list.bytes.$"):
        engine.vocab_bytes()


def test_a_contract_signature_names_its_member_for_the_whole_component():
    kind = "contract: Tokenizer.decode returned bytes, expected str"
    assert {signature_of("tokenizer", prop, kind) for prop in ("encode", "decode", "vocab")} == \
        {"tokenizer/contract/Tokenizer.decode returned bytes, expected str"}
    assert kind_of("tokenizer/contract/Tokenizer.decode returned bytes, expected str") == kind

