"""A regex AST compiled to a byte-level NFA over UTF-8, determinized lazily into a DFA.

Character sets become UTF-8 byte-range sequences, so the automaton runs over the bytes that tokens
carry, and a token may stop in the middle of a character. NFA states that cannot reach the accepting
state are trimmed, so every DFA state is live: some continuation completes a match.

Example: ``ByteDFA.from_pattern("é|e")`` walks b"\\xc3" from its start to a live state that is not
accepting, then b"\\xa9" to an accepting one; b"x" leads to ``DEAD``.
"""
from __future__ import annotations

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


class NFA:
    """Thompson NFA over bytes: ``edges[s]`` are (lo, hi, target) byte ranges, ``epsilon[s]`` free moves."""

    def __init__(self):
        self.edges: list[list[tuple[int, int, int]]] = []
        self.epsilon: list[list[int]] = []

    def new_state(self) -> int:
        if len(self.edges) >= MAX_NFA_STATES:
            raise ValueError(f"pattern too large: its automaton exceeds {MAX_NFA_STATES} states")
        self.edges.append([])
        self.epsilon.append([])
        return len(self.edges) - 1

    def add(self, node, start: int) -> int:
        """Adds the states for ``node`` starting at ``start``; returns the state where it ends."""
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

    def _add_chars(self, ranges, start: int) -> int:
        # Sequences share their suffixes ([80-BF][80-BF] after every 3-byte lead), so that the
        # determinized automaton does not split one character class into many equivalent states.
        end = self.new_state()
        by_suffix: dict[tuple, int] = {(): end}
        for lo, hi in ranges:
            for sequence in utf8_sequences(lo, hi):
                for depth in range(len(sequence) - 1, 0, -1):
                    suffix = sequence[depth:]
                    if suffix not in by_suffix:
                        state = by_suffix[suffix] = self.new_state()
                        self.edges[state].append((*sequence[depth], by_suffix[sequence[depth + 1:]]))
                self.edges[start].append((*sequence[0], by_suffix[sequence[1:]]))
        return end


class ByteDFA:
    """Lazily determinized DFA over bytes; states are ints from 0 (the start), ``DEAD`` is -1.

    ``byte_class[b]`` groups bytes that every NFA edge treats alike; ``step(state, byte)``,
    ``walk(state, data)``, ``is_accepting(state)`` and ``targets(state)`` (class ids by next state).
    """

    def __init__(self, nfa: NFA, start: int, accept: int):
        self._nfa = nfa
        self._accept = accept
        self._live = self._coreachable(nfa, accept)
        if start not in self._live:
            raise ValueError("the pattern matches no string")
        boundaries = {0, 256}
        for edges in nfa.edges:
            for lo, hi, _ in edges:
                boundaries.update((lo, hi + 1))
        cuts = sorted(boundaries)
        self.byte_class = [0] * 256
        self.class_bytes: list[tuple[int, ...]] = []
        for index, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
            self.byte_class[lo:hi] = [index] * (hi - lo)
            self.class_bytes.append(tuple(range(lo, hi)))
        self._closures: dict[int, frozenset[int]] = {}
        self._sets: list[frozenset[int]] = []
        self._ids: dict[frozenset[int], int] = {}
        self._table: list[list[int | None]] = []
        self._accepting: list[bool] = []
        self._intern(self._closure_of([start]))

    @classmethod
    def from_pattern(cls, pattern: str) -> "ByteDFA":
        nfa = NFA()
        start = nfa.new_state()
        accept = nfa.add(parse(pattern), start)
        return cls(nfa, start, accept)

    @staticmethod
    def _coreachable(nfa: NFA, accept: int) -> set[int]:
        reverse: list[list[int]] = [[] for _ in nfa.edges]
        for source, (edges, free) in enumerate(zip(nfa.edges, nfa.epsilon)):
            for _, _, target in edges:
                reverse[target].append(source)
            for target in free:
                reverse[target].append(source)
        live, stack = {accept}, [accept]
        while stack:
            for source in reverse[stack.pop()]:
                if source not in live:
                    live.add(source)
                    stack.append(source)
        return live

    def _closure_of(self, states) -> frozenset[int]:
        seen, stack = set(), [s for s in states if s in self._live]
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            stack.extend(t for t in self._nfa.epsilon[state] if t in self._live and t not in seen)
        # Only states with byte edges (or the accepting one) distinguish DFA states.
        return frozenset(s for s in seen if self._nfa.edges[s] or s == self._accept)

    def _intern(self, states: frozenset[int]) -> int:
        if not states:
            return DEAD
        known = self._ids.get(states)
        if known is not None:
            return known
        self._ids[states] = len(self._sets)
        self._sets.append(states)
        self._table.append([None] * len(self.class_bytes))
        self._accepting.append(self._accept in states)
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
            moved = [t for s in self._sets[state] for lo, hi, t in self._nfa.edges[s] if lo <= byte <= hi]
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
        """Live next states of ``state``, each with the byte classes leading there."""
        grouped: dict[int, list[int]] = {}
        for byte_class in range(len(self.class_bytes)):
            target = self.step_class(state, byte_class)
            if target != DEAD:
                grouped.setdefault(target, []).append(byte_class)
        return {target: tuple(classes) for target, classes in grouped.items()}

    def fullmatch(self, data: bytes) -> bool:
        return self.is_accepting(self.walk(0, data))
