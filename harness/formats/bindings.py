"""How a def and a run bind to a two-way format's session request, one function per format.

Each is named by a :class:`~harness.formats.spec.SessionSpec` ``request_fields`` target and
returns the format's own :class:`~harness.protocols.base.SessionRequest` fields; the
runner adds the common ones. Pure: file reads arrive through ``inputs.read_images``.
"""

from __future__ import annotations

from typing import Any

from harness.defs.codex import codex_needs_danger_full_access
from harness.defs.types import AgentDef
from harness.formats.spec import RequestInputs
from harness.protocols.pi_images import select_images

__all__ = ["codex_app_server_fields", "pi_rpc_fields"]


def pi_rpc_fields(defn: AgentDef, inputs: RequestInputs) -> dict[str, Any]:
    """``pi-rpc``: images filtered against the upload root; argv-only resume.

    seed 000 §5.10 "Images": each path becomes an ``ImageCandidate`` (realpath, stat, read;
    any error -> ``None``) and :func:`select_images` keeps those inside the resolved root.
    """
    out: dict[str, Any] = {}
    if inputs.image_paths:
        root, candidates = inputs.read_images()
        out["images"] = select_images(candidates, root)
    if defn.pi.resume_via_process_args:
        # ref §8.1 piRpcResumeViaProcessArgs: the resume travels in argv only.
        out["resume_session_id"] = None
    return out


def codex_app_server_fields(defn: AgentDef, inputs: RequestInputs) -> dict[str, Any]:
    """``codex-app-server``: ``extra`` carries the sandbox, approval policy, tier and images.

    seed 000 §10 (ARGV-CODEX-003): ``danger-full-access`` where
    :func:`~harness.defs.codex.codex_needs_danger_full_access` says so, else
    ``workspace-write``; the approval policy is always ``never``.
    """
    danger = codex_needs_danger_full_access(inputs.platform, inputs.env)
    extra: dict[str, Any] = {
        "sandbox": "danger-full-access" if danger else "workspace-write",
        "approval_policy": "never",
        "image_paths": list(inputs.image_paths),
    }
    if inputs.service_tier:
        extra["service_tier"] = inputs.service_tier
    return {"extra": extra}
