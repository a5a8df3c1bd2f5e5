"""Evidence for root causes (textbound.naming.root_causes): each signature's smallest example re-run
where the implementation is loaded.

For a signature's smallest example (minimized wherever one was):

- the **culprit**: each implementation name the property's check calls (``SUSPECTS``, in that
  order) is swapped for its oracle-backed stand-in (textbound.run.stand_ins); the first whose swap
  makes the check agree is where the divergence comes from. Names are tried from the end of the
  pipeline back to its start, then the middle: a stop checker's stand-in cannot repair text the
  detokenizer got wrong, and the tokenizer's decode is tried before the detokenizer that calls it;
- the **upstream** signature: the example's input put to the check of the culprit's own component
  (``UPSTREAM``: the ids of a ``stops/pipeline`` example streamed through ``detokenizer/stream``;
  a chat request's ids rendered by ``chat/render``, its rendered text encoded by ``tokenizer/encode``):
  the signature it gives there is the same bug;
- the **neighbours**: the other signatures the example gives with one element of its minimized
  field left out (a character of a text, an id of a list), or with a stream's prompt streamed as
  its first ids, where the culprit's swap makes that case agree too: one name's bug seen on a
  nearby input ("\\r\\n" encoded as "\\n" gives ``drops '\\r' at the start``; without its "\\n",
  ``replaces '\\r' by '\\n'``);
- the **mutants** of the catalogue (textbound.mutants) that give the example's actual answer
  exactly, and the implementation's answers on the cases next to it that agree or show the same
  signature, among those replacing the culprit's name (else those of the example's component);
- a **timeline** of a streamed example (textbound.run.timeline).

    >>> evidence = Gatherer(Implementation("textbound.mutants.detokenizer_unfinished_released"),
    ...                     {"gpt2": folder}).evidence(stops_pipeline_record)
    >>> evidence["stops/pipeline/output: replaces symbols by U+FFFD"]
    Evidence(culprit='IncrementalDetokenizer', upstream='detokenizer/stream/shown a byte run otherwise than the
    whole decode', mutants={'detokenizer_unfinished_released': 'an unfinished character released as U+FFFD'})

``gather`` runs it at the end of ``textbound check`` in a process of its own, forked from the run's
(whose implementation is loaded): an implementation that crashes or hangs on a re-run costs the
evidence of one signature (that signature stays a root cause alone), never the report.
"""
from __future__ import annotations

import importlib
import multiprocessing
import resource
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from textbound.mutants import CATALOGUE, Mutant

from ..checks import MINIMIZED_FIELD, Subject, run_check
from ..checks.streaming import StreamInput
from ..naming.divergence import (
    ORACLE_FAILURE,
    SERVER_ERROR,
    Case,
    Divergence,
    is_oracle_disagreement,
    plain_json,
)
from ..naming.root_causes import Evidence, RootCause, root_causes
from ..naming.signatures import signature_groups
from ..plan.implementation import Implementation
from .pool import DEFAULT_CASE_TIMEOUT, MINIMIZE_TIMEOUT_FACTOR
from .stand_ins import OracleTokenizers, swap
from .timeline import timeline

# The names each property's check calls, in the order they are swapped (see the module docstring).
SUSPECTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("tokenizer", "encode"): ("Tokenizer.encode",),
    ("tokenizer", "decode"): ("Tokenizer.decode",),
    ("detokenizer", "stream"): ("Tokenizer.decode", "IncrementalDetokenizer"),
    ("detokenizer", "decode_stream"): ("Tokenizer.decode", "IncrementalDetokenizer"),
    ("stops", "stream"): ("StopChecker",),
    ("stops", "pipeline"): ("StopChecker", "Tokenizer.decode", "IncrementalDetokenizer"),
    ("chat", "render"): ("render_chat",),
    ("chat", "ids"): ("Tokenizer.encode",),
    ("chat", "sanitized_ids"): ("Tokenizer.encode",),
    ("tools", "whole"): ("parse_response",),
    ("tools", "round_trip"): ("parse_response",),
    ("tools", "tokens"): ("Tokenizer.decode", "IncrementalDetokenizer"),
}
# Kinds whose example cannot be re-run to any purpose: the case hung or killed its worker, a server
# failed a request or lacks what the case asks.
NOT_RERUN = ("timed out", "crashed", "out of memory", SERVER_ERROR, "not provided", ORACLE_FAILURE)
MOST_HOPS = 3  # upstream signatures followed from one example (tools/tokens -> detokenizer/stream -> tokenizer/decode)
MOST_NEIGHBOURS = 64  # elements of a minimized example left out one at a time, at most (a longer one is not tried)
# Left out one at a time too where a mutant is tried next to an example: what the case asks for, not
# how it is fed (splits or a prompt moved shift where a second bug of the same object shows).
MUTANT_NEIGHBOUR_FIELDS = ("stops",)


def _always(subject: Subject, case: Case, found: Divergence, there: Divergence) -> bool:
    return True


@dataclass(frozen=True)
class Upstream:
    """Where an example's input goes in the culprit's own check: its property, the culprit that
    sends it there (None: any), the input (None where the example gives none), and whether the
    divergence found there explains the example's (``explains``; the culprit's swap says so where
    there is one)."""

    component: str
    property: str
    culprit: str | None
    derive: Callable[[Subject, Case, Divergence], dict | None]
    explains: Callable[[Subject, Case, Divergence, Divergence], bool] = _always


def _decode_input(subject: Subject, case: Case, found: Divergence) -> dict:
    given = StreamInput.of(case)
    return {"ids": given.prompt_ids + given.ids, "skip_special_tokens": given.skip_special_tokens}


def _pipeline_stream_input(subject: Subject, case: Case, found: Divergence) -> dict:
    return {"ids": case.input["ids"], "splits": case.input.get("splits", []),
            "skip_special_tokens": case.input.get("skip_special_tokens", True), "prompt_ids": []}


def _pipeline_text_input(subject: Subject, case: Case, found: Divergence) -> dict:
    """The text the implementation's own detokenizer gave the stop checker, cut where its deltas were."""
    given = StreamInput.of(case)
    detokenizer = subject.impl.IncrementalDetokenizer(subject.tokenizer, skip_special_tokens=given.skip_special_tokens)
    deltas = [detokenizer.add(chunk) for chunk in given.chunks] + [detokenizer.flush()]
    cuts, length = [], 0
    for delta in deltas[:-1]:
        length += len(delta)
        cuts.append(length)
    return {"text": "".join(deltas), "stops": case.input["stops"], "include_stop": case.input.get("include_stop", False),
            "splits": cuts}


def _token_ids(subject: Subject, case: Case) -> list[int]:
    return subject.oracle.encode(case.input["text"])


def _tokens_stream_input(subject: Subject, case: Case, found: Divergence) -> dict:
    ids = _token_ids(subject, case)
    return {"ids": ids, "splits": list(range(1, len(ids))), "skip_special_tokens": False, "prompt_ids": []}


def _tokens_decode_input(subject: Subject, case: Case, found: Divergence) -> dict:
    return {"ids": _token_ids(subject, case), "skip_special_tokens": False}


def _render_input(subject: Subject, case: Case, found: Divergence) -> dict:
    """The chat request of an ids example as chat/render gets it (the family's special tokens as
    variables, as chat_cases gives them)."""
    from textbound.oracles.chat_oracle import FamilyChatOracle

    specials = FamilyChatOracle.of(subject.path).special_token_variables()
    return {**case.input, "variables": {**specials, **(case.input.get("variables") or {})}}


def _rendered_text_input(subject: Subject, case: Case, found: Divergence) -> dict:
    """The text transformers renders for a chat ids example, as a tokenizer/encode case."""
    from textbound.oracles.chat_oracle import ChatRequest, FamilyChatOracle, frozen_clock

    from ..checks.chat import case_template, chat_template_argument

    request = ChatRequest.of(case.input)
    with frozen_clock():
        text = FamilyChatOracle.of(subject.path).tokenizer.apply_chat_template(
            request.messages, chat_template=chat_template_argument(case_template(subject, case)), tokenize=False,
            **request.arguments())
    return {"text": text, "add_special_tokens": False}


def _same_input(subject: Subject, case: Case, found: Divergence) -> dict:
    return case.input


def _same_kind(subject: Subject, case: Case, found: Divergence, there: Divergence) -> bool:
    return there.kind == found.kind


def _render_explains_ids(subject: Subject, case: Case, found: Divergence, render: Divergence) -> bool:
    """Whether the implementation's render of a request explains its ids (an engine that cannot
    give the text of a tokenized request shows its ids alone): the two are named alike; or its
    rendered text, tokenized by the oracle, is its ids; or the reading of the request the render is
    named by (the family's special tokens among its variables, as the render had them) gives the
    oracle's ids the implementation gave, sanitized or not."""
    from textbound.oracles.chat_oracle import ChatRequest, FamilyChatOracle, frozen_clock, outcome

    from ..checks.chat import TOKENIZER_PROPERTIES, case_template, chat_template_argument, read_otherwise

    if render.kind == found.kind:
        return True
    if not isinstance(found.actual, list):
        return False
    oracle = FamilyChatOracle.of(subject.path)
    if isinstance(render.actual, str) and \
            oracle.tokenizer.encode(render.actual, add_special_tokens=False) == found.actual:
        return True
    template = chat_template_argument(case_template(subject, case))
    sanitize = TOKENIZER_PROPERTIES[case.property]

    def answer(asked: ChatRequest):
        return outcome(lambda: oracle.ids(asked.messages, template, sanitize, **asked.arguments()))
    with frozen_clock():
        return read_otherwise(answer, ChatRequest.of(render.case.input), found.actual, None) == render.kind


UPSTREAM: dict[tuple[str, str], tuple[Upstream, ...]] = {
    ("detokenizer", "stream"): (Upstream("tokenizer", "decode", "Tokenizer.decode", _decode_input),),
    ("detokenizer", "decode_stream"): (Upstream("tokenizer", "decode", "Tokenizer.decode", _decode_input),),
    ("stops", "pipeline"): (Upstream("stops", "stream", "StopChecker", _pipeline_text_input),
                            Upstream("tokenizer", "decode", "Tokenizer.decode", _decode_input),
                            Upstream("detokenizer", "stream", "IncrementalDetokenizer", _pipeline_stream_input)),
    ("chat", "ids"): (Upstream("tokenizer", "encode", "Tokenizer.encode", _rendered_text_input),
                      Upstream("chat", "render", None, _render_input, _render_explains_ids)),
    # The same request unsanitized, named alike: sanitizing may take another way to the same encoder.
    ("chat", "sanitized_ids"): (Upstream("tokenizer", "encode", "Tokenizer.encode", _rendered_text_input),
                                Upstream("chat", "render", None, _render_input, _render_explains_ids),
                                Upstream("chat", "ids", None, _same_input, _same_kind)),
    ("tools", "tokens"): (Upstream("tokenizer", "decode", "Tokenizer.decode", _tokens_decode_input),
                          Upstream("detokenizer", "stream", "IncrementalDetokenizer", _tokens_stream_input)),
}


def neighbour_cases(case: Case, also: tuple[str, ...] = ()) -> Iterator[Case]:
    """The cases next to an example: its minimized field (and the fields ``also`` names) with one
    element left out (a field longer than MOST_NEIGHBOURS is not tried), and a stream's prompt
    streamed as its first ids instead (a bug seen after a prompt may show on the ids alone):
    ``[c.input["text"] for c in neighbour_cases(Case("tokenizer", "encode", "gpt2", {"text": "ab"}))] == ["b", "a"]``."""
    for name in dict.fromkeys((MINIMIZED_FIELD.get((case.component, case.property)), *also)):
        value = case.input.get(name)
        if isinstance(value, (str, list)) and len(value) <= MOST_NEIGHBOURS:
            for index in range(len(value)):
                if not index or value[index] != value[index - 1]:  # else the same case as the element before
                    yield Case(case.component, case.property, case.family,
                               {**case.input, name: value[:index] + value[index + 1:]})
    prompt = case.input.get("prompt_ids")
    if prompt and isinstance(case.input.get("ids"), list):
        splits = [len(prompt), *(len(prompt) + split for split in case.input.get("splits") or [])]
        yield Case(case.component, case.property, case.family,
                   {**case.input, "prompt_ids": [], "ids": prompt + case.input["ids"], "splits": splits})


def recorded_case(record: dict) -> Case:
    """The minimized case of a divergences.jsonl record."""
    return Case(record["component"], record["property"], record["family"], record["minimized_input"])


def divergence_record(divergence: Divergence) -> dict:
    """A divergence as the fields of a divergences.jsonl record that grouping reads (its smallest
    case as the minimized input): ``divergence_record(found)["signature"] == found.signature``."""
    case = divergence.smallest
    return {"signature": divergence.signature, "component": case.component, "property": case.property,
            "family": case.family, "minimized_input": case.input, "expected": plain_json(divergence.expected),
            "actual": plain_json(divergence.actual), "first_difference": dict(divergence.first_difference)}


def replaced_names(mutant: Mutant) -> frozenset[str]:
    """The public names a mutant (or any module with a ``module`` name) gives otherwise than impl; a
    name it lacks is not provided, not replaced: ``replaced_names(BY_NAME["stops_within_delta"]) ==
    {"StopChecker"}``."""
    return _replaced(mutant.module)


@cache
def _replaced(module: str) -> frozenset[str]:
    from textbound import impl
    loaded = importlib.import_module(module)
    return frozenset(name for name in impl.__all__
                     if hasattr(loaded, name) and getattr(loaded, name) is not getattr(impl, name))


def suspected_mutants(component: str, culprit: str | None) -> list[Mutant]:
    """The catalogue mutants that may explain an example: those replacing the culprit's name
    (``Tokenizer`` for ``Tokenizer.decode``), else those of the example's component."""
    if culprit is None:
        return [m for m in CATALOGUE if m.component == component]
    name = culprit.split(".", 1)[0]
    return [m for m in CATALOGUE if name in replaced_names(m)]


class Gatherer:
    """An implementation and its families, loaded once for every example it is asked about; the
    catalogue's mutants load the family files once per tokenizer class."""

    def __init__(self, impl: Implementation, families: dict[str, str]):
        self.impl, self.families = impl, families
        self._subjects: dict[tuple[str, str], Subject] = {}
        self._tokenizers: dict[tuple[type, str], object] = {}
        self._oracles: dict[str, OracleTokenizers] = {}

    def subject(self, family: str, module: str | None = None) -> Subject:
        """The family as the implementation (or the mutant ``module``) sees it; a mutant shares the
        oracle, the per-family facts and, where its Tokenizer is the same class, the loaded tokenizer."""
        key = (family, module or self.impl.name)
        if key not in self._subjects:
            folder = self.families[family]
            if module is None:
                self._subjects[key] = Subject(family, Path(folder), self.impl)
                return self._subjects[key]
            base, impl = self.subject(family), Implementation(module)
            subject = Subject(family, Path(folder), impl, base.cache)
            subject.__dict__["oracle"] = base.oracle
            tokenizer_class = getattr(impl.module, "Tokenizer", None)
            if "tokenizer" in base.__dict__ and tokenizer_class is getattr(self.impl.module, "Tokenizer", None):
                self._tokenizers.setdefault((tokenizer_class, folder), base.tokenizer)
            if tokenizer_class is not None:
                if (tokenizer_class, folder) not in self._tokenizers:
                    self._tokenizers[(tokenizer_class, folder)] = subject.tokenizer
                subject.__dict__["tokenizer"] = self._tokenizers[(tokenizer_class, folder)]
            self._subjects[key] = subject
        return self._subjects[key]

    def oracle_tokenizers(self, family: str) -> OracleTokenizers:
        return self._oracles.setdefault(family, OracleTokenizers(self.families[family]))

    def evidence(self, record: dict, hops: int = MOST_HOPS) -> dict[str, Evidence]:
        """What re-running ``record``'s example shows, for its signature and for each upstream
        signature it leads to (empty where the example no longer diverges as recorded)."""
        case = recorded_case(record)
        if record.get("family") not in self.families or not Path(self.families[case.family]).is_dir():
            return {}
        subject = self.subject(case.family)
        found = run_check(subject, case)
        if found is None or found.signature != record["signature"]:
            return {}
        culprit = self.culprit(subject, case)
        found_upstream = self.upstream(subject, case, found, culprit)
        mutants = [m for m in explaining_mutants(record, self.families, suspected_mutants(case.component, culprit), self)
                   if self.agrees_nearby(subject, m, found)]
        result = {record["signature"]: Evidence(culprit, found_upstream and found_upstream.signature,
                                                {m.name: m.bug for m in mutants},
                                                timeline(subject, found, self.oracle_tokenizers(case.family)),
                                                self.neighbours(subject, found, culprit))}
        if found_upstream is not None and hops > 1:
            result = {**self.evidence(divergence_record(found_upstream), hops - 1), **result}
        return result

    def culprit(self, subject: Subject, case: Case) -> str | None:
        """The first suspected name whose stand-in makes the case agree."""
        for name in SUSPECTS.get((case.component, case.property), ()):
            try:
                swapped = swap(subject, name, self.oracle_tokenizers(case.family))
                if swapped is not None and run_check(swapped, case) is None:
                    return name
            except Exception:  # noqa: BLE001 - a swap the implementation cannot run with tells nothing
                continue
        return None

    def agrees_nearby(self, subject: Subject, mutant: Mutant, found: Divergence) -> bool:
        """Whether ``mutant`` answers as the implementation does on the cases next to ``found``'s
        (``neighbour_cases``, its stop strings left out one at a time too) where the implementation
        agrees with the oracle or shows the same signature (where it shows another, a second bug
        may): one that gives the example's answer by coincidence parts from the implementation there
        (stops_fixed_holdback's fixed hold against a checker holding a stop's prefix in any case:
        "N" with the stops "never occurs" and "\\n{" held alike, "N" with "\\n{" alone not)."""
        theirs = self.subject(found.case.family, mutant.module)
        for near in neighbour_cases(found.case, also=MUTANT_NEIGHBOUR_FIELDS):
            try:
                mine = run_check(subject, near)
                if mine is not None and mine.signature != found.signature:
                    continue
                its = run_check(theirs, near)
            except Exception:  # noqa: BLE001 - a case either side cannot take tells nothing
                continue
            if (mine is None) != (its is None) or (mine is not None and plain_json(mine.actual) != plain_json(its.actual)):
                return False
        return True

    def neighbours(self, subject: Subject, found: Divergence, culprit: str | None) -> tuple[str, ...]:
        """The other signatures the cases next to ``found``'s give (``neighbour_cases``), each where
        the culprit's stand-in makes that case agree (the same name's bug); none without a culprit."""
        swapped = culprit and swap(subject, culprit, self.oracle_tokenizers(found.case.family))
        if not swapped:
            return ()
        seen: list[str] = []
        for near in neighbour_cases(found.case):
            try:
                there = run_check(subject, near)
                if there is not None and there.signature not in (found.signature, *seen) \
                        and not there.is_oracle_disagreement and not there.kind.startswith(NOT_RERUN) \
                        and run_check(swapped, near) is None:
                    seen.append(there.signature)
            except Exception:  # noqa: BLE001 - an input the implementation cannot take tells nothing
                continue
        return tuple(seen)

    def upstream(self, subject: Subject, case: Case, found: Divergence, culprit: str | None) -> Divergence | None:
        """The divergence the case's input gives in the check the culprit sends it to, if any."""
        for upstream in UPSTREAM.get((case.component, case.property), ()):
            if upstream.culprit not in (None, culprit):
                continue
            try:
                given = upstream.derive(subject, case, found)
                there = None if given is None else run_check(
                    subject, Case(upstream.component, upstream.property, case.family, given))
                if there is not None and not there.is_oracle_disagreement and not there.kind.startswith(NOT_RERUN) \
                        and upstream.explains(subject, case, found, there):
                    return there
            except Exception:  # noqa: BLE001 - an input the implementation cannot take tells nothing
                continue
        return None


def explaining_mutants(record: dict, families: dict[str, str], mutants: list[Mutant] | None = None,
                       gatherer: Gatherer | None = None) -> list[Mutant]:
    """The mutants (of the record's component, unless ``mutants`` says which) whose output on the
    record's minimized input is its actual one; none when the family's folder is gone."""
    folder = families.get(record.get("family"))
    if not folder or not Path(folder).is_dir():
        return []
    gatherer = gatherer or _gatherer(tuple(sorted(families.items())))
    case, actual = recorded_case(record), record.get("actual")
    found = []
    for mutant in mutants if mutants is not None else [m for m in CATALOGUE if m.component == record["component"]]:
        try:
            divergence = run_check(gatherer.subject(case.family, mutant.module), case)
        except Exception:  # noqa: BLE001 - a mutant that cannot run this case explains nothing
            continue
        if divergence is not None and not divergence.kind.startswith("raised ") \
                and plain_json(divergence.actual) == actual:
            found.append(mutant)
    return found


@cache
def _gatherer(families: tuple[tuple[str, str], ...]) -> Gatherer:
    """Mutants loaded once for every record triaged (the base implementation is impl)."""
    return Gatherer(Implementation("textbound.impl"), dict(families))


# -- in a process of its own -------------------------------------------------------------------------


def rerun_examples(records: list[dict]) -> list[dict]:
    """The smallest example of each of the implementation's signatures that can be re-run, the
    signatures with the most divergences first."""
    impl_records = [r for r in records if not is_oracle_disagreement(r["signature"])
                    and not r["signature"].split("/", 2)[-1].startswith(NOT_RERUN)]
    return [group.smallest for group in signature_groups(impl_records)]


def _gather_in_child(impl_name: str, families: dict[str, str], examples: list[dict], conn,
                     max_memory_mb: int | None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if max_memory_mb:
        resource.setrlimit(resource.RLIMIT_DATA, (max_memory_mb * 2 ** 20,) * 2)
    gatherer = Gatherer(Implementation(impl_name), families)
    for index, record in enumerate(examples):
        try:
            found = gatherer.evidence(record)
        except Exception:  # noqa: BLE001 - evidence is a help: an example that cannot be re-run has none
            found = {}
        conn.send((index, {signature: evidence.to_json() for signature, evidence in found.items()}))
    conn.close()


def _answers(impl_name: str, families: dict[str, str], examples: list[dict], seconds: float,
             max_memory_mb: int | None) -> Iterator[tuple[int, dict]]:
    """(index, evidence) from a child process, until it ends, dies, or spends ``seconds`` on one example."""
    context = multiprocessing.get_context("fork")
    conn, child = context.Pipe()
    process = context.Process(target=_gather_in_child, args=(impl_name, families, examples, child, max_memory_mb),
                              daemon=True)
    process.start()
    child.close()
    try:
        while conn.poll(seconds):
            try:
                yield conn.recv()
            except (EOFError, OSError):
                return
    finally:
        process.kill()
        process.join()
        conn.close()


def gather(impl_name: str, families: dict[str, str], records: list[dict], seconds: float,
           max_memory_mb: int | None = None) -> dict[str, Evidence]:
    """The evidence of every signature of ``records`` that can be re-run, each example given at most
    ``seconds``; an example the implementation hangs or crashes on is passed over (its signature
    gets none) and a new process takes up the rest."""
    examples = rerun_examples(records)
    found: dict[str, Evidence] = {}
    start = 0
    while start < len(examples):
        answered = start  # the examples before this one have their evidence
        for index, evidence in _answers(impl_name, families, examples[start:], seconds, max_memory_mb):
            answered = start + index + 1
            for signature, data in evidence.items():  # a signature's own example over one led to it
                if signature == examples[answered - 1]["signature"] or signature not in found:
                    found[signature] = Evidence.from_json(data)
        start = answered + 1  # past the example the process ended on, if it ended early
    return found


def find_root_causes(records: list[dict], impl_name: str, families: dict[str, str],
                     seconds: float = DEFAULT_CASE_TIMEOUT * MINIMIZE_TIMEOUT_FACTOR) -> list[RootCause]:
    """The root causes of divergences found on ``impl_name`` (records as divergences.jsonl holds
    them, or ``divergence_record`` of each Divergence; ``families`` maps their names to folders):
    their examples re-run as a run's are, then grouped (naming.root_causes). The one call for
    "which bug is this":

        >>> [c.name for c in find_root_causes([divergence_record(d) for d in found], UNFINISHED, {"gpt2": folder})]
        ['detokenizer_unfinished_released']
    """
    return root_causes(records, gather(impl_name, families, records, seconds))
