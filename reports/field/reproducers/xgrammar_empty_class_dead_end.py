"""xgrammar's token mask allows a token after which nothing is allowed (no token, no stop token)
when an alternative of the grammar holds a character class with no member: the regex
``a[^\\s\\S]|b`` matches only "b", yet xgrammar allows "a" first and then leaves the matcher
with an all-zero mask, neither completed nor able to go on.

Needs: xgrammar (0.2.9), torch (CPU), transformers, and a Hugging Face tokenizer folder (default:
Mistral 7B's vocabulary under $TEXTBOUND_MODELS/llama2; `python FILE TOKENIZER_DIR` for another).
Exits 1 while the bug is there, 0 once it is fixed.

Drives xgrammar as vLLM's xgrammar backend does (vllm/v1/structured_output/backend_xgrammar.py):
TokenizerInfo.from_huggingface, GrammarCompiler.compile_regex for a `regex` structured output and
compile_json_schema for a `json` one, GrammarMatcher.accept_token and fill_next_token_bitmask.

The reference: Python's `re` says `[^\\s\\S]` matches no character, so no string starting with "a"
matches the pattern and "a" is not a prefix of any match; a mask must never allow a token after
which no completion exists (llguidance forces "b" here).
"""
import json
import os
import re
import sys

import torch
import xgrammar as xgr
from transformers import AutoTokenizer

PATTERN = r"a[^\s\S]|b"
# The same alternative as a JSON-schema string pattern: what a `json` structured output compiles.
SCHEMA = {"type": "string", "pattern": r"^(a[^\s\S]|b)$"}

folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("TEXTBOUND_MODELS", "."), "llama2")
tokenizer = AutoTokenizer.from_pretrained(folder)
info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
compiler = xgr.GrammarCompiler(info)
bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)

if any(re.fullmatch(r"[^\s\S]", chr(code)) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF):
    sys.exit("the reference says [^\\s\\S] matches a character: the reproducer is wrong")


def allowed_ids(matcher: xgr.GrammarMatcher) -> list[int]:
    matcher.fill_next_token_bitmask(bitmask)
    words = bitmask[0].to(torch.int64) & 0xFFFFFFFF
    bits = (words.unsqueeze(1) >> torch.arange(32, dtype=torch.int64)) & 1
    return [i for i in torch.nonzero(bits.flatten()).flatten().tolist() if i < info.vocab_size]


def dead_end_after_a(compiled: xgr.CompiledGrammar, before: str) -> tuple[list[str], bool, int, bool]:
    """The tokens first allowed whose text is "a", whether the matcher accepted one, and
    then how many ids its mask allows and whether it is completed."""
    matcher = xgr.GrammarMatcher(compiled)
    if before and not matcher.accept_string(before):
        sys.exit(f"xgrammar refuses {before!r}, which every match starts with: the reproducer is wrong")
    first = allowed_ids(matcher)
    a_tokens = [i for i in first if tokenizer.decode([i]) == "a"]
    if not a_tokens:
        return [], False, -1, False
    accepted = matcher.accept_token(a_tokens[0])
    return [tokenizer.convert_ids_to_tokens(i) for i in a_tokens], accepted, len(allowed_ids(matcher)), matcher.is_completed()


GRAMMARS = (("compile_regex", lambda: compiler.compile_regex(PATTERN), ""),
            ("compile_json_schema", lambda: compiler.compile_json_schema(json.dumps(SCHEMA)), '"'))
failed = False
for name, compile_grammar, before in GRAMMARS:
    print(f"{name}: expected: no token spelling 'a' allowed{' after ' + repr(before) if before else ''} "
          f"(only 'b' continues to a match), or the grammar refused")
    try:
        compiled = compile_grammar()
    except RuntimeError as error:  # refusing a class with no member, as `[]` is refused, is a fix too
        print(f"{name}: actual:   refused: {str(error).strip().splitlines()[-1]}")
        continue
    a_tokens, accepted, after, completed = dead_end_after_a(compiled, before)
    if not a_tokens:
        print(f"{name}: actual:   no token spelling 'a' allowed")
        continue
    failed = True
    print(f"{name}: actual:   allows {a_tokens}; after accepting {a_tokens[0]!r} (accept_token -> {accepted}) "
          f"the mask allows {after} ids (stop tokens included), is_completed() -> {completed}")
sys.exit(1 if failed else 0)
