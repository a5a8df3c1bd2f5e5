"""How a run is written and combined: ``report`` (the recorder of divergences.jsonl and
summary.json, report.md and summary.md, led by the run's root causes), ``html_report`` and ``junit``
(the same run for a browser and for CI), ``alignment`` (an example's fields labelled, its two sides
aligned or its stream as a timeline), and ``merge`` (shards of one run into one report). Records only
render: the evidence that groups signatures is gathered by the run.

May import ``naming`` and ``files``; never ``triage``, so that writing a run does not
depend on explaining it.
"""
