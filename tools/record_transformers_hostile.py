"""Record what transformers does with each hostile chat template, and tabulate it beside impl.

Each template in corpora/hostile_templates/index.json is rendered by transformers' own
``apply_chat_template`` (``tokenize=False``, through oracles/chat_oracle.py) with the catalogue's
context, in a child process limited to ``CPU_SECONDS`` of processor time for the render (RLIMIT_CPU:
unlike wall time, it does not depend on how busy the machine is; ``WALL_SECONDS`` is a backstop) and
``ADDRESS_SPACE_BYTES`` of address space (RLIMIT_AS), so that a bomb costs the child, not this machine. The outcome is one of
``allows`` (with the output length), ``refuses`` (exception class and message head), ``timed out``
or ``out of memory``; the file is stamped with the transformers version.

    python tools/record_transformers_hostile.py             # writes transformers_outcomes.json
    python tools/record_transformers_hostile.py --markdown  # rewrites the table in README.md

``--markdown`` renders each template with impl (``impl.render_chat``, default limits, whose 10 s
deadline comes before ``CPU_SECONDS``, in a child process under the same limits) and writes the table (template, attack, transformers, impl) between
the markers in the catalogue's README.md. It takes a few minutes: the time-outs dominate.
"""
from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = ROOT / "corpora" / "hostile_templates"
OUTCOMES = CATALOGUE / "transformers_outcomes.json"
README = CATALOGUE / "README.md"
TABLE_START, TABLE_END = "<!-- outcomes table: generated -->", "<!-- end of outcomes table -->"
CPU_SECONDS = 12
WALL_SECONDS = 120
ADDRESS_SPACE_BYTES = 2 * 2**30
MESSAGE_HEAD = 120  # characters of an exception message kept
READY = "ready"  # what a child prints once it has imported everything and starts rendering


def catalogue() -> dict:
    """The catalogue index: ``context`` and ``templates`` (name, file, attack, tries)."""
    return json.loads((CATALOGUE / "index.json").read_text(encoding="utf-8"))


def _render_in_child(side: str, name: str) -> None:
    """Child process: render one template on one side, print its outcome as one JSON line."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    index = catalogue()
    entry = next(e for e in index["templates"] if e["name"] == name)
    source = (CATALOGUE / entry["file"]).read_text(encoding="utf-8")
    context = index["context"]
    if side == "transformers":
        from textbound.oracles.chat_oracle import render
    else:
        from textbound.impl import render_chat as render
    used = resource.getrusage(resource.RUSAGE_SELF)
    budget = int(used.ru_utime + used.ru_stime) + CPU_SECONDS  # the time limit starts now, not while Python imports
    resource.setrlimit(resource.RLIMIT_CPU, (budget, budget + 5))
    print(READY, flush=True)
    try:
        text = render(source, context["messages"], tools=context["tools"])
    except MemoryError:
        outcome = {"outcome": "out of memory"}
    except BaseException as error:  # noqa: BLE001 (every way a render can fail is an outcome)
        outcome = {"outcome": "refuses", "exception": type(error).__name__,
                   "message": str(error)[:MESSAGE_HEAD]}
    else:
        outcome = {"outcome": "allows", "output_chars": len(text)}
    print(json.dumps(outcome), flush=True)


def outcome_of(side: str, name: str) -> dict:
    """Render ``name`` on ``side`` ("transformers" or "impl") in a limited child process."""
    command = [sys.executable, __file__, "--child", side, name]
    with tempfile.TemporaryFile("w+") as errors, \
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True, cwd=ROOT) as child:
        if child.stdout.readline().strip() != READY:
            child.wait()
            errors.seek(0)
            raise RuntimeError(f"the {side} child for {name} failed before rendering:\n{errors.read()[-2000:]}")
        try:
            child.wait(timeout=WALL_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            return {"outcome": "timed out"}
        result = child.stdout.read().strip()
    if result:
        return json.loads(result.splitlines()[-1])
    if child.returncode == -signal.SIGXCPU:
        return {"outcome": "timed out"}
    # Killed without a word: the allocator failed somewhere Python could not raise MemoryError.
    return {"outcome": "out of memory", "exit_status": child.returncode}


def record() -> None:
    from importlib.metadata import version
    outcomes = {}
    for entry in catalogue()["templates"]:
        outcomes[entry["name"]] = outcome_of("transformers", entry["name"])
        print(f"{entry['name']}: {outcomes[entry['name']]}", file=sys.stderr)
    OUTCOMES.write_text(json.dumps({
        "oracle": f"transformers {version('transformers')}",
        "jinja2": version("jinja2"),
        "python": sys.version.split()[0],
        "limits": {"cpu_seconds": CPU_SECONDS, "address_space_bytes": ADDRESS_SPACE_BYTES},
        "outcomes": outcomes,
    }, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUTCOMES}")


def describe(outcome: dict) -> str:
    """One table cell: ``allows (12 chars)``, ``refuses: SecurityError — access to ...``."""
    kind = outcome["outcome"]
    if kind == "allows":
        return f"allows ({outcome['output_chars']:,} chars)"
    if kind == "refuses":
        message = outcome["message"].replace("|", "\\|").replace("\n", " ")
        return f"refuses: `{outcome['exception']}` {message}"
    return kind


def markdown() -> None:
    recorded = json.loads(OUTCOMES.read_text(encoding="utf-8"))
    rows = [f"Recorded with {recorded['oracle']} (jinja2 {recorded['jinja2']}, Python {recorded['python']}), "
            f"each render limited to {CPU_SECONDS} s of processor time and {ADDRESS_SPACE_BYTES // 2**30} GB of "
            "address space; impl with its default limits.",
            "", "| template | attack | transformers | impl |", "| --- | --- | --- | --- |"]
    for entry in catalogue()["templates"]:
        impl_outcome = outcome_of("impl", entry["name"])
        rows.append(f"| `{entry['name']}` | {entry['attack']}: {entry['tries']} | "
                    f"{describe(recorded['outcomes'][entry['name']])} | {describe(impl_outcome)} |")
        print(f"{entry['name']}: impl {impl_outcome}", file=sys.stderr)
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(TABLE_START)
    _, tail = rest.split(TABLE_END)
    README.write_text(head + TABLE_START + "\n" + "\n".join(rows) + "\n" + TABLE_END + tail, encoding="utf-8")
    print(f"wrote {README}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="rewrite the comparison table in README.md")
    parser.add_argument("--child", nargs=2, metavar=("SIDE", "NAME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        _render_in_child(*args.child)
    elif args.markdown:
        markdown()
    else:
        record()
    return 0


if __name__ == "__main__":
    sys.exit(main())
