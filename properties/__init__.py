"""Generated inputs for the tokenizer checks: Hypothesis strategies, fuzzed pipelines and sweeps.

pytest drives the strategies with shrinking (test_tokenizer_properties.py); the runner draws the
same strategies deterministically from a seed with ``strategies.draw_examples``, so both explore
one input space.
"""
