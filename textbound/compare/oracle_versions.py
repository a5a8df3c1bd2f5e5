"""``textbound compare FAMILY --oracle-versions A,B``: the same cases under two versions of the oracle
libraries, the gate a project runs before bumping its ``tokenizers`` or transformers pin.

Each side is one or more pins joined by ``+`` (``tokenizers==0.22.1+transformers==5.20.0``); the
two sides are separated by a comma. A side's oracles run in a child process (oracles/remote.py)
whose packages come first from an *overlay*: a folder holding just the pinned packages, installed
once with ``pip install --no-deps --target`` and cached by the pins. A side whose pins are the
installed versions needs none. The rest of the environment (numpy, huggingface_hub...) is the
harness's own, so a pin that needs other versions of those fails that side's setup, with pip's or
the import's words (textbound.plan.oracle_env.pip_install's PipError).

    >>> parse_sides("tokenizers==0.22.1,tokenizers==0.23.3")
    [('tokenizers==0.22.1',), ('tokenizers==0.23.3',)]
"""
from __future__ import annotations

import argparse
from importlib.metadata import version
from pathlib import Path

from textbound.oracles.remote import PACKAGES

from ..families.cache import default_cache_dir, publish_built
from ..plan.oracle_env import pip_install


def parse_sides(value: str) -> list[tuple[str, ...]]:
    """The two sides' pins; ArgumentTypeError naming what is wrong (it is an argparse type)."""
    sides = [tuple(pin.strip() for pin in side.split("+")) for side in value.split(",")]
    if len(sides) != 2:
        raise argparse.ArgumentTypeError(f"{value!r}: expected two sides, A,B (each PACKAGE==VERSION[+...])")
    for pin in (pin for side in sides for pin in side):
        package, equals, wanted = pin.partition("==")
        if not equals or package not in PACKAGES or not wanted:
            raise argparse.ArgumentTypeError(f"{pin!r}: expected PACKAGE==VERSION with PACKAGE one of "
                                             f"{', '.join(PACKAGES)}")
    return sides


def overlay(pins: tuple[str, ...]) -> Path | None:
    """The folder holding ``pins`` (None when they are the installed versions), built on first use."""
    wanted = [pin for pin in pins if version(pin.partition("==")[0]) != pin.partition("==")[2]]
    if not wanted:
        return None
    target = default_cache_dir() / "oracle-overlays" / "+".join(sorted(wanted)).replace("==", "-")
    if target.is_dir():
        return target

    publish_built(target, lambda staging: pip_install(wanted, "--no-deps", "--target", str(staging)))
    return target
