// Chat templates rendered by @huggingface/jinja (the template engine of transformers.js), served
// over textbound's JSON-lines protocol (ops render_chat and render_template):
//
//   TEXTBOUND_ENGINE_CMD="node engines/js/chat_engine.mjs" \
//       textbound check --impl textbound.adapters.jsonl_engine --component chat
//
// Two ops:
// - render_chat renders a request as transformers.js' apply_chat_template does: `new Template(source)`
//   (trim_blocks and lstrip_blocks on) given messages, tools, documents, add_generation_prompt and
//   the other arguments as template variables, as they arrive: no copy, no None-valued keys dropped,
//   no reasoning aliases, and continue_final_message only a variable (transformers.js has no such
//   option: the final message is not continued);
// - render_template {template, context, now} -> str renders a context prepared by the caller
//   (textbound.adapters.hf_jinja prepares it as transformers does, so only the engine differs).
// Only what the harness must control is changed:
// - `strftime_now` reads the harness's frozen clock (the request's `now`, local time) through a
//   Date frozen during the render, so the engine's own strftime is what is measured;
// - errors are named as jinja2 names the same cause: a template the engine cannot parse is
//   jinja2.exceptions.TemplateSyntaxError, `raise_exception(message)` is
//   jinja2.exceptions.TemplateError; any other render failure is huggingface_jinja.Error.
//
//   -> {"id": 2, "op": "render_chat", "template": "{{ messages[0].content }}", "messages": [{"role": "user", "content": "Hi"}], ...}
//   <- {"id": 2, "result": "Hi"}
//
// Server entry point: none (transformers.js has no server): render_chat is what its
// apply_chat_template does, render_template the template engine's `new Template(source).render`.
import { Environment, Template } from "@huggingface/jinja";
import { packageVersion, pythonError, serve } from "./protocol.mjs";

class TemplateRaised extends Error {}
class TemplateUnparsable extends Error {}

// Environment.set is how the engine declares its globals: raise_exception is replaced by one whose
// error this engine can tell from the engine's own failures.
const declare = Environment.prototype.set;
Environment.prototype.set = function (name, value) {
	if (name === "raise_exception") {
		value = (message) => {
			throw new TemplateRaised(String(message));
		};
	}
	return declare.call(this, name, value);
};

const RealDate = globalThis.Date;

/** Runs `render()` with `new Date()` and `Date.now()` reading `iso` (local time, no offset). */
function atFrozenTime(iso, render) {
	const frozen = new RealDate(iso).getTime();
	if (Number.isNaN(frozen)) {
		throw pythonError("ValueError", `now is not an ISO 8601 time: ${iso}`);
	}
	globalThis.Date = class extends RealDate {
		constructor(...args) {
			super(...(args.length ? args : [frozen]));
		}
		static now() {
			return frozen;
		}
	};
	try {
		return render();
	} finally {
		globalThis.Date = RealDate;
	}
}

const compiled = new Map(); // template source -> Template (parsed once, as transformers.js caches)

function compile(source) {
	if (typeof source !== "string") {
		throw pythonError("TypeError", `a chat template is a string, not ${typeof source}`);
	}
	if (!compiled.has(source)) {
		try {
			compiled.set(source, new Template(source));
		} catch (exc) {
			throw new TemplateUnparsable(exc.message);
		}
	}
	return compiled.get(source);
}

function renderChat(r) {
	const context = {
		messages: r.messages,
		add_generation_prompt: r.add_generation_prompt,
		tools: r.tools,
		documents: r.documents,
		continue_final_message: r.continue_final_message, // a template variable to transformers.js
		...r.variables,
	};
	return renderTemplate({ template: r.template, context, now: r.now });
}

function renderTemplate(r) {
	const template = compile(r.template);
	return atFrozenTime(r.now, () => template.render(r.context));
}

function errorType(exc) {
	if (exc instanceof TemplateUnparsable) return "jinja2.exceptions.TemplateSyntaxError";
	if (exc instanceof TemplateRaised) return "jinja2.exceptions.TemplateError";
	return "huggingface_jinja.Error";
}

serve("@huggingface/jinja", packageVersion("@huggingface/jinja"), { render_chat: renderChat, render_template: renderTemplate }, errorType);
