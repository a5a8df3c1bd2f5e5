"""NEL (U+0085), the line separator (U+2028) and the paragraph separator (U+2029) read as "\\n"
before tokenizing, as a prompt cut into lines by Unicode's line-break rules and joined with "\\n"."""
import regex

from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names

from .base import text_rewritten

UNICODE_LINE_BREAKS = regex.compile("[\x85\u2028\u2029]")

Tokenizer = text_rewritten(lambda text: UNICODE_LINE_BREAKS.sub("\n", text))
