// A family's tokenizer in @huggingface/tokenizers (the tokenizers of transformers.js), served over
// textbound's JSON-lines protocol:
//
//   TEXTBOUND_ENGINE_CMD="node engines/js/tokenizer_engine.mjs" \
//       textbound check --impl textbound.adapters.jsonl_engine --component tokenizer
//
// `load` reads the family folder's tokenizer.json and tokenizer_config.json ({} when absent) from
// disk, as transformers.js' PreTrainedTokenizer gives them to `new Tokenizer(json, config)`.
// Decoding passes clean_up_tokenization_spaces: false, as tokenizers (the oracle) never cleans up
// (transformers' and transformers.js' decode clean up on top when the config asks). The library has
// no streamed decode: decode_batch serves textbound.adapters.js_tokenizers, which streams by whole
// decodes.
//
//   -> {"id": 2, "op": "load", "path": "/models/qwen3"}          <- {"id": 2, "result": null}
//   -> {"id": 3, "op": "encode", "text": "Hi", "add_special_tokens": false}
//   <- {"id": 3, "result": [13048]}
//
// Server entry point: none (transformers.js has no server): encode/decode of `new Tokenizer(json,
// config)` as transformers.js' PreTrainedTokenizer calls them.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { packageVersion, pythonError, serve } from "./protocol.mjs";

let tokenizer = null;

function loaded() {
	if (tokenizer === null) throw pythonError("ValueError", "no family loaded: this request needs a family's process");
	return tokenizer;
}

function readJson(path) {
	return JSON.parse(readFileSync(path, "utf8"));
}

function load(r) {
	const config = join(r.path, "tokenizer_config.json");
	tokenizer = new Tokenizer(readJson(join(r.path, "tokenizer.json")), existsSync(config) ? readJson(config) : {});
}

function decode(ids, skip_special_tokens) {
	return loaded().decode(ids, { skip_special_tokens, clean_up_tokenization_spaces: false });
}

const ops = {
	load,
	encode: (r) => loaded().encode(r.text, { add_special_tokens: r.add_special_tokens }).ids,
	decode: (r) => decode(r.ids, r.skip_special_tokens),
	decode_batch: (r) => r.batch.map((ids) => decode(ids, r.skip_special_tokens)),
	token_to_id: (r) => loaded().token_to_id(r.token) ?? null,
	id_to_token: (r) => loaded().id_to_token(r.token_id) ?? null,
	vocab_size: () => loaded().get_vocab(true).size,
};

serve("@huggingface/tokenizers", packageVersion("@huggingface/tokenizers"), ops);
