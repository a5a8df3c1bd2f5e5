"""How a run is written and combined: ``report`` (the recorder of divergences.jsonl and
summary.json, report.md and summary.md), ``html_report`` and ``junit`` (the same run for a browser and
for CI), and ``merge`` (shards of one run into one report).

May import ``naming`` and ``files``; never ``triage``, so that writing a run does not
depend on explaining it.
"""
