"""What a divergence is and how it is named: ``divergence`` (the record of a case where the
implementation and the oracle disagree, its components and fields), ``shape`` (the kind of a
difference: what was inserted, dropped or replaced, by character class), ``counterfactuals``
(readings of a tokenizer.json or a request under which the implementation's answer is the oracle's,
so that a divergence is named by its cause), ``signatures`` and ``root_causes`` (records grouped by
signature, and signatures grouped into the root causes one bug gives, by the evidence a run
gathered re-running their examples), and ``baseline`` (known divergences by root cause or
signature, and the verdict of a gate).

Naming is part of checking: the checks import this package. It imports only ``files``; never
``checks``, ``records`` or ``triage``.
"""
