"""``format`` values as regexes over a string's characters: each a sound subset of what the format allows.

A format is written stricter than jsonschema's checker wherever the checker is loose or absent (several
checkers need packages that may not be installed), so a string a pattern admits passes every checker:

- ``date``: a calendar date of years 0001-9999 (as the checker); ``time``: RFC 3339
  ``HH:MM:SS[.frac](Z|+HH:MM)`` (uppercase ``Z``, no leap second); ``date-time``: the two joined by ``T``.
- ``email``/``idn-email``: an unquoted RFC 5321 dot-atom local part of letters, digits and ``_%+-``,
  ``@``, dot-separated domain labels ending in a top-level domain of two or more letters.
- ``uuid``: 8-4-4-4-12 hex digits. ``ipv4``: four decimal octets 0-255 without leading zeros.
  ``ipv6``: eight groups of 1-4 hex digits (no ``::`` shortening).
- ``hostname``/``idn-hostname``: at most four labels (so at most 252 characters, under the 253 allowed)
  of 1-62 ASCII letters, digits and inner hyphens, ending in a letters-only top-level label of 1-63.
- ``uri``/``iri``: ``scheme://host[:port]`` then ``/``-separated segments of unreserved characters
  (``A-Za-z0-9._~-``), an optional query of those and ``=&``; ``uri-reference``/``iri-reference``/
  ``uri-template``: a ``uri`` or a relative path of unreserved segments.
- ``json-pointer``: ``/``-separated segments of unreserved characters other than ``~``, which appears only
  as the escapes ``~0`` and ``~1``; ``regex``: a literal of letters, digits,
  space, ``_`` and ``-`` (a regex matching itself); ``duration``: ``P<n>D``, ``P<n>W`` or ``PT<n>H|M|S``.

A format no draft defines (``int32``, ``password``, ``color``...) is an annotation: jsonschema checks
nothing for it, and neither does impl. ``KNOWN`` lists every draft's formats impl does not write.

Example: ``STRING_FORMATS["ipv4"]`` fully matches ``10.0.255.7`` and not ``10.0.256.7``.
"""
from __future__ import annotations

# A calendar date as jsonschema's checker (date.fromisoformat) has it: years 0001-9999, the days of
# each month, February 29 in leap years only (divisible by 4, centuries only when divisible by 400).
_BY_FOUR = "(?:0[48]|[2468][048]|[13579][26])"  # two digits forming a multiple of 4 other than 00
_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = f"(?:[0-9]{{2}}{_BY_FOUR}|{_BY_FOUR}00)"
_UNRESERVED = "[A-Za-z0-9._~-]"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,60}[A-Za-z0-9])?"  # 62 characters at most: four labels fit in 253
_HOSTNAME = f"(?:{_LABEL}\\.){{0,3}}[A-Za-z](?:[A-Za-z]{{0,62}})"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_URI = (f"[a-z][a-z0-9+.-]*://{_HOSTNAME}(?::[0-9]{{1,5}})?(?:/{_UNRESERVED}*)*"
        f"(?:\\?(?:{_UNRESERVED}|[=&])*)?")
_RELATIVE = f"{_UNRESERVED}+(?:/{_UNRESERVED}*)*"
_EMAIL = r"[a-zA-Z0-9_%+-]+(?:\.[a-zA-Z0-9_%+-]+)*@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,}"

STRING_FORMATS = {
    "date": (f"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
             f"|02-(?:0[1-9]|1[0-9]|2[0-8]))|{_LEAP_YEAR}-02-29)"),
    "time": r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "email": _EMAIL, "idn-email": _EMAIL,
    "ipv4": f"{_OCTET}(?:\\.{_OCTET}){{3}}",
    "ipv6": "[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){7}",
    "hostname": _HOSTNAME, "idn-hostname": _HOSTNAME,
    "uri": _URI, "iri": _URI,
    "uri-reference": f"(?:{_URI}|{_RELATIVE})", "iri-reference": f"(?:{_URI}|{_RELATIVE})",
    "uri-template": f"(?:{_URI}|{_RELATIVE})",
    "json-pointer": "(?:/(?:[A-Za-z0-9._-]|~[01])*)*",
    "regex": "[A-Za-z0-9 _-]*",
    "duration": "P(?:[0-9]{1,4}[DW]|T[0-9]{1,4}[HMS])",
}
STRING_FORMATS["date-time"] = STRING_FORMATS["date"] + "T" + STRING_FORMATS["time"]
# Formats some draft defines that impl does not write: refused, never ignored.
KNOWN = frozenset({"relative-json-pointer", "ip-address", "host-name", "utc-millisec", "color", "style", "phone"}) - STRING_FORMATS.keys()
