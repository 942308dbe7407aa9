"""What an ACP session is configured with: the def's options and the host's limits.

Every difference between ACP agents arrives here as data (rule ACP-DEF-001): the
session never compares an agent id.

Design: docs/design/protocols.md#harness.protocols.acp
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from harness import __version__
from harness.errors import HarnessError
from harness.protocols.def_options import AcpOptions
from harness.protocols.options import AcpEnvFormat

__all__ = [
    "DEFAULT_CANCEL_GRACE_MS",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_SHUTDOWN_GRACE_MS",
    "DEFAULT_STAGE_TIMEOUT_MS",
    "PROTOCOL_VERSION",
    "AcpConfig",
    "AcpDefFields",
    "AcpRequestError",
    "options_from_def",
]

#: ref §2.6: ``initialize.protocolVersion`` is 1.
PROTOCOL_VERSION = 1
#: ref §2.6: "DEFAULT_STAGE_TIMEOUT_MS = 10 min"; ``None`` or ``<= 0`` disables.
DEFAULT_STAGE_TIMEOUT_MS = 600_000
#: ref §2.6 step 5: "SIGTERM after 500 ms if still alive".
DEFAULT_SHUTDOWN_GRACE_MS = 500
#: How long to wait for ``stopReason: cancelled`` after ``session/cancel``.
DEFAULT_CANCEL_GRACE_MS = 2000
#: 16 MiB; see docs/design/protocols.md ("Large lines").
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024


class AcpRequestError(HarnessError):
    """A :class:`SessionRequest` the ACP session cannot turn into valid frames."""

    code = "ACP_REQUEST_INVALID"


class AcpDefFields(Protocol):
    """The ``AgentDef`` fields ``AcpSession.from_def`` reads (an ``AgentDef`` has them).

    Named here rather than importing the def type: sessions sit below the defs layer.
    """

    @property
    def id(self) -> str: ...
    @property
    def stream_format(self) -> str: ...
    @property
    def acp(self) -> AcpOptions: ...


def options_from_def(defn: AcpDefFields) -> dict[str, Any]:
    """The session options an ``acp-json-rpc`` def sets (rule ACP-DEF-001)."""
    if defn.stream_format != "acp-json-rpc":
        raise ValueError(
            f"agent def {defn.id!r} has stream_format {defn.stream_format!r}, not 'acp-json-rpc'"
        )
    acp = defn.acp
    options: dict[str, Any] = {
        "env_format": acp.mcp_env_format,
        "stdio_mcp_removed_in_version": acp.stdio_mcp_removed_in_version,
        "turn_end_completes_prompt": acp.turn_end_completes_prompt,
    }
    if acp.stage_timeout_ms is not None:
        options["stage_timeout_ms"] = acp.stage_timeout_ms
    if acp.model_unavailable_error_code is not None:
        options["model_unavailable_error_code"] = acp.model_unavailable_error_code
    if acp.native_continue_runtime is not None:
        options["native_continue_runtime"] = acp.native_continue_runtime
    return options


@dataclass(frozen=True)
class AcpConfig:
    """One session's options, checked once; a continuing session is built from the same."""

    env_format: AcpEnvFormat = AcpEnvFormat.ARRAY
    stdio_mcp_removed_in_version: str | None = None
    turn_end_completes_prompt: bool = False
    stage_timeout_ms: int | None = DEFAULT_STAGE_TIMEOUT_MS
    shutdown_grace_ms: int = DEFAULT_SHUTDOWN_GRACE_MS
    cancel_grace_ms: int = DEFAULT_CANCEL_GRACE_MS
    client_name: str = "adapter-harness"
    client_version: str = __version__
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    model_unavailable_error_code: str | None = None
    native_continue_runtime: str | None = None

    def __post_init__(self) -> None:
        if self.max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {self.max_line_bytes!r}")
        if self.shutdown_grace_ms < 0 or self.cancel_grace_ms < 0:
            raise ValueError(
                f"grace periods must be >= 0, got shutdown_grace_ms={self.shutdown_grace_ms!r}, "
                f"cancel_grace_ms={self.cancel_grace_ms!r}"
            )
        object.__setattr__(self, "env_format", AcpEnvFormat(self.env_format))

    @property
    def stage_timeout(self) -> int | None:
        """The stage watchdog in ms; ref §2.6: "<= 0 disables" it (``None``)."""
        timeout = self.stage_timeout_ms
        return timeout if timeout is not None and timeout > 0 else None

    @property
    def client_info(self) -> dict[str, str]:
        """``initialize.params.clientInfo``."""
        return {"name": self.client_name, "version": self.client_version}
