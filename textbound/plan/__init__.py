"""What a run is planned from, read before any case: the implementation under test (``implementation``:
the --impl module or engine, which components and properties it provides), the budget (``budget``:
cases per component and check), the disputed code points probed once per machine
(``sweep_cache``), and which oracles judge (``oracle_env``: the installed ones, or those of an
oracle environment when the installed are older than the supported versions).

A leaf for the harness: the checks and the runner read it; it imports only ``families`` (caches),
``server`` (what a server dialect provides), ``properties`` (the probes) and the oracles' supported
versions, never the checks.
"""
