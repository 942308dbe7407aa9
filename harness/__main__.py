"""``python -m harness``: the ``harness`` command without the console script."""

from __future__ import annotations

import sys

from harness.cli import main

sys.exit(main())
