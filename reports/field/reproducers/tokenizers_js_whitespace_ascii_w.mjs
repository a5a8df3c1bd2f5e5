// @huggingface/tokenizers: the Whitespace pre-tokenizer's \w is ASCII-only
//
// @huggingface/tokenizers 0.2.0 against the reference, tokenizers 0.23.3, on a minimized tokenizer.json
// (from the tokenizers.js field run's example (reports/field/README.md), rebuilt by hand with tokenizers). EXPECTED was computed by the reference when this file was written. Needs only the engine: npm install @huggingface/tokenizers@0.2.0 && node tokenizers_js_whitespace_ascii_w.mjs
// Prints both answers and exits 1 while they differ.
import { Tokenizer } from "@huggingface/tokenizers";

const TOKENIZER_JSON = {"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null, "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": {"c": 0, "a": 1, "f": 2, "\u00e9": 3, "ca": 4, "caf": 5, "caf\u00e9": 6}, "merges": [["c", "a"], ["ca", "f"], ["caf", "\u00e9"]]}};
const TOKENIZER_CONFIG = {};
const TEXT = "caf\u00e9";
const ADD_SPECIAL_TOKENS = false;
const EXPECTED = [6]; // tokenizers 0.23.3: encode(TEXT, add_special_tokens=ADD_SPECIAL_TOKENS).ids

const tokenizer = new Tokenizer(TOKENIZER_JSON, TOKENIZER_CONFIG);
const actual = tokenizer.encode(TEXT, { add_special_tokens: ADD_SPECIAL_TOKENS }).ids;
console.log("expected:", JSON.stringify(EXPECTED));
console.log("actual:  ", JSON.stringify(actual));
process.exit(JSON.stringify(actual) === JSON.stringify(EXPECTED) ? 0 : 1);
