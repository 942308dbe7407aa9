"""Live mode: real coding-agent CLIs, offline, against the scripted model server.

Design: docs/design/live.md#harness.live
"""

from __future__ import annotations
