"""The mutation machinery (textbound/run/mutate.py) on a handful of the catalogue's mutants.

Each mutant of a different component goes through the quick budget's cases on one embedded family
and must be caught by a divergence impl does not have, with a minimized example. The whole
catalogue is the ``mutants`` nox session, not a test: it takes minutes.
"""
from __future__ import annotations

import importlib
import json

import pytest

from textbound import impl
from textbound.checks import CHECKS
from textbound.families import embedded_family
from textbound.mutants import BY_NAME, CATALOGUE
from textbound.naming.divergence import COMPONENTS
from textbound.run.mutate import hunt, main, run_mutants

# One per component the quick budget checks quickly on gpt2 (chat on the project's ChatML template).
SAMPLE = ["tokenizer_added_after_digit", "tokenizer_byte_fallback_subparts", "detokenizer_per_token",
          "stops_wrong_stop_string", "stops_fixed_holdback", "chat_generation_prompt_ignored"]
FAMILIES = {"tokenizer_byte_fallback_subparts": "sentencepiece"}  # byte fallback needs such a family


def test_catalogue_is_well_formed():
    assert len(CATALOGUE) >= 40
    assert len(BY_NAME) == len(CATALOGUE)
    assert {m.component for m in CATALOGUE} == set(COMPONENTS)
    checked = {component for component, _ in CHECKS}
    for mutant in CATALOGUE:
        assert mutant.component in checked and mutant.bug and mutant.drawn_from
        module = importlib.import_module(mutant.module)
        # A mutant re-exports every public name of impl, and replaces at least one of them.
        assert all(hasattr(module, name) for name in impl.__all__), mutant.name
        assert any(getattr(module, name) is not getattr(impl, name) for name in impl.__all__), mutant.name


@pytest.mark.parametrize("name", SAMPLE)
def test_sampled_mutant_is_caught_with_a_small_example(name: str):
    family = [embedded_family(FAMILIES.get(name, "gpt2"))]
    verdict = hunt(BY_NAME[name], family, examples=1, time_limit=120)
    assert verdict.outcome == "caught", verdict.error
    assert verdict.signature.startswith(BY_NAME[name].component + "/")
    assert len(json.dumps(verdict.example, ensure_ascii=False)) < 400


def test_impl_itself_is_never_caught():
    """The base against itself: no divergence can count, so a mutant that changes nothing is missed."""
    from textbound.mutants import Mutant
    unchanged = Mutant("stops_include_stop_ignored", "stops", "unchanged", "test")
    verdict = hunt(unchanged, [embedded_family("gpt2")], base=unchanged.module, time_limit=120)
    assert verdict.outcome == "missed" and verdict.cases > 0


def test_run_mutants_in_workers_and_the_command(tmp_path, capsys):
    mutants = [BY_NAME["stops_within_delta"], BY_NAME["stops_include_stop_ignored"]]
    verdicts = run_mutants(mutants, [embedded_family("gpt2")], jobs=2, examples=1)
    assert [v.name for v in verdicts] == [m.name for m in mutants]
    assert all(v.outcome == "caught" for v in verdicts)

    report = tmp_path / "textbound.mutants.json"
    assert main(["--mutant", "stops_earliest_start", "--family", "gpt2", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "mutation score: 1/1 caught (100.0%)" in out
    assert json.loads(report.read_text())["verdicts"][0]["outcome"] == "caught"
    assert main(["--mutant", "no_such_mutant"]) == 2


def test_an_exception_in_the_mutant_itself_is_no_catch():
    """impl changing under a mutant breaks the mutant's own code: that is reported, not counted."""
    from textbound.naming.divergence import Case, Divergence
    from textbound.run.mutate import _raised_in_mutants
    case = Case("tools", "stream", "gpt2", {})
    broken = Divergence(case, None, "AttributeError: no _text", "raised AttributeError",
                        {"where": "tools_tag_split_leaks.py:14"})
    assert _raised_in_mutants(broken)
    assert not _raised_in_mutants(Divergence(case, None, "ValueError", "raised ValueError", {"where": "engine.py:3"}))
