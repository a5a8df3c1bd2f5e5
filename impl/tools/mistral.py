"""mistral: ``[TOOL_CALLS]`` followed by a JSON list (v3 tokenizers) or by ``name[ARGS]{...}`` (v11+).

    [THINK]reasoning[/THINK]Sure.[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcDEF012"}]
    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[CALL_ID]abcDEF013[ARGS]{}

-> reasoning "reasoning" (Magistral's ``[THINK]``), content "Sure.", and the calls with their
arguments as written. Ids are the model's own when it writes them (``"id"`` in the list,
``[CALL_ID]``), else ``call_N``. The list, or the v11 arguments object, ends where its brackets
balance (outside strings), so no closing tag is needed. ``[TOOL_CALLS]`` followed by something that
cannot start either shape is content text; a list or object that does not read as calls is content,
as written. Streamed, a v11 call is announced at ``[ARGS]{`` (its name and id come first) and its
arguments follow as written; a list's calls come whole when the list closes, since each call's
``"id"`` follows its arguments.
"""
from __future__ import annotations

import regex

from .arguments import JsonScan, arguments_from_json, json_items, json_members, json_name
from .engine import REJECT, TaggedFormat
from .message import ParsedCall
from .partial import JsonCallReader, header_identity

_LIST_START = regex.compile(r"\s*(?=\[)")
_V11_HEAD = regex.compile(r"\s*(?P<name>[\w.\-]+)(?:\[CALL_ID\](?P<id>\w+))?(?:\[ARGS\])?\s*(?=\{)")


class Mistral(TaggedFormat):
    name = "mistral"
    reasoning_tags = ("[THINK]", "[/THINK]")
    call_tags = ("[TOOL_CALLS]",)

    def block_end(self, opener, body, final, memo):
        start = _LIST_START.match(body)
        if start is None:
            start = _V11_HEAD.match(body, partial=True)
            if start is None:
                return REJECT
            if start.partial:
                return len(body) if final else None
        end = memo.setdefault("scan", JsonScan(start=start.end())).run(body)
        return len(body) if end is None and final else end

    def call_reader(self, opener, parameters):
        return JsonCallReader(_V11_HEAD, header_identity)

    def parse_block(self, opener, block, parameters):
        if _LIST_START.match(block):
            items = json_items(block)
            calls = [_list_call(item) for item in items or ()]
            return None if None in calls else calls
        head = _V11_HEAD.match(block)
        arguments = arguments_from_json(block[head.end():]) if head else None
        if arguments is None:
            return None
        return [ParsedCall(head["name"], arguments, id=head["id"])]


def _list_call(item: str) -> ParsedCall | None:
    members = json_members(item)
    if members is None:
        return None
    name = json_name(members.get("name"))
    arguments = arguments_from_json(members.get("arguments"))
    call_id = json_name(members.get("id"))
    if name is None or arguments is None:
        return None
    return ParsedCall(name, arguments, id=call_id)
