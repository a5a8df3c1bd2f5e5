"""Loading tokenizer.json and running its pipeline.

encode: added tokens are split off first (impl.tokenizer.added_tokens), each remaining run is normalized,
pre-tokenized and handed to the model piece by piece, and the post-processor adds special tokens.
decode: ids become token strings (skipping special tokens when asked) and the decoder joins them.
Truncation and padding settings in the file are not applied: a server encodes the whole prompt and
decides itself what to cut.
"""
from __future__ import annotations

import json
from contextlib import nullcontext
from itertools import chain, islice
from operator import attrgetter
from pathlib import Path

from ..errors import TokenizerFileError
from . import decoders, models, normalizers, piece_cache, post_processors, pre_tokenizers
from .added_tokens import AddedVocabulary
from ..chat.render import apply_chat_template
from .fields import U32_MAX, field, optional
from .joined import pieces_of
from .pre_tokenizers import Piece, RawSplit

# A text at least this long is encoded with the cyclic garbage collector paused: its new pieces make
# thousands of lists (none of them garbage), and each collection they set off walks every young one,
# a tenth of the time on new words.
PAUSED_COLLECTOR_CHARS = 2_000


class _FastPath:
    """Encoding through a RawSplit pre-tokenizer with a cache of ids by raw piece.

    The text is cut into raw pieces (in C); a piece seen before costs one lookup, and the pieces
    not seen yet are spelled and tokenized together (``BPE.tokenize_joined``). The cache keeps up to
    piece_cache.CACHE_CAPACITY short pieces; when it is full a new one replaces it (the model's is
    emptied alike), and nothing is ever removed from a cache another thread may be reading.
    """

    def __init__(self, raw_split: RawSplit, model: models.Model):
        self.raw_split = raw_split
        self.model = model
        self.cache: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        raws = self.raw_split.pieces(text)
        table = cache = self.cache
        distinct = set(raws)
        missing = distinct.difference(cache)
        if missing:
            if len(cache) >= piece_cache.CACHE_CAPACITY:
                table = cache = self.cache = {}
                missing = distinct
            missing, room, known = list(missing), piece_cache.CACHE_CAPACITY - len(cache), bool(cache)
            tokenized = self._tokenized(missing)
            short = max(map(len, missing)) < piece_cache.CACHE_MAX_PIECE_LENGTH
            if short and len(missing) <= room:
                cache.update(zip(missing, tokenized))
            else:  # the cache takes the short pieces it has room for; the table looked up holds all
                fresh = dict(zip(missing, tokenized))
                cache.update(zip(missing[:room], tokenized[:room]) if short else islice(
                    ((raw, ids) for raw, ids in fresh.items() if len(raw) < piece_cache.CACHE_MAX_PIECE_LENGTH), room))
                table = {**cache, **fresh} if known else fresh
        return list(chain.from_iterable(map(table.__getitem__, raws)))

    def _tokenized(self, raws: list[str]) -> list[list[int]]:
        """Each raw piece's ids."""
        model, spelled = self.model, self.raw_split.spelled_joined(raws)
        if spelled is None:
            return [[token_id for piece in self.raw_split.finish(raw) for token_id in model.tokenize(piece)]
                    for raw in raws]
        # impl's BPE in one batch; any other model (a subclass too) through its own tokenize.
        if type(model) is models.BPE:
            return model.tokenize_joined(*spelled)
        return list(map(model.tokenize, pieces_of(*spelled)))


class Tokenizer:
    """A tokenizer.json's pipeline (normalizer, pre-tokenizer, model, post-processor, decoder and
    added tokens), as ``tokenizers`` runs it; ``from_dir`` also reads tokenizer_config.json.

    >>> tokenizer = Tokenizer({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3}, "merges": ["a b"]}})
    >>> tokenizer.encode("abc"), tokenizer.decode([2, 3])
    ([2, 3], 'ab c')
    """

    # Whether encode may take the fast path (see _fast_split); tests turn it off to compare.
    fast_paths = True

    def __init__(self, spec: dict, source: str = "tokenizer.json", config: dict | None = None):
        where = f"{source}: $"
        if not isinstance(spec, dict):
            raise TokenizerFileError(where, f"expected an object, found {type(spec).__name__}")
        version = optional(spec, "version", where, "1.0", str)
        if version != "1.0":
            raise TokenizerFileError(f"{where}.version", f"unknown tokenizer.json version {version!r}")
        self.model = models.model_from_json(field(spec, "model", where, dict), f"{where}.model")
        self.normalizer = normalizers.normalizer_from_json(spec.get("normalizer"), f"{where}.normalizer")
        self.pre_tokenizer = pre_tokenizers.pre_tokenizer_from_json(
            spec.get("pre_tokenizer"), f"{where}.pre_tokenizer")
        self.decoder = decoders.decoder_from_json(spec.get("decoder"), f"{where}.decoder")
        self.added = AddedVocabulary.from_json(
            optional(spec, "added_tokens", where, []), f"{where}.added_tokens",
            self.model.token_to_id, self.model.vocab_size, self.normalizer)
        self.post_processor = post_processors.post_processor_from_json(
            spec.get("post_processor"), f"{where}.post_processor")
        self.config = config or {}
        self.source = source
        self._vocab_bytes: list[bytes] | None = None
        self._fast: tuple[tuple, _FastPath | None] = ((), None)

    # -- loading -------------------------------------------------------------------------------

    @classmethod
    def from_str(cls, text: str, source: str = "tokenizer.json", config: dict | None = None) -> "Tokenizer":
        with models.collector_paused():
            try:
                spec = json.loads(text)
            except json.JSONDecodeError as exc:
                raise TokenizerFileError(source, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
            return cls(spec, source, config)

    @classmethod
    def from_file(cls, path: str | Path, config: dict | None = None) -> "Tokenizer":
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise TokenizerFileError(str(path), f"not UTF-8 at byte {exc.start}") from None
        return cls.from_str(text, str(path), config)

    @classmethod
    def from_dir(cls, path: str | Path) -> "Tokenizer":
        """tokenizer.json, with tokenizer_config.json and chat template files when present.

        As in transformers, ``chat_template.jinja`` (the "default") and ``additional_chat_templates/*.jinja``
        (named by file) replace any template in tokenizer_config.json, and a legacy
        ``special_tokens_map.json`` gives the special tokens when the config lists no added tokens.
        """
        path = Path(path)
        if not (path / "tokenizer.json").is_file():
            raise FileNotFoundError(f"{path}: no tokenizer.json in this folder")
        config = _read_json_object(path / "tokenizer_config.json")
        if "added_tokens_decoder" not in config:
            config.update(_read_json_object(path / "special_tokens_map.json"))
        templates = _template_files(path)
        if templates:
            config["chat_template"] = templates["default"] if list(templates) == ["default"] else templates
        return cls.from_file(path / "tokenizer.json", config)

    # -- vocabulary ----------------------------------------------------------------------------

    def token_to_id(self, token: str) -> int | None:
        added = self.added.ids.get(token)
        return added if added is not None else self.model.token_to_id(token)

    def id_to_token(self, token_id: int) -> str | None:
        added = self.added.text_of(token_id)
        return added if added is not None else self.model.id_to_token(token_id)

    @property
    def vocab_size(self) -> int:
        """Distinct tokens, added ones included (tokenizers' get_vocab_size(with_added_tokens=True))."""
        return len(self.model.vocab.keys() | self.added.ids.keys())

    # -- tokenizer_config.json -----------------------------------------------------------------

    def _config_token(self, name: str) -> str | None:
        value = self.config.get(name)
        if isinstance(value, dict):
            value = value.get("content")
        return value if isinstance(value, str) else None

    @property
    def bos_token(self) -> str | None:
        return self._config_token("bos_token")

    @property
    def eos_token(self) -> str | None:
        return self._config_token("eos_token")

    @property
    def eos_token_id(self) -> int | None:
        return None if self.eos_token is None else self.token_to_id(self.eos_token)

    @property
    def chat_templates(self) -> str | dict[str, str] | None:
        """The template, or the named templates by name, as transformers' ``tokenizer.chat_template`` holds them."""
        template = self.config.get("chat_template")
        if isinstance(template, list):  # tokenizer_config.json's list of {"name", "template"}
            return {t["name"]: t["template"] for t in template if isinstance(t, dict)}
        return template if isinstance(template, (str, dict)) else None

    @property
    def chat_template(self) -> str | None:
        """The template used when no name is asked and no tools are given (named templates' "default")."""
        templates = self.chat_templates
        return templates.get("default") if isinstance(templates, dict) else templates

    @chat_template.setter
    def chat_template(self, template: str | dict[str, str] | list[dict] | None) -> None:
        # A new config, so that a config dict the caller passed in is left as it was.
        self.config = {**self.config, "chat_template": template}

    def apply_chat_template(self, conversation, tools=None, documents=None, chat_template=None,
                            add_generation_prompt=False, continue_final_message=False, tokenize=True,
                            sanitize_control_tokens=False, return_dict=True, return_assistant_tokens_mask=False,
                            **kwargs):
        """transformers' apply_chat_template without tensors (see impl.chat.apply_chat_template)."""
        return apply_chat_template(
            self, conversation, tools=tools, documents=documents, chat_template=chat_template,
            add_generation_prompt=add_generation_prompt, continue_final_message=continue_final_message,
            tokenize=tokenize, sanitize_control_tokens=sanitize_control_tokens, return_dict=return_dict,
            return_assistant_tokens_mask=return_assistant_tokens_mask, **kwargs)

    # -- encode / decode -----------------------------------------------------------------------

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """The ids of ``text``; ``add_special_tokens`` (True by default, as in tokenizers and
        transformers) lets the post-processor add its BOS/EOS/CLS tokens.

        >>> tokenizer.encode("Hello world", add_special_tokens=False)      # doctest: +SKIP
        [15496, 995]
        >>> llama.encode("Hello")                                        # doctest: +SKIP
        [1, 15043]
        """
        if not isinstance(text, str):
            raise TypeError(f"encode takes a str, not {type(text).__name__}")
        _reject_surrogates(text)
        fast = self._fast_split() if self.fast_paths else None
        ids: list[int] = []
        with models.collector_paused() if len(text) >= PAUSED_COLLECTOR_CHARS else nullcontext():
            for segment in self.added.split(text, self.normalizer):
                if segment.token_id is not None:
                    ids.append(segment.token_id)
                elif fast is not None:
                    ids += fast.ids(segment.text)
                else:
                    ids += self._pipeline_ids(segment.text, segment.at_start)
        if self.post_processor is not None:
            ids = self.post_processor.process(ids, add_special_tokens)
        return ids

    def encode_batch(self, texts: list[str], add_special_tokens: bool = True) -> list[list[int]]:
        """``encode`` of each text, as tokenizers' and transformers' encode_batch (one process:
        run several for parallelism)."""
        return [self.encode(text, add_special_tokens) for text in texts]

    def encode_without_added_tokens(self, text: str) -> list[int]:
        """The whole text through normalizer, pre-tokenizer and model, added tokens read as plain
        text (as transformers' fast tokenizer encodes a chat's sanitized control tokens).

        >>> tokenizer.encode_without_added_tokens("<|im_end|>") != [tokenizer.token_to_id("<|im_end|>")]  # doctest: +SKIP
        True
        """
        if self.normalizer is not None:
            text = self.normalizer.normalize(text)
        return self._pipeline_ids(text, True)

    def _pipeline_ids(self, text: str, at_start: bool) -> list[int]:
        """The ids of one normalized run of text between added tokens: pre-tokenizer, then model."""
        pieces = [Piece(text, at_start)]
        if self.pre_tokenizer is not None:
            pieces = self.pre_tokenizer.pre_tokenize(pieces)
        texts = list(filter(None, map(attrgetter("text"), pieces)))
        if type(self.model) in (models.BPE, models.WordLevel):  # impl's own (not a subclass): all pieces at once
            return self.model.tokenize_all(texts)
        return list(chain.from_iterable(map(self.model.tokenize, texts)))

    def _fast_split(self) -> _FastPath | None:
        """The fast path, when the pre-tokenizer is a Split and/or a ByteLevel (RawSplit). Worked
        out on first use, and again whenever the pre-tokenizer or the model is replaced."""
        key = (self.pre_tokenizer, type(self.pre_tokenizer), self.model, type(self.model))
        if self._fast[0] != key:
            raw_split = RawSplit.from_pre_tokenizer(self.pre_tokenizer)
            self._fast = key, None if raw_split is None else _FastPath(raw_split, self.model)
        return self._fast[1]

    def tokens_for(self, ids: list[int], skip_special_tokens: bool = False, strict: bool = False) -> list[str]:
        """The token strings decode joins: an id the vocabulary lacks drops silently, as tokenizers
        drops it (``strict`` raises instead); what cannot be an id at all (negative, above U32_MAX,
        not an int) raises."""
        tokens = []
        for position, token_id in enumerate(ids):
            if not isinstance(token_id, int) or isinstance(token_id, bool) or not 0 <= token_id <= U32_MAX:
                raise ValueError(f"invalid token id {token_id!r} at position {position} "
                                 f"(this tokenizer has ids 0..{self.max_id})")
            token = self.id_to_token(token_id)
            if token is None:
                if strict:
                    raise ValueError(f"token id {token_id} at position {position} is not in the vocabulary "
                                     f"(this tokenizer has ids 0..{self.max_id})")
                continue
            if skip_special_tokens and token in self.added.special_contents:
                continue
            tokens.append(token)
        return tokens

    def decode(self, ids: list[int], skip_special_tokens: bool = False, strict: bool = False) -> str:
        """The text of ``ids``, as tokenizers decodes them: an id the vocabulary lacks is dropped, or,
        with ``strict`` (what a server wants), a ValueError naming the id and its position.

        >>> tokenizer.decode([15496, 995])                           # doctest: +SKIP
        'Hello world'
        >>> tokenizer.decode([15496, 99999], strict=True)            # doctest: +SKIP
        ValueError: token id 99999 at position 1 is not in the vocabulary (this tokenizer has ids 0..50256)
        """
        return self._decode_tokens(self.tokens_for(ids, skip_special_tokens, strict))

    def _decode_tokens(self, tokens: list[str]) -> str:
        # Without a decoder, tokenizers joins the token strings with spaces.
        return self.decoder.decode(tokens) if self.decoder is not None else " ".join(tokens)

    def token_bytes(self, token_id: int, skip_special_tokens: bool = False) -> bytes:
        """The bytes ``token_id`` adds when appended to a sequence of at least one token.

        Byte-level and byte-fallback tokens give their raw bytes, even when they are not valid
        UTF-8 alone. Other tokens give what decoding them after a token adds: a SentencePiece
        "▁word" gives " word", though at the very start of a sequence the decoder strips that space.
        A token that the decoder rewrites depending on what follows it gives its text alone.
        """
        tokens = self.tokens_for([token_id], skip_special_tokens)
        if not tokens:
            return b""
        raw = self.decoder.raw_bytes(tokens[0]) if self.decoder is not None else None
        if raw is not None:
            return raw
        once, twice = self._decode_tokens(tokens), self._decode_tokens(tokens * 2)
        if not twice.startswith(once):
            # The decoder rewrites a token once another follows (BPEDecoder's suffix becomes a
            # space only before a next token): there are no context-free bytes; give it alone.
            return once.encode("utf-8")
        return twice[len(once):].encode("utf-8")

    def vocab_bytes(self) -> list[bytes]:
        """``token_bytes`` of every id from 0 to the largest, b"" where the vocabulary has no id."""
        if self._vocab_bytes is None:
            known = {*self.model.vocab.values(), *self.added.by_id}
            self._vocab_bytes = [self.token_bytes(i) if i in known else b"" for i in range(self.max_id + 1)]
        return self._vocab_bytes

    @property
    def max_id(self) -> int:
        return max([*self.model.vocab.values(), *self.added.by_id], default=-1)


def _read_json_object(path: Path) -> dict:
    """A JSON file holding an object, or {} when there is no such file."""
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(str(path), f"invalid JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise TokenizerFileError(f"{path}: $", "expected an object")
    return value


def _template_files(path: Path) -> dict[str, str]:
    """chat_template.jinja as "default" and each additional_chat_templates/NAME.jinja as NAME."""
    files = {}
    if (path / "chat_template.jinja").is_file():
        files["default"] = path / "chat_template.jinja"
    if (path / "additional_chat_templates").is_dir():
        files.update({f.name.removesuffix(".jinja"): f
                      for f in sorted((path / "additional_chat_templates").glob("*.jinja"))})
    return {name: file.read_text(encoding="utf-8") for name, file in files.items()}


def _reject_surrogates(text: str) -> None:
    """Text with a lone surrogate is not valid Unicode: no tokenizer can encode it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text is not valid Unicode: lone surrogate U+{ord(text[exc.start]):04X} "
                         f"at index {exc.start}") from None
