"""Implementations with two independent bugs each, from the mutation catalogue (and tests/one_bug):
the triage must keep them two root causes, whether the bugs sit in two components, in one, or in
one method."""
