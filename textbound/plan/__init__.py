"""What a run is planned from, read before any case: the implementation under test (``implementation``:
the --impl module or engine, which components and properties it provides), the budget (``budget``:
cases per component and check), and the disputed code points probed once per machine
(``sweep_cache``).

A leaf for the harness: the checks and the runner read it; it imports only ``families`` (caches),
``server`` (what a server dialect provides) and ``properties`` (the probes), never the checks.
"""
