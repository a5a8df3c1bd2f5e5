"""The mutation catalogue: implementations of the text boundary with one real-world bug each.

Each mutant is a module here that re-exports impl's names and replaces one of them (mutants/base.py
holds the shared plumbing), so ``textbound check --impl textbound.mutants.NAME`` checks it like any engine.
``textbound mutate`` (textbound/run/mutate.py) checks every one at the quick budget: the harness is only
as good as the share of these it catches.

``drawn_from`` says where the bug was seen: an engine that shipped it where we know one, else the
engineering mistake it stands for.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str  # module name under mutants/
    component: str  # the component whose checks must catch it
    bug: str
    drawn_from: str

    @property
    def module(self) -> str:
        return f"{__name__}.{self.name}"


CATALOGUE: tuple[Mutant, ...] = (
    # tokenizer: added tokens
    Mutant("tokenizer_added_after_digit", "tokenizer", "added tokens not split off right after a digit",
           "special-token splitters that only cut at word boundaries"),
    Mutant("tokenizer_added_after_newline", "tokenizer", "added tokens not split off right after a newline",
           "line-oriented splitters of added tokens"),
    Mutant("tokenizer_added_before_punctuation", "tokenizer", "added tokens not split off before punctuation",
           "splitters requiring a space or the end after an added token"),
    Mutant("tokenizer_added_adjacent", "tokenizer", "an added token right after another one not split off",
           "splitters resuming the search one character after a match"),
    Mutant("tokenizer_lstrip_ignored", "tokenizer", "added tokens' lstrip ignored",
           "llama.cpp before its token attributes (lstrip/rstrip, 2024)"),
    Mutant("tokenizer_rstrip_ignored", "tokenizer", "added tokens' rstrip ignored",
           "llama.cpp before its token attributes (lstrip/rstrip, 2024)"),
    Mutant("tokenizer_single_word_ignored", "tokenizer", "added tokens' single_word ignored",
           "reimplementations of tokenizers that read content and special only"),
    Mutant("tokenizer_normalized_ignored", "tokenizer", "normalized: false ignored (tokens matched after normalization)",
           "reimplementations matching every added token in one pass"),
    # tokenizer: normalizers, pre-tokenizers, model
    Mutant("tokenizer_nfc_skipped", "tokenizer", "the NFC normalizer skipped",
           "llama.cpp, which does not run tokenizer.json normalizers (ggml-org/llama.cpp#6980, #2023)"),
    Mutant("tokenizer_strip_accents_default", "tokenizer", "BertNormalizer strip_accents null read as false",
           "ports of BertNormalizer missing that null follows lowercase"),
    Mutant("tokenizer_split_behavior_ignored", "tokenizer", "a Split pre-tokenizer's behavior ignored (always isolated)",
           "engines translating only the Split regex of tokenizer.json"),
    Mutant("tokenizer_split_invert_ignored", "tokenizer", "a Split pre-tokenizer's invert ignored",
           "engines translating only the Split regex of tokenizer.json"),
    Mutant("tokenizer_ignore_merges_ignored", "tokenizer", "BPE ignore_merges ignored (Llama 3)",
           "llama.cpp before it honoured ignore_merges for Llama 3 vocabularies"),
    Mutant("tokenizer_merge_ranks_ignored", "tokenizer", "BPE merge ranks ignored (the leftmost pair joining into a token first)",
           "llama.cpp's SentencePiece tokenizer on a GGUF converted from tokenizer.json alone: one placeholder "
           "score for every token (gguf-py LlamaHfVocab, ggml-org/llama.cpp#23840)"),
    Mutant("tokenizer_prepend_first_as_always", "tokenizer", 'Metaspace prepend_scheme "first" read as "always"',
           "transformers' legacy Llama/T5 tokenizers (a space after special tokens; legacy=False fixed it)"),
    Mutant("tokenizer_prefix_space_ignored", "tokenizer", "ByteLevel add_prefix_space ignored",
           "RoBERTa-style vocabularies through GPT-2 byte-level code"),
    # tokenizer: text cleaned before the tokenizer sees it (met by the character strata)
    Mutant("tokenizer_nbsp_as_space", "tokenizer", "U+00A0 (no-break space) read as a space",
           "prompt cleaners mapping U+00A0 to a space before tokenizing (HTML-to-text reading &nbsp; as a space)"),
    Mutant("tokenizer_bom_stripped", "tokenizer", "a leading byte-order mark (U+FEFF) dropped",
           "prompts decoded with Python's utf-8-sig codec, which drops a leading U+FEFF"),
    Mutant("tokenizer_unicode_line_breaks", "tokenizer", 'NEL, U+2028 and U+2029 read as "\\n"',
           "prompts cut into lines by Unicode's line-break rules (Python's str.splitlines) and joined with \"\\n\""),
    Mutant("tokenizer_no_special_tokens", "tokenizer", "add_special_tokens ignored: no BOS/CLS added",
           "servers tokenizing prompts without the post-processor (a missing BOS)"),
    # tokenizer: decode
    Mutant("tokenizer_byte_fallback_subparts", "tokenizer", "byte fallback decoded by the maximal-subpart rule",
           "decoders joining byte tokens then decoding with from_utf8_lossy / errors='replace'"),
    Mutant("tokenizer_trailing_whitespace_collapsed", "tokenizer", "trailing whitespace of decoded text collapsed",
           "servers cleaning decoded text (strip/collapse of trailing blank lines)"),
    Mutant("tokenizer_skip_special_ignored", "tokenizer", "skip_special_tokens ignored when decoding",
           "decoders that drop the flag between the API and the tokenizer"),
    # detokenizer
    Mutant("detokenizer_per_token", "detokenizer", "per-token decoding of byte-level text",
           "naive streaming servers (the reason vLLM and TGI decode with prefix offsets)"),
    Mutant("detokenizer_no_context", "detokenizer", "the SentencePiece leading-space strip applied to every delta",
           "streamed Llama 2 text without spaces between deltas (TGI and vLLM, before prefix offsets)"),
    Mutant("detokenizer_prompt_ignored", "detokenizer", "prompt ids not used as context for the first ids",
           "detokenizers started empty for every request"),
    Mutant("detokenizer_unfinished_released", "detokenizer", "an unfinished character released as U+FFFD",
           "streams showing U+FFFD for emoji and CJK split across tokens"),
    Mutant("detokenizer_skip_special_ignored", "detokenizer", "the stream ignores skip_special_tokens",
           "streaming paths that differ from the non-streaming one"),
    Mutant("detokenizer_shared_state", "detokenizer", "one decode state shared by every stream (reset by each new one)",
           "SGLang's batched requests sharing one incremental decode state (sgl-project/sglang#3754)"),
    Mutant("detokenizer_skips_added_tokens", "detokenizer",
           "skip_special_tokens drops every added token (the tool-call markers too)",
           "tool-call tokens skipped before vLLM's tool parser sees them (vllm-project/vllm#25281)"),
    # stops
    Mutant("stops_fixed_holdback", "stops", "a fixed-size stop hold-back (longest stop - 1 characters)",
           "servers holding back a fixed window instead of a possible stop prefix"),
    Mutant("stops_earliest_start", "stops", "earliest-start instead of earliest-completion stops",
           "stop search by str.find over the text so far, the lowest index winning"),
    Mutant("stops_wrong_stop_string", "stops", "the wrong stop string reported (first listed that ends there)",
           "loops over the request's stops that report the first one found"),
    Mutant("stops_within_delta", "stops", "a stop string split across deltas missed",
           "stop checks run on each new piece of text alone"),
    Mutant("stops_include_stop_ignored", "stops", "include_stop ignored",
           "servers that always strip the stop string"),
    Mutant("stops_shared_state", "stops", "one stop-checker state shared by every stream (reset by each new one)",
           "per-request state shared across n>1 choices and batched requests (vllm-project/vllm#38158, "
           "sgl-project/sglang#3754)"),
    # chat
    Mutant("chat_trim_blocks_off", "chat", "trim_blocks off", "engines rendering with Jinja's default Environment"),
    Mutant("chat_lstrip_blocks_off", "chat", "lstrip_blocks off", "engines rendering with Jinja's default Environment"),
    Mutant("chat_tojson_ascii", "chat", "tojson escaping non-ASCII", "Jinja's own tojson (json.dumps' ensure_ascii default)"),
    Mutant("chat_tojson_sorted", "chat", "tojson sorting keys", "Jinja's own tojson (htmlsafe_json_dumps sorts keys)"),
    Mutant("chat_raise_exception_swallowed", "chat", "raise_exception swallowed",
           "engines defining raise_exception as a no-op so that templates always render"),
    Mutant("chat_continue_not_trimmed", "chat", "continue_final_message not trimmed (the final turn is closed)",
           "prefill requests rendered as ordinary conversations"),
    Mutant("chat_generation_prompt_ignored", "chat", "add_generation_prompt ignored",
           "servers that drop the flag on its way to the template"),
    Mutant("chat_empty_tools_as_none", "chat", "an empty tools list passed to the template as None",
           "servers handing the template `tools or None` (templates testing `tools is not none` then differ)"),
    Mutant("chat_trim_ascii_only", "chat", "trim stripping ASCII whitespace only",
           "llama.cpp's Jinja engine (common/jinja string::strip: isspace on each byte)"),
    Mutant("chat_content_parts_flattened", "chat", 'content parts joined with "\\n" into one string',
           "vLLM's \"string\" chat-template content format, which flattens content parts before rendering"),
    Mutant("chat_content_parts_repr", "chat", "content parts rendered as the list's Python repr",
           "servers stringifying a content they expect to be a string (str(content)); seen in the field as "
           "prompts holding \"[{'type': 'text', ...}]\", no one upstream issue to name"),
    Mutant("chat_arguments_decoded", "chat", "an earlier call's string arguments decoded to an object before the template",
           "mlx-lm's server json.loads-ing tool_call arguments for the template, breaking templates that expect "
           "the string (ml-explore/mlx-lm#1065); vLLM's _postprocess_messages does the same"),
    Mutant("chat_arguments_double_encoded", "chat", "an earlier call's string arguments JSON-encoded again",
           "arguments serialized once more on their way to the template, a quoted string where the object's JSON "
           "was meant (QwenLM/Qwen3#1894, ml-explore/mlx-lm#1065)"),
    Mutant("chat_continue_empty_final", "chat",
           "continue_final_message cut at the final message's last occurrence (an empty message: nothing cut)",
           "transformers' cut by rindex before it tagged the message (huggingface/transformers#40732), "
           "sglang's continue_final_message (sgl-project/sglang#16501)"),
    Mutant("chat_enable_thinking_ignored", "chat", "enable_thinking never reaches the template",
           "chat_template_kwargs dropped on the way to the template, the prompt left in thinking mode "
           "(vllm-project/vllm#19222, QwenLM/Qwen3#1297)"),
    # tools
    Mutant("tools_tag_split_leaks", "tools", "a tag split across deltas leaks into content",
           "streaming parsers assuming a tag is one token (vLLM's hermes parser on untokenized tags)"),
    Mutant("tools_close_tag_in_string", "tools", "</tool_call> inside a JSON string ends the call",
           "vLLM's hermes parser (non-greedy <tool_call>(.*?)</tool_call>)"),
    Mutant("tools_index_from_one", "tools", "tool-call indexes from 1", "OpenAI-compatible servers numbering calls from 1"),
    Mutant("tools_arguments_repeated", "tools", "the whole arguments sent again at the end of the stream",
           "streaming parsers flushing the complete arguments in their last delta"),
    Mutant("tools_empty_content", "tools", 'content "" instead of null beside tool calls',
           "servers that default content to an empty string"),
    Mutant("tools_shared_parser_state", "tools", "one parser state shared by every choice (replaced by each new one)",
           "vLLM's tool parser shared across n>1 choices (vllm-project/vllm#38158, #38526, #42493)"),
    Mutant("tools_open_close_one_delta", "tools", "a call whose opening and closing tags arrive in one delta dropped",
           "multi-token deltas (speculative decoding, MTP, stream_interval) in vLLM's streaming tool parsers "
           "(vllm-project/vllm#15177, #55082)"),
    Mutant("tools_unclosed_reasoning_as_content", "tools", "reasoning a stop left unclosed read as content",
           "a stop string moving reasoning into content (vllm-project/vllm#51641; Qwen3's parser rule: no </think>, "
           "no reasoning)"),
    Mutant("tools_interrupted_call_dropped", "tools", "a call block a stop interrupts dropped instead of kept as content",
           "streaming auto tool parsing interrupted by a stop string (vllm-project/vllm#42210)"),
    Mutant("tools_starts_in_reasoning_ignored", "tools", "starts_in_reasoning ignored (the reasoning lands in content)",
           "reasoning parsers that expect <think> in the output where the template's prompt opens it (DeepSeek-R1, Qwen3)"),
    Mutant("tools_thinking_off_ignored", "tools", "the output always parsed as starting inside reasoning",
           "reasoning parsers assuming the prompt opened <think> after enable_thinking=false closed an empty "
           "think block, the answer left in reasoning (vllm-project/vllm#19222, QwenLM/Qwen3#1297)"),
    # structured
    Mutant("structured_optional_required", "structured", "a schema's optional property made required",
           "early JSON-schema-to-regex translations that required every property"),
    Mutant("structured_required_ignored", "structured", "an object's required ignored",
           "grammars making every property optional"),
    Mutant("structured_length_ignored", "structured", "string minLength/maxLength ignored",
           "schema translators supporting type and enum only"),
    Mutant("structured_bounds_ignored", "structured", "numeric minimum/maximum ignored",
           "schema translators supporting type and enum only"),
    Mutant("structured_one_of_as_any_of", "structured", "oneOf read as anyOf",
           "llguidance's coerce_one_of option (oneOf read as anyOf)"),
)

BY_NAME = {mutant.name: mutant for mutant in CATALOGUE}
