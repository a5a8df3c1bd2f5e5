"""Root causes: the signatures one bug gives, grouped by evidence, each with its smallest example.

A signature names what a property saw; one bug is often seen by several properties (a chat
render's bug in its ids too), by the checks of several components that call the same
implementation name (a detokenizer's bug in ``stops/pipeline``, which streams through it), and by
one shape over several character classes. Grouping such signatures by their words alone would
lump independent bugs together, so they are grouped only by ``Evidence``, gathered where the
implementation is loaded (textbound.run.evidence) by re-running each signature's smallest example:

- ``culprit``: the implementation name whose oracle-backed stand-in makes the example agree (the
  implementation's IncrementalDetokenizer replaced by one over the oracle's decode, say);
- ``upstream``: the signature the same input gives in the culprit's own check (the ids of a
  ``stops/pipeline`` example streamed through ``detokenizer/stream``): the two are one root cause;
- ``neighbours``: the other signatures the example gives with one element left out (or a stream's
  prompt streamed as its first ids), the culprit's stand-in making that case agree too: the same
  name's bug on a nearby input;
- ``mutants``: the catalogue mutants that give the example's actual answer exactly: the signatures
  one mutant reproduces are one root cause, named by it.

Signatures of one culprit whose kinds differ only by character class (``replaces symbols by
U+FFFD``, ``replaces non-ASCII letters by U+FFFD``), only by where in the text (``drops ' ' before
punctuation``, ``drops ' ' inside the text``), or by the class beside a named character (``by ' '``,
``by ' ' and ASCII letters``), or replacing text by U+FFFD whatever else the replacement holds, are
one root cause (``SHAPE_KEYS``) unless two catalogue classes part them. Without evidence each
signature is its own root cause.

    >>> records = [{"signature": "detokenizer/stream/shown a byte run otherwise than the whole decode", ...},
    ...            {"signature": "stops/pipeline/output: replaces symbols by U+FFFD", ...}]
    >>> evidence = {"stops/pipeline/output: replaces symbols by U+FFFD": Evidence(
    ...     culprit="IncrementalDetokenizer", upstream="detokenizer/stream/shown a byte run otherwise than the whole decode")}
    >>> [(cause.name, len(cause.signatures)) for cause in root_causes(records, evidence)]
    [('detokenizer/stream/shown a byte run otherwise than the whole decode', 2)]

``root_causes(records, evidence)`` is the entry point; summary.json holds each cause's
``summary_entry`` under ``root_causes`` and the evidence under ``root_cause_evidence``, so a report,
a merge of shards or a baseline reads them without re-running anything.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field

from .divergence import COMPONENTS, NOT_MINIMIZED, is_oracle_disagreement
from .shape import CATEGORY_CLASSES, NAMED_CHARACTERS
from .signatures import smallest_record

# The words a kind names a character class by (shape.describe), longest first so that
# "non-ASCII letters" is not read as "ASCII letters". A named character alone (' ', U+FFFD, an added
# token) is no class: a bug about spaces is not one about letters; beside a class it is part of
# the description ("U+FFFD and marks").
CLASS_WORDS = sorted({*CATEGORY_CLASSES.values(), "ASCII letters", "non-ASCII letters", "mixed text", "characters"},
                     key=len, reverse=True)
_CLASS = "(?:" + "|".join(map(re.escape, CLASS_WORDS)) + ")"
_NAMED = "(?:" + "|".join(map(re.escape, sorted(NAMED_CHARACTERS.values(), key=len, reverse=True))) + ")"
_CLASSES = re.compile(rf"(?<!\w)(?:{_NAMED} and {_CLASS}|{_CLASS}(?: and (?:{_CLASS}|{_NAMED}))?)(?!\w)")
ANY_CLASS = "[a character class]"


def class_free(signature: str) -> str:
    """A signature with the character classes its kind names put as one placeholder, the key under
    which signatures of one shape over several classes meet:
    ``class_free("stops/pipeline/output: replaces symbols by U+FFFD") == "stops/pipeline/output: replaces
    [a character class] by U+FFFD"``; ``class_free("tokenizer/decode/text: drops ' ' at the start")`` is itself."""
    return _CLASSES.sub(ANY_CLASS, signature)


# Where a kind says an insertion or a deletion happened (shape._where, shape._one_sided): the last
# words of "inserts ..." or "drops ..." kinds.
_PLACE = re.compile(r"(?<=: )((?:inserts|drops) .+?) (?:at the start|at the end|inside the text|after an added token"
                    r"|before [^:]+)$")
ANY_PLACE = "[somewhere]"
_NAMED_BESIDE_CLASS = re.compile(rf"(?<!\w)(?:({_NAMED}) and {_CLASS}|{_CLASS} and ({_NAMED}))(?!\w)")


def place_free(signature: str) -> str:
    """A signature with the place of an insertion or deletion (and its classes) put as placeholders:
    ``place_free("tokenizer/decode/text: drops ' ' before punctuation") == "tokenizer/decode/text: drops ' '
    [somewhere]"``; a kind that names no place is ``class_free`` of itself."""
    return _PLACE.sub(rf"\1 {ANY_PLACE}", class_free(signature))


def named_core(signature: str) -> str:
    """A signature with each description of a named character beside a class put as the character
    alone: ``named_core("stops/pipeline/output: replaces '\\n' by ' ' and ASCII letters") ==
    "stops/pipeline/output: replaces '\\n' by ' '"``."""
    return _NAMED_BESIDE_CLASS.sub(lambda m: m.group(1) or m.group(2), signature)


_BY_REPLACEMENT_CHARACTER = re.compile(r"(?<=: )replaces (?:(?! by ).)+ by (?:(?! by ).)*U\+FFFD(?:(?! by ).)*$")


def replaced_by_u_fffd(signature: str) -> str:
    """A signature whose kind replaces text by U+FFFD (among other characters, the widened
    context of a character split apart) as one placeholder shape:
    ``replaced_by_u_fffd("tokenizer/decode/text: replaces ' ' and marks by ' ' and U+FFFD") ==
    "tokenizer/decode/text: replaces [a character class] by U+FFFD"``."""
    return _BY_REPLACEMENT_CHARACTER.sub(f"replaces {ANY_CLASS} by U+FFFD", signature)


# The keys under which signatures of one culprit and one shape meet, each naming the cause it joins.
SHAPE_KEYS = (class_free, place_free, named_core, replaced_by_u_fffd)


def not_minimized_counts(records: Iterable[dict]) -> list[dict]:
    """How many records of each family × signature were recorded as found, not minimized (later
    examples of a signature a worker had minimized enough of): ``[{"family", "signature", "count"}]``."""
    counts = Counter((r["family"], r["signature"]) for r in records
                     if str((r.get("first_difference") or {}).get("minimization", "")).startswith(NOT_MINIMIZED))
    return [{"family": family, "signature": signature, "count": count}
            for (family, signature), count in sorted(counts.items())]


@dataclass(frozen=True)
class Evidence:
    """What re-running a signature's smallest example showed (see the module docstring); None and
    empty where it showed nothing. ``mutants`` maps each catalogue mutant reproducing the example
    exactly to its bug; ``timeline`` is the example's stream, call by call (records.report renders
    it)."""

    culprit: str | None = None
    upstream: str | None = None
    mutants: dict[str, str] = field(default_factory=dict)
    timeline: dict | None = None
    neighbours: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items() if value}

    @classmethod
    def from_json(cls, data: Mapping) -> "Evidence":
        return cls(data.get("culprit"), data.get("upstream"), dict(data.get("mutants") or {}), data.get("timeline"),
                   tuple(data.get("neighbours") or ()))


@dataclass
class RootCause:
    """One bug as a run saw it: every signature the evidence ties to ``lead`` (the signature the
    others follow: the upstream-most, which may not be among the run's own), named by the
    catalogue mutants that reproduce it, else by its shape."""

    name: str
    lead: str
    signatures: list[str]  # the run's own, most divergences first
    records: list[dict]
    culprit: str | None = None
    mutants: dict[str, str] = field(default_factory=dict)

    @property
    def cases(self) -> int:
        return len(self.records)

    @property
    def families(self) -> Counter:
        return Counter(r["family"] for r in self.records)

    @property
    def smallest(self) -> dict:
        """The lead's smallest example where the run has the lead (it shows the bug most directly),
        else the smallest of all; a minimized one wherever one was."""
        own = [r for r in self.records if r["signature"] == self.lead]
        return smallest_record(own or self.records)

    def summary_entry(self, new: Iterable[str] = ()) -> dict:
        """The cause as summary.json lists it."""
        new = set(new)
        counts = Counter(r["signature"] for r in self.records)
        return {"name": self.name, "lead": self.lead, "new": any(s in new for s in self.signatures),
                "culprit": self.culprit, "explained_by": [{"mutant": m, "bug": b} for m, b in sorted(self.mutants.items())],
                "cases": self.cases, "families": dict(self.families.most_common()),
                "signatures": [{"signature": s, "cases": counts[s], "new": s in new} for s in self.signatures],
                "smallest": self.smallest}


class _Groups:
    """Union-find over signatures."""

    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, item: str) -> str:
        self.parent.setdefault(item, item)
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)

    def members(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for item in list(self.parent):
            found.setdefault(self.find(item), []).append(item)
        return found


def _component_rank(signature: str) -> int:
    component = signature.split("/", 1)[0]
    return COMPONENTS.index(component) if component in COMPONENTS else len(COMPONENTS)


def _parted_by_catalogue(a: Evidence | None, b: Evidence | None) -> bool:
    """Whether two signatures are reproduced by catalogue classes, none of them by the same one."""
    return bool(a and b and a.mutants and b.mutants and not a.mutants.keys() & b.mutants.keys())


def root_causes(records: list[dict], evidence: Mapping[str, Evidence] | None = None) -> list[RootCause]:
    """The root causes of a run's divergences (its oracle disagreements are left out: they are no
    bug of the implementation), the most divergences first. ``evidence`` maps signatures to what
    re-running their smallest examples showed; a signature without any is a root cause alone."""
    evidence = evidence or {}
    by_signature: dict[str, list[dict]] = {}
    for record in records:
        if not is_oracle_disagreement(record["signature"]):
            by_signature.setdefault(record["signature"], []).append(record)
    groups = _Groups()
    for signature in by_signature:
        groups.find(signature)
    followed: set[str] = set()  # signatures another one follows
    for signature in list(by_signature):
        seen = {signature}
        upstream = evidence.get(signature, Evidence()).upstream
        while upstream and upstream not in seen:  # an upstream outside the run leads its followers
            groups.join(signature, upstream)
            followed.add(upstream)
            seen.add(upstream)
            upstream = evidence.get(upstream, Evidence()).upstream
    by_mutant: dict[str, str] = {}
    for signature in by_signature:
        for mutant in evidence.get(signature, Evidence()).mutants:
            groups.join(signature, by_mutant.setdefault(mutant, signature))
    known = list(groups.parent)  # the run's signatures and the upstream ones they follow
    for signature in known:
        for neighbour in evidence.get(signature, Evidence()).neighbours:
            if not _parted_by_catalogue(evidence.get(signature), evidence.get(neighbour)):
                groups.join(neighbour, signature)
    merged_as: dict[str, str] = {}  # a signature joined by its shape, and the shape's key
    for key in SHAPE_KEYS:
        by_shape: dict[tuple[str, str], list[str]] = {}
        for signature in known:
            culprit = evidence.get(signature, Evidence()).culprit
            if culprit:
                by_shape.setdefault((key(signature), culprit), []).append(signature)
        for alike in by_shape.values():
            for other in alike[1:]:
                if not _parted_by_catalogue(evidence.get(alike[0]), evidence.get(other)):
                    groups.join(other, alike[0])
                    for joined in (alike[0], other):
                        merged_as.setdefault(joined, key(joined))
    causes = [_cause(members, by_signature, evidence, followed, merged_as)
              for members in groups.members().values() if any(m in by_signature for m in members)]
    return sorted(causes, key=lambda cause: (-cause.cases, cause.name))


def _cause(members: list[str], by_signature: dict[str, list[dict]], evidence: Mapping[str, Evidence],
           followed: set[str], merged_as: Mapping[str, str]) -> RootCause:
    def own(signature: str) -> Evidence:
        return evidence.get(signature, Evidence())

    def follows(signature: str) -> bool:
        return own(signature).upstream in members and own(signature).upstream != signature

    lead = min(members, key=lambda s: (follows(s), s not in followed, _component_rank(s),
                                       -len(by_signature.get(s, [])), s))
    present = sorted((s for s in members if s in by_signature), key=lambda s: (-len(by_signature[s]), s))
    mutants = _naming_mutants(own(lead).mutants, [own(s).mutants for s in present])
    shape = merged_as.get(lead, lead)
    return RootCause(" or ".join(sorted(mutants)) or shape, lead, present,
                     [r for s in present for r in by_signature[s]], own(lead).culprit or next(
                         (own(s).culprit for s in present if own(s).culprit), None), mutants)


def _naming_mutants(lead: Mapping[str, str], present: list[Mapping[str, str]]) -> dict[str, str]:
    """The catalogue mutants a cause is named by: those reproducing its lead's example (the fewest
    that also reproduce the other examples they can), else those reproducing every example of the
    run's signatures; none else, for a mutant that reproduces one follower's example is not the
    bug of the rest: ``_naming_mutants({}, [{"a": "bug a"}, {}]) == {}``."""
    if lead:
        common = set(lead).intersection(*(set(m) for m in present if m))
        return {name: bug for name, bug in lead.items() if name in common} or dict(lead)
    common = set.intersection(*(set(m) for m in present)) if present and all(present) else set()
    return {name: bug for name, bug in present[0].items() if name in common} if common else {}


def evidence_of(summary: Mapping) -> dict[str, Evidence]:
    """The evidence a summary.json holds (none for a report written before root causes)."""
    return {signature: Evidence.from_json(data) for signature, data in (summary.get("root_cause_evidence") or {}).items()}


def summary_root_causes(summary: Mapping, records: list[dict]) -> list[dict]:
    """The root causes a summary.json lists, or, for one written before them (or by ``compare``),
    one per signature of its records."""
    if "root_causes" in summary:
        return summary["root_causes"]
    return [cause.summary_entry(summary.get("new", ())) for cause in root_causes(records)]


def cause_by_signature(causes: Iterable[RootCause]) -> dict[str, RootCause]:
    """Each signature's root cause: ``cause_by_signature(causes)["stops/pipeline/missed a stop"].name``."""
    return {signature: cause for cause in causes for signature in cause.signatures}
