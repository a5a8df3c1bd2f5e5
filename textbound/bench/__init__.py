"""``textbound bench``: speed and memory as ratios against the oracle, measured in one run.
``command`` runs the measurements the options ask for: ``tokenizers`` (encode, decode and loading),
``chat``, ``stops``, ``structured`` and ``schemas`` (impl against its second engines), ``harness``
(the run's own overhead, scaling with --jobs) and ``overhead`` (the time spent outside impl's and the
oracle's calls).

May import every package but ``triage``; only ``cli`` imports it.
"""
