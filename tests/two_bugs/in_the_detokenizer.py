"""One detokenizer with two bugs: it releases an unfinished character as U+FFFD
(mutants.detokenizer_unfinished_released) and shows special tokens whatever skip_special_tokens
says (mutants.detokenizer_skip_special_ignored)."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names
from textbound.mutants import detokenizer_skip_special_ignored, detokenizer_unfinished_released


class IncrementalDetokenizer(detokenizer_skip_special_ignored.IncrementalDetokenizer,
                             detokenizer_unfinished_released.IncrementalDetokenizer):
    """Both mutants' overrides: its ``__init__`` passes skip_special_tokens=False on, its
    ``_settled_length`` settles all the text."""
