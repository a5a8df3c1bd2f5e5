"""Implementations with one real-world bug each that the mutation catalogue (mutants/) lacks: the
triage must give each one signature, two at most, without knowing its class."""
