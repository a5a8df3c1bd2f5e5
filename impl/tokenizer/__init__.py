"""tokenizer.json loaded and run, one module per pipeline stage as in Hugging Face's tokenizers.

- tokenizer: the Tokenizer (loading, encode, decode, apply_chat_template)
- added_tokens: special and added tokens, split off before the pipeline
- normalizers (normalizer_base, precompiled: SentencePiece's charsmap): the text rewritten
- pre_tokenizers (patterns: the oracle's regexes in Python's regex; unicode_age): the text cut in pieces
- models (BPE, WordPiece, WordLevel; unigram): pieces to ids
- post_processors: special tokens added around the ids
- decoders: tokens back to text
- byte_level: GPT-2's byte-to-character table; unicode_tables: the oracle's Unicode, measured

    >>> Tokenizer.from_file("tokenizer.json").encode("Hello")   # doctest: +SKIP
    [9707]
"""
from .tokenizer import Tokenizer

__all__ = ["Tokenizer"]
