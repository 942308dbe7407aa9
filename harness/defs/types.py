"""The adapter contract: an :class:`AgentDef` is data plus one pure arg-builder.

Seed 000 §1 ("Adapter contract: a data spec, not a class") and seed 002 §3.1
list the fields; ref §8.1 gives the full upstream ``RuntimeAgentDef``.
Field names here are snake_case. Everything that differs between CLIs is a
field: no engine module may branch on :attr:`AgentDef.id`.

``build_args`` is pure: every fact it needs (capabilities found by the help
probe, the platform, the environment, the resume id) arrives as an argument,
never from a global or the filesystem (conformance rule ARGV-PURE-001).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.guards.budget_generations import BudgetGeneration
from harness.protocols.def_options import AcpOptions, PiOptions
from harness.protocols.options import DEFAULT_CHOICE, AcpEnvFormat

__all__ = [
    "DEFAULT_MODEL_OPTION",
    "ID_PATTERN",
    "AcpEnvFormat",
    "AcpOptions",
    "AgentDef",
    "AuthProbe",
    "BuildArgs",
    "BuildOptions",
    "CompatibilityProbe",
    "EnvStripRule",
    "EnvValueRule",
    "ListModels",
    "McpInjection",
    "ModelOption",
    "NodeWrapperNative",
    "PiOptions",
    "PromptDelivery",
    "PromptInputFormat",
    "ResumeStyle",
    "RuntimeContext",
    "Transport",
    "VersionPolicy",
]

#: Local-profile and built-in id pattern (ref §6, ``local-profiles.ts:132``).
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


class PromptDelivery(str, enum.Enum):
    """How the composed prompt reaches the CLI (seed 002 §6.2)."""

    #: Written to stdin (as text, or as one stream-json line; see PromptInputFormat).
    STDIN = "stdin"
    #: Written to a 0600 temp file whose path reaches ``build_args`` via RuntimeContext.
    FILE = "file"
    #: Placed in argv by ``build_args``; requires ``max_prompt_arg_bytes``.
    ARGV = "argv"
    #: Sent as a protocol frame by a two-way session (ACP, pi-rpc, dsh-profile, app-server).
    PROTOCOL = "protocol"


class PromptInputFormat(str, enum.Enum):
    """Shape of a stdin prompt (seed 000 §5.1; ref §2.1.8)."""

    TEXT = "text"
    #: One Anthropic user-message JSONL line; stdin stays open until a clean terminal turn.
    STREAM_JSON = "stream-json"


class ResumeStyle(str, enum.Enum):
    """How a later turn continues the CLI's native session (seed 002 §3.1, ref §8.1)."""

    NONE = "none"
    #: The host mints the id and passes it (claude ``--session-id`` / ``--resume``).
    SPECIFY = "specify"
    #: The CLI mints the id and reports it in the stream (codex ``thread.started``).
    CAPTURE = "capture"
    #: ACP ``session/load``.
    ACP_LOAD = "acp-load"
    #: dsh profile ``execute.resume_session_id`` (seed 001 §7).
    PROFILE_STDIO = "profile-stdio"
    #: pi session file: exactly one changed ``*.jsonl`` under the session dir.
    PI_SESSION = "pi-session"


class McpInjection(str, enum.Enum):
    """External MCP injection strategy (seed 002 §8.1). ``NONE`` is a reportable value."""

    NONE = "none"
    CLAUDE_MCP_JSON = "claude-mcp-json"
    ACP_MERGE = "acp-merge"
    OPENCODE_ENV_CONTENT = "opencode-env-content"
    MIMO_ENV_CONTENT = "mimo-env-content"


@dataclass(frozen=True)
class ModelOption:
    id: str
    label: str


#: First entry of every fallback list; ``model == "default"`` means "omit the model flag".
DEFAULT_MODEL_OPTION = ModelOption(DEFAULT_CHOICE, "Default (CLI config)")


@dataclass(frozen=True)
class BuildOptions:
    """Per-run choices the user made, plus the capability map from the help probe."""

    model: str | None = None
    reasoning: str | None = None
    service_tier: str | None = None
    #: e.g. amp's "restricted" posture drops ``--dangerously-allow-all``.
    permission_mode: str | None = None
    #: capability key -> found in help output (seed 002 §5.5). ``{}`` = probe failed.
    capabilities: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class RuntimeContext:
    """Spawn-time facts (seed 002 §3.2). ``platform`` uses ``sys.platform`` names."""

    cwd: str | None = None
    platform: str = "linux"
    env: Mapping[str, str] = field(default_factory=dict)
    resume_session_id: str | None = None
    new_session_id: str | None = None
    prompt_file_path: str | None = None
    agent_log_file_path: str | None = None
    has_prior_assistant_turn: bool = False
    skill_dirs: tuple[str, ...] = ()


#: ``build_args(prompt, image_paths, extra_allowed_dirs, options, context) -> argv``
BuildArgs = Callable[[str, Sequence[str], Sequence[str], BuildOptions, RuntimeContext], list[str]]


@dataclass(frozen=True)
class AuthProbe:
    """A cheap, side-effect-free login-status command (seed 002 §3.1)."""

    args: tuple[str, ...]
    timeout_ms: int = 5000


@dataclass(frozen=True)
class ListModels:
    """Live model discovery: run ``args``, ``parse`` stdout; ``None``/empty -> fallbacks."""

    args: tuple[str, ...]
    parse: Callable[[str], list[ModelOption] | None]
    timeout_ms: int = 5000
    #: Tried when ``args`` exits non-zero (OpenCode 2.x rejects ``models --verbose``).
    fallback_args: tuple[str, ...] | None = None
    #: Written to the command's stdin, then closed (an ACP agent's handshake; seed 002
    #: §4.5 ``detectAcpModels``). Its stdout is parsed even when it had to be stopped.
    stdin: bytes | None = None


@dataclass(frozen=True)
class VersionPolicy:
    """Tested versions; an untested parseable version warns, an unparseable one fails."""

    supported_versions: tuple[str, ...]
    supported_version_pattern: str | None = None
    require_version: bool = True
    parse: Callable[[str], str | None] | None = None
    #: Versions below this are reported as too old (a diagnostic, still available).
    min_version: str | None = None


@dataclass(frozen=True)
class CompatibilityProbe:
    """A second probe that must succeed before the def is available (dsh ``--probe``)."""

    args: tuple[str, ...]
    #: Validates stdout; returns the companion version, raises ValueError when incompatible.
    parse: Callable[[str], str]
    timeout_ms: int = 5000


@dataclass(frozen=True)
class EnvStripRule:
    """Remove ``keys`` from the spawn env unless one of ``unless_set`` is non-empty.

    Ref §5.3: claude strips ANTHROPIC_API_KEY unless ANTHROPIC_BASE_URL is set.
    Key matching is case-insensitive (Windows env).
    """

    keys: tuple[str, ...]
    unless_set: tuple[str, ...]


@dataclass(frozen=True)
class EnvValueRule:
    """Drop ``key`` from the spawn env unless its value is one of ``allowed`` (ref §5.3)."""

    key: str
    allowed: tuple[str, ...]


@dataclass(frozen=True)
class NodeWrapperNative:
    """npm node-wrapper -> vendored native binary lookup (seed 002 §5.2, codex).

    From the wrapper's directory upward, look for
    ``node_modules/<package_prefix><platform>-<arch>/vendor/<triple>/<bin_dir>/<bin_name>[.exe]``.
    """

    package_prefix: str
    bin_dir: str
    bin_name: str


@dataclass(frozen=True)
class Transport:
    """Another way to drive the same CLI (seed 000 §5.3: codex app-server vs exec-json).

    A def's own ``stream_format`` / ``event_parser`` / ``build_args`` /
    ``prompt_delivery`` describe the transport named ``AgentDef.transport_name``;
    each entry of ``AgentDef.alt_transports`` replaces those four fields.
    """

    name: str
    stream_format: str
    build_args: BuildArgs
    prompt_delivery: PromptDelivery = PromptDelivery.PROTOCOL
    event_parser: str | None = None


@dataclass(frozen=True)
class AgentDef:
    """One coding-agent CLI, declared as data (seed 000 §1)."""

    # --- identity -----------------------------------------------------------
    id: str
    name: str
    bin: str
    build_args: BuildArgs
    stream_format: str
    fallback_bins: tuple[str, ...] = ()
    version_args: tuple[str, ...] = ("--version",)
    #: Per-agent override env var for the executable path, e.g. ``CLAUDE_BIN``.
    bin_env_key: str | None = None
    #: darwin app-bundle candidates tried after PATH (``~`` expanded).
    app_bundle_paths: tuple[str, ...] = ()
    #: Executables bundled with the host app, tried after the ``<ID>_BIN`` override and
    #: before PATH (seed 002 §5 step ②); absolute or ``~``-prefixed, first existing wins.
    bundled_paths: tuple[str, ...] = ()
    node_wrapper_native: NodeWrapperNative | None = None

    # --- invocation ---------------------------------------------------------
    event_parser: str | None = None
    prompt_delivery: PromptDelivery = PromptDelivery.STDIN
    prompt_input_format: PromptInputFormat = PromptInputFormat.TEXT
    #: Required iff prompt_delivery is ARGV (seed 000 §12, seed 002 §6.3).
    max_prompt_arg_bytes: int | None = None
    #: Replaces the generic advice sentence of an AGENT_PROMPT_TOO_LARGE error (ref §4.1).
    prompt_too_large_hint: str | None = None
    #: The runner hands ``build_args`` a fresh log path (``agent_log_file_path``) and reads
    #: its tail after a failed run: for a CLI silent on failure (seed 002 §4.4, agy).
    agent_log_file: bool = False
    #: Where the CLI keeps its own logs (``~`` is the run's home): after a failed run the
    #: newest ``*.log`` written during it is read (seed 002 §7.4, OpenCode's provider errors).
    failure_log_dir: str | None = None
    #: What a user is told when a run fails on authentication (seed 000 §5.11); ``None``:
    #: the host's generic guidance (:data:`harness.host.failures.GENERIC_AUTH_GUIDANCE`).
    auth_guidance: str | None = None
    #: Whose platform budget raises ``max_prompt_arg_bytes`` off Windows (seed 002 §6.3,
    #: ref §4.1; :mod:`harness.guards.budget_generations`, FIDELITY-BUDGET-001).
    prompt_budget_generation: BudgetGeneration = BudgetGeneration.CURRENT
    env: Mapping[str, str] = field(default_factory=dict)
    strip_env: tuple[EnvStripRule, ...] = ()
    env_value_rules: tuple[EnvValueRule, ...] = ()
    supports_image_paths: bool = False
    #: Non-interactive permission flags this def always passes (seed 000 §10).
    headless_flags: tuple[str, ...] = ()

    # --- capability negotiation --------------------------------------------
    help_args: tuple[str, ...] | None = None
    #: flag substring in help output -> capability key (seed 002 §5.5).
    capability_flags: Mapping[str, str] = field(default_factory=dict)
    auth_probe: AuthProbe | None = None
    list_models: ListModels | None = None
    fallback_models: tuple[ModelOption, ...] = (DEFAULT_MODEL_OPTION,)
    reasoning_options: tuple[ModelOption, ...] = ()
    supports_custom_model: bool = True
    default_model_env_var: str | None = None
    version_probe_timeout_ms: int | None = None
    #: Help/capability probe timeout (default 5000 ms, ref §5.1).
    help_probe_timeout_ms: int | None = None
    version_policy: VersionPolicy | None = None
    compatibility_probe: CompatibilityProbe | None = None

    # --- sessions and streams ----------------------------------------------
    resume_style: ResumeStyle = ResumeStyle.NONE
    external_mcp_injection: McpInjection = McpInjection.NONE
    #: Options only an ``acp-json-rpc`` transport reads (DEF-OPTIONS-001).
    acp: AcpOptions = field(default_factory=AcpOptions)
    #: Options only a ``pi-rpc`` transport reads (DEF-OPTIONS-001).
    pi: PiOptions = field(default_factory=PiOptions)
    inactivity_timeout_ms: int | None = None
    first_output_timeout_ms: int | None = None
    #: Case-insensitive regexes over stderr meaning "the resumed session id is unknown"
    #: (read by harness.host.native_sessions.resume_expired; seed 000 §8 expired-session recovery).
    resume_failure_patterns: tuple[str, ...] = ()

    # --- transports -----------------------------------------------------------
    #: Name of the transport this def's own stream/argv fields describe.
    transport_name: str = "default"
    alt_transports: tuple[Transport, ...] = ()
    #: Env var whose value names the transport for a run (e.g. ``OD_CODEX_TRANSPORT``).
    transport_env_var: str | None = None
    #: Transport used for a run when the env var is unset; ``None`` = ``transport_name``.
    default_transport: str | None = None

    # --- documentation ------------------------------------------------------
    docs_url: str | None = None
    install_url: str | None = None
    #: Why this def is no longer a shipped adapter (seed 000 §3: Gemini's local runtime was
    #: retired). A retired def is kept so its recordings replay and it can still be run when
    #: asked for by id; agent selection never picks it otherwise (FIDELITY-RETIRED-001).
    retired: str | None = None
