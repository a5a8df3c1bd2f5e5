"""mlx-lm's own server (tools/serve_engine.py --engine mlx-lm): the launch plan and its errors, on a
stand-in python (no mlx needed); where mlx-lm is installed (nox -s server_mlx_lm), the tiny model
engines/mlx_lm/tiny_model.py writes, served by ``python -m mlx_lm.server``: it loads, lists its model,
and answers a chat completion the same streamed and not. Elsewhere those skip, saying so."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from textbound.server.client import ServerClient
from textbound.server.dialect import GenerationRequest, open_dialect
from textbound.server.launch import HOST, PORT_PLACEHOLDER, LaunchError, running_server
from tools import serve_engine
from tools.serve_engine import mlx_lm_plan

ARGS_SEEN = "args.json"  # where the stand-in python writes the arguments it was run with


def stand_in_python(tmp_path: Path, exit_status: int, stderr: str = "") -> Path:
    """An executable that records its arguments beside itself, prints ``stderr`` and exits with ``exit_status``."""
    script = tmp_path / "python"
    script.write_text(f"#!{sys.executable}\nimport json, sys\n"
                      f"json.dump(sys.argv[1:], open({str(tmp_path / ARGS_SEEN)!r}, 'w'))\n"
                      f"sys.stderr.write({stderr!r})\nsys.exit({exit_status})\n", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(("family", "model_type"), [("qwen3", "qwen3"), ("llama3_1", "llama")])
def test_the_plan_serves_the_model_the_writer_wrote_with_an_empty_hub_cache(tmp_path, family, model_type):
    python = stand_in_python(tmp_path, 0)
    with mlx_lm_plan(python, tmp_path / family) as plan:
        hub = Path(os.environ["HF_HUB_CACHE"])
        model = Path(plan.argv[4])
        assert plan.argv == (str(python), "-m", "mlx_lm.server", "--model", str(model), "--host", HOST,
                             "--port", PORT_PLACEHOLDER)
        assert hub.is_dir() and not any(hub.iterdir()) and model.parent == hub.parent
        written = json.loads((tmp_path / ARGS_SEEN).read_text(encoding="utf-8"))
        assert written == [str(serve_engine.MLX_LM_TINY_MODEL), str(tmp_path / family), str(model),
                           "--model-type", model_type]
    assert not hub.parent.exists() and os.environ.get("HF_HUB_CACHE") != str(hub)


def test_a_writer_that_fails_is_one_line_naming_its_last_words(tmp_path):
    python = stand_in_python(tmp_path, 1, "Traceback (most recent call last):\nModuleNotFoundError: No module named 'mlx'\n")
    with pytest.raises(LaunchError) as raised:
        with mlx_lm_plan(python, tmp_path / "qwen3"):
            pytest.fail("no plan without a model")
    assert str(raised.value) == (f"writing the tiny mlx-lm model of {tmp_path / 'qwen3'} failed: "
                                 "ModuleNotFoundError: No module named 'mlx'")


def test_serve_engine_says_so_in_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TEXTBOUND_MLX_LM_PYTHON", str(stand_in_python(tmp_path, 1, "no mlx here\n")))
    assert serve_engine.main(["--engine", "mlx-lm", "--family", "qwen", "--", "true"]) == serve_engine.SETUP_ERROR
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith("serve_engine: writing the tiny mlx-lm model") and "no mlx here" in error


@pytest.fixture(scope="module")
def served():
    """The URL of ``python -m mlx_lm.server`` serving the tiny model of the embedded qwen family, and
    the model's folder."""
    pytest.importorskip("mlx_lm", reason="mlx-lm is not installed (pip install -e '.[mlx-lm]'; nox -s server_mlx_lm)")
    from textbound.families import build_family
    with mlx_lm_plan(Path(sys.executable), build_family("qwen")) as plan:
        with running_server(plan) as url:
            yield url, Path(plan.argv[4])


def test_the_tiny_model_is_served_and_listed(served):
    url, model = served
    listed = ServerClient(url, timeout=30).get_json("/v1/models")["data"]
    assert [entry["id"] for entry in listed] == [str(model.resolve())]


def test_the_server_answers_a_chat_the_same_streamed_and_not(served):
    dialect = open_dialect("openai", served[0], timeout=60)
    ask = GenerationRequest(messages=[{"role": "user", "content": "Hi"}], max_tokens=6, seed=3)
    whole = dialect.generate(ask)
    streamed = dialect.generate(GenerationRequest(**{**ask.__dict__, "stream": True}))
    # the embedded qwen template leaves the reply in <think>: the server answers it as reasoning
    assert (whole.reasoning, whole.text, whole.finish_reason) == (streamed.reasoning, streamed.text, "length")
    assert whole.reasoning
