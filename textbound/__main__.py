"""``python -m textbound``: the ``textbound`` command (textbound.cli), for where its script is not on PATH."""
import sys

from .cli import main

sys.exit(main())
