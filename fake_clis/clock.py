"""Wall-clock stamps for the fakes' frames, through ``time`` alone.

``datetime`` runs its whole pure-Python implementation before the C one replaces it;
a fake starts hundreds of times in ``harness conform`` and only ever needs "now" as
an ISO 8601 UTC stamp with milliseconds.
"""

from __future__ import annotations

import time

__all__ = ["iso_utc_ms"]


def iso_utc_ms(ns: int | None = None, *, zone: str = "Z") -> str:
    """``2026-12-06T08:00:00.123Z`` for ``ns`` nanoseconds since the epoch (default: now).

    ``zone="+00:00"`` gives ``datetime.now(timezone.utc).isoformat(timespec="milliseconds")``.
    """
    total_ms = (time.time_ns() if ns is None else ns) // 1_000_000
    seconds, ms = divmod(total_ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{ms:03d}{zone}"
