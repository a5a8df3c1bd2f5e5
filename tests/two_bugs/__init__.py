"""Implementations with two independent bugs each, from the mutation catalogue: the triage must
keep them two root causes, whether the bugs sit in two components or in one."""
