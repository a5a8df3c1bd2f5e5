"""An engine that shows no stages (only encode, decode and the vocabulary) and skips the normalizer."""
from textbound import impl

__version__ = "stageless-1"


class Tokenizer:
    def __init__(self, inner: impl.Tokenizer):
        inner.normalizer = None
        self._inner = inner

    @classmethod
    def from_dir(cls, path):
        return cls(impl.Tokenizer.from_dir(path))

    def encode(self, text, add_special_tokens=False):
        return self._inner.encode(text, add_special_tokens=add_special_tokens)

    def decode(self, ids, skip_special_tokens=False):
        return self._inner.decode(ids, skip_special_tokens=skip_special_tokens)

    def id_to_token(self, token_id):
        return self._inner.id_to_token(token_id)

    def token_to_id(self, token):
        return self._inner.token_to_id(token)

    @property
    def vocab_size(self):
        return self._inner.vocab_size
