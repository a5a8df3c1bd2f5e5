// The JSON-lines protocol of textbound.adapters.jsonl_engine, engine side: one request per stdin
// line, one answer per stdout line, in order. See that module's docstring for every op.
//
//   -> {"id": 1, "op": "hello", "protocol": 1}
//   <- {"id": 1, "result": {"engine": "@huggingface/jinja", "version": "0.5.11", "ops": ["render_chat"]}}
//
// An op that throws answers {"error": {"type", "message"}}: the type is the one pythonError gave it,
// else what the engine's errorType(exc) names (a Python builtin's name, or a dotted class the
// harness compares with transformers' exceptions).
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";

/** The installed version of an npm package of this folder ("0.5.11"). */
export function packageVersion(name) {
	const url = new URL(`./node_modules/${name}/package.json`, import.meta.url);
	return JSON.parse(readFileSync(url, "utf8")).version;
}

/** An error the harness raises as the Python class `type` ("ValueError"). */
export function pythonError(type, message) {
	return Object.assign(new Error(message), { pythonType: type });
}

/**
 * Serves requests until stdin closes. `ops` maps an op name to a function of the request;
 * `errorType(exc)` names the error an op threw (default: "RuntimeError").
 */
export function serve(engine, version, ops, errorType = () => "RuntimeError") {
	const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
	lines.on("line", (line) => {
		if (!line.trim()) return;
		const request = JSON.parse(line);
		let answer;
		try {
			if (request.op === "hello") {
				answer = { id: request.id, result: { engine, version, ops: Object.keys(ops) } };
			} else if (!Object.hasOwn(ops, request.op)) {
				throw pythonError("NotImplementedError", `this engine has no op ${request.op}`);
			} else {
				answer = { id: request.id, result: ops[request.op](request) ?? null };
			}
		} catch (exc) {
			answer = { id: request.id, error: { type: exc?.pythonType ?? errorType(exc), message: String(exc?.message ?? exc) } };
		}
		process.stdout.write(JSON.stringify(answer) + "\n");
	});
}
