"""The Python engine sides (engines/vllm, engines/sglang, and a module served by
textbound.adapters.serve) die with the harness process that started them (die_with_parent), so a
parser stuck in a loop never outlives a killed worker."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from textbound.adapters import serve

ENGINES = Path(__file__).resolve().parents[1] / "engines"
# A guarded child, and a parent that starts it, prints its pid and waits to be killed.
GUARDS = {"protocol_loop": f"sys.path.insert(0, {str(ENGINES / 'vllm')!r}); from protocol_loop import die_with_parent",
          "serve": "from textbound.adapters.serve import die_with_parent"}


def parent_of_guarded_child(guard: str) -> str:
    child = f"import sys, time; {GUARDS[guard]}; die_with_parent(); print('ready', flush=True); time.sleep(60)"
    return (f"import subprocess, sys, time; child = subprocess.Popen([sys.executable, '-c', {child!r}], "
            "stdout=subprocess.PIPE); child.stdout.readline(); print(child.pid, flush=True); time.sleep(60)")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie awaiting its reaper is dead
        return stat.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
@pytest.mark.parametrize("guard", sorted(GUARDS))
def test_a_guarded_engine_dies_with_its_parent(guard):
    parent = subprocess.Popen([sys.executable, "-c", parent_of_guarded_child(guard)],
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert alive(child)
    parent.kill()
    parent.wait()
    for _ in range(100):
        if not alive(child):
            break
        time.sleep(0.05)
    assert not alive(child), "the engine outlived the harness that started it"


@pytest.mark.parametrize("engine", [ENGINES / "vllm" / "engine.py", ENGINES / "sglang" / "engine.py",
                                    Path(serve.__file__)])
def test_each_engine_side_guards_itself_first(engine):
    tree = ast.parse(engine.read_text(encoding="utf-8"))
    main = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main")
    first = main.body[0]
    assert isinstance(first, ast.Expr) and ast.unparse(first) == "die_with_parent()"
