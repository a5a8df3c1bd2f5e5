"""Scripts of tokenizer/encode and tokenizer/decode: the module's ``Tokenizer.from_dir`` on the
minimized tokenizer.json against tokenizers' answer on the same file."""
from __future__ import annotations

from .reference import oracle_subject, reference_decode
from .registry import Script, ScriptPlan, scripted


@scripted("tokenizer", "encode", tokenizer=True)
def encode_script(plan: ScriptPlan) -> Script:
    """``encode("a1")`` -> EXPECTED, tokenizers' ids, beside ``tokenizer.encode(TEXT, ...)``."""
    text, add = plan.case.input["text"], bool(plan.case.input.get("add_special_tokens", False))
    return Script({"TEXT": text, "ADD_SPECIAL_TOKENS": add}, oracle_subject(plan).oracle.encode(text, add),
                  "tokenizers' encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS).ids",
                  "actual = list(tokenizer.encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS))\n")


@scripted("tokenizer", "decode", tokenizer=True)
def decode_script(plan: ScriptPlan) -> Script:
    """``decode([220, 83])`` -> EXPECTED, tokenizers' text, beside ``tokenizer.decode(IDS, ...)``."""
    ids, skip = plan.case.input["ids"], bool(plan.case.input.get("skip_special_tokens", False))
    return Script({"IDS": ids, "SKIP_SPECIAL_TOKENS": skip}, reference_decode(plan, ids, skip),
                  "tokenizers' decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)",
                  "actual = tokenizer.decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)\n")
