"""Cases and divergences: the plain data that checks, the runner, reports and baselines share."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..files import json_type_name, parse_json

COMPONENTS = ("tokenizer", "detokenizer", "stops", "chat", "tools", "structured")
# The kind of a divergence where two references disagree and impl sides with one of them: recorded
# and reported apart, never minimized at length nor counted against impl (nor baselined).
ORACLE_DISAGREEMENT = "oracle disagreement:"
# The kind of a divergence where a server under test failed a request (a timeout, a 500, invalid
# JSON, ...): recorded with the request, never minimized, and counted as a failed request.
SERVER_ERROR = "server error"
# The kind of a case the oracle itself did not answer (it hung or crashed with an implementation that
# answers nothing at once): recorded and reported apart as disagreements are, never against impl.
ORACLE_FAILURE = "oracle failure:"
# The input field naming the stratum a case was built for (the inputs every budget checks in full,
# e.g. "no-break space: U+00A0 between words"): kept as it is when a case is minimized.
STRATUM_FIELD = "stratum"
# How first_difference.minimization begins on a divergence recorded as found, not minimized (a
# worker minimizes the first few of a signature in each chunk: textbound.run.pool).
NOT_MINIMIZED = "not minimized"
REPLACEMENT_CHARACTER = "\ufffd"  # what a decode shows for bytes that are not a character (or not yet)
# What a kind is led by where a counterfactual oracle (the family's tokenizer.json with one flag or
# option read otherwise) gives the engine's answer: one cause for every property it shows in (an
# added token's flag changes encode, decode and id_to_token alike), so its signature names it in
# place of the property.
FILE_READING = "tokenizer.json"
# What a kind is led by where the implementation breaks the contract of its public names
# (textbound.adapters.contract: a value of the wrong type, a member missing, an exception no check
# expected): named by the member and the types, ``contract: Tokenizer.decode returned bytes, expected
# str``, one cause for every property that calls the member, so its signature names it in place of the
# property too.
CONTRACT = "contract"
COMPONENT_WIDE = (FILE_READING, CONTRACT)  # what leads a kind whose signature names it in place of the property
# json.dumps(..., ensure_ascii=False) without building an encoder per call: a run digests every case.
_CASE_ENCODER = json.JSONEncoder(ensure_ascii=False)


def signature_of(component: str, prop: str, kind: str) -> str:
    """The signature of a divergence: ``signature_of("tokenizer", "decode", "text: drops ' ' at the start")
    == "tokenizer/decode/text: drops ' ' at the start"``; a kind led by FILE_READING or CONTRACT stands
    for the component whatever the property: ``signature_of("tokenizer", "decode", "tokenizer.json: skips
    the normalizer") == "tokenizer/tokenizer.json/skips the normalizer"``."""
    lead = next((lead for lead in COMPONENT_WIDE if kind.startswith(f"{lead}: ")), None)
    return f"{component}/{lead}/{kind[len(lead) + 2:]}" if lead else f"{component}/{prop}/{kind}"


def kind_of(signature: str) -> str:
    """The kind ``signature_of`` made ``signature`` of: ``kind_of("tokenizer/tokenizer.json/skips the
    normalizer") == "tokenizer.json: skips the normalizer"``, ``kind_of("stops/stream/missed a stop") ==
    "missed a stop"``."""
    _, prop, kind = signature.split("/", 2)
    return f"{prop}: {kind}" if prop in COMPONENT_WIDE else kind


def is_oracle_disagreement(signature: str) -> bool:
    """Whether a signature (or a bare kind) says nothing about impl: an oracle disagreement, or an
    oracle failure (both reported apart, in the same section):
    ``is_oracle_disagreement("tools/parse/oracle disagreement: hermes: arguments differs") is True``,
    ``is_oracle_disagreement("chat/render/oracle failure: timed out") is True``."""
    # A kind may itself hold "/" ("admits what anyOf/maximum forbids"), so a bare kind is tested whole.
    parts = signature.split("/", 2)
    apart = (ORACLE_DISAGREEMENT, ORACLE_FAILURE)
    return signature.startswith(apart) or (len(parts) == 3 and parts[2].startswith(apart))


def is_server_error(signature: str) -> bool:
    """Whether a signature's kind is a server error: ``is_server_error("stops/server/server error: status 500") is True``."""
    parts = signature.split("/", 2)
    return len(parts) == 3 and parts[2].startswith(SERVER_ERROR)


@dataclass(frozen=True)
class Case:
    """One input for one property of one component, on one family."""

    component: str
    property: str
    family: str
    input: dict

    def to_json(self) -> str:
        """The case as replayed; key order kept, since chat templates see it (``tojson``, ``|items``)
        and builders are deterministic, so the same case always gives the same text."""
        # Fields named, not asdict's: a run digests every case it checks, and asdict deep-copies
        # the input first (half of the parent process's time on a run of the tokenizer).
        # json.dumps(..., ensure_ascii=False) gives the same text.
        return _CASE_ENCODER.encode({"component": self.component, "property": self.property, "family": self.family,
                                     "input": self.input})

    @classmethod
    def from_json(cls, text: str, where: str = "CASE") -> "Case":
        """The case ``to_json`` wrote, or the smallest case of a record of divergences.jsonl (its
        ``minimized_input``); any other text raises ValueError naming what is wrong, and ``where``
        (the replay command's usage names it CASE):
        ``Case.from_json('{"component": "tokenizer"}')`` raises ``$.property: expected a string, found nothing``."""
        data = parse_json(text, where)
        if "minimized_input" in data:  # a record: replayed as its reproduce command replays it
            data = {**data, "input": data["minimized_input"]}
        if data.get("component") not in COMPONENTS:
            raise ValueError(f"unknown component {data.get('component')!r} (known: {', '.join(COMPONENTS)})")
        for name, kind in (("property", str), ("family", str), ("input", dict)):
            if not isinstance(data.get(name), kind):
                found = json_type_name(data[name]) if name in data else "nothing"
                raise ValueError(f"$.{name}: expected {json_type_name(kind())}, found {found}")
        return cls(data["component"], data["property"], data["family"], data["input"])


@dataclass
class Divergence:
    """impl and the oracle disagreed on a case."""

    case: Case
    expected: Any
    actual: Any
    kind: str  # what the first difference is, in words that group root causes together
    first_difference: dict = field(default_factory=dict)
    minimized: Case | None = None

    @property
    def signature(self) -> str:
        return signature_of(self.case.component, self.case.property, self.kind)

    @property
    def is_oracle_disagreement(self) -> bool:
        return is_oracle_disagreement(self.kind)

    @property
    def smallest(self) -> Case:
        return self.minimized or self.case

    def describe(self) -> str:
        return (f"{self.signature} on {self.case.family}: input {json.dumps(self.smallest.input, ensure_ascii=False)}"
                f"\n  expected {self.expected!r}\n  actual   {self.actual!r}"
                f"\n  first difference {json.dumps(self.first_difference, ensure_ascii=False)}")

    def digest(self) -> str:
        """Identifies this exact divergence (signature and smallest input) for de-duplication."""
        key = self.signature + self.smallest.to_json()
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def plain_json(value):
    """A JSON-ready copy of a check's expected/actual value, as a report's JSON holds it (tuples
    become lists, other values their repr): ``plain_json((1, 2)) == [1, 2]``."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        return repr(value)


def first_index(a, b) -> int:
    """The first index where two sequences differ (the shorter length when one is a prefix)."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))
