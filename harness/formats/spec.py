"""What the engine knows about one stream format, as data: :class:`FormatSpec`.

Code is named by ``"module:attr"`` targets and imported on first use, so the registry
imports no parser, session or adapter: a def loader can check names without loading the
wire layer, and a parser module that does not import yet is reported, not fatal.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.streams.base import UnknownStreamFormatError

if TYPE_CHECKING:
    from harness.protocols.pi_images import ImageCandidate

__all__ = [
    "FormatSpec",
    "RequestInputs",
    "SessionSpec",
    "SessionUnavailableError",
    "UnknownStreamFormatError",
    "load_target",
    "target_module",
]


class SessionUnavailableError(HarnessError):
    """The session module for a two-way format is not part of this installation."""

    code = "SESSION_UNAVAILABLE"


def target_module(target: str) -> str:
    """The module part of a ``"module:attr"`` target."""
    return target.partition(":")[0]


def load_target(target: str) -> Any:
    """Import ``module`` and return its ``attr`` for a ``"module:attr"`` target."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _check_target(owner: str, field: str, target: str) -> None:
    module_name, sep, attr = target.partition(":")
    if not (module_name and sep and attr):
        raise ValueError(f"format {owner!r}: {field} must be 'module:attr', got {target!r}")


@dataclass(frozen=True, kw_only=True)
class RequestInputs:
    """What a run gives a format's request binding besides the def.

    ``read_images`` is the runner's file I/O (the resolved upload root and one candidate
    per image path); a binding calls it only when it needs the bytes.
    """

    cwd: str
    env: Mapping[str, str]
    platform: str
    read_images: Callable[[], tuple[str, list[ImageCandidate]]]
    image_paths: tuple[str, ...] = ()
    service_tier: str | None = None


@dataclass(frozen=True)
class SessionSpec:
    """How a two-way format is driven: its session, its options, its capture replay."""

    #: ``"module:Class"`` of the :class:`~harness.protocols.base.TwoWaySession`; built with
    #: ``Class.from_def(defn, **options)`` when it has one and a def is given.
    target: str
    #: The constructor keyword that takes the protocol-cancel grace (ms).
    grace_keyword: str
    #: ``"module:Class"`` of its :class:`~harness.capture.adapters.CaptureAdapter`.
    capture_adapter: str
    #: ``"module:function"`` ``(defn, RequestInputs) -> dict`` of format-specific
    #: :class:`~harness.protocols.base.SessionRequest` fields; ``None``: no such fields.
    request_fields: str | None = None


@dataclass(frozen=True)
class FormatSpec:
    """One stream format: exactly one of a one-way ``parser`` or a two-way ``session``."""

    name: str
    #: One-way: ``"module:factory"``; the factory takes the dialect (``event_parser``) and
    #: the module's ``DIALECTS`` (absent: none) lists the dialects it accepts.
    parser: str | None = None
    #: Two-way: the session and how a def binds to it.
    session: SessionSpec | None = None
    #: ref §10.1: the run keeps turn bookkeeping (``turnCompletedCleanly`` from a clean
    #: terminal turn, ref §2.1.8); other one-way formats are judged by their exit code.
    turn_bookkeeping: bool = False
    #: seed 001 §14: every stdout line must be a frame; a line that is not one fails the run.
    strict_framing: bool = False
    #: seed 000 §5.13: stdout is the assistant's text itself, not JSONL frames.
    text_stream: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a format needs a name")
        if (self.parser is None) == (self.session is None):
            raise ValueError(f"format {self.name!r}: give exactly one of parser or session")
        if self.parser is not None:
            _check_target(self.name, "parser", self.parser)
        if self.session is not None:
            _check_target(self.name, "session.target", self.session.target)
            _check_target(self.name, "session.capture_adapter", self.session.capture_adapter)
            if self.session.request_fields is not None:
                _check_target(self.name, "session.request_fields", self.session.request_fields)
            if not self.session.grace_keyword.isidentifier():
                raise ValueError(f"format {self.name!r}: grace_keyword must be an identifier")
            if self.turn_bookkeeping:
                raise ValueError(f"format {self.name!r}: a session keeps its own turn state")

    @property
    def two_way(self) -> bool:
        """Driven by a two-way session (frames written to the CLI's stdin)."""
        return self.session is not None
