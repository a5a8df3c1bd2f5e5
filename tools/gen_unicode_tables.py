"""Regenerate impl/tokenizer/unicode_tables.py by measuring the installed ``tokenizers`` (the oracle).

The Rust behind ``tokenizers`` answers Unicode questions from tables frozen at different Unicode
versions (the unicode-normalization-alignments crate, the unicode_categories crate, Rust's std), none
of which need match the Python running impl. Rather than guess those versions, this script asks the
oracle about every code point and writes down its answers, stamped with the oracle's version.

Run it again whenever the pinned ``tokenizers`` changes:

    python tools/gen_unicode_tables.py            # rewrites impl/tokenizer/unicode_tables.py
    python tools/gen_unicode_tables.py --check    # exits 1 if the file is out of date
"""
from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable

import tokenizers
from tokenizers import normalizers

from table_file import CODE_POINTS, TABLES_DIR, range_lines, ranges, regenerate

TABLES_PATH = TABLES_DIR / "unicode_tables.py"

# Reordering probes: U+0345 has the highest combining class (240) and U+0334 the lowest (1), so a
# character moves past one of them under NFD exactly when its own combining class is not 0.
HIGHEST_CLASS_MARK = "\u0345"
LOWEST_CLASS_MARK = "\u0334"


def members(keep: Callable[[str], bool]) -> list[int]:
    return [cp for cp in CODE_POINTS if keep(chr(cp))]


def oracle_normalizes() -> set[int]:
    """Code points the oracle's NFC/NFD/NFKC/NFKD do not leave inert.

    That is: characters that decompose, characters they decompose into (which covers every
    character that can take part in a composition, Hangul jamo included), and characters with a
    non-zero canonical combining class.
    """
    nfkd = normalizers.NFKD().normalize_str
    nfd = normalizers.NFD().normalize_str
    active: set[int] = set()
    for cp in CODE_POINTS:
        char = chr(cp)
        decomposed = nfkd(char)
        if decomposed != char:
            active.add(cp)
            active.update(map(ord, decomposed))
        elif (nfd(HIGHEST_CLASS_MARK + char) != HIGHEST_CLASS_MARK + char
              or nfd(char + LOWEST_CLASS_MARK) != char + LOWEST_CLASS_MARK):
            active.add(cp)
    return active


def inert_in_every_unicode() -> set[int]:
    """Code points assigned in this Python's unicodedata and inert under every normalization form.

    Unicode's stability policy freezes the decomposition, combining class and composition pairs of
    an assigned character, so these stay inert under every later unicodedata as well.
    """
    composed_of: set[int] = set()  # what primary composites, Hangul syllables included, compose from
    for cp in CODE_POINTS:
        char = chr(cp)
        decomposed = unicodedata.normalize("NFD", char)
        if decomposed != char and unicodedata.normalize("NFC", decomposed) == char:
            composed_of.update(map(ord, decomposed))
    return {
        cp for cp in CODE_POINTS
        if unicodedata.category(chr(cp)) != "Cn" and cp not in composed_of
        and unicodedata.combining(chr(cp)) == 0 and unicodedata.normalize("NFKD", chr(cp)) == chr(cp)
    }


def unnormalized() -> list[int]:
    """Code points impl must copy through instead of handing them to unicodedata.

    Outside these, the running Python's unicodedata (any version at least the oracle's) gives the
    oracle's answer: either the oracle normalizes the character, so it is assigned in the oracle's
    Unicode version and stable since, or both leave it alone for good.
    """
    agreed = oracle_normalizes() | inert_in_every_unicode()
    return [cp for cp in CODE_POINTS if cp not in agreed]


def bert(**options: bool) -> Callable[[str], str]:
    settings = {"clean_text": False, "handle_chinese_chars": False, "strip_accents": False, "lowercase": False}
    return normalizers.BertNormalizer(**{**settings, **options}).normalize_str


def measure() -> dict[str, object]:
    lowercase = normalizers.Lowercase().normalize_str
    strip = normalizers.Strip(left=True, right=True).normalize_str
    strip_accents = normalizers.StripAccents().normalize_str
    nfd = normalizers.NFD().normalize_str
    bert_clean, bert_strip_accents = bert(clean_text=True), bert(strip_accents=True)
    return {
        "UNNORMALIZED": ranges(unnormalized()),
        "LOWERCASE": {cp: lowercase(chr(cp)) for cp in members(lambda c: lowercase(c) != c)},
        "WHITESPACE": "".join(map(chr, members(lambda c: strip(c) == ""))),
        "COMBINING_MARKS": ranges(members(lambda c: strip_accents(c) == "")),
        "BERT_DROPPED": ranges(members(lambda c: bert_clean(c) == "")),
        "NONSPACING_MARKS": ranges(members(lambda c: nfd(c) == c and bert_strip_accents(c) == "")),
    }


def format_ranges(runs: list[tuple[int, int]]) -> str:
    return "(\n" + range_lines(runs, 4) + "\n)"


def format_mapping(mapping: dict[int, str]) -> str:
    cells = [f"0x{cp:04X}: {ascii(text)}," for cp, text in sorted(mapping.items())]
    lines = ("    " + " ".join(cells[i:i + 6]) for i in range(0, len(cells), 6))
    return "{\n" + "\n".join(lines) + "\n}"


DOCS = {
    "UNNORMALIZED": (
        "Code points the oracle's NFC/NFD/NFKC/NFKD leave alone but a newer unicodedata may not: its\n"
        "normalization tables are Unicode 9.0 (U+1DF6, added in 10.0, is not reordered; U+1F16C, added\n"
        "in 12.0, is not decomposed). Everything else, unicodedata >= 9.0 normalizes as the oracle does\n"
        f"(listed from unicodedata {unicodedata.unidata_version}: unassigned there, or normalized there)."
    ),
    "LOWERCASE": "Rust's char::to_lowercase for every code point it changes (no context: Σ is always σ).",
    "WHITESPACE": "Rust's char::is_whitespace (Unicode White_Space), used by Strip and BertNormalizer.",
    "COMBINING_MARKS": "What StripAccents removes: the crate's is_combining_mark (general category M).",
    "BERT_DROPPED": "What BertNormalizer's clean_text removes: NUL, U+FFFD and Other (C*) but tab, LF, CR.",
    "NONSPACING_MARKS": "What BertNormalizer's strip_accents removes after NFD (general category Mn).",
}

TYPES = {
    "UNNORMALIZED": "tuple[tuple[int, int], ...]",
    "LOWERCASE": "dict[int, str]",
    "WHITESPACE": "str",
    "COMBINING_MARKS": "tuple[tuple[int, int], ...]",
    "BERT_DROPPED": "tuple[tuple[int, int], ...]",
    "NONSPACING_MARKS": "tuple[tuple[int, int], ...]",
}


def render(tables: dict[str, object]) -> str:
    parts = [
        f'"""Unicode answers of the oracle, tokenizers {tokenizers.__version__}, measured over every code point.\n'
        "\n"
        "GENERATED by tools/gen_unicode_tables.py; do not edit. Ranges are inclusive (first, last) pairs.\n"
        "impl reads these instead of Python's unicodedata/str methods because the oracle's Rust tables\n"
        "are frozen at other Unicode versions (normalization 9.0, lowercase 17.0) than any one Python's.\n"
        '"""\n',
        f'ORACLE_VERSION = "tokenizers {tokenizers.__version__}"\n',
    ]
    for name, value in tables.items():
        body = {dict: format_mapping, list: format_ranges}.get(type(value), ascii)(value)
        comment = "\n".join(f"# {line}" for line in DOCS[name].splitlines())
        parts.append(f"{comment}\n{name}: {TYPES[name]} = {body}\n")
    return "\n".join(parts)


def main() -> int:
    return regenerate(TABLES_PATH, lambda: render(measure()), __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
