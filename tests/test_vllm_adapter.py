"""textbound.adapters.vllm: the engine script's protocol loop (no vllm needed), the adapter's setup
errors, and, where $TEXTBOUND_VLLM_PYTHON names an environment holding vllm (nox -s engine_vllm),
a few requests through vLLM's own classes against the oracles; elsewhere those skip, saying so.
"""
from __future__ import annotations

import importlib.util
import io
import json

import pytest
from textbound.oracles.chat_oracle import FamilyChatOracle, frozen_clock, render

from textbound.adapters import EngineMissing
from textbound.adapters.jsonl_engine import EngineError
from textbound.adapters import vllm as vllm_adapter
from tests.parser_engines import assert_encodes_and_decodes_as_tokenizers, assert_reads_a_hermes_call_whole_and_streamed
from textbound.families import build_family

VLLM = pytest.mark.skipif(not vllm_adapter.os.environ.get(vllm_adapter.PYTHON_ENV),
                          reason=f"vLLM runs in nox -s engine_vllm (${vllm_adapter.PYTHON_ENV} is not set)")


def protocol_loop():
    """engines/vllm/protocol_loop.py, loaded from its file (the engine runs it as a script's sibling)."""
    spec = importlib.util.spec_from_file_location("protocol_loop", vllm_adapter.ENGINE_SCRIPT.parent / "protocol_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answers(ops, *requests) -> list[dict]:
    out = io.StringIO()
    protocol_loop().serve(io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), out, ops)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_loop_answers_each_request_with_its_id_and_result():
    assert answers({"twice": lambda r: 2 * r["n"]}, {"id": 7, "op": "twice", "n": 3}) == [{"id": 7, "result": 6}]


def test_the_loop_reports_failures_as_the_contracts_errors_and_goes_on():
    def fail(r):
        raise json.JSONDecodeError("bad", "", 0)
    found = answers({"fail": fail, "one": lambda r: 1}, {"id": 1, "op": "fail"}, {"id": 2, "op": "nope"},
                    {"id": 3, "op": "one"})
    assert found[0]["error"]["type"] == "json.decoder.JSONDecodeError"
    assert found[1]["error"] == {"type": "ValueError", "message": "unknown op 'nope'"}
    assert found[2] == {"id": 3, "result": 1}


def test_released_handles_are_forgotten():
    handles = protocol_loop().Handles()
    kept = handles.keep("x")
    assert handles[kept] == "x"
    handles.release([kept])
    with pytest.raises(KeyError):
        handles[kept]


def test_without_the_engines_python_the_setup_says_how_to_build_it(monkeypatch):
    monkeypatch.delenv(vllm_adapter.PYTHON_ENV, raising=False)
    with pytest.raises(EngineMissing, match="nox -s engine_vllm"):
        vllm_adapter.__version__  # noqa: B018 - the harness's setup reads it


def test_an_unknown_detokenizer_is_refused_by_name(monkeypatch, tmp_path):
    python = tmp_path / "python"
    python.write_text("")
    monkeypatch.setenv(vllm_adapter.PYTHON_ENV, str(python))
    monkeypatch.setenv(vllm_adapter.DETOKENIZER_ENV, "quick")
    with pytest.raises(ValueError, match=r"TEXTBOUND_VLLM_DETOKENIZER='quick': expected one of fast, slow"):
        vllm_adapter.engine_command()


def test_the_engines_folder_is_the_checkouts_or_textbound_engines_and_a_missing_script_says_so(monkeypatch, tmp_path):
    """Installed from a wheel there is no engines/ beside textbound/: the adapter's setup names the
    script it looked for and $TEXTBOUND_ENGINES, instead of starting python on a missing file."""
    from textbound.adapters import CHECKOUT_ENGINES, ENGINES_ENV, engines_folder
    monkeypatch.delenv(ENGINES_ENV, raising=False)
    assert engines_folder() == CHECKOUT_ENGINES and vllm_adapter.ENGINE_SCRIPT.is_file()
    monkeypatch.setenv(ENGINES_ENV, str(tmp_path))
    assert engines_folder() == tmp_path.resolve()

    python = tmp_path / "python"
    python.write_text("")
    monkeypatch.setenv(vllm_adapter.PYTHON_ENV, str(python))
    monkeypatch.setattr(vllm_adapter, "ENGINE_SCRIPT", engines_folder() / "vllm" / "engine.py")
    with pytest.raises(EngineMissing, match=rf"^{tmp_path.resolve()}/vllm/engine.py: no such file "
                                            rf"\(\$TEXTBOUND_ENGINES={tmp_path}\); set \$TEXTBOUND_ENGINES to "):
        vllm_adapter.engine_command()


def test_the_detokenizer_and_the_tools_tokenizer_are_passed_to_the_engine(monkeypatch, tmp_path):
    python = tmp_path / "python"
    python.write_text("")
    monkeypatch.setenv(vllm_adapter.PYTHON_ENV, str(python))
    monkeypatch.setenv(vllm_adapter.DETOKENIZER_ENV, "slow")
    monkeypatch.setenv(vllm_adapter.TOOLS_TOKENIZER_ENV, str(tmp_path))
    assert vllm_adapter.engine_command() == [str(python), str(vllm_adapter.ENGINE_SCRIPT), "--detokenizer", "slow",
                                             "--tools-base", str(tmp_path.resolve())]


# -- through vLLM -----------------------------------------------------------------------------------

@VLLM
def test_vllm_encodes_and_decodes_as_tokenizers():
    assert_encodes_and_decodes_as_tokenizers(vllm_adapter)


@VLLM
def test_vllm_streams_a_prompts_continuation():
    tokenizer = vllm_adapter.Tokenizer.from_dir(build_family("qwen"))
    ids = tokenizer.encode("Hello world", add_special_tokens=False)
    detokenizer = vllm_adapter.IncrementalDetokenizer(tokenizer, skip_special_tokens=True, prompt_ids=ids[:1])
    shown = "".join(detokenizer.add([token_id]) for token_id in ids[1:]) + detokenizer.flush()
    assert detokenizer.prompt_text + shown == "Hello world" and detokenizer.text == shown


@VLLM
def test_vllm_stops_at_a_stop_string_split_across_deltas():
    checker = vllm_adapter.StopChecker(["STOP"])
    released = "".join(checker.add(delta) for delta in ["ab", "cS", "TO", "Pxyz"]) + checker.finish()
    assert (released, checker.stopped, checker.stop_string) == ("abc", True, "STOP")


@VLLM
def test_vllms_hermes_parser_reads_a_call_whole_and_streamed():
    assert_reads_a_hermes_call_whole_and_streamed(vllm_adapter)


@VLLM
def test_a_format_vllm_cannot_run_here_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="not provided: vLLM's Harmony parser"):
        vllm_adapter.parse_response("hi", "gpt_oss")


CONTENT_PARTS = ("{% for m in messages %}{% if m.content is string %}[{{ m.content }}]{% else %}"
                 "{% for part in m.content %}({{ part.text }}){% endfor %}{% endif %}{% endfor %}")


@VLLM
def test_vllms_server_renders_a_request_as_transformers_in_text_and_ids():
    template = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ strftime_now('%Y') }}"
                "{% if add_generation_prompt %}<assistant>{% endif %}")
    messages = [{"role": "user", "content": "Hi there"}]
    family = build_family("qwen")
    with frozen_clock():
        expected_text = render(template, messages, add_generation_prompt=True)
        expected_ids = FamilyChatOracle.of(family).ids(messages, template, False, add_generation_prompt=True)
        text = vllm_adapter.render_chat(template, messages, add_generation_prompt=True)
        ids = vllm_adapter.Tokenizer.from_dir(family).apply_chat_template(messages, chat_template=template,
                                                                          add_generation_prompt=True)
    assert (text, ids) == (expected_text, expected_ids) and text.endswith("2025<assistant>")


@VLLM
def test_vllm_hands_a_template_that_loops_over_content_its_parts():
    messages = [{"role": "user", "content": "Hi"}]
    assert render(CONTENT_PARTS, messages) == "[Hi]"  # transformers passes the string as given
    assert vllm_adapter.render_chat(CONTENT_PARTS, messages) == "(Hi)"  # vLLM detected the "openai" format


@VLLM
def test_a_templates_own_error_is_what_vllm_reports_raised():
    with pytest.raises(EngineError) as raised:
        vllm_adapter.render_chat("{{ raise_exception('no system') }}", [{"role": "user", "content": "Hi"}])
    assert (type(raised.value).__module__, type(raised.value).__name__, str(raised.value)) == (
        "jinja2.exceptions", "TemplateError", "no system")


@VLLM
def test_with_reasoning_off_a_prefix_of_think_is_streamed_at_once():
    """'<th' begins no marker a composed parser reads when reasoning is off (Hermes' parser reads
    '<tool_call>' only): the server streams it as it comes, so the adapter holds nothing back (it held
    prefixes of '<think>' whatever the reasoning flag)."""
    parser = vllm_adapter.OutputParser("hermes", tools=None, reasoning=False)
    assert vllm_adapter.assemble(parser.feed("<th"))["content"] == "<th"
