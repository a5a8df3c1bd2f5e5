"""How a finding is explained and reproduced, after the run: ``causes`` (a run's root causes as
``textbound triage`` prints them, a report written before root causes regrouped; ``diff``),
``explanation`` (the catalogue mutant that reproduces a signature's example), ``explain`` and ``stages`` (one input through the pipeline,
stage by stage, with the counterfactual readings), ``reproducer``, ``js_reproducer`` and
``scripts`` (standalone scripts, written by the oracle, that exit 1 while the bug is there).

The top of the harness below the command line: may import every other package; nothing but
``cli`` and ``pytest_plugin`` (a failing item names its root cause) imports it.
"""
