"""transformers serve: the runner's setup error in one line (exit 2) when the tiny model cannot be
written, and, where $TEXTBOUND_TRANSFORMERS_SERVE_PYTHON names an environment holding
transformers[serving] and torch (nox -s server_transformers builds one), the real server started on
a family's tiny model, answering a chat completion, and stopped (elsewhere that skips, saying so)."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON_ENV = "TEXTBOUND_TRANSFORMERS_SERVE_PYTHON"
spec = importlib.util.spec_from_file_location("transformers_serve", ROOT / "tools" / "transformers_serve.py")
transformers_serve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(transformers_serve)


def test_a_python_without_torch_is_one_line_and_exit_2(capfd):
    assert importlib.util.find_spec("torch") is None, "this test needs the harness's environment, which holds no torch"
    assert transformers_serve.main(["--python", sys.executable, "--family", "gpt2"]) == 2
    (line,) = capfd.readouterr().err.strip().splitlines()
    assert line.startswith("transformers_serve: writing the tiny llama model of ") and "torch" in line


@pytest.mark.skipif(not os.environ.get(PYTHON_ENV), reason=f"transformers serve runs in an environment of its own "
                                                          f"(${PYTHON_ENV} is not set; nox -s server_transformers)")
def test_the_server_answers_a_chat_completion_on_the_tiny_model_and_is_stopped(tmp_path, capfd):
    command = [sys.executable, "-c", "import sys, urllib.request, json; u = sys.argv[1]; "
               "b = json.dumps({'messages': [{'role': 'user', 'content': 'Hi'}], 'max_tokens': 2}).encode(); "
               "r = urllib.request.urlopen(urllib.request.Request(u + '/v1/chat/completions', b, "
               "{'content-type': 'application/json'})); "
               f"open({str(tmp_path / 'answer.json')!r}, 'wb').write(r.read()); print(u)", "{url}"]
    assert transformers_serve.main(["--python", os.environ[PYTHON_ENV], "--family", "qwen3", "--", *command]) == 0
    answer = json.loads((tmp_path / "answer.json").read_text())
    assert answer["choices"][0]["finish_reason"] == "length"
    url = capfd.readouterr().out.strip()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/health", timeout=2)
