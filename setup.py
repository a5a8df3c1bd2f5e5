"""The packages of the textbound namespace: the harness's own folder, and impl/, oracles/,
properties/, corpora/ and mutants/ beside it, each installed under textbound (``textbound.impl``,
``textbound.oracles``, ...). The folders stay at the repository's top level; only their import names
are textbound's, so an install adds ``textbound`` alone to site-packages. Everything else is in
pyproject.toml."""
from setuptools import find_packages, setup

BESIDE = ("impl", "oracles", "properties", "corpora", "mutants")

setup(
    packages=[*find_packages(include=["textbound", "textbound.*"]),
              *(f"textbound.{name}" for name in find_packages(include=[f"{top}{rest}" for top in BESIDE
                                                                       for rest in ("", ".*")]))],
    package_dir={f"textbound.{top}": top for top in BESIDE},
)
