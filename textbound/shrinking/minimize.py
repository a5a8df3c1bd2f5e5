"""Delta debugging: shrink a diverging input while it still diverges the same way.

A 3-character example is worth more than a 3,000-character one. ``ddmin`` removes ever smaller
chunks of the sequence (characters of a text, ids of a list) and keeps any removal after which the
divergence still has the same signature, so the smaller input shows the same root cause.

A structured field (a conversation: a list of messages holding strings, lists and dicts) shrinks by
``shrink``: fewest elements first, then, inside each remaining element, the keys that can go and
the shortest strings, so a conversation comes out with the fewest messages and shortest strings.
A flat text or id list shrinks exactly as by ``ddmin``; a count (a server case's max_tokens) to the
smallest a bisection finds. A chat case's template is shrunk after its conversation, by delta
debugging over its statements and branches (textbound.shrinking.template_shrink), and the minimized case
holds the smaller template inline. A server error is never minimized: the server failed, not the input.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from ..checks import MINIMIZED_FIELD, Subject, run_check
from ..delta import MAX_TRIES, ddmin
from ..naming.divergence import SERVER_ERROR, Case, Divergence
from .template_shrink import shrink_template


def shrink(value, still_fails: Callable[[object], bool]):
    """The smallest ``value`` that still fails: ddmin on a list or a string, then each element of a
    list and each value of a dict shrunk in place, after dropping the dict keys that can go.

    >>> shrink([{"role": "user", "content": "abc"}, {"role": "x", "content": "hello"}],
    ...        lambda v: any(m.get("content", "").count("l") for m in v))
    [{'content': 'l'}]
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return _smaller_count(value, still_fails)
    if isinstance(value, (str, list)):
        value = ddmin(value, still_fails)
    if isinstance(value, list):
        for index in range(len(value)):
            value = _shrink_member(value, index, still_fails)
    elif isinstance(value, dict):
        for key in list(value):
            smaller = {k: v for k, v in value.items() if k != key}
            if still_fails(smaller):
                value = smaller
        for key in list(value):
            value = _shrink_member(value, key, still_fails)
    return value


def _smaller_count(count: int, still_fails: Callable[[object], bool]) -> int:
    """A count of 1 or more, bisected down while it still fails: ``_smaller_count(20, lambda n: n >= 7) == 7``."""
    low = 1
    while low < count:
        middle = (low + count) // 2
        if still_fails(middle):
            count = middle
        else:
            low = middle + 1
    return count


def _shrink_member(container, key, still_fails: Callable[[object], bool]):
    """``container`` with the member at ``key`` (a list index or a dict key) shrunk on its own."""
    def put(member):
        if isinstance(container, list):
            return container[:key] + [member] + container[key + 1:]
        return {**container, key: member}

    member = container[key]
    if not isinstance(member, (str, list, dict)):
        return container
    return put(shrink(member, lambda smaller: still_fails(put(smaller))))


def minimize(subject: Subject, divergence: Divergence, max_tries: int = MAX_TRIES,
             seconds: float | None = None) -> Divergence:
    """The divergence with ``minimized`` set to the smallest case that still diverges the same way,
    within ``max_tries`` checks and ``seconds`` (None: no limit); a case without the field its check
    shrinks is returned whole. A chat case's template is shrunk after its conversation
    (textbound.shrinking.template_shrink), and the minimized case holds the smaller template's source."""
    deadline = None if seconds is None else time.monotonic() + seconds
    case = divergence.case
    name = MINIMIZED_FIELD.get((case.component, case.property))
    if name is None or name not in case.input or divergence.kind.startswith(SERVER_ERROR):
        return divergence
    signature = divergence.signature
    tries = 0

    def diverges(candidate: Case) -> bool:
        nonlocal tries
        if tries >= max_tries or (deadline is not None and time.monotonic() > deadline):
            return False
        tries += 1
        try:
            found = run_check(subject, candidate)
        except Exception:  # noqa: BLE001  (a reference crashing on a shrunk input is no sign of the divergence)
            return False
        return found is not None and found.signature == signature

    smallest = _with(case, name, shrink(case.input[name], lambda value: diverges(_with(case, name, value))))
    smallest = _smaller_template(subject, smallest, diverges)
    if smallest.input == case.input:
        return divergence
    # Report what the minimized case itself gives, so expected/actual match its input.
    final = run_check(subject, smallest) or divergence
    final.case, final.minimized = case, smallest
    return final


def _with(case: Case, name: str, value) -> Case:
    return replace(case, input={**case.input, name: value})


def _smaller_template(subject: Subject, case: Case, diverges: Callable[[Case], bool]) -> Case:
    """A chat case with its template's source shrunk inline (``template_source``); other cases as
    they are, as is a template that does not shrink."""
    from ..checks.chat import INLINE_TEMPLATE, case_template

    if case.component != "chat" or "template" not in case.input:
        return case
    source = case_template(subject, case).source
    smaller = shrink_template(source, lambda candidate: diverges(_with(case, INLINE_TEMPLATE, candidate)))
    return case if smaller == source else _with(case, INLINE_TEMPLATE, smaller)
