"""Hypothesis keeps failing examples under reports/hypothesis, so a failure replays first next run
(CI caches and uploads that folder)."""
from pathlib import Path

from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

settings.register_profile("textbound", print_blob=True, database=DirectoryBasedExampleDatabase(
    str(Path(__file__).parent / "reports" / "hypothesis")))
settings.load_profile("textbound")
