"""Sans-IO parsers, one module per one-way stream format.

Each module exposes ``create(dialect)``; which format maps to which module, and the
dialect checks, live in the format registry (:mod:`harness.formats`).
"""

from __future__ import annotations

from harness.streams.base import JsonlStreamParser, StreamParser, UnknownStreamFormatError

__all__ = ["JsonlStreamParser", "StreamParser", "UnknownStreamFormatError"]
