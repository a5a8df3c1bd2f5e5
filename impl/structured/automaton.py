"""A regex AST compiled to a byte-level NFA over UTF-8, determinized lazily into a DFA.

Character sets become UTF-8 byte-range sequences, so the automaton runs over the bytes that tokens
carry, and a token may stop in the middle of a character. NFA states that cannot reach the accepting
state are trimmed, so every DFA state is live: some continuation completes a match.

Example: ``ByteDFA.from_pattern("é|e")`` walks b"\\xc3" from its start to a live state that is not
accepting, then b"\\xa9" to an accepting one; b"x" leads to ``DEAD``.
"""
from __future__ import annotations

from functools import lru_cache

from .regex_syntax import MAX_CODE_POINT, Alt, Anchor, Chars, Concat, Repeat, parse

DEAD = -1
MAX_NFA_STATES = 2_000_000  # beyond this a pattern is refused rather than exhausting memory
_UTF8_LENGTH_ENDS = (0x7F, 0x7FF, 0xFFFF, MAX_CODE_POINT)
_SURROGATES = (0xD800, 0xDFFF)


def utf8_sequences(lo: int, hi: int) -> list[tuple[tuple[int, int], ...]]:
    """Byte-range sequences matching exactly the UTF-8 encodings of code points lo..hi (surrogates excluded).

    ``utf8_sequences(0x80, 0x7FF)`` -> ``[((0xC2, 0xDF), (0x80, 0xBF))]``.
    """
    pending, result = [(lo, hi)], []
    while pending:
        lo, hi = pending.pop()
        if lo > hi:
            continue
        if lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
            pending += [(lo, _SURROGATES[0] - 1), (_SURROGATES[1] + 1, hi)]
            continue
        split = next((end for end in _UTF8_LENGTH_ENDS if lo <= end < hi), None)
        if split is not None:
            pending += [(lo, split), (split + 1, hi)]
            continue
        if hi <= 0x7F:
            result.append(((lo, hi),))
            continue
        for bits in (6, 12, 18):  # make each continuation byte span a full or an exact range
            mask = (1 << bits) - 1
            if lo & ~mask != hi & ~mask:
                if lo & mask:
                    pending += [(lo, lo | mask), ((lo | mask) + 1, hi)]
                    break
                if hi & mask != mask:
                    pending += [(lo, (hi & ~mask) - 1), (hi & ~mask, hi)]
                    break
        else:
            first, last = chr(lo).encode("utf-8"), chr(hi).encode("utf-8")
            result.append(tuple(zip(first, last)))
    return sorted(result)


def is_empty_language(node) -> bool:
    """True when ``node`` matches no string at all (e.g. a class with no character)."""
    if isinstance(node, Chars):
        return not node.ranges
    if isinstance(node, Concat):
        return any(is_empty_language(item) for item in node.items)
    if isinstance(node, Alt):
        return all(is_empty_language(item) for item in node.items)
    if isinstance(node, Repeat):
        return node.min > 0 and is_empty_language(node.item)
    return False


@lru_cache(maxsize=4096)
def _utf8_sequences_cached(lo: int, hi: int) -> tuple:
    return tuple(utf8_sequences(lo, hi))


class Program:
    """A Thompson NFA over bytes whose large repeats count instead of unrolling.

    ``edges[n]``: (lo, hi, target) byte ranges; ``epsilon[n]``: free moves; ``counter_op[n]``:
    None or (op, repeat) with op "enter" (push a counter at 0), "loop" (go on to ``epsilon`` while
    the counter is below the repeat's max, exit to ``exit_of`` once it reaches its min), "incr", "exit"
    (pop). ``repeats[r]`` = (min, max or None); ``stack_of[n]``: the repeats counting at node n.
    """

    UNROLL_LIMIT = 8  # repeats up to this many copies unroll: a few states, no counter

    def __init__(self):
        self.edges: list[list[tuple[int, int, int]]] = []
        self.epsilon: list[list[int]] = []
        self.counter_op: list[tuple[str, int] | None] = []
        self.stack_of: list[tuple[int, ...]] = []
        self.exit_of: dict[int, int] = {}
        self.repeats: list[tuple[int, int | None]] = []
        self._stack: tuple[int, ...] = ()

    def new_state(self) -> int:
        if len(self.edges) >= MAX_NFA_STATES:
            raise ValueError(f"pattern too large: its automaton exceeds {MAX_NFA_STATES} states")
        self.edges.append([])
        self.epsilon.append([])
        self.counter_op.append(None)
        self.stack_of.append(self._stack)
        return len(self.edges) - 1

    def add(self, node, start: int) -> int:
        """Adds the states for ``node`` starting at ``start``; returns the state where it ends."""
        if is_empty_language(node):
            return self.new_state()  # unreachable end: the branch is trimmed as dead
        if isinstance(node, Chars):
            return self._add_chars(node.ranges, start)
        if isinstance(node, Concat):
            for item in node.items:
                start = self.add(item, start)
            return start
        if isinstance(node, Alt):
            end = self.new_state()
            for item in node.items:
                branch = self.new_state()
                self.epsilon[start].append(branch)
                self.epsilon[self.add(item, branch)].append(end)
            return end
        if isinstance(node, Repeat):
            return self._add_repeat(node, start)
        if isinstance(node, Anchor):
            raise ValueError(f"anchor {node.kind} at index {node.index} is not supported here: "
                             f"patterns match whole strings")
        raise TypeError(f"not a regex node: {node!r}")

    def _add_repeat(self, node: Repeat, start: int) -> int:
        if (node.max if node.max is not None else node.min) > self.UNROLL_LIMIT:
            return self._add_counted(node, start)
        for _ in range(node.min):
            start = self.add(node.item, start)
        if node.max is None:
            loop = self.new_state()
            self.epsilon[start].append(loop)
            self.epsilon[self.add(node.item, loop)].append(loop)
            return loop
        end = self.new_state()
        for _ in range(node.max - node.min):
            self.epsilon[start].append(end)
            start = self.add(node.item, start)
        self.epsilon[start].append(end)
        return end

    def _add_counted(self, node: Repeat, start: int) -> int:
        repeat = len(self.repeats)
        self.repeats.append((node.min, node.max))
        enter = self.new_state()
        self.epsilon[start].append(enter)
        self.counter_op[enter] = ("enter", repeat)
        outer = self._stack
        self._stack = outer + (repeat,)
        loop, increment = self.new_state(), self.new_state()
        self.epsilon[enter].append(loop)
        self.counter_op[loop] = ("loop", repeat)
        body = self.new_state()
        self.epsilon[loop].append(body)
        self.epsilon[self.add(node.item, body)].append(increment)
        self.counter_op[increment] = ("incr", repeat)
        self.epsilon[increment].append(loop)
        exit_state = self.new_state()
        self.counter_op[exit_state] = ("exit", repeat)
        self.exit_of[loop] = exit_state
        self._stack = outer
        end = self.new_state()
        self.epsilon[exit_state].append(end)
        return end

    def _add_chars(self, ranges, start: int) -> int:
        # Sequences share their suffixes ([80-BF][80-BF] after every 3-byte lead), so that the
        # determinized automaton does not split one character class into many equivalent states.
        end = self.new_state()
        by_suffix: dict[tuple, int] = {(): end}
        for lo, hi in ranges:
            for sequence in _utf8_sequences_cached(lo, hi):
                for depth in range(len(sequence) - 1, 0, -1):
                    suffix = sequence[depth:]
                    if suffix not in by_suffix:
                        state = by_suffix[suffix] = self.new_state()
                        self.edges[state].append((*sequence[depth], by_suffix[sequence[depth + 1:]]))
                self.edges[start].append((*sequence[0], by_suffix[sequence[1:]]))
        return end

    def successors(self, node: int, counters: tuple[int, ...]):
        """Free moves from thread (node, counters): (next node, next counters) pairs."""
        op = self.counter_op[node]
        if op is None:
            return [(target, counters) for target in self.epsilon[node]]
        kind, repeat = op
        low, high = self.repeats[repeat]
        if kind == "enter":
            return [(self.epsilon[node][0], counters + (0,))]
        if kind == "exit":
            return [(target, counters[:-1]) for target in self.epsilon[node]]
        if kind == "incr":
            count = counters[-1] + 1
            return [(self.epsilon[node][0], counters[:-1] + (count if high is not None else min(count, low),))]
        moves = [] if high is not None and counters[-1] >= high else [(self.epsilon[node][0], counters)]
        if counters[-1] >= low:
            moves.append((self.exit_of[node], counters))
        return moves


class ByteDFA:
    """Lazily determinized DFA over bytes; states are ints from 0 (the start), ``DEAD`` is -1.

    A DFA state is a set of threads (program node, repeat counters). ``byte_class[b]`` groups bytes
    that every edge treats alike; ``step(state, byte)``, ``walk(state, data)``,
    ``is_accepting(state)``, ``targets(state)`` (class ids by next state) and
    ``signature(state, horizon)`` (equal for states that accept the same strings of up to
    ``horizon`` bytes).
    """

    def __init__(self, program: Program, start: int, accept: int):
        self._program = program
        self._accept = accept
        self._live = self._coreachable(program, accept)
        if start not in self._live:
            raise ValueError("the pattern matches no string")
        boundaries = {0, 256}
        for edges in program.edges:
            for lo, hi, _ in edges:
                boundaries.update((lo, hi + 1))
        cuts = sorted(boundaries)
        self.byte_class = [0] * 256
        self.class_bytes: list[tuple[int, ...]] = []
        for index, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
            self.byte_class[lo:hi] = [index] * (hi - lo)
            self.class_bytes.append(tuple(range(lo, hi)))
        self._sets: list[frozenset] = []
        self._ids: dict[frozenset, int] = {}
        self._table: list[list[int | None]] = []
        self._accepting: list[bool] = []
        self._intern(self._closure_of([(start, ())]))

    @classmethod
    def from_pattern(cls, pattern: str) -> "ByteDFA":
        program = Program()
        start = program.new_state()
        accept = program.add(parse(pattern), start)
        return cls(program, start, accept)

    @staticmethod
    def _coreachable(program: Program, accept: int) -> set[int]:
        reverse: list[list[int]] = [[] for _ in program.edges]
        for source, (edges, free) in enumerate(zip(program.edges, program.epsilon)):
            for _, _, target in edges:
                reverse[target].append(source)
            for target in free:
                reverse[target].append(source)
        for loop, exit_state in program.exit_of.items():
            reverse[exit_state].append(loop)
        live, stack = {accept}, [accept]
        while stack:
            for source in reverse[stack.pop()]:
                if source not in live:
                    live.add(source)
                    stack.append(source)
        return live

    def _closure_of(self, threads) -> frozenset:
        program, live = self._program, self._live
        seen, stack = set(), [t for t in threads if t[0] in live]
        while stack:
            thread = stack.pop()
            if thread in seen:
                continue
            seen.add(thread)
            stack.extend(t for t in program.successors(*thread) if t[0] in live and t not in seen)
        # Only threads at nodes with byte edges (or accepting) distinguish DFA states.
        return frozenset(t for t in seen if program.edges[t[0]] or t[0] == self._accept)

    def _intern(self, threads: frozenset) -> int:
        if not threads:
            return DEAD
        known = self._ids.get(threads)
        if known is not None:
            return known
        self._ids[threads] = len(self._sets)
        self._sets.append(threads)
        self._table.append([None] * len(self.class_bytes))
        self._accepting.append(any(node == self._accept for node, _ in threads))
        return len(self._sets) - 1

    @property
    def state_count(self) -> int:
        """DFA states discovered so far."""
        return len(self._sets)

    def step_class(self, state: int, byte_class: int) -> int:
        row = self._table[state]
        target = row[byte_class]
        if target is None:
            byte = self.class_bytes[byte_class][0]
            edges = self._program.edges
            moved = [(t, counters) for node, counters in self._sets[state]
                     for lo, hi, t in edges[node] if lo <= byte <= hi]
            target = row[byte_class] = self._intern(self._closure_of(moved))
        return target

    def step(self, state: int, byte: int) -> int:
        return self.step_class(state, self.byte_class[byte])

    def walk(self, state: int, data: bytes) -> int:
        for byte in data:
            state = self.step_class(state, self.byte_class[byte])
            if state == DEAD:
                return DEAD
        return state

    def is_accepting(self, state: int) -> bool:
        return state != DEAD and self._accepting[state]

    def targets(self, state: int) -> dict[int, tuple[int, ...]]:
        """Live next states of ``state``, each with the byte classes leading there.

        One pass over the state's edges gathers the moved threads of every class; classes with the
        same moved threads share one closure (most bytes of a class like ``[^"\\\\]`` do)."""
        row = self._table[state]
        if None in row:
            moved: list[list] = [[] for _ in self.class_bytes]
            byte_class, edges = self.byte_class, self._program.edges
            for node, counters in self._sets[state]:
                for lo, hi, target in edges[node]:
                    for index in range(byte_class[lo], byte_class[hi] + 1):
                        moved[index].append((target, counters))
            closed: dict[frozenset, int] = {}
            for index, threads in enumerate(moved):
                if row[index] is None:
                    key = frozenset(threads)
                    if key not in closed:
                        closed[key] = self._intern(self._closure_of(threads))
                    row[index] = closed[key]
        grouped: dict[int, list[int]] = {}
        for byte_class, target in enumerate(row):
            if target != DEAD:
                grouped.setdefault(target, []).append(byte_class)
        return {target: tuple(classes) for target, classes in grouped.items()}

    def signature(self, state: int, horizon: int):
        """A key equal for states that accept the same byte strings of length <= ``horizon``.

        Counters are what tell apart the states of a long bounded repeat; within ``horizon`` bytes
        only "below min" (kept exactly) and "more than horizon iterations left" matter, so a string
        of maxLength 4000 has a handful of signatures instead of 4000.
        """
        program = self._program
        if not program.repeats:
            return state
        clamped = []
        for node, counters in self._sets[state]:
            clamped.append((node, tuple(
                (min(count, low), None if high is None else min(high - count, horizon + 1))
                for count, (low, high) in zip(counters, (program.repeats[r] for r in program.stack_of[node])))))
        return frozenset(clamped)

    def fullmatch(self, data: bytes) -> bool:
        return self.is_accepting(self.walk(0, data))
