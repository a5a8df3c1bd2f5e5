"""Smallest examples: ``minimize`` shrinks a diverging case to the smallest input whose divergence
keeps its signature (delta debugging over text, ids, stops and messages), and ``template_shrink``
does the same for a chat template, keeping it a template that renders.

Runs inside the workers (``run.pool``) and in ``compare``: may import ``checks``, ``naming`` and
``delta``; never ``run``, ``records`` or ``triage``.
"""
