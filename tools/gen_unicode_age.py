"""Regenerate impl/tokenizer/unicode_age.py: which code points each oracle's Unicode tables do not know yet.

The ``regex`` package answers ``\\p{L}`` and friends from its own, newer Unicode tables. Inside the
oracle, four engines answer the same questions from older ones: Oniguruma (Split and ByteLevel
regexes), the Rust ``regex`` crate (Whitespace), Rust's std (``char::is_numeric``,
``char::is_whitespace``) and the ``unicode_categories`` crate (Punctuation, BertPreTokenizer). A
class as an engine sees it is the class as ``regex`` sees it, with the code points assigned after
the engine's Unicode version treated as unassigned, and the few whose properties changed since
treated as they were then.

So this script writes down the tail of DerivedAge.txt (from the ``unicode-age`` package, which
must be at the Unicode version of ``regex``'s tables) and measures each engine's version by
sweeping every code point through ``tokenizers``: the version is the one under which that rule
reproduces the oracle exactly. It fails when no version does, naming the code points that differ.

    pip install unicode-age==18.0.0.0
    python tools/gen_unicode_age.py            # rewrites impl/tokenizer/unicode_age.py
    python tools/gen_unicode_age.py --check    # exits 1 if the file is out of date
"""
from __future__ import annotations

import sys
from collections.abc import Callable

import regex
import tokenizers
from tokenizers import Regex, pre_tokenizers
from unicode_age.unicode_age_db import UCD_VERSION, iter_spans

from table_file import CODE_POINTS, TABLES_DIR, range_lines, ranges, regenerate

AGE_PATH = TABLES_DIR / "unicode_age.py"

ALL_TEXT = "".join(map(chr, CODE_POINTS))
NONCHARACTERS = {cp for cp in CODE_POINTS if cp & 0xFFFE == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF}

# Code points whose properties changed after an engine's version, as (code point, a code point that
# had the same properties then and still has them, the Unicode version that changed it). DerivedAge
# cannot show these; the sweeps below find them, and the versions come from the UCD's change
# history (the sweeps confirm each lies above the engines' versions it matters to).
PROPERTY_CHANGES = (
    (0x0295, 0x0296, "17.0", "ʕ went from Ll to Lo; ʖ stayed Ll"),
    (0x111C9, 0x111C5, "11.0", "SHARADA SANDHI MARK went from Po to Mn; SHARADA DANDA stayed Po"),
    (0x166D, 0x166E, "12.0", "CANADIAN SYLLABICS CHI SIGN went from Po to So; the FULL STOP stayed Po"),
)

# Property classes whose Oniguruma answers must match regex's under the measured version.
ONIGURUMA_CHECKED = [
    *(f"\\p{{{gc}}}" for gc in (
        "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp "
        "C Cc Cf Co Cn").split()),
    *(f"\\p{{{name}}}" for name in (
        "Alpha Lower Upper Alnum Space Punct Graph Print Cntrl Blank Han Latin Greek Cyrillic Arabic "
        "Hangul Hiragana Katakana Thai Common Inherited Emoji").split()),
]

# Properties whose Oniguruma members the age rule gets wrong, with the other spelling the oracle
# accepts: Extended_Pictographic holds code points not yet assigned (so the rule drops members it
# had), and Diacritic took in old code points since. Their members are measured outright.
CORRECTED_PROPERTIES = {"Extended_Pictographic": "ExtPict", "Diacritic": "Dia"}
# The one grapheme break class whose members changed after Oniguruma's version (its \\y sweep
# differs on U+11A3A): measured through \\y, as no property name reaches it.
PREPEND = "Grapheme_Cluster_Break=Prepend"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def derived_age() -> dict[str, set[int]]:
    """Code points by the Unicode version that assigned them (noncharacters left out: never assigned)."""
    by_version: dict[str, set[int]] = {}
    for first, last, major, minor in iter_spans():
        by_version.setdefault(f"{major}.{minor}", set()).update(range(first, last + 1))
    for members in by_version.values():
        members -= NONCHARACTERS
    return by_version


AGES = derived_age()
VERSIONS = sorted(AGES, key=version_key)
UNICODE = f"{UCD_VERSION[0]}.{UCD_VERSION[1]}"


def assigned_after(version: str) -> set[int]:
    return set().union(*(cps for v, cps in AGES.items() if version_key(v) > version_key(version)))


def regex_members(item: str) -> set[int]:
    return {ord(char) for char in regex.findall(item, ALL_TEXT)}


def as_of(item: str, version: str) -> set[int]:
    """What ``item`` matched in Unicode ``version``, by the rule impl.tokenizer.patterns applies."""
    members, newer = regex_members(item), assigned_after(version)
    pattern = regex.compile(item)
    if pattern.match("\u0378"):  # unassigned in every version so far: the class takes the unassigned
        members |= newer
    else:
        members -= newer
    for cp, twin, changed_in, _ in PROPERTY_CHANGES:
        if version_key(changed_in) > version_key(version):
            members.discard(cp)
            if pattern.match(chr(twin)):
                members.add(cp)
    return members


# -- what the oracle says --------------------------------------------------------------------------

def spans_removed(pre_tokenizer) -> set[int]:
    """Code points a Removed split drops when run over every code point at once."""
    kept: set[int] = set()
    for _, (start, end) in pre_tokenizer.pre_tokenize_str(ALL_TEXT):
        kept.update(CODE_POINTS[start:end])
    return set(CODE_POINTS) - kept


def isolated_alone(pre_tokenizer, separator: str) -> set[int]:
    """Code points split off on their own when each stands between ``separator`` characters."""
    pieces = pre_tokenizer.pre_tokenize_str(separator.join(map(chr, CODE_POINTS)))
    return {ord(text) for text, _ in pieces if len(text) == 1 and text != separator}


def oniguruma(item: str) -> set[int]:
    return spans_removed(pre_tokenizers.Split(Regex(item), "removed"))


def rust_regex_word() -> set[int]:
    # Whitespace keeps \w+ and [^\w\s]+ runs: between "!"s, a word character stands alone.
    return isolated_alone(pre_tokenizers.Whitespace(), "!")


def rust_std_numeric() -> set[int]:
    return isolated_alone(pre_tokenizers.Digits(individual_digits=True), "a")


def unicode_categories_punctuation() -> set[int]:
    return isolated_alone(pre_tokenizers.Punctuation(), "a")


def measure(engine: str, oracle: set[int], item: str) -> str:
    """The oldest Unicode version under which ``item`` reproduces ``oracle``."""
    for version in VERSIONS:
        if as_of(item, version) == oracle:
            return version
    best = min(VERSIONS, key=lambda v: len(as_of(item, v) ^ oracle))
    differ = sorted(as_of(item, best) ^ oracle)
    raise SystemExit(f"{engine}: no Unicode version reproduces {item}; closest {best} differs at "
                     + ", ".join(f"U+{cp:04X}" for cp in differ[:20]))


def check_classes(engine: str, version: str, items: list[str], oracle_of: Callable[[str], set[int]]) -> None:
    for item in items:
        differ = sorted(as_of(item, version) ^ oracle_of(item))
        if differ:
            raise SystemExit(f"{engine} at Unicode {version}: {item} differs at "
                             + ", ".join(f"U+{cp:04X}" for cp in differ[:20]))


def oracle_versions() -> dict[str, str]:
    onig_version = measure("oniguruma", set(CODE_POINTS) - oniguruma(r"\p{Cn}"), r"\P{Cn}")
    check_classes("oniguruma", onig_version, ONIGURUMA_CHECKED, oniguruma)
    return {
        "oniguruma": onig_version,
        "rust_regex": measure("rust_regex", rust_regex_word(), r"[\p{Alpha}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]"),
        "rust_std": measure("rust_std", rust_std_numeric(), r"\p{N}"),
        # is_punctuation, or char::is_ascii_punctuation (ASCII symbols too)
        "unicode_categories": measure("unicode_categories", unicode_categories_punctuation(),
                                      r"[\p{P}!-/:-@\[-`{-~]"),
    }


def oniguruma_prepend() -> set[int]:
    """Grapheme_Cluster_Break=Prepend as Oniguruma's \\y sees it (no property name reaches it):
    the code points c with no boundary between c and a following "a" (GB9b; "\\n" parts the probes)."""
    pieces = pre_tokenizers.Split(Regex(r"\y"), "isolated").pre_tokenize_str(
        "".join(chr(cp) + "a\n" for cp in CODE_POINTS))
    return {ord(text[0]) for text, _ in pieces if len(text) == 2 and text[1] == "a"}


def oniguruma_corrections(version: str) -> dict[str, tuple[set[int], set[int]]]:
    """Per corrected property: the code points the oracle has and the age rule lacks, and back."""
    corrections = {}
    for name in CORRECTED_PROPERTIES:
        rule, oracle = as_of(f"\\p{{{name}}}", version), oniguruma(f"\\p{{{name}}}")
        corrections[name] = (oracle - rule, rule - oracle)
    rule, oracle = as_of(f"\\p{{{PREPEND}}}", version), oniguruma_prepend()
    corrections[PREPEND] = (oracle - rule, rule - oracle)
    return corrections


def property_key(name: str) -> str:
    return regex.sub(r"[ _-]", "", name).lower()


# -- the file --------------------------------------------------------------------------------------

def check_regex_tables() -> int:
    """Fail unless regex's tables are DerivedAge's version; returns how many code points they assign."""
    assigned = set(CODE_POINTS) - regex_members(r"\p{Cn}")
    expected = set().union(*AGES.values()) & set(CODE_POINTS)
    if assigned != expected:
        raise SystemExit(f"regex {regex.__version__} is not at Unicode {UNICODE} (the unicode-age data): "
                         f"{len(assigned ^ expected)} code points differ")
    return len(assigned)


def format_ranges(code_points: set[int], indent: int = 8) -> str:
    return range_lines(ranges(code_points), indent)


def render_corrections(corrections: dict[str, tuple[set[int], set[int]]]) -> str:
    def runs(code_points: set[int]) -> str:
        return f"(\n{format_ranges(code_points, 12)}\n        )" if code_points else "()"

    return "\n".join(f'    "{property_key(name)}": (  # {name}: {len(added)} added, {len(removed)} removed\n'
                     f"        {runs(added)},\n        {runs(removed)},\n    )," for name, (added, removed) in corrections.items())


def render(versions: dict[str, str], regex_assigned: int, corrections: dict[str, tuple[set[int], set[int]]]) -> str:
    oldest = min(versions.values(), key=version_key)
    newer = [v for v in VERSIONS if version_key(v) > version_key(oldest)]
    since = "\n".join(f'    "{v}": (\n{format_ranges(AGES[v])}\n    ),' for v in newer)
    changes = "\n".join(f'    (0x{cp:04X}, 0x{twin:04X}, "{v}"),  # {note}' for cp, twin, v, note in PROPERTY_CHANGES)
    return f'''"""Which code points the oracle's Unicode tables do not know yet, to correct regex's newer ones.

GENERATED by tools/gen_unicode_age.py; do not edit. The oracle is tokenizers {tokenizers.__version__}; its
engines' Unicode versions were measured by sweeping every code point through it. ASSIGNED_IN is the
tail of DerivedAge.txt (Unicode {UNICODE}, from unicode-age), the Unicode version of the tables inside
regex {regex.__version__}. Ranges are inclusive (first, last) pairs; noncharacters are left out.
"""

# The Unicode version of regex's tables, and how many code points they assign: the tests check
# regex still assigns exactly these, since on newer tables ASSIGNED_IN would be incomplete.
REGEX_UNICODE = "{UNICODE}"
REGEX_ASSIGNED = {regex_assigned}

# The Unicode version each engine inside the oracle answers from.
ORACLE_UNICODE: dict[str, str] = {{
    "oniguruma": "{versions["oniguruma"]}",  # Split and ByteLevel regexes
    "rust_regex": "{versions["rust_regex"]}",  # the regex crate: Whitespace's \\w+|[^\\w\\s]+
    "rust_std": "{versions["rust_std"]}",  # char::is_numeric (Digits), char::is_whitespace
    "unicode_categories": "{versions["unicode_categories"]}",  # is_punctuation (Punctuation, BertPreTokenizer)
}}

# Code points first assigned in each Unicode version after the oldest of ORACLE_UNICODE.
ASSIGNED_IN: dict[str, tuple[tuple[int, int], ...]] = {{
{since}
}}

# (code point, twin, version): before that Unicode version the code point had all the properties its
# twin has (their general category changed; the versions are from the UCD's change history).
PROPERTY_CHANGES: tuple[tuple[int, int, str], ...] = (
{changes}
)

# Properties whose Oniguruma members that rule gets wrong (Extended_Pictographic takes code points
# not yet assigned; Diacritic took in old ones since), by the key Oniguruma looks names up with:
# (code points to add, code points to remove), measured on the oracle.
ONIGURUMA_CORRECTIONS: dict[str, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]] = {{
{render_corrections(corrections)}
}}
# The other spelling of each, as the same key.
ONIGURUMA_CORRECTION_ALIASES: dict[str, str] = {{
{chr(10).join(f'    "{property_key(alias)}": "{property_key(name)}",' for name, alias in CORRECTED_PROPERTIES.items())}
}}
'''


def main() -> int:
    def rendered() -> str:
        versions = oracle_versions()
        return render(versions, check_regex_tables(), oniguruma_corrections(versions["oniguruma"]))

    return regenerate(AGE_PATH, rendered, __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
