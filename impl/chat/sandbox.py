"""The sandbox chat templates render in: an attribute allow-list, and time, size and memory limits.

A chat template is code that came with a model download. transformers renders it in Jinja2's
``ImmutableSandboxedEnvironment``, which blocks ``__class__``-style escapes and list/dict mutation but
not resource bombs (``"x" * 10**10``, nested loops, a recursive macro doubling a string). ``ChatSandbox``
renders every legitimate template exactly as that environment does, and refuses hostile ones with a
``jinja2.exceptions.SecurityError`` naming what was refused and the template line:

>>> env = ChatSandbox()
>>> render_within_limits(env.from_string("{{ m[0].content|upper }}"), {"m": [{"content": "hi"}]},
...                      RenderLimits())
'HI'
>>> try:
...     render_within_limits(env.from_string("{{ 'ab' * 10**9 }}"), {}, RenderLimits())
... except RenderLimitError as error:
...     print(error)
max_output_chars (4,000,000) exceeded at line 1: 'str' * 1000000000 would make 2,000,000,000 characters

How each limit is enforced (in-process, safe with worker threads: no signals, no process-wide rlimit):

- Security: ``is_safe_attribute`` is an explicit allow-list per type (``SAFE_ATTRIBUTES``); an unsafe
  attribute raises at once instead of becoming a silent undefined. Callers' messages cannot be
  changed: mutating methods are not on the list, and ``namespace(...)`` copies what it is given.
- Time (``seconds``): the code generator routes every ``{% for %}`` iterable, every call (macros
  included) and every write into a buffer through ``_Budget.tick``, which checks a deadline. No
  tracing hook is installed, so debuggers and coverage keep working and normal templates pay one
  cheap check per loop iteration.
- Size (``max_output_chars``): the output, and every string, list or dict a template builds, is
  bounded. Operators (``*``, ``**``, ``+``, ``%``, ``~``), size-taking methods and filters
  (``center``, ``replace``, ``format``, ``indent``, ``join``, ``batch``, ``tojson(indent=)`` ...),
  list/tuple/dict literals and captured output (``{% set %}`` blocks, macros) are sized *before* they
  allocate; other filter and call results are sized after. So no single operation allocates much
  more than the limit, and nested structures cannot hide an exponential size (``[l, l]`` repeated).
  Integers are capped at ``MAX_INT_BITS`` and nesting at ``MAX_NESTING``.
- Memory (``max_memory_bytes``): the many bounded values a template keeps alive at once (a deep
  recursion each holding a large string) are caught by the growth of the process's resident set
  since the render began, read from ``/proc/self/statm`` every ``MEMORY_CHECK_SECONDS`` and before
  large allocations. It is process-wide: a concurrent render in another thread counts too, so set
  the limit for the worst concurrent case. Without ``/proc`` this safety net is off (the size
  bounds still hold).
"""
from __future__ import annotations

import contextvars
import dataclasses
import inspect
import itertools
import math
import os
import re
import sys
import time
import types
from collections.abc import Iterator, Mapping
from functools import update_wrapper
from typing import Any, Callable

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Cycler, Namespace
from markupsafe import Markup

#: Integers a template computes stay below this many bits: far beyond any template's arithmetic, yet
#: every operation on them takes microseconds (and their decimal form fits Python's digit limit).
MAX_INT_BITS = 14_000
#: Lists, dicts and namespaces a template builds or reads may nest this deep at most.
MAX_NESTING = 200
#: How often (seconds of rendering) the process's resident memory is read.
MEMORY_CHECK_SECONDS = 0.02
#: Bytes one character of a Python string may take (UCS-4), for sizing allocations before they happen.
BYTES_PER_CHAR = 4
#: Values at least this long count towards reading the memory early; smaller ones are left to the
#: periodic reading (a template cannot allocate much in MEMORY_CHECK_SECONDS of small steps).
LARGE_ALLOCATION_CHARS = 1 << 16


@dataclasses.dataclass(frozen=True)
class RenderLimits:
    """What one render may spend. The defaults never trip on a real chat template with a long
    conversation, yet stop a bomb within seconds.

    >>> RenderLimits(seconds=1.0).max_output_chars
    4000000
    """

    seconds: float = 10.0
    max_output_chars: int = 4_000_000
    max_memory_bytes: int = 512 * 2**20

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"RenderLimits.{field.name} must be a positive number, got {value!r}")


class RenderLimitError(SecurityError):
    """A render refused because it would exceed a limit.

    ``limit`` names it (a ``RenderLimits`` field, or ``MAX_INT_BITS``/``MAX_NESTING``), ``lineno`` is
    the template line when known:

    >>> str(RenderLimitError("seconds", "5 s", "rendering took longer", 7))
    'seconds (5 s) exceeded at line 7: rendering took longer'
    """

    def __init__(self, limit: str, bound: str, detail: str, lineno: int | None = None):
        where = f" at line {lineno}" if lineno is not None else ""
        super().__init__(f"{limit} ({bound}) exceeded{where}: {detail}")
        self.limit = limit
        self.lineno = lineno


def template_line(frame: types.FrameType | None = None) -> int | None:
    """The template line being rendered: found from the innermost compiled-template frame on the stack
    (or below ``frame``), mapped back through the template's debug info."""
    frame = frame or sys._getframe(1)
    while frame is not None:
        template = frame.f_globals.get("__jinja_template__")
        if template is not None:
            return template.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return None


def _resident_bytes() -> int | None:
    """This process's resident set size, or None where /proc is not available."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _Budget:
    """What the current render has left: a deadline, the size bound, and memory growth.

    Short renders cost almost nothing extra: the resident memory is first read (as the baseline)
    MEMORY_CHECK_SECONDS into the render or at the first large allocation, and the caller's context
    is sized the first time a container is.
    """

    def __init__(self, limits: RenderLimits, context: Mapping | None = None, timed: bool = True):
        self.limits = limits
        self.timed = timed
        now = time.monotonic()
        self.deadline = now + limits.seconds if timed else math.inf
        # the next time tick() must look at the deadline or the memory
        self.next_check = min(now + MEMORY_CHECK_SECONDS, self.deadline)
        self.baseline: int | None = None
        self.unmeasured_bytes = 0  # large allocations since the memory was last read
        self._context = context
        self._known_sizes: dict[int, tuple[Any, int]] = {}

    def known_sizes(self) -> dict[int, tuple[Any, int]]:
        """The sizes of the caller's context objects by id (``text_size``'s memo), sized once:
        templates size values built from messages over and over."""
        if self._context is not None:
            context, self._context = self._context, None
            text_size(list(context.values()), self, memo=self._known_sizes)
        return self._known_sizes

    def fail(self, limit: str, detail: str, lineno: int | None = None) -> RenderLimitError:
        bound = {"seconds": f"{self.limits.seconds:g} s",
                 "max_output_chars": f"{self.limits.max_output_chars:,}",
                 "max_memory_bytes": f"{self.limits.max_memory_bytes:,} bytes",
                 "MAX_INT_BITS": f"{MAX_INT_BITS:,} bits",
                 "MAX_NESTING": f"{MAX_NESTING} levels"}[limit]
        return RenderLimitError(limit, bound, detail, lineno or template_line(sys._getframe(2)))

    def tick(self) -> None:
        """Called once per loop iteration, call and output write: enforces the deadline, and reads
        the memory every MEMORY_CHECK_SECONDS."""
        if time.monotonic() >= self.next_check:
            self.checkpoint()

    def checkpoint(self) -> None:
        now = time.monotonic()
        if now > self.deadline:
            raise self.fail("seconds", f"rendering took longer than {self.limits.seconds:g} s")
        if self.timed:
            self._check_memory(0)
        self.next_check = min(now + MEMORY_CHECK_SECONDS, self.deadline)

    def reserve(self, chars: int, what: str) -> None:
        """Refuse a value of ``chars`` characters before it is allocated, if it is too large."""
        if chars > self.limits.max_output_chars:
            raise self.fail("max_output_chars", f"{what} would make {chars:,} characters")
        if chars >= LARGE_ALLOCATION_CHARS and self.timed:
            self.unmeasured_bytes += chars * BYTES_PER_CHAR
            if self.unmeasured_bytes * 16 > self.limits.max_memory_bytes:
                self._check_memory(chars * BYTES_PER_CHAR)

    def _check_memory(self, about_to_allocate: int) -> None:
        resident = _resident_bytes()
        if resident is None:
            return
        if self.baseline is None:  # first reading: count the large allocations made before it
            self.baseline = resident - self.unmeasured_bytes
        self.unmeasured_bytes = 0
        if resident - self.baseline + about_to_allocate > self.limits.max_memory_bytes:
            raise self.fail("max_memory_bytes",
                            f"the process grew by {resident - self.baseline:,} bytes during this render")


_ACTIVE_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("chat_render_budget", default=None)


def text_size(value: Any, budget: _Budget, *, per_item: int = 4, depth_cost: int = 0,
              memo: dict[int, tuple[Any, int]] | None = None) -> int:
    """An upper estimate of ``len(str(value))`` (up to the escaping ``repr`` adds), in time linear in
    the number of distinct objects: a list holding the same list twice is sized once per reference
    without being walked twice. ``per_item`` is what each container item adds (separators, quotes),
    ``depth_cost`` what each level of nesting adds per item (``tojson``'s indent).

    >>> text_size(["ab", "cd"], _Budget(RenderLimits()))
    14
    """
    if not isinstance(value, _CONTAINERS):
        return _scalar_size(value)
    # Sizes by id; holding each object keeps its id from being reused. ``memo`` is kept by the
    # caller (the budget's sizes of the context); otherwise the context's sizes are looked up.
    sizes: dict[int, tuple[Any, int]] = {} if memo is None else memo
    known = budget.known_sizes() if memo is None and per_item == 4 and depth_cost == 0 else {}
    if id(value) in known:
        return known[id(value)][1]

    def size(item: Any, depth: int) -> int:
        if not isinstance(item, _CONTAINERS):
            return _scalar_size(item)
        if isinstance(item, Namespace):
            item = object.__getattribute__(item, "_Namespace__attrs")
        memo = known.get(id(item)) or sizes.get(id(item))
        if memo is not None:
            return memo[1]
        if depth > MAX_NESTING:
            raise budget.fail("MAX_NESTING", "a value nests deeper than that")
        sizes[id(item)] = (item, 5)  # a cycle prints as '[...]'
        total = 2
        for element in (itertools.chain.from_iterable(item.items()) if isinstance(item, dict) else item):
            total += size(element, depth + 1) + per_item + depth_cost * (depth + 1)
            if total > budget.limits.max_output_chars:
                break
        sizes[id(item)] = (item, total)
        return total

    return size(value, 0)


_CONTAINERS = (list, tuple, dict, set, frozenset, type({}.keys()), type({}.values()), type({}.items()), Namespace)


def _scalar_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int):
        return value.bit_length() * 30103 // 100_000 + 2
    return 24  # a float, None, or an object's short repr


# --- the attribute allow-list -----------------------------------------------------------------------

_STR_ATTRIBUTES = frozenset({
    "capitalize", "casefold", "center", "count", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier",
    "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower",
    "lstrip", "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust",
    "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title",
    "upper", "zfill",
})
_INT_ATTRIBUTES = frozenset({"real", "imag", "numerator", "denominator", "bit_length", "bit_count",
                             "conjugate", "as_integer_ratio", "is_integer"})
_VIEW_ATTRIBUTES = frozenset({"isdisjoint"})

#: What a template may reach on each type (looked up along the object's MRO). Everything else is
#: refused, including what ImmutableSandboxedEnvironment would allow but no template needs and that
#: allocates without bound or leaves the JSON types: ``str.encode``/``translate``/``maketrans``,
#: ``int.to_bytes``, ``dict_keys.mapping``, generator, function, class and macro attributes.
#: Mutating methods (``list.append``, ``dict.update``) are absent, as in the immutable sandbox.
SAFE_ATTRIBUTES: dict[type, frozenset[str]] = {
    str: _STR_ATTRIBUTES,
    Markup: _STR_ATTRIBUTES | {"escape", "unescape", "striptags"},
    int: _INT_ATTRIBUTES,
    float: frozenset({"real", "imag", "is_integer", "hex", "fromhex", "conjugate", "as_integer_ratio"}),
    dict: frozenset({"get", "items", "keys", "values", "copy", "fromkeys"}),
    list: frozenset({"index", "count", "copy"}),
    tuple: frozenset({"index", "count"}),
    range: frozenset({"start", "stop", "step", "index", "count"}),
    type({}.keys()): _VIEW_ATTRIBUTES,
    type({}.values()): _VIEW_ATTRIBUTES,
    type({}.items()): _VIEW_ATTRIBUTES,
    LoopContext: frozenset({"index", "index0", "revindex", "revindex0", "first", "last", "length",
                            "depth", "depth0", "previtem", "nextitem", "cycle", "changed"}),
    Cycler: frozenset({"items", "current", "next", "reset"}),
    BlockReference: frozenset({"super"}),
}


# --- size estimates for formatting ------------------------------------------------------------------

_PERCENT_SPEC = re.compile(r"%(?:\((?P<key>[^)]*)\))?[-#0 +]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d*))?"
                           r"[hlL]?(?P<type>[a-zA-Z%])")
_FORMAT_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?")


def _spec_number(digits: str | None, budget: _Budget, what: str) -> int:
    """A width or precision from a format spec; digit strings too long to be sane are refused."""
    if not digits or digits == "*":
        return 0
    if len(digits) > 9:
        raise budget.fail("max_output_chars", f"{what} asks for a width of {len(digits)} digits")
    return int(digits)


def percent_format_size(template: str, args: Any, budget: _Budget) -> int:
    """An upper estimate of ``len(template % args)``: the template, each conversion's width and
    precision, and each argument's size (``*`` widths are taken from the integer arguments).

    >>> percent_format_size("%05d|%s", (3, "abc"), _Budget(RenderLimits()))
    27
    """
    total = len(template)
    values = args if isinstance(args, tuple) else (args,)
    for match in _PERCENT_SPEC.finditer(template):
        for group in ("width", "precision"):
            total += _spec_number(match[group], budget, "a % format")
        if match["key"] is not None and isinstance(args, Mapping):
            total += text_size(args.get(match["key"]), budget)
        if "*" in (match["width"], match["precision"]):
            total += sum(abs(v) for v in values if isinstance(v, int))
    if not isinstance(args, Mapping):
        total += text_size(values, budget)
    return total


class _BoundedFormatterMixin:
    """``str.format`` that sizes each replacement field before formatting it."""

    def __init__(self, env: ChatSandbox, budget: _Budget, **kwargs: Any):
        super().__init__(env, **kwargs)
        self._budget = budget
        self._size = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        spec = _FORMAT_SPEC.match(format_spec)
        self._size += (_spec_number(spec["width"], self._budget, "a format spec")
                       + _spec_number(spec["precision"], self._budget, "a format spec")
                       + text_size(value, self._budget))
        self._budget.reserve(self._size, "str.format")
        return super().format_field(value, format_spec)


class _BoundedFormatter(_BoundedFormatterMixin, SandboxedFormatter):
    pass


class _BoundedEscapeFormatter(_BoundedFormatterMixin, SandboxedEscapeFormatter):
    pass


# --- pre-checks of size-taking filters and str methods ---------------------------------------------

def _replace_size(text: str, old: str, new: str, count: Any) -> int:
    occurrences = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        occurrences = min(occurrences, count)
    return len(text) + occurrences * max(len(new) - len(old), 0)


def _width(value: Any) -> int:
    """A count or width argument as the filter will use it: an int, or a string repeated once."""
    return value if isinstance(value, int) else len(value) if isinstance(value, str) else 0


def _materialize(arguments: dict, name: str) -> list:
    """Turn an iterable argument into a list (so it can be sized and still be passed on)."""
    items = arguments[name]
    if not isinstance(items, (str, list, tuple, dict)):
        items = arguments[name] = list(items)
    return items if isinstance(items, (list, tuple)) else list(items)


def _check_join(arguments: dict, budget: _Budget, separator: str) -> int:
    items = _materialize(arguments, "value" if "value" in arguments else "iterable")
    return sum(text_size(item, budget) for item in items) + len(arguments.get(separator) or "") * len(items)


def _check_tojson(arguments: dict, budget: _Budget) -> int:
    value = next(iter(arguments.values()))
    indent = arguments.get("indent")
    separators = arguments.get("separators") or (", ", ": ")
    per_item = 4 + sum(len(s) for s in separators if isinstance(s, str)) + (1 if indent is not None else 0)
    return text_size(value, budget, per_item=per_item, depth_cost=_width(indent))


#: Size (in characters) that a filter's result may reach, computed from its bound arguments before
#: it runs. Filters not named here are sized after they run.
_FILTER_RESULT_SIZES: dict[str, Callable[[dict, _Budget], int]] = {
    "center": lambda a, b: max(text_size(a["value"], b), _width(a.get("width", 80))),
    "indent": lambda a, b: (len(str(a["s"])) + (str(a["s"]).count("\n") + 1) * _width(a.get("width", 4))),
    "wordwrap": lambda a, b: len(str(a["s"])) * (1 + len(str(a.get("wrapstring") or "\n"))),
    "format": lambda a, b: percent_format_size(str(a["value"]), a.get("kwargs") or a.get("args"), b),
    "join": lambda a, b: _check_join(a, b, "d"),
    "replace": lambda a, b: _replace_size(str(a["s"]), str(a["old"]), str(a["new"]), a.get("count")),
    "batch": lambda a, b: (_width(a["linecount"]) * text_size(a.get("fill_with"), b)
                           if a.get("fill_with") is not None else 0),
    "slice": lambda a, b: _width(a["slices"]) * (4 + text_size(a.get("fill_with"), b)),
    "sum": lambda a, b: (0 if isinstance(a.get("start", 0), (int, float)) else
                         _check_join(a, b, "") + text_size(a.get("start"), b)),
    "tojson": _check_tojson,
    "pprint": lambda a, b: 2 * text_size(a["value"], b),
}

#: The same for str methods (``'x'.center(10**9)``), from the string and the call's arguments.
_STR_METHOD_RESULT_SIZES: dict[str, Callable[..., int]] = {
    "center": lambda s, width, *rest: max(len(s), width),
    "ljust": lambda s, width, *rest: max(len(s), width),
    "rjust": lambda s, width, *rest: max(len(s), width),
    "zfill": lambda s, width: max(len(s), width),
    "expandtabs": lambda s, tabsize=8: len(s) + s.count("\t") * max(tabsize, 0),
    "replace": lambda s, old, new, count=-1: _replace_size(s, old, new, count),
}


def _presize(size: Callable[..., Any] | None, *args: Any, **kwargs: Any) -> Any:
    """``size(*args, **kwargs)``, or 0 when there is no estimate or the arguments are not what the
    function takes: the real call then raises its own error."""
    try:
        return 0 if size is None else size(*args, **kwargs)
    except (TypeError, ValueError, KeyError, AttributeError):
        return 0


def _bound_iterator(items: Iterator, budget: _Budget, what: str) -> Iterator:
    """Pass ``items`` on, ticking the deadline and sizing everything yielded."""
    total = 0
    for item in items:
        budget.tick()
        total += text_size(item, budget) + 4
        budget.reserve(total, what)
        yield item


# --- code generation hooks --------------------------------------------------------------------------

class _LimitedCodeGenerator(CodeGenerator):
    """Compiles templates so loops, literals, concatenation and captured output go through the
    environment's limit checks (see ChatSandbox's ``*_within_limits`` methods)."""

    _loop_iterables: frozenset[int] = frozenset()  # ids of the {% for %} iterables, set per template

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        self._loop_iterables = {id(loop.iter) for loop in node.find_all(nodes.For)}
        super().visit_Template(node, frame)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        """A ``{% for %}`` iterable is iterated through ``ChatSandbox.iterate_within_limits``."""
        if id(node) not in self._loop_iterables:
            return super().visit(node, *args, **kwargs)
        self.write("environment.iterate_within_limits(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    def buffer(self, frame: Frame) -> None:
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.bounded_buffer()")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.concat_within_limits(context.eval_ctx, (")
        for part in node.nodes:
            self.visit(part, frame)
            self.write(", ")
        self.write("))")

    def _sized_literal(self, visit: Callable, node: nodes.Node, frame: Frame) -> None:
        self.write("environment.literal_within_limits(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self._sized_literal(super().visit_List, node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self._sized_literal(super().visit_Dict, node, frame)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        if node.ctx != "load":  # an assignment target: `{% for a, b in ... %}`
            super().visit_Tuple(node, frame)
        else:
            self._sized_literal(super().visit_Tuple, node, frame)


class _BoundedBuffer(list):
    """The list a macro, ``{% set %}`` block or call block collects its output in, bounded in size."""

    def __init__(self, budget: _Budget):
        super().__init__()
        self._budget = budget
        self._chars = 0

    def append(self, piece: str) -> None:
        self._count(piece)
        super().append(piece)

    def extend(self, pieces: Any) -> None:
        for piece in pieces:
            self.append(piece)

    def _count(self, piece: Any) -> None:
        self._budget.tick()
        self._chars += len(piece) if isinstance(piece, str) else 0
        if self._chars > self._budget.limits.max_output_chars:
            self._budget.reserve(self._chars, "captured output")


class _GuardedFilters(dict):
    """The filter table: every filter, including ones registered later (``tojson``), is wrapped so
    that its result is sized before (``_FILTER_RESULT_SIZES``) or after it runs."""

    def __init__(self, env: ChatSandbox, filters: Mapping[str, Callable]):
        super().__init__()
        self._env = env
        for name, function in filters.items():
            self[name] = function

    def __setitem__(self, name: str, function: Callable) -> None:
        super().__setitem__(name, self._env.guard_filter(name, function))


class ChatSandbox(ImmutableSandboxedEnvironment):
    """Jinja2's immutable sandbox with an explicit attribute allow-list and render limits.

    ``ChatSandbox(limits=RenderLimits(...), **environment_options)``; ``limits`` bounds sizes when a
    template is rendered directly (``template.render``); ``render_within_limits`` adds the deadline
    and the memory check and may pass other limits. Extra types may be opened to templates with
    ``env.safe_attributes[SomeType] = frozenset({...})``.
    """

    code_generator_class = _LimitedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, limits: RenderLimits = RenderLimits(), **options: Any):
        super().__init__(**options)
        self.limits = limits
        self._sizes_only = _Budget(limits, timed=False)
        self.safe_attributes = dict(SAFE_ATTRIBUTES)
        self.filters = _GuardedFilters(self, self.filters)
        self.globals["lipsum"] = self._bounded_lipsum(self.globals["lipsum"])

    # -- limits -------------------------------------------------------------------------------------

    def budget(self) -> _Budget:
        """The active render's budget, or (outside ``render_within_limits``) sizes only."""
        return _ACTIVE_BUDGET.get() or self._sizes_only

    def iterate_within_limits(self, iterable: Any) -> Iterator:
        budget = self.budget()
        clock = time.monotonic
        for item in iterable:
            if clock() >= budget.next_check:  # budget.tick(), inlined: this runs once per iteration
                budget.checkpoint()
            yield item

    def bounded_buffer(self) -> _BoundedBuffer:
        return _BoundedBuffer(self.budget())

    def concat(self, pieces: Any) -> str:
        """Joins a rendered block (``Template.render``, ``self.block()``) within the size limit."""
        buffer = _BoundedBuffer(self.budget())
        buffer.extend(pieces)
        return "".join(buffer)

    def concat_within_limits(self, eval_ctx: Any, parts: tuple) -> str:
        budget = self.budget()
        budget.reserve(sum(text_size(part, budget) for part in parts), "'~' concatenation")
        return (jinja2.runtime.markup_join if eval_ctx.autoescape else jinja2.runtime.str_join)(parts)

    def literal_within_limits(self, value: Any) -> Any:
        budget = self.budget()
        budget.reserve(text_size(value, budget), f"a {type(value).__name__} literal")
        return value

    def check_result(self, value: Any, what: str) -> Any:
        """Size a value a filter or call returned; iterators are sized as they are consumed."""
        budget = self.budget()
        if isinstance(value, (str, list, tuple, dict, Namespace)):
            budget.reserve(text_size(value, budget), what)
        elif isinstance(value, int):
            self._check_int_bits(value.bit_length(), what, budget)
        elif isinstance(value, Iterator):
            return _bound_iterator(value, budget, what)
        return value

    def _check_int_bits(self, bits: int, what: str, budget: _Budget) -> None:
        if bits > MAX_INT_BITS:
            raise budget.fail("MAX_INT_BITS", f"{what} would make an integer of {bits:,} bits")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        budget = self.budget()
        numbers = (int, float)
        if operator == "+" and isinstance(left, str) and isinstance(right, str):  # the common case, first
            budget.reserve(len(left) + len(right), "'+'")
        elif operator == "*" and isinstance(left, int) and isinstance(right, int):
            self._check_int_bits(left.bit_length() + right.bit_length(), "'*'", budget)
        elif operator == "*" and isinstance(right, int) and not isinstance(left, numbers):
            budget.reserve(text_size(left, budget) * max(right, 0), f"{type(left).__name__!r} * {right}")
        elif operator == "*" and isinstance(left, int) and not isinstance(right, numbers):
            budget.reserve(text_size(right, budget) * max(left, 0), f"{left} * {type(right).__name__!r}")
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            self._check_int_bits(max(left.bit_length() - 1, 1) * right, "'**'", budget)
        elif operator == "+" and not (isinstance(left, numbers) and isinstance(right, numbers)):
            budget.reserve(text_size(left, budget) + text_size(right, budget), "'+'")
        elif operator == "%" and isinstance(left, str):
            budget.reserve(percent_format_size(left, right, budget), "'%' formatting")
        return self.binop_table[operator](left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's convention)
        budget = __self.budget()
        budget.tick()
        if isinstance(__obj, types.BuiltinMethodType) and isinstance(__obj.__self__, str):
            # Jinja passes its own `_loop_vars`/`_block_vars` along with a call's keywords
            arguments = {key: value for key, value in kwargs.items() if not key.startswith("_")}
            text, method = __obj.__self__, __obj.__name__
            if method == "join" and len(args) == 1 and not arguments:
                args = (list(args[0]),)
                size = _presize(lambda: sum(text_size(i, budget) for i in args[0]) + len(text) * len(args[0]))
            else:
                size = _presize(_STR_METHOD_RESULT_SIZES.get(method), text, *args, **arguments)
            budget.reserve(size, f"str.{method}")
        elif isinstance(__obj, LoopContext) and len(args) == 1:  # a recursive loop's `loop(children)`
            args = (__self.iterate_within_limits(args[0]),)
        return __self.check_result(super().call(__context, __obj, *args, **kwargs), "a call")

    def guard_filter(self, name: str, function: Callable) -> Callable:
        """``function`` wrapped to tick the deadline and size its result (before it runs when
        ``_FILTER_RESULT_SIZES`` knows how)."""
        result_size = _FILTER_RESULT_SIZES.get(name)
        signature = inspect.signature(function) if result_size is not None else None
        # Jinja's async-capable filters take the context argument in a wrapper their signature hides.
        hidden_leading = int(getattr(function, "jinja_pass_arg", None) is not None
                             and getattr(inspect.unwrap(function), "jinja_pass_arg", None) is None)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            budget = self.budget()
            budget.tick()
            if signature is not None:
                try:
                    bound = signature.bind(*args[hidden_leading:], **kwargs)
                except TypeError:
                    pass  # the filter itself says what is wrong with its arguments
                else:
                    budget.reserve(_presize(result_size, bound.arguments, budget), f"the {name!r} filter")
                    args, kwargs = args[:hidden_leading] + bound.args, bound.kwargs
            return self.check_result(function(*args, **kwargs), f"the {name!r} filter")

        return update_wrapper(guarded, function)

    def _bounded_lipsum(self, lipsum: Callable) -> Callable:
        def bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # noqa: A002
            self.budget().reserve(n * max * 12, "lipsum")
            return lipsum(n, html, min, max)

        return update_wrapper(bounded_lipsum, lipsum)

    # -- security -----------------------------------------------------------------------------------

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if isinstance(obj, Namespace):
            return not attr.startswith("_")  # a namespace's attributes are the template's own variables
        for cls in type(obj).__mro__:
            if cls in self.safe_attributes:
                return attr in self.safe_attributes[cls]
        return False

    def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
        """Refuse at once: a template that reached for an internal attribute is hostile, and a silent
        undefined would let it probe for escapes."""
        line = template_line(sys._getframe(1))
        where = f" (line {line})" if line is not None else ""
        raise SecurityError(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe{where}")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format``/``format_map`` through a formatter that sizes each field (see
        ``_BoundedFormatterMixin``); otherwise as Jinja's sandbox does it."""
        if not (isinstance(value, (types.MethodType, types.BuiltinMethodType))
                and value.__name__ in ("format", "format_map") and isinstance(value.__self__, str)):
            return None
        text = value.__self__
        escaping = isinstance(text, Markup)
        is_format_map = value.__name__ == "format_map"

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            if is_format_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one positional argument")
                args, kwargs = (), args[0]
            budget = self.budget()
            formatter = (_BoundedEscapeFormatter(self, budget, escape=text.escape) if escaping
                         else _BoundedFormatter(self, budget))
            return type(text)(formatter.vformat(text, args, kwargs))

        return update_wrapper(bounded_format, value)


def render_within_limits(template: jinja2.Template, context: dict, limits: RenderLimits) -> str:
    """Render ``template`` (compiled by a ChatSandbox) with ``context`` within ``limits``: a hang
    becomes a RenderLimitError after about ``limits.seconds``, and so does output beyond
    ``limits.max_output_chars`` or memory growth beyond ``limits.max_memory_bytes``.

    >>> render_within_limits(ChatSandbox().from_string("{% for i in range(3) %}{{ i }}{% endfor %}"),
    ...                      {}, RenderLimits(seconds=1))
    '012'
    """
    if not isinstance(template.environment, ChatSandbox):
        raise TypeError("render_within_limits needs a template compiled by a ChatSandbox environment")
    budget = _Budget(limits, context)
    token = _ACTIVE_BUDGET.set(budget)
    pieces = template.generate(context)
    clock = time.monotonic
    try:
        output, chars = [], 0
        for piece in pieces:
            chars += len(piece)
            if chars > limits.max_output_chars:
                raise budget.fail("max_output_chars", f"the output reached {chars:,} characters",
                                  _suspended_template_line(pieces))
            if clock() >= budget.next_check:
                budget.checkpoint()
            output.append(piece)
        return "".join(output)
    finally:
        pieces.close()
        _ACTIVE_BUDGET.reset(token)


def _suspended_template_line(generator: types.GeneratorType) -> int | None:
    """The template line a suspended render generator last yielded from."""
    while isinstance(getattr(generator, "gi_yieldfrom", None), types.GeneratorType):
        generator = generator.gi_yieldfrom
    return template_line(generator.gi_frame) if generator.gi_frame is not None else None
