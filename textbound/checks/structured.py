"""Checks of the ``structured`` component: impl's schema regexes and token masks against jsonschema,
outlines-core and llguidance (oracles/structured_oracles.py).

- structured/sound: every string drawn from impl's regex (``regex_samples.pattern_texts``, a seeded walk
  of its syntax tree) is JSON valid for the schema.
- structured/complete: every json.dumps form of every instance drawn (``instance_samples``) fullmatches it.
- structured/differential: impl's language against outlines-core's and llguidance's on the same
  schema, string by string (dumps forms of instances, strings of outlines-core's regex). A text impl
  wrongly admits or rejects is recorded as the sound or complete case it is, so that one bug gives
  one signature whichever check drew the text; differential's own kinds are the oracles'.
- structured/mask: impl's Constraint against outlines-core's Index and llguidance's matcher for
  impl's own pattern on the family's vocabulary, after the same token prefix.
- structured/guarantee: decoding with seeded random logits masked by the Constraint for a forced
  tool call ends in text that parse_response reads as a call of the right tool, valid arguments.
- structured/errors: an unknown tool name and an unsupported keyword raise ValueError naming them.
differential and mask need outlines-core and llguidance (textbound[second-oracles]): without them
a run reports both not provided (checks.missing_oracles); sound, complete, guarantee and errors
need only jsonschema.
mask and guarantee accept impl's documented refusal of a vocabulary (a ValueError building the
Constraint) only where the oracle confirms it: the family's decoder rewrites text between tokens,
or its tokens cannot spell the text every match begins with; a refusal elsewhere is a divergence.
Every check also fails when impl mutates the schema it was given.

Oracle disagreements. Where impl is right (judged by jsonschema, impl's whitespace policy and a
``regex`` partial match of impl's own pattern) and an oracle is not, the divergence's kind starts
with ``ORACLE_DISAGREEMENT``: it is the oracle's bug or a documented difference of policy (its
kind says which), recorded apart from impl's divergences.
"""
from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import MutableSet, Set
from functools import lru_cache

import regex

from textbound.oracles.structured_oracles import (
    DUMPS_SETTINGS,
    OutlinesMask,
    TokenVocabulary,
    broken_keyword,
    dumps_forms,
    failing_keywords,
    regex_masks,
    schema_acceptors,
    schema_errors,
)
from textbound.properties.instance_samples import sample_instances
from textbound.properties.regex_samples import pattern_texts
from textbound.properties.schemas import in_key_policy

from ..adapters.contract import ContractViolation
from ..naming.divergence import ORACLE_DISAGREEMENT, Case, Divergence
from .registry import Subject, check, impl_call, oracle_call

# A decoded token ending in the middle of a character is completed with these continuation bytes
# to ask the regex referee whether some character could follow.
CONTINUATION_PROBES = (0x80, 0x9F, 0xA0, 0xBF)
# Bytes that close a string, a container or a value: a sampler preferring tokens with one ends runs.
CLOSING_BYTES = frozenset(b'"}],')
DEFAULT_EXAMPLES = 20
MATCH_SECONDS = 2.0
ORACLE_TEXT_BYTES = 2000  # longest random member of an oracle's language tried
WALK_TOKENS = 64
# outlines-core's Index can take seconds per pattern on a large vocabulary: cases name their oracles.
SPELLED_TEXTS = 16  # texts spelled token by token before a refused vocabulary counts as able to spell the pattern
REWRITE_PROBES = 200  # token triples decoded by the oracle to see whether its decoder rewrites text
# The token-level oracles (their libraries' names: the second-oracles extra), compared step by step
# along a masked random walk when no instance text fits the pattern.
MASK_ORACLES = ("llguidance", "outlines-core")


def with_input(case: Case, **fields) -> Case:
    """The case with ``fields`` added: what a replay needs to see the same failure at once."""
    return Case(case.component, case.property, case.family, {**case.input, **fields})


def _after(failure: Divergence, prefix: list[int]) -> Divergence:
    """impl's failure on a case, given the token prefix it came after (built only when one does)."""
    failure.case = with_input(failure.case, prefix=prefix)
    return failure


def _unchanged(case: Case, given_value, before: str, what: str) -> Divergence | None:
    after = json.dumps(given_value, ensure_ascii=False)
    if after != before:
        return Divergence(case, before, after, f"mutated the {what} it was given")
    return None


def impl_pattern(subject: Subject, case: Case) -> tuple[str | None, Divergence | None]:
    """impl's pattern for the case's schema, or for its tool call ("tools", "name", "format")."""
    if "tools" in case.input:
        given_value, what = copy.deepcopy(case.input["tools"]), "tools"
        build = lambda: subject.impl.tool_call_pattern(given_value, name=case.input.get("name"),
                                                       format=case.input.get("format", "hermes"))
    else:
        given_value, what = copy.deepcopy(case.input["schema"]), "schema"
        build = lambda: subject.impl.json_schema_to_regex(given_value)
    before = json.dumps(given_value, ensure_ascii=False)
    pattern, failure = impl_call(case, "a pattern", build)
    if failure:
        return None, failure
    mutated = _unchanged(case, given_value, before, what)
    if mutated:
        return None, mutated
    try:
        re.compile(pattern)
    except (re.error, TypeError) as exc:
        return None, Divergence(case, "a pattern Python's re compiles", repr(pattern), "pattern does not compile",
                                {"error": str(exc)})
    return pattern, None


class SlowMatch(Exception):
    """Matching impl's pattern took longer than MATCH_SECONDS: catastrophic backtracking."""


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> regex.Pattern:
    """``pattern`` compiled by ``regex``, kept: ``regex``'s own cache looks a pattern up at a cost
    that grows with its length, for every text matched."""
    return regex.compile(pattern)


def matches(pattern: str, text: str) -> bool:
    """``re.fullmatch`` semantics, through ``regex`` for its timeout: a pattern that backtracks for
    seconds on one text would hang every caller that uses it as documented."""
    try:
        return _compiled(pattern).fullmatch(text, timeout=MATCH_SECONDS) is not None
    except TimeoutError:
        raise SlowMatch(text) from None


def slow_match(case: Case, pattern: str, text: str) -> Divergence:
    return Divergence(with_input(case, text=text), f"a match decided within {MATCH_SECONDS:g} s", "still matching",
                      "matching the pattern backtracks for seconds", {"pattern_length": len(pattern)})


def _examples(case: Case) -> int:
    return case.input.get("examples", DEFAULT_EXAMPLES)


def _setting_name(text: str, instance) -> str:
    """Which json.dumps setting wrote ``text``: "separators (',', ':'), ensure_ascii=False"."""
    for (separators, ensure_ascii), form in zip(DUMPS_SETTINGS, dumps_forms(instance)):
        if form == text:
            return f"separators {separators!r}, ensure_ascii={ensure_ascii}"
    return "not a json.dumps form"


def _canonical(schema: dict, text: str, instance) -> bool:
    """Whether impl's policy admits ``text``: json.dumps output, declared keys in schema order."""
    return text in dumps_forms(instance) and in_key_policy(schema, instance)


def _has_float(value) -> bool:
    if isinstance(value, dict):
        return any(map(_has_float, value.values()))
    if isinstance(value, list):
        return any(map(_has_float, value))
    return isinstance(value, float)


def _json(text: str):
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, str(exc)


# -- sound and complete ----------------------------------------------------------------------------

def _admitted_invalid(case: Case, schema: dict, pattern: str, text: str) -> Divergence | None:
    """A text the pattern admits that is not JSON valid for the schema, as a structured/sound case
    (whichever check drew the text, so that one bug is told once), or None."""
    instance, error = _json(text)
    found = Case(case.component, "sound", case.family, {**case.input, "text": text})
    if error:
        return Divergence(found, "JSON", text, "admits text that is not JSON", {"error": error})
    errors = schema_errors(schema, instance)
    if errors:
        return Divergence(found, "an instance valid for the schema", text,
                          f"admits an instance breaking {broken_keyword(schema, instance)}",
                          {"errors": errors[:3], "pattern": pattern})
    return None


def _rejected_dumps(case: Case, pattern: str, text: str, instance) -> Divergence:
    """json.dumps output of a valid instance the pattern rejects, as a structured/complete case
    (whichever check drew the text)."""
    found = Case(case.component, "complete", case.family, {**case.input, "text": text})
    return Divergence(found, "a match", "no match", f"rejects json.dumps output ({_setting_name(text, instance)})",
                      {"pattern": pattern})


@check("structured", "sound", minimize="text", family_independent=True)
def check_sound(subject: Subject, case: Case) -> Divergence | None:
    schema = case.input["schema"]
    pattern, failure = impl_pattern(subject, case)
    if failure:
        return failure

    def probe(text: str) -> Divergence | None:
        try:
            if not matches(pattern, text):
                return None  # a shrunk or replayed text the pattern no longer admits says nothing
        except SlowMatch:
            return slow_match(case, pattern, text)
        return _admitted_invalid(case, schema, pattern, text)

    if "text" in case.input:
        return probe(case.input["text"])
    texts = pattern_texts(pattern, random.Random(case.input.get("seed", 0)), _examples(case))
    return next(filter(None, map(probe, texts)), None)


@check("structured", "complete", minimize="text", family_independent=True)
def check_complete(subject: Subject, case: Case) -> Divergence | None:
    schema = case.input["schema"]
    pattern, failure = impl_pattern(subject, case)
    if failure:
        return failure

    def probe_text(text: str) -> Divergence | None:
        instance, error = _json(text)
        if error or schema_errors(schema, instance) or not _canonical(schema, text, instance):
            return None  # only json.dumps output of a valid instance, keys in schema order, must match
        try:
            if matches(pattern, text):
                return None
        except SlowMatch:
            return slow_match(case, pattern, text)
        return _rejected_dumps(case, pattern, text, instance)

    if "text" in case.input:
        return probe_text(case.input["text"])

    def probe(instance) -> Divergence | None:
        return next(filter(None, map(probe_text, dumps_forms(instance))), None)
    drawn = sample_instances(schema, random.Random(case.input.get("seed", 0)), _examples(case))
    return next(filter(None, map(probe, drawn)), None)


# -- differential ---------------------------------------------------------------------------------

@lru_cache(maxsize=64)
def _acceptors(schema_json: str) -> dict:
    """Each oracle's whole-string view of a schema (or the error it gave), built once per process:
    they do not depend on the family, and outlines-core takes seconds to build one."""
    schema = json.loads(schema_json)
    return {name: oracle_call(build) for name, build in schema_acceptors(schema).items()}


def _differential_verdict(case: Case, schema: dict, pattern: str, acceptors: dict, text: str) -> Divergence | None:
    """Who is wrong about ``text``: impl (a divergence), an oracle (a disagreement), or nobody."""
    instance, error = _json(text)
    valid = error is None and not schema_errors(schema, instance)
    canonical = valid and _canonical(schema, text, instance)
    try:
        impl_accepts = matches(pattern, text)
    except SlowMatch:
        return slow_match(case, pattern, text)
    if impl_accepts and not valid:
        return _admitted_invalid(case, schema, pattern, text)
    if canonical and not impl_accepts:
        return _rejected_dumps(case, pattern, text, instance)
    found = with_input(case, text=text)
    for name, acceptor in acceptors.items():
        accepts = acceptor.accepts(text)
        if accepts and not valid:
            broken = "/".join(failing_keywords(schema, instance)) if error is None else "JSON syntax"
            return Divergence(found, "reject", "accept", f"{ORACLE_DISAGREEMENT} {name} admits what {broken} forbids",
                              {"oracle": name})
        if canonical and not accepts:
            return Divergence(found, "accept", "reject",
                              f"{ORACLE_DISAGREEMENT} {name} rejects {_policy(text, instance, acceptor)}", {"oracle": name})
    return None


def _policy(text: str, instance, acceptor) -> str:
    """The documented policy a valid json.dumps text breaks in an oracle, or "valid json.dumps output"."""
    forms = dumps_forms(instance)
    if any(acceptor.accepts(form) for form in forms):
        return f"json.dumps output ({_setting_name(text, instance)})"  # whitespace or escaping policy
    if re.search(r"\\u[0-9a-fA-F]{4}", text) or re.search(r"[\x7f-\x9f\u2028\u2029]", text):
        return "strings with these characters or escapes"
    if _has_float(instance):
        return "this number format"
    return "valid json.dumps output"


@check("structured", "differential", minimize="text", family_independent=True, needs=MASK_ORACLES)
def check_differential(subject: Subject, case: Case) -> Divergence | None:
    schema = case.input["schema"]
    pattern, failure = impl_pattern(subject, case)
    if failure:
        return failure
    built = _acceptors(json.dumps(schema, sort_keys=True))
    acceptors = {name: acceptor for name, (acceptor, error) in built.items() if error is None}
    disagreements = [Divergence(case, "a compiled schema", error, f"{ORACLE_DISAGREEMENT} {name} cannot compile")
                     for name, (_, error) in built.items() if error]
    if "text" in case.input:
        return _differential_verdict(case, schema, pattern, acceptors, case.input["text"])

    def probe(text: str) -> Divergence | None:
        found = _differential_verdict(case, schema, pattern, acceptors, text)
        if found is not None and found.is_oracle_disagreement:
            disagreements.append(found)  # kept aside: an impl divergence on a later text comes first
            return None
        return found

    rng = random.Random(case.input.get("seed", 0))
    texts = [rng.choice(dumps_forms(instance)) for instance in sample_instances(schema, rng, _examples(case))]
    found = next(filter(None, map(probe, texts)), None)
    # Strings of outlines-core's language, drawn by walking its automaton (not its regex: Python's
    # backtracking takes minutes on its email pattern), may be strings impl wrongly admits or rejects.
    walker = acceptors.get(OutlinesMask.name)
    for _ in range(_examples(case) if walker and found is None else 0):
        text = walker.random_member(rng, ORACLE_TEXT_BYTES)
        found = probe(text) if text is not None else None
        if found:
            break
    return found or (min(disagreements, key=lambda d: len(d.case.input.get("text", ""))) if disagreements else None)


# -- token masks ----------------------------------------------------------------------------------

def vocabulary(subject: Subject) -> TokenVocabulary:
    """The family's vocabulary as both token-level oracles see it: impl's bytes, the oracle's specials."""
    return subject.cached("structured:vocabulary", lambda: TokenVocabulary(
        tuple(subject.tokenizer.vocab_bytes()), frozenset(subject.oracle.special_ids), subject.oracle.encode))


def constraint(subject: Subject, pattern: str):
    """impl's Constraint for ``pattern`` over the family's vocabulary, built once per family."""
    return subject.cached(f"structured:constraint:{pattern}", lambda: subject.impl.Constraint(pattern, subject.tokenizer))


def built_constraint(subject: Subject, case: Case, pattern: str):
    """(impl's Constraint, None), or (None, a divergence) when building it fails; (None, None) when
    impl refuses the vocabulary with a ValueError and the oracle confirms no token mask over it can
    follow the pattern (impl's documented policy: the refusal is the right answer, checked here)."""
    built, failure = impl_call(case, "a Constraint", lambda: constraint(subject, pattern))
    if failure is None or failure.kind != "raised ValueError":
        return built, failure
    reason = unsupported_vocabulary(subject, pattern)
    if reason is None:
        return None, Divergence(case, "a Constraint", failure.actual, "refuses a vocabulary the oracle decodes "
                                "token by token", {"where": failure.first_difference.get("where")})
    return None, None


def unsupported_vocabulary(subject: Subject, pattern: str) -> str | None:
    """Why, by the oracle, no token mask over the family's vocabulary can follow ``pattern``: its
    decoder rewrites text between tokens (a sampled triple decodes to other text than its first
    token's and the others' bytes), or no text token can begin a match. None when neither holds."""
    vocab = vocabulary(subject)
    rewritten = subject.cached("structured:rewritten", lambda: _rewritten_by_oracle(subject, vocab))
    if rewritten:
        return rewritten
    if _unspellable_start(pattern, vocab):
        return "the tokens cannot spell the text every match begins with"
    return None


def _unspellable_start(pattern: str, vocab: TokenVocabulary) -> bool:
    """True when the texts that tokens spell one after another, staying on the pattern (``viable``
    as the referee), run out: no token sequence gets past some text every match begins with.
    False as soon as more than SPELLED_TEXTS texts are spelled (the pattern branches: no proof)."""
    spelled, pending = {b""}, [b""]
    while pending:
        text = pending.pop()
        for token_id in sorted(vocab.text_ids):
            longer = text + vocab.token_bytes[token_id]
            if longer not in spelled and viable(pattern, longer):
                if len(spelled) > SPELLED_TEXTS:
                    return False
                spelled.add(longer)
                pending.append(longer)
    return True


def _rewritten_by_oracle(subject: Subject, vocab: TokenVocabulary) -> str | None:
    rng = random.Random(0)
    whole = [i for i in sorted(vocab.text_ids) if _utf8(vocab.token_bytes[i])]
    for _ in range(REWRITE_PROBES if whole else 0):
        ids = [rng.choice(whole) for _ in range(3)]
        decoded = subject.oracle.decode(ids)
        expected = subject.oracle.decode(ids[:1]) + b"".join(vocab.token_bytes[i] for i in ids[1:]).decode()
        if decoded != expected:
            return f"ids {ids} decode to {decoded!r}, not {expected!r}"
    return None


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def oracle_masks(subject: Subject, pattern: str, names: tuple[str, ...]) -> dict:
    """The named token-level oracles' masks for ``pattern`` (or the error each gave), built once per family."""
    def build() -> dict:
        return {name: oracle_call(make) for name, make in regex_masks(pattern, vocabulary(subject), names).items()}
    return subject.cached(f"structured:oracle-masks:{names}:{pattern}", build)


def viable(pattern: str, data: bytes) -> bool | None:
    """Whether some match of ``pattern`` starts with ``data`` (``regex`` partial matching); None when
    ``data`` is not UTF-8 even allowing a character cut at its end."""
    for cut in range(4):
        head, tail = data[:len(data) - cut], data[len(data) - cut:]
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            return _viable_cut(pattern, text, tail) if tail else _compiled(pattern).fullmatch(
                text, partial=True, timeout=MATCH_SECONDS) is not None
        except TimeoutError:
            return None
    return None


def _viable_cut(pattern: str, text: str, tail: bytes) -> bool | None:
    lead = tail[0]
    width = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else None
    if width is None or width <= len(tail):
        return None
    missing = width - len(tail)
    for probes in _probe_bytes(missing):
        try:
            char = (tail + bytes(probes)).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if _compiled(pattern).fullmatch(text + char, partial=True, timeout=MATCH_SECONDS):
            return True
    return False


def _probe_bytes(count: int) -> list[tuple[int, ...]]:
    combos: list[tuple[int, ...]] = [()]
    for _ in range(count):
        combos = [combo + (byte,) for combo in combos for byte in CONTINUATION_PROBES]
    return combos


class FrozenIds:
    """The id sets a Constraint hands out as frozensets, whole and cut to ``text_ids``, converted once
    per read-only set object: impl keeps one per state, and a walk inside a string meets the same
    state at every step. A mutable set is converted every time (it may change between steps).

        >>> frozen = FrozenIds(frozenset({1, 2}))
        >>> frozen.of(frozenset({2, 7}))
        (frozenset({2, 7}), frozenset({2}))
    """

    def __init__(self, text_ids: frozenset[int]):
        self.text_ids = text_ids
        self._known: dict[int, tuple[object, frozenset[int], frozenset[int]]] = {}

    def of(self, ids) -> tuple[frozenset[int], frozenset[int]]:
        if isinstance(ids, MutableSet) or not isinstance(ids, Set):
            whole = frozenset(ids)
            return whole, self.text_only(whole)
        known = self._known.get(id(ids))
        if known is None or known[0] is not ids:  # the object is kept, so its id is not reused meanwhile
            whole = frozenset(ids)
            known = self._known[id(ids)] = (ids, whole, self.text_only(whole))
        return known[1], known[2]

    def text_only(self, ids: frozenset[int]) -> frozenset[int]:
        """``ids & text_ids``, without building a copy when every id is text (the usual case)."""
        return ids if ids <= self.text_ids else ids & self.text_ids


def _mask_difference(case: Case, pattern: str, vocab: TokenVocabulary, prefix: list[int], text: bytes,
                     impl_allowed: frozenset[int], name: str, oracle_allowed: frozenset[int]) -> Divergence | None:
    """The first token impl and oracle ``name`` disagree on, judged by the regex referee."""
    for token_id in sorted(impl_allowed ^ oracle_allowed):
        verdict = viable(pattern, text + vocab.token_bytes[token_id])
        impl_says = token_id in impl_allowed
        if verdict is None or verdict == impl_says:
            if verdict is None and token_id in oracle_allowed:
                continue  # neither the referee nor impl calls it text: nothing to judge
            wrong, kind = name, (f"{ORACLE_DISAGREEMENT} {name} allows a token the pattern forbids" if not impl_says
                                 else f"{ORACLE_DISAGREEMENT} {name} forbids a token the pattern allows")
        else:
            wrong, kind = "impl", ("Constraint allows a token the pattern forbids" if impl_says
                                   else "Constraint forbids a token the pattern allows")
        return Divergence(with_input(case, prefix=prefix), {"oracle": name, "allows": token_id in oracle_allowed},
                          {"impl allows": impl_says}, kind, {
                              "token": token_id, "token_bytes": repr(vocab.token_bytes[token_id]),
                              "text_so_far": text.decode("utf-8", "replace"), "wrong": wrong,
                              "impl_allowed": len(impl_allowed), "oracle_allowed": len(oracle_allowed)})
    return None


def _walk_ids(subject: Subject, case: Case, pattern: str, vocab: TokenVocabulary) -> tuple[list[int], Divergence | None]:
    """The prefix to compare along: given, or the oracle's tokens of a json.dumps form the pattern
    admits, or a run decoded with impl's Constraint (whose failure is the divergence)."""
    if "prefix" in case.input:
        return list(case.input["prefix"]), None
    schema = case.input.get("schema")
    texts = case.input.get("texts") or []
    if schema is not None and not texts:
        rng = random.Random(case.input.get("seed", 0))
        texts = [rng.choice(dumps_forms(instance)) for instance in sample_instances(schema, rng, 2)]
    for text in texts:
        if oracle_call(lambda: matches(pattern, text))[0]:
            return subject.oracle.encode(text), None
    walked, failure = impl_call(case, "a decoding run", lambda: decode_masked(
        subject, constraint(subject, pattern), random.Random(case.input.get("seed", 0)), WALK_TOKENS))
    return (walked[0] if walked else []), failure


@check("structured", "mask", minimize="prefix", needs=(*MASK_ORACLES, "numpy"))  # numpy: llguidance's bitmasks
def check_mask(subject: Subject, case: Case) -> Divergence | None:
    pattern, failure = impl_pattern(subject, case)
    if failure:
        return failure
    vocab = vocabulary(subject)
    masks = oracle_masks(subject, pattern, tuple(case.input.get("oracles", MASK_ORACLES)))
    for name, (mask, error) in masks.items():
        if error:
            return Divergence(case, "a mask", error, f"{ORACLE_DISAGREEMENT} {name} cannot compile impl's pattern")
    built, failure = built_constraint(subject, case, pattern)
    if built is None:
        return failure
    ids, failure = _walk_ids(subject, case, pattern, vocab)
    if failure:
        return failure
    states = {name: mask.start() for name, (mask, _) in masks.items()}
    state, text, frozen = built.start(), b"", FrozenIds(vocab.text_ids)
    for step in range(len(ids) + 1):
        given, failure = impl_call(case, "allowed ids", lambda: built.allowed_tokens(state))
        if failure:
            return _after(failure, ids[:step])
        allowed, allowed_text = frozen.of(given)
        # impl's policy: a special token may stand for the text a match starts with, at the start only.
        special = {i for i in (() if allowed_text is allowed else allowed - allowed_text)
                   if step or not vocab.token_bytes[i] or not viable(pattern, vocab.token_bytes[i])}
        if special:
            return Divergence(with_input(case, prefix=ids[:step]), "text tokens only", sorted(special)[:5],
                              "Constraint allows a special or empty token")
        for name, (mask, _) in masks.items():
            oracle_allowed = mask.allowed(states[name]) if states[name] is not None else None
            if oracle_allowed is None:
                continue
            oracle_text = frozen.text_only(oracle_allowed)
            if oracle_text != allowed_text:
                found = _mask_difference(case, pattern, vocab, ids[:step], text, allowed_text, name, oracle_text)
                if found:
                    return found
        if step == len(ids):
            break
        token_id = ids[step]
        if token_id not in allowed:
            return None  # the given prefix left the pattern: nothing more to compare along it
        state, failure = impl_call(case, "a state", lambda: built.advance(state, token_id))
        if failure:
            return _after(failure, ids[:step + 1])
        text += vocab.token_bytes[token_id]
        states = {name: masks[name][0].advance(s, token_id) if s is not None and token_id in vocab.text_ids else None
                  for name, s in states.items()}
    complete, failure = impl_call(with_input(case, prefix=ids), "is_complete", lambda: built.is_complete(state))
    if failure:
        return failure
    try:
        should = matches(pattern, text.decode("utf-8", "replace"))
    except SlowMatch:
        return slow_match(case, pattern, text.decode("utf-8", "replace"))
    if ids and complete != should:
        return Divergence(with_input(case, prefix=ids), should, complete, "is_complete disagrees with the pattern",
                          {"text": text.decode("utf-8", "replace")})
    return None


# -- guarantee ------------------------------------------------------------------------------------

def closing_ids(subject: Subject) -> frozenset[int]:
    vocab = vocabulary(subject)
    return subject.cached("structured:closing-ids", lambda: frozenset(
        i for i in vocab.text_ids if CLOSING_BYTES.intersection(vocab.token_bytes[i])))


def decode_masked(subject: Subject, built, rng: random.Random, max_tokens: int) -> tuple[list[int], str]:
    """One run: random logits masked by ``built``, EOS when complete. Returns the ids and how it ended
    ("eos", "cap" or "dead end").

    The logits are i.i.d. noise plus a bonus for EOS and for tokens holding a closing byte, so the
    sampled token is uniform within the winning group; the bonus makes runs end in a few hundred
    tokens instead of wandering inside an unbounded string."""
    closing = closing_ids(subject)
    state, ids = built.start(), []
    while len(ids) < max_tokens:
        if built.is_complete(state) and rng.random() < 0.7:
            return ids, "eos"
        allowed = built.allowed_tokens(state)
        if not allowed:
            return ids, "eos" if built.is_complete(state) else "dead end"
        preferred = closing.intersection(allowed) if rng.random() < 0.5 else ()
        token_id = rng.choice(sorted(preferred) if preferred else list(allowed))
        state = built.advance(state, token_id)
        ids.append(token_id)
    return ids, "cap"


def _call_problem(subject: Subject, case: Case, text: str) -> tuple[str, dict] | None:
    """Why ``text`` is not a call of the right tool with valid arguments (kind, details), or None."""
    tools, name, fmt = case.input["tools"], case.input.get("name"), case.input.get("format", "hermes")
    message, failure = impl_call(case, "a message", lambda: subject.impl.parse_response(text, fmt, tools=tools))
    if failure:
        return f"parse_response {failure.kind}", {"error": failure.actual}
    calls = message.get("tool_calls") or []
    if not calls:
        return "decoded text is not a tool call", {"content": message.get("content")}
    schemas = {tool["function"]["name"]: tool["function"].get("parameters", {}) for tool in tools}
    for call in calls:
        called = call["function"]["name"]
        if called not in schemas or (name is not None and called != name):
            return "called the wrong tool", {"called": called, "forced": name}
        arguments, error = _json(call["function"]["arguments"] or "{}")
        errors = [error] if error else schema_errors(schemas[called], arguments)
        if errors:
            return "arguments invalid for the tool", {"errors": errors[:3], "arguments": call["function"]["arguments"]}
    return None


def replayed_ending(built, ids: list[int]) -> str | None:
    """How a given run ends under ``built``: "eos" (complete), "dead end" (nothing allowed), or None
    when an id is not allowed where it stands or the run stops short: not a run the Constraint
    makes, so nothing it guarantees (delta debugging of a run's ids must keep to such runs)."""
    state = built.start()
    for token_id in ids:
        try:
            state = built.advance(state, token_id)  # cheaper than a mask per step; refuses with ValueError
        except ValueError:
            return None
    if built.is_complete(state):
        return "eos"
    return None if built.allowed_tokens(state) else "dead end"


@check("structured", "guarantee", minimize="ids")
def check_guarantee(subject: Subject, case: Case) -> Divergence | None:
    pattern, failure = impl_pattern(subject, case)
    if failure:
        return failure
    built, failure = built_constraint(subject, case, pattern)
    if built is None:
        return failure
    rng = random.Random(f"{case.input.get('seed', 0)}/{case.family}")
    runs = [case.input["ids"]] if "ids" in case.input else None
    for run in range(len(runs) if runs else case.input.get("runs", 1)):
        if runs:
            ids = runs[run]
            ending, failure = impl_call(case, "a replayed run", lambda: replayed_ending(built, ids))
            if failure or ending is None:
                return failure
        else:
            result, failure = impl_call(case, "a decoding run", lambda: decode_masked(
                subject, built, rng, case.input.get("max_tokens", 400)))
            if failure:
                return failure
            ids, ending = result
        found = with_input(case, ids=ids)
        if ending == "dead end":
            return Divergence(found, "a token or EOS", "nothing allowed", "Constraint left no way to continue")
        if ending == "cap":
            continue  # a length cap cuts any call short: not a broken guarantee
        text, error = oracle_call(lambda: subject.oracle.decode(ids))
        if error:
            return None
        problem = _call_problem(subject, found, text)
        if problem:
            kind, details = problem
            return Divergence(found, "a call of the right tool with valid arguments", text, kind, details)
    return None


# -- errors -------------------------------------------------------------------------------------

def _names_all(message: str, words: list[str]) -> bool:
    return all(word in message for word in words)


@check("structured", "errors", family_independent=True)
def check_errors(subject: Subject, case: Case) -> Divergence | None:
    """``{"tools", "name"}``: an unknown name raises ValueError listing the known ones;
    ``{"schema", "keyword", "path"}``: an unsupported keyword raises ValueError naming it and where."""
    if "tools" in case.input:
        tools = copy.deepcopy(case.input["tools"])
        words = [tool["function"]["name"] for tool in tools]
        call = lambda: subject.impl.tool_call_pattern(tools, name=case.input["name"])
        what = "ValueError listing the known tool names"
    else:
        words = [case.input["keyword"], *case.input["path"]]
        call = lambda: subject.impl.json_schema_to_regex(copy.deepcopy(case.input["schema"]))
        what = "ValueError naming the keyword and its path"
    try:
        call()
    except ValueError as exc:
        if _names_all(str(exc), words):
            return None
        return Divergence(case, what, str(exc), "ValueError does not name what it should", {"expected_words": words})
    except (KeyboardInterrupt, ContractViolation):
        raise  # a breach of the contract is run_check's to record
    except BaseException as exc:  # noqa: BLE001 - impl may fail in any way: a Rust engine's panic, sys.exit()
        return Divergence(case, what, f"{type(exc).__name__}: {exc}", f"raised {type(exc).__name__}")
    return Divergence(case, what, "no error", "accepted what it should refuse")
