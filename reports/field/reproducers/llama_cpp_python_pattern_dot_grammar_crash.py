"""llama-cpp-python: a JSON schema whose `pattern` escapes a dot (`\\.`) becomes a grammar llama.cpp
cannot parse, and the sampler built from it is added to the chain unchecked: the process dies. In
its server, one chat request naming such a tool in `tool_choice` (or a `response_format` schema)
kills the server (textbound's field run of llama-cpp-python's server: `tools/server/server error:
connection failed before the response: RemoteDisconnected`, then every later request refused, on a
tool whose `source_cidr` has pattern `^(\\d{1,3}\\.){3}\\d{1,3}/\\d{1,2}$`).

Where (llama-cpp-python 0.3.36):
- llama_cpp/llama_grammar.py, line 377: `ESCAPED_IN_REGEXPS_BUT_NOT_IN_LITERALS = set("[]()|{}*+?")`
  lacks `.` (and `^`, `$`), so `_visit_pattern` copies `\\.` into a GBNF literal as `"\\."`, which
  llama.cpp's grammar parser rejects ("unknown escape at \\."). llama.cpp's own converter, which this
  one ports (vendor/llama.cpp/common/json-schema-to-grammar.cpp, line 285), has
  `{'^', '$', '.', '[', ']', '(', ')', '|', '{', '}', '*', '+', '?'}`.
- llama_cpp/llama_grammar.py, lines 24-26: `LlamaGrammar.from_string` no longer parses the grammar, so
  the chat handler's fallback to plain JSON on a conversion error (llama_chat_format.py, lines
  711-722) never runs;
- llama_cpp/_internals.py, lines 755-759: `add_grammar` passes `llama_sampler_init_grammar`'s result,
  NULL for a grammar that does not parse, to `llama_sampler_chain_add` without a check.

Usage: python llama_cpp_python_pattern_dot_grammar_crash.py MODEL_GGUF
  MODEL_GGUF: any GGUF llama-cpp-python can sample from (the field run's tiny Llama 3.1 model). Runs
  the server's chat call (`Llama.create_chat_completion` with the tool named in `tool_choice`) in a
  child process. Exits 1 while the child dies by a signal, 0 once it answers or raises a Python error
  (a 4xx/5xx the server would survive).
"""
import subprocess
import sys

CHILD = r"""
import sys
from llama_cpp import Llama
llama = Llama(model_path=sys.argv[1], n_ctx=512, n_threads=1, verbose=False)
tool = {"type": "function", "function": {"name": "ping", "parameters": {
    "type": "object", "properties": {"host": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+$"}}, "required": ["host"]}}}
answer = llama.create_chat_completion(messages=[{"role": "user", "content": "ping it"}], tools=[tool],
                                      tool_choice={"type": "function", "function": {"name": "ping"}}, max_tokens=8, seed=0)
print("answered:", answer["choices"][0]["message"])
"""


def main(model_path: str) -> int:
    child = subprocess.run([sys.executable, "-c", CHILD, model_path], capture_output=True, text=True, timeout=600)
    lines = [line for line in child.stderr.splitlines() if "grammar" in line or "escape" in line]
    print(f"child exit status {child.returncode}; {child.stdout.strip() or 'no answer'}")
    print("\n".join(lines[-3:]))
    return 1 if child.returncode < 0 else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
