"""An implementation that answers every call at once with nothing: each public name, and whatever
it returns, is one ``Nothing`` (called, it returns itself; iterated, it is empty; compared, it
differs). A case that still hangs or crashes a worker with this as ``--impl`` does so in the oracle
or the harness, never in the implementation under test (textbound.run.pool.hangs_without_impl).

    >>> Tokenizer.from_dir("gpt2").encode("hi", add_special_tokens=False) is NOTHING
    True
    >>> list(Tokenizer.from_dir("gpt2").encode("hi")), bool(render_chat("{{ x }}", []))
    ([], False)
"""
from __future__ import annotations


class Nothing:
    """Every answer of the silent implementation (see the module)."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # pickle and copy look up protocols this way: there are none
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter(())

    def __getitem__(self, key):
        return self

    def __len__(self) -> int:
        return 0

    def __eq__(self, other) -> bool:
        return other is self

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "<no answer: silent implementation>"


NOTHING = Nothing()
__version__ = "answers nothing"
Tokenizer = IncrementalDetokenizer = StopChecker = render_chat = NOTHING
OutputParser = parse_response = assemble = NOTHING
json_schema_to_regex = tool_call_pattern = Constraint = NOTHING
