"""Building the two-way session for a run: which class, which options, which request.

Keyed by stream format only (design principle 2): every difference between agents
arrives through the def's fields (``from_def`` where a session has one), the run request,
and the platform. Nothing here spawns; :mod:`harness.runner.engine` does.

Per format (notes from the session engineers, and the seeds they cite):

* ``acp-json-rpc``: ``AcpSession.from_def(defn)`` (ACP-DEF-001), cancel grace as asked.
* ``pi-rpc``: images become ``ImageCandidate`` facts gathered here (realpath, stat, read;
  any error -> ``None``) and are filtered by ``select_images`` against the resolved
  upload root (seed 000 §5.10 "Images"); a def that resumes through argv
  (``pi_resume_via_process_args``, ref §8.1) does not also get the resume id in the
  session; the session dir is ``pi_session_dir`` relative to cwd or ``~``-expanded.
* ``dsh-profile-jsonl``: cancel grace as asked (seed 001 §10 step 2).
* ``codex-app-server``: ``extra`` carries the sandbox (``danger-full-access`` where
  ``codex_needs_danger_full_access(platform, env)`` says so, seed 000 §10), approval
  policy ``never``, the service tier and the image paths.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.defs.types import AgentDef
from harness.protocols.base import SessionRequest, TwoWaySession
from harness.runner.types import RunRequest

__all__ = ["SessionPlan", "plan_session", "session_formats"]


@dataclass(frozen=True)
class SessionPlan:
    session: TwoWaySession
    request: SessionRequest
    #: pi-rpc: the absolute session directory to snapshot around the run.
    session_dir: str | None = None


@dataclass(frozen=True)
class _Format:
    #: ``module:Class`` of the session.
    target: str
    #: The constructor keyword that takes the protocol-cancel grace.
    grace_keyword: str
    #: Format-specific SessionRequest fields.
    fields: Callable[[AgentDef, RunRequest, str, Mapping[str, str], str], dict[str, Any]]


def _no_fields(
    defn: AgentDef, req: RunRequest, cwd: str, env: Mapping[str, str], platform: str
) -> dict[str, Any]:
    return {}


def _read_candidate(path: str, cwd: str) -> Any:
    from harness.protocols.pi_images import ImageCandidate

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


def _pi_fields(
    defn: AgentDef, req: RunRequest, cwd: str, env: Mapping[str, str], platform: str
) -> dict[str, Any]:
    from harness.protocols.pi_images import select_images

    out: dict[str, Any] = {}
    if req.image_paths:
        root = os.path.realpath(req.upload_root or cwd)
        candidates = [_read_candidate(p, cwd) for p in req.image_paths]
        out["images"] = select_images(candidates, root)
    if defn.pi_resume_via_process_args:
        # ref §8.1 piRpcResumeViaProcessArgs: the resume travels in argv only.
        out["resume_session_id"] = None
    return out


def _codex_fields(
    defn: AgentDef, req: RunRequest, cwd: str, env: Mapping[str, str], platform: str
) -> dict[str, Any]:
    from harness.defs.codex import codex_needs_danger_full_access

    danger = codex_needs_danger_full_access(platform, env)
    extra: dict[str, Any] = {
        "sandbox": "danger-full-access" if danger else "workspace-write",
        "approval_policy": "never",
        "image_paths": list(req.image_paths),
    }
    if req.service_tier:
        extra["service_tier"] = req.service_tier
    return {"extra": extra}


_FORMATS: dict[str, _Format] = {
    "acp-json-rpc": _Format("harness.protocols.acp:AcpSession", "cancel_grace_ms", _no_fields),
    "pi-rpc": _Format("harness.protocols.pi_rpc:PiRpcSession", "graceful_shutdown_ms", _pi_fields),
    "dsh-profile-jsonl": _Format(
        "harness.protocols.dsh:DshProfileSession", "cancel_grace_ms", _no_fields
    ),
    "codex-app-server": _Format(
        "harness.protocols.codex_app_server:CodexAppServerSession",
        "interrupt_grace_ms",
        _codex_fields,
    ),
}


def session_formats() -> frozenset[str]:
    return frozenset(_FORMATS)


def _session_dir(defn: AgentDef, cwd: str, home: str) -> str | None:
    configured = defn.pi_session_dir
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
    spec = _FORMATS.get(defn.stream_format)
    if spec is None:
        raise KeyError(f"no session for stream format {defn.stream_format!r}")
    module_name, _, class_name = spec.target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    options: dict[str, Any] = {}
    if req.cancel_grace_ms is not None:
        options[spec.grace_keyword] = req.cancel_grace_ms
    from_def = getattr(cls, "from_def", None)
    session: TwoWaySession = from_def(defn, **options) if callable(from_def) else cls(**options)
    fields: dict[str, Any] = {
        "prompt": req.prompt,
        "cwd": cwd,
        "request_id": request_id,
        "model": req.model,
        "reasoning": req.reasoning,
        "resume_session_id": req.resume_session_id,
        "mcp_servers": tuple(req.mcp_servers),
    }
    fields.update(spec.fields(defn, req, cwd, env, platform))
    return SessionPlan(
        session=session,
        request=SessionRequest(**fields),
        session_dir=_session_dir(defn, cwd, home),
    )
