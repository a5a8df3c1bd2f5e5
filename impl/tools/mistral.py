"""mistral: ``[TOOL_CALLS]`` followed by a JSON list (v3 tokenizers), by ``name[ARGS]{...}`` (v11+),
or by ``name{...}`` (newer tokenizers write no ``[ARGS]``: vLLM reads both,
vllm/tool_parsers/mistral_tool_parser.py).

    [THINK]reasoning[/THINK]Sure.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcDEF012"}]
    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[CALL_ID]abcDEF013[ARGS]{}
    [TOOL_CALLS]get_weather{"city": "Paris"}

-> reasoning "reasoning" (Magistral's ``[THINK]``), content "Sure.", and the calls with their
arguments as written. Ids are the model's own when it writes them (``"id"`` in the list,
``[CALL_ID]``), else ``call_N``. The list, or the JSON value after ``[ARGS]``, ends where that JSON
value ends, so no closing tag is needed; a list or value that does not read as calls is content,
as written; without ``[ARGS]``, the JSON object begins right after the name (no whitespace, ``[``,
``]``, ``{`` or ``}`` in it). Where no JSON value stands (no ``[ARGS]`` nor ``name{``, or JSON that
breaks), the block is content up to the next ``[TOOL_CALLS]`` or the end of the output. Streamed, a
named call is announced at ``[ARGS]{`` or ``name{`` (its name and id come first) and its arguments
follow as written; a list's calls come whole when the list closes, since each call's ``"id"``
follows its arguments.
"""
from __future__ import annotations

import json

import regex

from .arguments import call_from_json, json_items, json_members, object_arguments, text_name
from .engine import TaggedFormat
from .json_prefix import JSON_WHITESPACE
from .json_prefix import JsonPrefix
from .message import ParsedCall
from .partial import JsonCallReader, header_identity
from .scanner import held_length

_TOOL_CALLS, _ARGS = "[TOOL_CALLS]", "[ARGS]"
_NAMED = regex.compile(r"(?|(?P<name>[^\[\]]+?)(?:\[CALL_ID\](?P<id>[^\[\]]*))?\[ARGS\]|(?P<name>[^\[\]{}\s]+)(?=\{))"
                       r"(?P<arguments>.*)", regex.DOTALL)
# A named call's header as a stream reads it, up to its arguments object.
_NAMED_HEADER = regex.compile(r"(?|(?P<name>[^\[\]]+?)(?:\[CALL_ID\](?P<id>[^\[\]]*))?\[ARGS\][ \t\r\n]*"
                              r"|(?P<name>[^\[\]{}\s]+))(?=\{)")
# Where a named call's JSON begins without [ARGS]: right after its name.
_BARE_NAME = regex.compile(r"[^\[\]{}\s]+(?=\{)")


class Mistral(TaggedFormat):
    name = "mistral"
    reasoning_tags = ("[THINK]", "[/THINK]")
    call_tags = (_TOOL_CALLS,)

    def block_end(self, opener, body, final, memo):
        next_call = body.find(_TOOL_CALLS)
        malformed = (next_call, next_call) if next_call >= 0 else (len(body), len(body)) if final else None
        first = body.lstrip(JSON_WHITESPACE)[:1]
        if not first:
            return (len(body), len(body)) if final else None
        if first == "[":
            json_start = 0
        else:
            arguments = body.find(_ARGS)
            bare = _BARE_NAME.match(body)
            if bare and (arguments < 0 or bare.end() < arguments):
                json_start = bare.end()
            elif arguments < 0 or 0 <= next_call < arguments:
                return malformed
            else:
                json_start = arguments + len(_ARGS)
        scan = memo.setdefault("scan", JsonPrefix(json_start, any_value=True))
        end = scan.run(body)
        if end is not None:
            return end, end
        if final and scan.number_at_end:
            return len(body), len(body)
        return malformed if scan.broken or final else None

    def readable(self, opener, body):
        # A [TOOL_CALLS] ends the block if the JSON breaks later: the reader waits there until it knows.
        next_call = body.find(_TOOL_CALLS)
        return next_call if next_call >= 0 else len(body) - held_length(body, (_TOOL_CALLS,))

    def call_reader(self, opener, parameters):
        return JsonCallReader(_NAMED_HEADER, header_identity)

    def parse_block(self, opener, body, parameters):
        if body.lstrip(JSON_WHITESPACE).startswith("["):
            calls = [_list_call(item) for item in json_items(body) or ()]
            return calls if calls and None not in calls else None
        named = _NAMED.fullmatch(body)
        name = named and text_name(named["name"])
        arguments = object_arguments(named["arguments"]) if name else None
        if arguments is None:
            return None
        return [ParsedCall(name, arguments, id=(named["id"] or "").strip() or None)]


def _list_call(item: str) -> ParsedCall | None:
    call = call_from_json(item)
    if call is None:
        return None
    raw_id = json_members(item).get("id")
    call_id = json.loads(raw_id) if raw_id is not None else None
    return ParsedCall(*call, id=call_id if isinstance(call_id, str) and call_id else None)
