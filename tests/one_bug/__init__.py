"""Implementations with one real-world bug each that the mutation catalogue (mutants/) lacks: the
triage must give each one root cause, two at most, without knowing its class
(``python tools/signature_count.py`` measures it, and exits 1 while some give more).

``COMPONENTS`` names, per module, the component whose checks must show its bug:
``COMPONENTS["deltas_lstripped"] == "detokenizer"``.
"""

COMPONENTS = {
    "ascii_letters": "tokenizer",
    "chat_bos_token_empty": "chat",
    "chat_engine_bos_empty": "chat",
    "chat_none_content_as_text": "chat",
    "chat_render_stripped": "chat",
    "decode_drops_leading_space": "tokenizer",
    "decode_joins_token_decodes": "tokenizer",
    "deltas_lstripped": "detokenizer",
    "detokenizer_counts_utf8_bytes": "detokenizer",
    "detokenizer_holds_last_character": "detokenizer",
    "detokenizer_skips_added_tokens": "detokenizer",
    "encode_line_endings_normalized": "tokenizer",
    "lowercase_ascii": "tokenizer",
    "spaces_around_special": "detokenizer",
    "stageless_no_normalizer": "tokenizer",
    "stops_case_insensitive": "stops",
    "stops_endswith_only": "stops",
    "stops_finish_drops_held": "stops",
    "stops_first_listed": "stops",
    "stops_newline_as_space": "stops",
    "stops_whole_delta": "stops",
}
