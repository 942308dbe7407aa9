"""Def options that mean something for one wire format only, grouped per format.

An :class:`~harness.defs.types.AgentDef` holds each group in one field (``acp``, ``pi``),
so the flat def keeps only what every format reads. Each group names the format it
belongs to; a def that changes a group none of its transports speaks is invalid
(DEF-OPTIONS-001). They live below the defs so the sessions can read them too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from harness.protocols.options import AcpEnvFormat

__all__ = ["AcpOptions", "FormatOptions", "PiOptions", "changed_options"]


@dataclass(frozen=True, kw_only=True)
class AcpOptions:
    """What an ``acp-json-rpc`` def tells its session (ref §2.6; rule ACP-DEF-001)."""

    #: The wire format these options configure.
    FORMAT: ClassVar[str] = "acp-json-rpc"

    #: Shape of an MCP server's ``env`` in ``session/new``.
    mcp_env_format: AcpEnvFormat = AcpEnvFormat.ARRAY
    #: Agent version from which stdio MCP servers are withheld (kimi >= 0.37.0).
    stdio_mcp_removed_in_version: str | None = None
    #: A ``turn_end`` session update completes the prompt (ref §2.6 step 5, Kiro).
    turn_end_completes_prompt: bool = False
    #: Per-stage watchdog (ref §10.1 "def default"); ``None``: the engine default (10 min).
    stage_timeout_ms: int | None = None
    #: The error code a failed model selection ends the run with, instead of falling back to
    #: the agent's default model (ref §2.6 step 3: AMR's ``AMR_MODEL_UNAVAILABLE``).
    #: ``None``: a recoverable model error falls back.
    model_unavailable_error_code: str | None = None
    #: The runtime whose native continuation evidence this def accepts (seed 000 §12; AMR:
    #: ``opencode``). ``None``: an interrupted prompt is classified but never continued in
    #: a new process.
    native_continue_runtime: str | None = None


@dataclass(frozen=True, kw_only=True)
class PiOptions:
    """What a ``pi-rpc`` def tells the runner and its session request (ref §8.1)."""

    #: The wire format these options configure.
    FORMAT: ClassVar[str] = "pi-rpc"

    #: Session directory (relative to cwd, or absolute / ``~``-prefixed).
    session_dir: str | None = None
    #: Resume travels in argv (prime-agent ``--resume``), so the session must not also send
    #: ``new_session(parentSession)`` (ref §8.1 ``piRpcResumeViaProcessArgs``).
    resume_via_process_args: bool = False


#: Any one group of format-only options.
FormatOptions: TypeAlias = AcpOptions | PiOptions


def changed_options(options: FormatOptions) -> tuple[str, ...]:
    """The names of the fields of ``options`` that differ from the group's defaults."""
    default = type(options)()
    return tuple(
        f.name
        for f in dataclasses.fields(options)
        if getattr(options, f.name) != getattr(default, f.name)
    )
