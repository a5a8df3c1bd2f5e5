"""An engine providing only ``StopChecker``: stops/stream is checked, stops/pipeline (which streams
ids through a detokenizer first) and every other component are not provided, never failed."""
from textbound.impl import StopChecker  # noqa: F401 - the one public name this engine exposes

__version__ = "stops-only-1"
