// @huggingface/tokenizers: the Metaspace decoder strips the first token's leading ▁ although prepend_scheme is 'never'
//
// @huggingface/tokenizers 0.2.0 against the reference, tokenizers 0.23.3, on a minimized tokenizer.json
// (from the tokenizers.js field run's example (reports/field/README.md), rebuilt by hand with tokenizers). EXPECTED was computed by the reference when this file was written. Needs only the engine: npm install @huggingface/tokenizers@0.2.0 && node tokenizers_js_metaspace_never_decode.mjs
// Prints both answers and exits 1 while they differ.
import { Tokenizer } from "@huggingface/tokenizers";

const TOKENIZER_JSON = {"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": true}, "post_processor": null, "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": true}, "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": {"\u2581": 0, "a": 1, "\u2581a": 2}, "merges": [["\u2581", "a"]]}};
const TOKENIZER_CONFIG = {};
const IDS = [2];
const SKIP_SPECIAL_TOKENS = false;
const EXPECTED = " a"; // tokenizers 0.23.3: decode(IDS, skip_special_tokens=SKIP_SPECIAL_TOKENS)

const tokenizer = new Tokenizer(TOKENIZER_JSON, TOKENIZER_CONFIG);
const actual = tokenizer.decode(IDS, { skip_special_tokens: SKIP_SPECIAL_TOKENS, clean_up_tokenization_spaces: false });
console.log("expected:", JSON.stringify(EXPECTED));
console.log("actual:  ", JSON.stringify(actual));
process.exit(JSON.stringify(actual) === JSON.stringify(EXPECTED) ? 0 : 1);
