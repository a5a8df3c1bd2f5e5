"""What checks cases in this process (``replay``, ``explain``, the pytest plugin's check_job) stops at
the case timeout: a hostile template or a hanging implementation is a verdict, never a hang; a reference
that hangs is the oracle's failure, as ``check`` records it."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from textbound.cli import EXIT_DIVERGED, EXIT_OK, EXIT_SETUP, main
from textbound.checks import Subject
from textbound.families import embedded_family
from textbound.naming.divergence import Case
from textbound.plan.implementation import Implementation
from textbound.run.pool import MAX_STUCK_PER_GROUP, TIMED_OUT, JobRun, Limits, Task, check_job, loaded
from textbound.run.time_limit import NoAnswer, time_limit

FAMILY = "gpt2"
# About 10**10 steps: rendered, it would run for hours, in transformers and in impl alike.
LOOPING_TEMPLATE = "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}{% endfor %}"
CONVERSATION = [{"role": "user", "content": "Hi"}]


@pytest.fixture
def looping_family(tmp_path):
    folder = tmp_path / "looping"
    shutil.copytree(embedded_family(FAMILY).path, folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": LOOPING_TEMPLATE}))
    return folder


def test_a_limit_stops_a_loop_and_says_it_fired():
    with time_limit(0.05) as limit:
        with pytest.raises(NoAnswer, match="no answer within 0.05 s"):
            while True:
                pass
    assert limit.fired
    with time_limit(5) as quick:
        pass
    assert not quick.fired
    time.sleep(0.1)  # the timer is off once the block ends: nothing is raised here


def test_a_limit_is_raised_again_when_a_caller_swallows_it():
    with time_limit(0.05) as limit:
        with pytest.raises(NoAnswer):
            try:
                while True:
                    pass
            except NoAnswer:  # a reference recording every error as its answer, then going on
                while True:
                    pass
    assert limit.fired


def test_cases_checked_without_a_worker_time_out_one_by_one_and_the_rest_is_abandoned():
    """tests/hanging_impl.py spins on a text with a digit: each such case is a "timed out" divergence
    after the case timeout, and after MAX_STUCK_PER_GROUP of them the job stops, saying so."""
    family = embedded_family(FAMILY)
    subject = loaded(Subject(family.name, family.path, Implementation("tests.hanging_impl")))
    cases = [Case("tokenizer", "encode", FAMILY, {"text": f"a{n}"}) for n in range(MAX_STUCK_PER_GROUP + 3)]
    sent = []
    end, error, _ = check_job(subject, Task(family, "tokenizer", cases),
                              JobRun(0, True, [0.0] * 4, sent.append, limits=Limits(case_timeout=0.1)))
    assert [(kind, index, divergence.kind) for kind, index, divergence in sent] == \
        [("stuck", index, TIMED_OUT) for index in range(MAX_STUCK_PER_GROUP)]
    assert end == MAX_STUCK_PER_GROUP
    assert error == f"abandoned after {MAX_STUCK_PER_GROUP} timed-out cases; the rest was not checked"


def test_explain_of_a_template_the_oracle_loops_on_is_its_failure_in_one_line(capsys, tmp_path, looping_family):
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION))
    code = main(["explain", "--model-dir", str(looping_family), "--conversation", str(conversation),
                 "--case-timeout", "0.5"])
    out, err = capsys.readouterr()
    assert code == EXIT_SETUP and not out
    assert err == ("textbound explain: the oracle gives no rendered prompt within 0.5 s: an oracle failure, "
                   "nothing to compare impl with\n")


def test_explain_of_an_impl_that_hangs_shows_it_at_its_stage(capsys, tmp_path):
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps(CONVERSATION))
    code = main(["explain", "--family", FAMILY, "--conversation", str(conversation), "--case-timeout", "0.5",
                 "--impl", "tests.hanging_chat_impl"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert "      impl:   no answer within 0.5 s" in out and "   prompt ids: same" in out


def replay(capsys, family_option: list[str], case: dict, *options: str) -> tuple[int, str]:
    code = main(["replay", *family_option, json.dumps(case), "--case-timeout", "1", *options])
    return code, capsys.readouterr().out


def test_replay_of_a_case_impl_hangs_on_is_its_timed_out_divergence(capsys):
    case = {"component": "tokenizer", "property": "encode", "family": FAMILY, "input": {"text": "a1"}}
    code, out = replay(capsys, ["--family", FAMILY], case, "--impl", "tests.hanging_impl")
    assert code == EXIT_DIVERGED
    assert out.startswith("tokenizer/encode/timed out on gpt2") and "no answer after 1 s" in out


def test_replay_of_a_case_the_oracle_hangs_on_is_an_oracle_failure(capsys, looping_family):
    case = {"component": "chat", "property": "render", "family": "looping",
            "input": {"template": "family", "messages": CONVERSATION, "tools": None, "documents": None,
                      "add_generation_prompt": True, "continue_final_message": False, "variables": {}}}
    code, out = replay(capsys, ["--model-dir", str(looping_family)], case)
    assert code == EXIT_OK
    assert out.startswith("oracle disagreement, not impl's divergence: chat/render/oracle failure: timed out")
