"""The disputed code points are probed once and read back from the store, exactly as probed;
a store that cannot be read, or one written under other library versions, is not used."""
from __future__ import annotations

import pytest
import tokenizers

from textbound.families.cache import CACHE_ENV
from textbound.plan import sweep_cache
from textbound.properties import sweeps

STEP = 4096  # every 4096th code point: a probe of a fraction of a second


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    sweep_cache.disputed_code_points.cache_clear()
    yield sweep_cache._store(STEP)
    sweep_cache.disputed_code_points.cache_clear()


def fresh() -> dict:
    sweep_cache.disputed_code_points.cache_clear()
    return sweep_cache.disputed_code_points(STEP)


def test_read_back_as_probed_without_probing(store, monkeypatch):
    probed = sweeps.unicode_disagreements(STEP)
    assert probed and fresh() == probed and store.is_file()
    monkeypatch.setattr(sweeps, "unicode_disagreements", lambda step: pytest.fail("probed again"))
    read = fresh()
    assert read == probed and list(read) == list(probed)  # the same order: the same cases


def test_unreadable_store_is_probed_again(store):
    store.parent.mkdir(parents=True)
    store.write_text('{"not": "code points"', encoding="utf-8")
    assert fresh() == sweeps.unicode_disagreements(STEP)


def test_other_versions_use_another_store(store, monkeypatch):
    monkeypatch.setattr(tokenizers, "__version__", "0.0.0-other")
    assert sweep_cache._store(STEP) != store
