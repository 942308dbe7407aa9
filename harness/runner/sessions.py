"""Building the two-way session for a run: which class, which options, which request.

Keyed by stream format only (design principle 2): the format registry
(:mod:`harness.formats`) names each format's session, its grace keyword and its own
request fields; every difference between agents arrives through the def's fields, the run
request and the platform. This module adds the run's I/O (reading image files, the pi
session dir) and the fields every format shares. Nothing here spawns;
:mod:`harness.runner.engine` does.

A conversation turn (plan, run, store) is :mod:`harness.runner.conversation`, a step above:
it runs the engine, which uses this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.defs.types import AgentDef
from harness.formats import RequestInputs, create_session, session_request_fields
from harness.protocols.base import SessionRequest, TwoWaySession
from harness.protocols.pi_images import ImageCandidate
from harness.runner.types import RunRequest

__all__ = [
    "SessionPlan",
    "plan_session",
]


@dataclass(frozen=True)
class SessionPlan:
    session: TwoWaySession
    request: SessionRequest
    #: pi-rpc: the absolute session directory to snapshot around the run.
    session_dir: str | None = None


def _read_candidate(path: str, cwd: str) -> ImageCandidate:
    absolute = path if os.path.isabs(path) else os.path.join(cwd, path)
    try:
        real = os.path.realpath(absolute, strict=True)
    except (OSError, ValueError):
        return ImageCandidate(path=path, realpath=None, size=None, is_file=False, data=None)
    try:
        size: int | None = os.stat(real).st_size
        is_file = os.path.isfile(real)
    except OSError:
        size, is_file = None, False
    data: bytes | None = None
    if is_file:
        try:
            with open(real, "rb") as fh:
                data = fh.read()
        except OSError:
            data = None
    return ImageCandidate(path=path, realpath=real, size=size, is_file=is_file, data=data)


def _image_reader(req: RunRequest, cwd: str) -> Callable[[], tuple[str, list[ImageCandidate]]]:
    """The run's image facts for a format binding: the resolved upload root, one candidate
    per image path (realpath, stat, read; any error -> ``None``, seed 000 §5.10)."""

    def read() -> tuple[str, list[ImageCandidate]]:
        root = os.path.realpath(req.upload_root or cwd)
        return root, [_read_candidate(p, cwd) for p in req.image_paths]

    return read


def _session_dir(defn: AgentDef, cwd: str, home: str) -> str | None:
    configured = defn.pi.session_dir
    if not configured:
        return None
    if configured == "~" or configured.startswith(("~/", "~\\")):
        return os.path.join(home, configured[2:]) if len(configured) > 1 else home
    if os.path.isabs(configured):
        return configured
    return os.path.join(cwd, configured)


def plan_session(
    defn: AgentDef,
    req: RunRequest,
    *,
    cwd: str,
    env: Mapping[str, str],
    platform: str,
    home: str,
    request_id: str,
) -> SessionPlan:
    """The session object and its request for a two-way ``defn`` (not started yet)."""
    fmt = defn.stream_format
    session = create_session(fmt, defn, grace_ms=req.cancel_grace_ms)
    fields: dict[str, Any] = {
        "prompt": req.prompt,
        "cwd": cwd,
        "request_id": request_id,
        "model": req.model,
        "reasoning": req.reasoning,
        "resume_session_id": req.resume_session_id,
        "mcp_servers": tuple(req.mcp_servers),
    }
    inputs = RequestInputs(
        cwd=cwd,
        env=env,
        platform=platform,
        read_images=_image_reader(req, cwd),
        image_paths=tuple(req.image_paths),
        service_tier=req.service_tier,
    )
    fields.update(session_request_fields(fmt, defn, inputs))
    return SessionPlan(
        session=session,
        request=SessionRequest(**fields),
        session_dir=_session_dir(defn, cwd, home),
    )
