"""Chat templates: messages to a prompt, byte for byte as transformers 5.24's apply_chat_template renders them.

``render_chat`` is the rendering core (no tokenizer): the caller's messages are copied to plain data
(objects to dicts, keys whose value is None dropped), reasoning under any of its names is also given
as ``reasoning_content`` and ``thinking``, tools given as Python functions become JSON schemas, and
the template runs in transformers' sandboxed environment (impl.chat.environment).

    >>> render_chat(CHATML_TEMPLATE, [{"role": "user", "content": "Hi"}], add_generation_prompt=True,
    ...             enable_thinking=False)
    '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n'

``ChatRenderer(limits=...)`` renders under other resource limits than the defaults. The date that
``strftime_now`` reads can be frozen with ``impl.chat.environment.frozen_clock``.
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping

from . import control, encode
from .environment import DEFAULT_ENVIRONMENT, ChatEnvironment
from .schema import function_schema

CHATML_TEMPLATE = r"""{#- ChatML with tools and switchable thinking, in the style of Qwen3 (textbound's own). -#}
{%- macro text_of(content) -%}
    {%- if content is string -%}
        {{- content -}}
    {%- elif content is iterable and content is not mapping -%}
        {%- for block in content -%}
            {%- if block is string -%}
                {{- block -}}
            {%- elif block is mapping and block.text is string -%}
                {{- block.text -}}
            {%- endif -%}
        {%- endfor -%}
    {%- elif content is defined and content is not none -%}
        {{- content | string -}}
    {%- endif -%}
{%- endmacro -%}
{%- set has_system = messages | length > 0 and messages[0].role == 'system' -%}
{%- if tools -%}
    {{- '<|im_start|>system\n' -}}
    {%- if has_system -%}
        {{- text_of(messages[0].content) + '\n\n' -}}
    {%- endif -%}
    {{- '# Tools\n\nYou may call one or more functions to help with the request.\n\nThe functions available, as JSON signatures within <tools></tools> tags:\n<tools>' -}}
    {%- for tool in tools -%}
        {{- '\n' + (tool | tojson) -}}
    {%- endfor -%}
    {{- '\n</tools>\n\nTo call a function, write a JSON object with its name and arguments within <tool_call></tool_call> tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- elif has_system -%}
    {{- '<|im_start|>system\n' + text_of(messages[0].content) + '<|im_end|>\n' -}}
{%- endif -%}
{%- set turn = namespace(last_user=-1) -%}
{%- for message in messages -%}
    {%- if message.role == 'user' -%}
        {%- set turn.last_user = loop.index0 -%}
    {%- endif -%}
{%- endfor -%}
{%- for message in messages -%}
    {%- if message.role == 'system' and loop.first -%}
        {#- written above, with the tools -#}
    {%- elif message.role in ('user', 'system') -%}
        {{- '<|im_start|>' + message.role + '\n' + text_of(message.content) + '<|im_end|>\n' -}}
    {%- elif message.role == 'assistant' -%}
        {{- '<|im_start|>assistant\n' -}}
        {%- generation -%}
            {%- set content = text_of(message.content) -%}
            {%- if loop.index0 > turn.last_user and message.reasoning_content is string -%}
                {{- '<think>\n' + message.reasoning_content.strip('\n') + '\n</think>\n\n' -}}
                {%- set content = content.lstrip('\n') -%}
            {%- endif -%}
            {{- content -}}
            {%- for call in message.tool_calls | default([], true) -%}
                {%- set call = call.function if call.function is defined else call -%}
                {%- if content or not loop.first -%}
                    {{- '\n' -}}
                {%- endif -%}
                {{- '<tool_call>\n{"name": ' + (call.name | tojson) + ', "arguments": ' -}}
                {%- if call.arguments is string -%}
                    {{- call.arguments -}}
                {%- else -%}
                    {{- call.arguments | default({}, true) | tojson -}}
                {%- endif -%}
                {{- '}\n</tool_call>' -}}
            {%- endfor -%}
            {{- '<|im_end|>' -}}
        {%- endgeneration -%}
        {{- '\n' -}}
    {%- elif message.role == 'tool' -%}
        {%- if loop.first or loop.previtem.role != 'tool' -%}
            {{- '<|im_start|>user' -}}
        {%- endif -%}
        {{- '\n<tool_response>\n' + text_of(message.content) + '\n</tool_response>' -}}
        {%- if loop.last or loop.nextitem.role != 'tool' -%}
            {{- '<|im_end|>\n' -}}
        {%- endif -%}
    {%- else -%}
        {{- raise_exception('Unknown role ' + (message.role | string) + ': this template knows system, user, assistant and tool') -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
    {#- Plain tags from here on: what they render depends on trim_blocks and lstrip_blocks. -#}
    {% if enable_thinking is defined and enable_thinking is false %}
<think>

</think>

    {% endif %}
{%- endif -%}
"""

# Names a message's reasoning goes by; templates read the first, gpt-oss's read "thinking".
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
# Appended to the text that continue_final_message continues, found again after rendering and cut there.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
# apply_chat_template arguments transformers gives its tokenizer, never the template; impl supports
# only their defaults (no padding, truncation or tensors).
_TOKENIZER_ARGUMENTS = {"padding": False, "truncation": False, "max_length": None, "return_tensors": None,
                        "tokenizer_kwargs": None}


def plain_template_data(value):
    """A copy of ``value`` in plain JSON-like types: what the template may see.

    Subclasses of str, int and float become the base type, dataclasses and pydantic models dicts,
    numpy scalars Python numbers, and anything else an inert placeholder naming its type.

    >>> plain_template_data({"n": (1, object())})
    {'n': (1, '<object>')}
    """
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return value
    if kind is dict:  # the common cases first: this runs over every message at every render
        return {plain_template_data(key): plain_template_data(item) for key, item in value.items()}
    if kind is list:
        return [plain_template_data(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_template_data(key): plain_template_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_template_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_template_data(item) for item in value)
    if _is_numpy_scalar(value):
        return plain_template_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain_template_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_template_data(value.model_dump())
    return f"<{type(value).__name__}>"


def _is_numpy_scalar(value) -> bool:
    # numpy.generic, recognised without importing numpy (impl depends on regex and jinja2 only).
    return any(cls.__module__ == "numpy" and cls.__name__ == "generic" for cls in type(value).__mro__)


def normalize_messages(conversation) -> list[dict]:
    """Messages as dicts, without the keys whose value is None (many templates print "None").

    >>> normalize_messages([{"role": "assistant", "content": None, "tool_calls": []}])
    [{'role': 'assistant', 'tool_calls': []}]
    """
    # One copy in plain data, which transformers makes in two steps (objects to dicts, then plain
    # data after dropping None values): the same result, and the caller's messages are never touched.
    messages = plain_template_data(getattr(conversation, "messages", conversation))
    normalized = []
    for message in messages:
        if not isinstance(message, dict):
            raise TypeError(f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}.")
        normalized.append({key: value for key, value in message.items() if value is not None})
    return normalized


def _alias_reasoning(chat: list) -> list:
    aliased = []
    for message in chat:
        if isinstance(message, dict):
            reasoning = next((message[k] for k in REASONING_FIELDS if message.get(k) is not None), None)
            if reasoning is not None:
                # Key order matters to templates that loop over a message's items.
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        aliased.append(message)
    return aliased


def _tool_schemas(tools):
    if tools is None:
        return None
    schemas = []
    for tool in tools:
        if isinstance(tool, dict):
            schemas.append(tool)
        elif inspect.isfunction(tool) or inspect.ismethod(tool):
            schemas.append(function_schema(tool))
        else:
            raise ValueError("Tools should either be a JSON schema, or a callable function with type hints "
                             "and a docstring suitable for auto-conversion to a schema.")
    return schemas


def _check_flags(add_generation_prompt, continue_final_message, return_assistant_tokens_mask=False) -> None:
    if continue_final_message:
        if add_generation_prompt:
            raise ValueError("continue_final_message and add_generation_prompt are not compatible: continue a "
                             "final message, or prompt for a new assistant message")
        if return_assistant_tokens_mask:
            raise ValueError("continue_final_message is not compatible with return_assistant_tokens_mask.")


class ChatRenderer:
    """Renders chat templates in one sandbox with its resource limits (the defaults unless given).

    >>> ChatRenderer().render_chat("{{ messages[0].content }}!", [{"role": "user", "content": "Hi"}])
    'Hi!'
    """

    def __init__(self, limits=None):
        self.environment = DEFAULT_ENVIRONMENT if limits is None else ChatEnvironment(limits)

    def render_chat(self, template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                    continue_final_message=False, **variables) -> str:
        """``render_chat`` under this renderer's limits."""
        if isinstance(messages, (list, tuple)) and len(messages) == 0:
            raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
        chat = normalize_messages(messages)
        _check_flags(add_generation_prompt, continue_final_message)
        texts, _ = self.render_conversations(template, [chat], tools, documents, add_generation_prompt,
                                             continue_final_message, False, variables)
        return texts[0]

    def render_conversations(self, template: str, conversations: list[list[dict]], tools, documents,
                             add_generation_prompt, continue_final_message, with_spans: bool,
                             variables: dict) -> tuple[list[str], list[list[tuple[int, int]]]]:
        """Each conversation's text (from normalize_messages), and the spans of its {% generation %}
        blocks if asked."""
        compiled = self.environment.compile(template)
        schemas = _tool_schemas(tools)
        if documents is not None:
            for document in documents:
                if not isinstance(document, dict):
                    raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
        shared = {"tools": plain_template_data(schemas), "documents": plain_template_data(documents),
                  "add_generation_prompt": add_generation_prompt}
        variables = plain_template_data(variables)
        texts, all_spans = [], []
        for chat in conversations:  # normalized: fresh plain copies, so the edits below stay here
            chat = _alias_reasoning(chat)
            continued = _tag_final_message(chat, continue_final_message, template) if continue_final_message else None
            context = dict(messages=chat, **shared, **variables)
            if with_spans:
                text, spans = self.environment.render_with_generation_spans(compiled, context)
                all_spans.append(spans)
            else:
                text = self.environment.render(compiled, context)
            texts.append(text if continued is None else _cut_at_tag(text, continued))
        return texts, all_spans


def _tag_final_message(chat: list[dict], continue_final_message, template: str):
    """Append the tag to the field the final message continues; return that field's text before it."""
    if not chat:
        raise ValueError("continue_final_message is set but the conversation is empty!")
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    final = chat[-1].get(field)
    if final is None:
        raise ValueError(f'continue_final_message is set but the final message has no "{field}" to continue!')
    fields = [field]
    if field in REASONING_FIELDS:  # reasoning is copied under several names: tag each copy
        fields = [name for name in REASONING_FIELDS if chat[-1].get(name) == final]
    if not any(name in template for name in fields):
        raise ValueError(f'continue_final_message is set to "{field}" but this is not an accepted field in '
                         'the chat_template')
    if isinstance(final, (list, tuple)):
        for block in reversed(final):
            if "text" in block:  # the last text block is the one continued
                final = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                break
        else:
            raise ValueError("continue_final_message is set but we could not find any text to continue in the "
                             "final message!")
    else:
        for name in fields:
            chat[-1][name] = chat[-1][name] + _CONTINUE_TAG
    return final


def _cut_at_tag(text: str, final) -> str:
    if final.strip() not in text or _CONTINUE_TAG.strip() not in text:
        raise ValueError("continue_final_message is set but the final message does not appear in the chat after "
                         "applying the chat template! This can happen if the chat template deletes portions of "
                         f"the final message.\nFinal message to continue: {final.strip()}\nRendered chat:\n{text}")
    at = text.rindex(_CONTINUE_TAG.strip())
    if text[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:at]
    return text[:at].rstrip()  # the template trimmed the space after the tag, and maybe the message's own


_DEFAULT_RENDERER = ChatRenderer()


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    """``messages`` rendered by ``template`` as transformers' ``apply_chat_template(tokenize=False)`` does.

    ``variables`` are the template's other variables (bos_token, enable_thinking, ...). Errors are
    transformers' too: a template's raise_exception or a Jinja error is a jinja2 TemplateError, an
    impossible request a ValueError or TypeError.

    >>> render_chat("{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}",
    ...             [{"role": "user", "content": "Hi"}])
    'user: Hi\\n'
    """
    return _DEFAULT_RENDERER.render_chat(template, messages, tools=tools, documents=documents,
                                         add_generation_prompt=add_generation_prompt,
                                         continue_final_message=continue_final_message, **variables)


def select_template(templates, chat_template=None, tools=None) -> str:
    """The template apply_chat_template uses: a name among the tokenizer's named templates, the
    literal ``chat_template``, "tool_use" when tools are given and there is one, else "default".

    >>> select_template({"default": "D", "tool_use": "T"}, tools=[])
    'T'
    """
    if isinstance(templates, dict):
        if chat_template is not None and chat_template in templates:
            return templates[chat_template]
        if chat_template is None:
            if tools is not None and "tool_use" in templates:
                return templates["tool_use"]
            if "default" in templates:
                return templates["default"]
            raise ValueError("This model has multiple chat templates with no default specified! Please either pass "
                             "a chat template or the name of the template you wish to use to the `chat_template` "
                             f"argument. Available template names are {sorted(templates)}.")
    elif chat_template is None:
        if templates is None:
            raise ValueError("Cannot use chat template functions because tokenizer.chat_template is not set and "
                             "no template argument was passed!")
        return templates
    return chat_template


def apply_chat_template(tokenizer, conversation, tools=None, documents=None, chat_template=None,
                        add_generation_prompt=False, continue_final_message=False, tokenize=True,
                        sanitize_control_tokens=False, return_dict=True, return_assistant_tokens_mask=False,
                        **kwargs):
    """transformers' ``apply_chat_template`` without tensors: text, ids, or a dict of lists.

    ``tokenize=False`` gives the text; ``return_dict=False`` the ids; otherwise ``{"input_ids",
    "attention_mask"}`` (and "assistant_masks" when asked). A list of conversations gives a list.
    """
    for name, default in _TOKENIZER_ARGUMENTS.items():
        if kwargs.pop(name, default) != default:
            raise NotImplementedError(f"impl's apply_chat_template does not support {name}=")
    if not tokenize:
        return_dict = False
    if return_assistant_tokens_mask and not (return_dict and tokenize):
        raise ValueError("`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`")
    template = select_template(tokenizer.chat_templates, chat_template, tools)
    if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
        raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
    batched = isinstance(conversation, (list, tuple)) and (
        isinstance(conversation[0], (list, tuple)) or hasattr(conversation[0], "messages"))
    conversations = [normalize_messages(c) for c in (conversation if batched else [conversation])]
    _check_flags(add_generation_prompt, continue_final_message, return_assistant_tokens_mask)
    if sanitize_control_tokens:
        if not tokenize or return_assistant_tokens_mask:
            raise ValueError("`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with "
                             "`return_assistant_tokens_mask=True`.")
        pattern = control.control_tokens_pattern(control.control_tokens(tokenizer, template))
        conversations, tools, documents, kwargs = (control.mark_control_tokens(value, pattern)
                                                   for value in (conversations, tools, documents, kwargs))
    variables = {**encode.special_tokens_map(tokenizer.config), **kwargs}
    texts, spans = _DEFAULT_RENDERER.render_conversations(
        template, conversations, tools, documents, add_generation_prompt, continue_final_message,
        return_assistant_tokens_mask, variables)
    if not tokenize:
        return texts if batched else texts[0]
    encoded = [encode.encode_chat(tokenizer, text, sanitize_control_tokens, return_dict, batched,
                                       spans[i] if return_assistant_tokens_mask else None)
               for i, text in enumerate(texts)]
    if not return_dict:
        return encoded if batched else encoded[0]
    return encode.merge_batch(encoded) if batched else encoded[0]
