"""Where a run is executed: cases → checks → records. ``runner`` plans the chunks of each family ×
component and hands them to ``pool``'s forked workers, which run the checks under the time and memory
limits (``time_limit``), minimize what diverged and send back records (``pool.check_job`` also
checks cases without a worker, under limits of its own, for the pytest plugin); ``progress`` prints
the run as it goes; ``timed_calls`` measures the time spent inside impl's and the oracle's calls;
``silent_impl`` is the implementation that answers nothing, to tell a hanging oracle from a hanging
implementation; ``mutate`` runs the whole catalogue of mutants through the same machinery; ``replay``
checks one recorded case again (``textbound replay``). Once the cases are checked, ``evidence``
re-runs each signature's smallest example, in a process of its own, with one implementation name at
a time swapped for an oracle-backed stand-in (``stand_ins``), through the check of the culprit's own
component and on the catalogue, and replays a stream call by call (``timeline``): what
naming.root_causes groups signatures by.

May import ``plan``, ``families``, ``checks``, ``naming``, ``shrinking``, ``records`` (the recorder it
writes to), ``adapters`` (the tokenizers adapter stands in for a detokenizer) and the mutation
catalogue; never ``triage``.
"""
