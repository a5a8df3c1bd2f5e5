"""impl/, oracles/, properties/, corpora/ and mutants/ are textbound's subpackages (setup.py): their
public names import as ``textbound.impl``, and an --impl recorded under the old names still loads."""
from __future__ import annotations

import subprocess
import sys

from textbound.plan.implementation import import_module


def test_impl_imports_as_textbound_impl_without_the_oracles() -> None:
    code = ("import sys; from textbound.impl import Tokenizer, render_chat; "
            "print(sorted(m for m in ('tokenizers', 'transformers', 'textbound.checks') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_impl_named_before_the_namespace_is_the_namespace_module() -> None:
    assert import_module("impl").__name__ == "textbound.impl"
    assert import_module("mutants.stops_within_delta").__name__ == "textbound.mutants.stops_within_delta"
