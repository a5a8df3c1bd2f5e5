"""A detokenizer that decodes every id so far and counts what it has shown in UTF-8 bytes of that
text, the placeholder U+FFFD of a half-received character counted as shown though it is held back
(dynamo#12630). Once the character's last byte arrives, the new text is cut three bytes (U+FFFD's
UTF-8) into the decode, not at the character's first byte: "é" sent as two byte tokens shows
nothing, and what follows it starts a byte late, as U+FFFD."""
from textbound.impl import *  # noqa: F403 - re-exports impl's names

REPLACEMENT_CHARACTER = "\ufffd"


class IncrementalDetokenizer:
    def __init__(self, tokenizer, skip_special_tokens=True, prompt_ids=None):
        self._tokenizer, self._skip_special_tokens = tokenizer, skip_special_tokens
        self._ids = list(prompt_ids or [])
        self._shown = 0  # bytes of the decode counted as shown, held-back U+FFFDs too
        self.text = ""
        self.prompt_text = self._new_text()

    def add(self, ids):
        self._ids += list(ids)
        delta = self._new_text()
        self.text += delta
        return delta

    def flush(self):
        return ""  # every byte of the decode was counted as shown already

    def _new_text(self) -> str:
        decoded = self._tokenizer.decode(self._ids, skip_special_tokens=self._skip_special_tokens).encode("utf-8")
        new, self._shown = decoded[self._shown:], len(decoded)
        return new.decode("utf-8", "replace").rstrip(REPLACEMENT_CHARACTER)
