// @huggingface/jinja: a backslash-newline inside a string literal is a syntax error (jinja2: a line continuation)
//
// @huggingface/jinja 0.5.11 against the reference, jinja2 3.1.6 as transformers 5.24.0 configures
// it (apply_chat_template), on a minimized template (from the hf-jinja field run's example (reports/field/README.md), minimized by hand).
// CONTEXT is what transformers hands the template for the request; EXPECTED was computed by the
// reference when this file was written. Needs only the engine:
// npm install @huggingface/jinja@0.5.11 && node hf_jinja_backslash_newline.mjs
// Prints both answers and exits 1 while they differ.
import { Template } from "@huggingface/jinja";

const TEMPLATE = "{{ \"a\\\nb\" }}";
const CONTEXT = {};
const EXPECTED = {"text": "ab"};

let actual;
try {
	actual = { text: new Template(TEMPLATE).render(CONTEXT) };
} catch (exc) {
	actual = { error: String(exc && exc.message !== undefined ? exc.message : exc) };
}
console.log("expected:", JSON.stringify(EXPECTED));
console.log("actual:  ", JSON.stringify(actual));
const same = "error" in EXPECTED ? "error" in actual : actual.text === EXPECTED.text;
process.exit(same ? 0 : 1);
