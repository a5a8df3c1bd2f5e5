"""report.html: one self-contained page per run (no network: styles and the one script inline).

The root causes first (textbound.naming.root_causes): each with what names it, its signatures and
their counts, its smallest example with every field labelled, a stream as the timeline of its
calls (else expected and actual aligned, see records.alignment) with the first difference marked,
and the command that replays it; then a table of cases, divergences and new divergences per family ×
component. Every number is also a data attribute, and the script fills in the totals from the
table, so a browser test can compare what the page shows with summary.json.
"""
from __future__ import annotations

import html

from ..naming.baseline import BaselineEntry
from ..naming.root_causes import summary_root_causes
from ..naming.signatures import SignatureGroup, is_minimized, signature_groups, split_records
from ..records.alignment import Alignment, labelled_example, record_alignment

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.diverged td { background: #fff3f3; }
tr.first td { background: #ffd7d7; font-weight: bold; }
tr.differs td { background: #fff0f0; }
pre, code { font: 12px/1.3 ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; }
.new { color: #b00; font-weight: bold; }
.state-interrupted { color: #b00; font-weight: bold; }
section.root-cause { border-top: 2px solid #ddd; margin-top: 2em; }
"""

# Totals computed by the browser from the rows, shown beside the table.
SCRIPT = """
for (const name of ["cases", "divergences", "new"]) {
  let total = 0;
  for (const cell of document.querySelectorAll("#counts td[data-" + name + "]")) total += Number(cell.dataset[name]);
  document.getElementById("total-" + name).textContent = total.toLocaleString("en-US");
}
"""


# What the two sides of an aligned example are called; a summary may name them ("sides": compare's old and new).
SIDES = ("expected", "actual")


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _alignment(alignment: Alignment, sides: tuple[str, str]) -> str:
    width = len(alignment.columns)
    head = "".join(f"<th>{_e(c)}</th>" for c in alignment.columns)
    rows = [f'<tr><th colspan="{width}">{_e(sides[0])}</th><th colspan="{width}">{_e(sides[1])}</th></tr>',
            f"<tr>{head}{head}</tr>"]
    if alignment.hidden_before:
        rows.append(f'<tr><td colspan="{2 * width}">… {alignment.hidden_before} equal row(s) before</td></tr>')
    for index, row in enumerate(alignment.rows):
        css = "first" if index == alignment.first else ("differs" if row.differs else "")
        cells = "".join(f"<td>{_e(c)}</td>" for side in (row.expected, row.actual)
                        for c in (side or ("",) * width))
        rows.append(f'<tr class="{css}">{cells}</tr>')
    if alignment.hidden_after:
        rows.append(f'<tr><td colspan="{2 * width}">… {alignment.hidden_after} more row(s)</td></tr>')
    where = f"<p>at <code>{_e(alignment.path)}</code></p>" if alignment.path else ""
    notes = "".join(f"<p>{_e(note)}</p>" for note in alignment.notes)
    return f'{where}<table class="alignment">{"".join(rows)}</table>{notes}'


def _timeline(timeline: dict) -> str:
    """A stream's calls as table rows, the implementation's and the reference's columns side by side."""
    head = "".join(f"<th>{_e(c)}</th>" for c in timeline["columns"])
    rows = [f'<tr class="{"first" if index == timeline.get("first") else ""}">'
            + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for index, row in enumerate(timeline["rows"])]
    return (f'<p>call by call (the first call where the two sides part marked):</p>'
            f'<table class="timeline"><tr>{head}</tr>{"".join(rows)}</table>')


def _example(smallest: dict, summary: dict) -> str:
    """An example's labelled fields, and its timeline where the run's evidence holds one of this
    very input, else expected and actual aligned."""
    timeline = (summary.get("root_cause_evidence", {}).get(smallest["signature"]) or {}).get("timeline")
    view = _timeline(timeline) if timeline and timeline.get("input") == smallest.get("minimized_input") else \
        _alignment(record_alignment(smallest, summary.get("families", {})), summary.get("sides", SIDES))
    not_minimized = "" if is_minimized(smallest) else f" ({smallest['first_difference']['minimization']})"
    labelled = "\n".join(labelled_example(smallest))
    return (f"<p>smallest example ({_e(smallest['family'])}, <code>{_e(smallest['signature'])}</code>)"
            f"{_e(not_minimized)}:</p><pre>{_e(labelled)}</pre>{view}"
            f"<p>replay: <code>{_e(smallest['reproduce'])}</code></p>")


def _root_cause(number: int, cause: dict, summary: dict) -> list[str]:
    """A root cause's section: what names it, its signatures with their counts, its smallest example."""
    where = ", ".join(f"{f} ({n})" for f, n in cause["families"].items())
    named = [f"<p>reproduced exactly by the catalogue's <code>{_e(e['mutant'])}</code>: {_e(e['bug'])}</p>"
             for e in cause.get("explained_by", [])]
    if cause.get("culprit"):
        named.append(f"<p>comes from <code>{_e(cause['culprit'])}</code>: its oracle-backed stand-in makes the "
                     f"examples agree</p>")
    return [
        f'<section class="root-cause" data-root-cause="{_e(cause["name"])}" data-count="{cause["cases"]}">',
        f"<h3>{number}. <code>{_e(cause['name'])}</code>" + (' <span class="new">new</span>' if cause.get("new") else "")
        + "</h3>", *named,
        f"<p>{cause['cases']} divergence(s) in {len(cause['signatures'])} signature(s), in {_e(where)}:</p><ul>",
        *(f'<li data-signature="{_e(s["signature"])}" data-count="{s["cases"]}"><code>{_e(s["signature"])}</code> '
          f"({s['cases']})" + (' <span class="new">new</span>' if s.get("new") else "") + "</li>"
          for s in cause["signatures"]),
        "</ul>", _example(cause["smallest"], summary), "</section>",
    ]


def render(summary: dict, records: list[dict]) -> str:
    new = set(summary.get("new", []))
    state = "completed" if summary.get("completed", True) else "interrupted"
    state_text = (f"completed in {summary.get('seconds', '?')} s" if state == "completed"
                  else f"INTERRUPTED ({summary.get('interrupted')}): counts cover what was checked before it stopped")
    divergences, disagreements = split_records(records)
    causes = summary_root_causes(summary, divergences)
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>textbound report: {_e(summary['impl'])}</title><style>{STYLE}</style></head><body>",
        "<h1>textbound report</h1><ul>",
        f'<li>run: <span id="run-state" class="state-{state}" data-completed="{str(state == "completed").lower()}">'
        f"{_e(state_text)}</span>" + (f" (shard {_e(summary['shard'])})" if summary.get("shard") else "") + "</li>",
        f"<li>implementation: <code>{_e(summary['impl'])}</code> ({_e(summary['impl_version'])})</li>",
        *(f"<li>oracle for {_e(c)}: {_e(v)}</li>" for c, v in sorted(summary.get("oracles", {}).items())),
        f"<li>budget: {_e(summary['budget'])}, seed: {_e(summary['seed'])}</li>",
        f'<li>root causes: <span id="root-causes">{len(causes)}</span>, new: '
        f'<span id="new-root-causes">{sum(bool(c.get("new")) for c in causes)}</span></li>',
        f'<li>new signatures: <span id="new-signatures">{len(new)}</span>, baselined: {len(summary.get("known", []))},'
        f' fixed baseline entries: {len(summary.get("fixed", []))}</li></ul>',
        "<h2>Root causes</h2>",
    ]
    if not causes:
        parts.append("<p>None: every checked case agreed with the oracle.</p>")
    for number, cause in enumerate(causes, 1):
        parts += _root_cause(number, cause, summary)
    parts += [
        "<h2>Cases and divergences per family and component</h2>",
        '<table id="counts"><tr><th>family</th><th>component</th><th>cases</th><th>divergences</th><th>new</th></tr>',
    ]
    for count in summary["counts"]:
        css = ' class="diverged"' if count["divergences"] else ""
        parts.append(f'<tr{css} data-family="{_e(count["family"])}" data-component="{_e(count["component"])}">'
                     f'<td>{_e(count["family"])}</td><td>{_e(count["component"])}</td>'
                     + "".join(f'<td class="n" data-{name}="{count.get(name, 0)}">{count.get(name, 0):,}</td>'
                               for name in ("cases", "divergences", "new")) + "</tr>")
    parts.append('<tr><th colspan="2">total</th><td class="n" id="total-cases"></td>'
                 '<td class="n" id="total-divergences"></td><td class="n" id="total-new"></td></tr></table>')
    if summary.get("notes"):
        parts += ["<h2>Not checked</h2><ul>", *(f"<li>{_e(n)}</li>" for n in summary["notes"]), "</ul>"]
    if summary.get("not_minimized"):
        parts += ["<h2>Found, not minimized (smaller examples of the same signatures were)</h2><ul>",
                  *(f"<li><code>{_e(e['signature'])}</code> on {_e(e['family'])}: {e['count']}</li>"
                    for e in summary["not_minimized"]), "</ul>"]
    if summary.get("fixed"):
        parts += ["<h2>Baseline entries that no longer diverge (remove them)</h2><ul>",
                  *(f"<li>{_e(BaselineEntry.from_json(e).label)}: {_e(e.get('reason', ''))}</li>"
                    for e in summary["fixed"]), "</ul>"]
    if disagreements:
        parts.append("<h2>Oracle disagreements and failures</h2><p>The references disagree and impl sides with "
                     "one of them, or a reference hung or crashed on its own: not counted against impl.</p>")
    for group in signature_groups(disagreements):
        parts += _signature_entry(group, "div", "oracle-disagreement", "case(s)", summary)
    parts += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"


def _signature_entry(group: SignatureGroup, tag: str, css: str, counted: str, summary: dict) -> list[str]:
    """A signature's counts and smallest example, in a ``tag`` element of class ``css``."""
    where = ", ".join(f"{f} ({n})" for f, n in group.families.most_common())
    return [
        f'<{tag} class="{css}" data-signature="{_e(group.signature)}" data-count="{len(group.records)}">',
        f"<h3><code>{_e(group.signature)}</code></h3>",
        f"<p>{len(group.records)} {counted} in {_e(where)}.</p>", _example(group.smallest, summary), f"</{tag}>",
    ]
