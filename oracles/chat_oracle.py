"""The `chat` oracle: transformers' ``apply_chat_template``, and the chat templates to check.

Text: ``render`` is ``apply_chat_template(tokenize=False)`` of a tokenizer that has no special tokens,
given the template source and the variables, which is exactly what ``impl.render_chat`` promises.
Ids: ``FamilyChatOracle`` is transformers' tokenizer for a family folder, so template selection, the
special-token variables and ``sanitize_control_tokens`` are transformers'. It is the generic
``PreTrainedTokenizerFast`` over the folder's files, not the model-specific class ``AutoTokenizer``
picks: transformers 5's LlamaTokenizer rebuilds the pipeline (a Metaspace pre-tokenizer in place of
llama2's normalizer, so "</s> <" encodes differently), and what a tokenizer.json means is the
tokenizer component's question, answered by ``tokenizers`` on the file as it is.

Dates are frozen on both sides with one mechanism: ``frozen_clock()`` stops the process's wall clock
(time-machine patches the C clock functions) at ``FROZEN_MOMENT``, so transformers' ``strftime_now``
and any implementation's reading of ``datetime.now()``, however it imports it, see the same moment.
The monotonic clock is left running, so time limits inside a renderer still work.

    >>> with frozen_clock():
    ...     render("{{ strftime_now('%d %b %Y') }}: {{ messages[0].content }}", [{"role": "user", "content": "Hi"}])
    '14 Mar 2025: Hi'

Templates are named in cases, never stored there: ``shared:NAME`` is ``$TEXTBOUND_TEMPLATES/NAME.jinja``
(MANIFEST.json says where each came from and what it uses), ``family`` / ``family:NAME`` the family's own (its tokenizer_config's
string, or one of its named templates), ``project:chatml`` impl's CHATML_TEMPLATE, used by the
families that ship none. ``resolve`` turns a name back into the source, and its digest guards replays.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import json
import os
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

TEMPLATES_ENV = "TEXTBOUND_TEMPLATES"
VERSION = f"transformers {version('transformers')}"
FROZEN_MOMENT = datetime(2025, 3, 14, 9, 26, 53)  # naive: local time, the same on both sides
PROJECT_CHATML = "project:chatml"


@contextmanager
def frozen_clock():
    """The wall clock stopped at FROZEN_MOMENT while the block runs (both sides of a comparison)."""
    import time_machine
    with time_machine.travel(FROZEN_MOMENT, tick=False):
        yield


@dataclass(frozen=True)
class Raised:
    """What a call raised: the exception's class (module-qualified, builtins bare) and message."""

    error_class: str
    message: str
    where: str = ""  # file:line of the innermost frame, for reports

    @classmethod
    def of(cls, exc: BaseException) -> "Raised":
        kind = type(exc)
        module = "" if kind.__module__ == "builtins" else kind.__module__ + "."
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        return cls(module + kind.__qualname__, str(exc), where)

    def __str__(self) -> str:
        return f"{self.error_class}: {self.message}"


def outcome(call: Callable[[], object]) -> tuple[object, Raised | None]:
    """``(value, None)``, or ``(None, Raised)`` when the call raised an Exception."""
    try:
        return call(), None
    except Exception as exc:  # a template may fail in any way; the class is what is compared
        return None, Raised.of(exc)


# --- the templates -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChatTemplate:
    """A template to check: its name in cases, its source, and what MANIFEST.json says of it."""

    name: str
    source: str
    note: str = ""

    @property
    def digest(self) -> str:
        return template_digest(self.source)


def template_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


class TemplateNotFound(LookupError):
    """A case names a template that cannot be found here (an unset variable, a missing file...)."""


def templates_dir() -> Path | None:
    value = os.environ.get(TEMPLATES_ENV)
    return Path(value) if value else None


@functools.cache
def _shared_templates(root: Path) -> tuple[ChatTemplate, ...]:
    manifest = root / "MANIFEST.json"
    entries = json.loads(manifest.read_text(encoding="utf-8"))["templates"] if manifest.is_file() else []
    notes = {entry["file"]: entry.get("note", "") for entry in entries}
    return tuple(ChatTemplate(f"shared:{path.stem}", path.read_text(encoding="utf-8"), notes.get(path.name, ""))
                 for path in sorted(root.glob("*.jinja")))


def shared_templates() -> tuple[ChatTemplate, ...]:
    """Every template under $TEXTBOUND_TEMPLATES (NAME.jinja, with MANIFEST.json's note on it when
    it has one); none when the variable is unset."""
    root = templates_dir()
    return _shared_templates(root) if root else ()


def family_templates(path: Path) -> tuple[ChatTemplate, ...]:
    """The family's own templates as transformers loads them: ``family`` for a single one,
    ``family:NAME`` for each named one; none when the family ships none."""
    templates = FamilyChatOracle.of(path).tokenizer.chat_template
    if templates is None:
        return ()
    if isinstance(templates, str):
        return (ChatTemplate("family", templates),)
    return tuple(ChatTemplate(f"family:{name}", source) for name, source in templates.items())


def project_template() -> ChatTemplate:
    """impl's CHATML_TEMPLATE, for families that ship no template. A template is input, not truth:
    it is read from the project's impl package whatever implementation is under test."""
    from textbound.impl import CHATML_TEMPLATE
    return ChatTemplate(PROJECT_CHATML, CHATML_TEMPLATE)


def templates_for(path: Path) -> tuple[ChatTemplate, ...]:
    """The templates a family is checked with first: its own, else the project's ChatML."""
    return family_templates(path) or (project_template(),)


def resolve(name: str, family_path: Path, digest: str | None = None) -> ChatTemplate:
    """The template a case names, checked against the digest it was generated with."""
    if name.startswith("shared:"):
        root = templates_dir()
        if root is None:
            raise TemplateNotFound(f"template {name!r}: ${TEMPLATES_ENV} is not set")
        found = [t for t in _shared_templates(root) if t.name == name]
    elif name == PROJECT_CHATML:
        found = [project_template()]
    elif name == "family" or name.startswith("family:"):
        found = [t for t in family_templates(family_path) if t.name == name]
    else:
        raise TemplateNotFound(f"template {name!r}: not shared:NAME, family[:NAME] or {PROJECT_CHATML}")
    if not found:
        raise TemplateNotFound(f"template {name!r}: not found (${TEMPLATES_ENV}={templates_dir()}, family "
                               f"folder {family_path})")
    template = found[0]
    if digest is not None and template.digest != digest:
        raise TemplateNotFound(f"template {name!r} has changed since the case was made (digest {template.digest}, "
                               f"case {digest})")
    return template


# --- rendering -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChatRequest:
    """One apply_chat_template request, as plain data (a case's input holds exactly this)."""

    messages: list
    tools: list | None = None
    documents: list | None = None
    add_generation_prompt: bool = False
    continue_final_message: bool | str = False
    variables: dict | None = None

    @classmethod
    def of(cls, data: dict) -> "ChatRequest":
        return cls(data["messages"], data.get("tools"), data.get("documents"), data.get("add_generation_prompt", False),
                   data.get("continue_final_message", False), data.get("variables") or {})

    def arguments(self) -> dict:
        """Keyword arguments for render_chat / apply_chat_template: fresh copies, so that neither side
        can see what the other did to its inputs."""
        return copy.deepcopy({"tools": self.tools, "documents": self.documents,
                              "add_generation_prompt": self.add_generation_prompt,
                              "continue_final_message": self.continue_final_message, **(self.variables or {})})


@functools.cache
def bare_tokenizer():
    # A tokenizer with no special tokens: apply_chat_template then adds no variables of its own.
    import tokenizers
    from transformers import PreTrainedTokenizerFast
    return PreTrainedTokenizerFast(tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel({"x": 0})))


def render(template: str, messages: list, **arguments) -> str:
    """What ``render_chat(template, messages, **arguments)`` must return, by transformers."""
    return bare_tokenizer().apply_chat_template(copy.deepcopy(messages), chat_template=template, tokenize=False,
                                                 **arguments)


class FamilyChatOracle:
    """transformers' tokenizer of one family folder, for the ids and the special-token variables."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    @classmethod
    @functools.cache
    def of(cls, path: Path) -> "FamilyChatOracle":
        from transformers import PreTrainedTokenizerFast
        return cls(PreTrainedTokenizerFast.from_pretrained(str(path)))

    def special_token_variables(self) -> dict[str, str]:
        """The variables apply_chat_template gives a template from the tokenizer (bos_token, ...)."""
        return {key: value for key, value in self.tokenizer.special_tokens_map.items() if isinstance(value, str)}

    def ids(self, messages: list, chat_template: str | None, sanitize_control_tokens: bool, **arguments) -> list[int]:
        return self.tokenizer.apply_chat_template(copy.deepcopy(messages), chat_template=chat_template, tokenize=True,
                                                  return_dict=False, sanitize_control_tokens=sanitize_control_tokens,
                                                  **arguments)
