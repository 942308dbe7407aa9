"""Replaying a captured CLI stdout through a two-way session (``harness parse``).

:func:`replay` is the entry point; :mod:`harness.capture.driver` holds the
format-neutral driver, :mod:`harness.capture.adapters` one adapter per format.
"""

from __future__ import annotations

from harness.capture.adapters import (
    CaptureAdapter,
    SessionUnavailableError,
    adapter_for,
    replay,
    session_for,
)
from harness.capture.driver import (
    CaptureError,
    CaptureReplay,
    FrameComparison,
    FrameDifference,
    HostInputError,
    IdRewrite,
    parse_host_input,
    replay_capture,
    split_capture,
)

__all__ = [
    "CaptureAdapter",
    "CaptureError",
    "CaptureReplay",
    "FrameComparison",
    "FrameDifference",
    "HostInputError",
    "IdRewrite",
    "SessionUnavailableError",
    "adapter_for",
    "parse_host_input",
    "replay",
    "replay_capture",
    "session_for",
    "split_capture",
]
