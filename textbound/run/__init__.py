"""Where a run is executed: cases → checks → records. ``runner`` plans the chunks of each family ×
component and hands them to ``pool``'s forked workers, which run the checks under the time and memory
limits (``time_limit``), minimize what diverged and send back records (``pool.check_job`` also
checks cases without a worker, under limits of its own, for the pytest plugin); ``progress`` prints
the run as it goes; ``timed_calls`` measures the time spent inside impl's and the oracle's calls;
``silent_impl`` is the implementation that answers nothing, to tell a hanging oracle from a hanging
implementation; ``mutate`` runs the whole catalogue of mutants through the same machinery; ``replay``
checks one recorded case again (``textbound replay``).

May import ``plan``, ``families``, ``checks``, ``naming``, ``shrinking`` and ``records`` (the recorder it writes
to); never ``triage``.
"""
