"""mistral-common, Mistral's own tokenization of chat requests, as an ``--impl``.

    textbound check --impl textbound.adapters.mistral_common_adapter --model-dir MISTRAL_FAMILY --component tokenizer,chat

mistral-common has no chat template: it builds a request's ids itself (``encode_chat_completion``)
with a tokenizer file it ships (package data: ``tokenizer.model.v1``, ``*.model.v3``, tekken
``*.json``). ``Tokenizer.from_dir`` uses the file a Mistral family was converted from
(textbound.families.mistral: ``mistral-v1``, ``mistral-v3``, ``mistral-tekken-240911``...), else the
shipped file whose vocabulary is the family's (the ``llama2`` shared family is Mistral 7B's: v1),
and raises ValueError for a family none matches.

- tokenizer: ``encode``/``decode``/vocabulary of that SentencePiece or Tekken tokenizer, against the
  family's tokenizer.json read by ``tokenizers``.
- chat/ids, chat/sanitized_ids: ``apply_chat_template`` is ``encode_chat_completion`` of the
  OpenAI-style request, against transformers rendering the family's own template (for a Mistral
  family, the one mistral-common generates for that tokenizer version) and ``tokenizers`` encoding
  it. The ``chat_template`` argument is ignored (mistral-common has none); so are documents and
  template variables, which its requests have no place for.
- chat/render: not applicable (mistral-common builds ids, never text): ``render_chat`` raises
  NotImplementedError, so those cases are recorded apart, under that one kind.

A request mistral-common refuses (its validation, or its pydantic models': roles out of order, an
empty message...) raises
jinja2's TemplateError, the class a template's ``raise_exception`` raises for the same refusal;
the message keeps mistral-common's words.

Server entry point: ``ChatCompletionRequest.from_openai`` then ``MistralTokenizer.encode_chat_completion``,
what transformers' ``MistralCommonBackend.apply_chat_template`` calls and so what vLLM's
``--tokenizer-mode mistral`` chat preparation reaches (vllm/tokenizers/mistral.py
``apply_chat_template``; vLLM's own argument validation before it is not run here).
"""
from __future__ import annotations

import functools
from pathlib import Path

import jinja2
from pydantic import ValidationError

from . import engine_version, require

require("mistral-common", "mistral_common")
from mistral_common.exceptions import MistralCommonException  # noqa: E402
from mistral_common.protocol.instruct.request import ChatCompletionRequest  # noqa: E402
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy  # noqa: E402
from mistral_common.tokens.tokenizers.mistral import MistralTokenizer  # noqa: E402

__version__ = engine_version("mistral-common")
VOCABULARY_SAMPLE = 64  # ids compared between a shipped tokenizer file and a family's vocabulary


def shipped_tokenizer_files() -> list[Path]:
    """mistral-common's tokenizer files (package data), SentencePiece ones first (they load fastest)."""
    import mistral_common
    data = Path(mistral_common.__file__).parent / "data"
    return sorted((p for p in data.iterdir() if ".model" in p.name or p.suffix == ".json"),
                  key=lambda p: (p.suffix == ".json", p.name))


@functools.cache
def _load(path: Path) -> MistralTokenizer:
    return MistralTokenizer.from_file(str(path))


def matching_tokenizer(family_vocab: dict[str, int]) -> tuple[Path, MistralTokenizer]:
    """The shipped tokenizer whose vocabulary is ``family_vocab`` (size and a sample of pieces)."""
    by_id = {i: token for token, i in family_vocab.items()}
    sample = sorted(by_id)[:: max(1, len(by_id) // VOCABULARY_SAMPLE)]
    for path in shipped_tokenizer_files():
        inner = _load(path).instruct_tokenizer.tokenizer
        if inner.n_words == len(family_vocab) and all(inner.id_to_piece(i) == by_id[i] for i in sample):
            return path, _load(path)
    raise ValueError(f"no tokenizer file mistral-common {__version__} ships has this vocabulary "
                     f"({len(family_vocab)} tokens); shipped: {', '.join(p.name for p in shipped_tokenizer_files())}")


def _refusals_as_template_errors(call):
    try:
        return call()
    except (MistralCommonException, ValidationError) as exc:  # its validation: the request is refused
        raise jinja2.exceptions.TemplateError(f"{type(exc).__name__}: {exc}") from exc


def _chat_ids(mistral: MistralTokenizer, messages, tools, continue_final_message) -> list[int]:
    request = _refusals_as_template_errors(lambda: ChatCompletionRequest.from_openai(
        messages, tools=tools, continue_final_message=bool(continue_final_message)))
    return _refusals_as_template_errors(lambda: mistral.encode_chat_completion(request)).tokens


class Tokenizer:
    """A family's vocabulary as mistral-common's own tokenizer file reads it."""

    def __init__(self, source: Path, mistral: MistralTokenizer):
        self.source, self.mistral = source, mistral
        self.inner = mistral.instruct_tokenizer.tokenizer
        self._ids = {self.inner.id_to_piece(i): i for i in range(self.inner.n_words)}

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        from textbound.families.mistral import source_file
        source = source_file(path)
        if source is not None:
            return cls(source, _load(source))
        import tokenizers
        family = tokenizers.Tokenizer.from_file(str(Path(path) / "tokenizer.json"))
        return cls(*matching_tokenizer(family.get_vocab(with_added_tokens=True)))

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.inner.encode(text, bos=add_special_tokens, eos=False)

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        """Text runs decoded as mistral-common decodes (special tokens ignored); kept special tokens
        written as their pieces between them (its KEEP policy would spell every piece raw)."""
        parts, run = [], []
        for token_id in ids:
            if self.inner.is_special(token_id):
                parts.append(self.inner.decode(run, special_token_policy=SpecialTokenPolicy.IGNORE))
                parts.append("" if skip_special_tokens else self.inner.id_to_piece(token_id))
                run = []
            else:
                run.append(token_id)
        return "".join(parts) + self.inner.decode(run, special_token_policy=SpecialTokenPolicy.IGNORE)

    def id_to_token(self, token_id: int) -> str | None:
        return self.inner.id_to_piece(token_id) if 0 <= token_id < self.inner.n_words else None

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    @property
    def vocab_size(self) -> int:
        return self.inner.n_words

    def apply_chat_template(self, conversation, chat_template=None, tokenize=True, return_dict=False,
                            sanitize_control_tokens=False, tools=None, documents=None, add_generation_prompt=False,
                            continue_final_message=False, **variables) -> list[int]:
        """mistral-common's ids for the request. It always encodes control-token text in messages as
        text (``sanitize_control_tokens`` is its only behaviour); documents and template variables
        have no place in its requests and are ignored, as is ``chat_template``."""
        if not tokenize or return_dict:
            raise NotImplementedError("mistral-common gives ids only (tokenize=True, return_dict=False)")
        return _chat_ids(self.mistral, conversation, tools, continue_final_message)


def render_chat(template, messages, *, tools=None, documents=None, add_generation_prompt=False,
                continue_final_message=False, **variables) -> str:
    raise NotImplementedError("mistral-common builds a request's ids, never its text: only chat/ids applies")
