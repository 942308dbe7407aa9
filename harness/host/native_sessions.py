"""Native-session bookkeeping: which CLI session a conversation continues, and when not to.

Design: docs/design/host.md#harness.host.native_sessions
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import IO, TYPE_CHECKING, Any

from harness.defs.types import AgentDef, ResumeStyle, VersionPolicy
from harness.errors import HarnessError
from harness.events import Event, Status

if TYPE_CHECKING:
    from harness.host.detect_result import DetectionResult

__all__ = [
    "EXPIRED_RESUME_ERROR_CODES",
    "STORE_FORMAT_VERSION",
    "CompatibilityKey",
    "ExecutableIdentity",
    "FreshReason",
    "SessionAction",
    "SessionPlanError",
    "SessionRecord",
    "SessionStore",
    "SessionStoreError",
    "SessionUpdate",
    "TranscriptMessage",
    "TranscriptStore",
    "TurnMode",
    "TurnPlan",
    "build_turn_prompt",
    "canonical_cwd",
    "captured_native_id",
    "compatibility_key",
    "default_state_dir",
    "generation_digest",
    "model_route",
    "plan_turn",
    "record_outcome",
    "render_transcript",
    "reseed_plan",
    "resume_expired",
    "version_family",
]

STORE_FORMAT_VERSION = 1

#: Error codes with which a two-way session says "the handle you asked me to resume is gone or
#: is not the one you asked for" (seed 001 §6: "A missing or corrupt resume target returns a
#: terminal structured failure"; ref §2.8 ``DSH_PROFILE_RESUME_REJECTED`` / ``…_MISMATCH``;
#: ref §2.7 pi ``PI_PARENT_SESSION_FAILED``; the codex app-server refusing ``thread/resume`` or
#: resuming another thread: upstream treats codex "thread/resume failed" as a resume failure).
EXPIRED_RESUME_ERROR_CODES = frozenset(
    {
        "DSH_PROFILE_RESUME_REJECTED",
        "DSH_PROFILE_RESUME_MISMATCH",
        "PI_PARENT_SESSION_FAILED",
        "CODEX_APP_SERVER_RESUME_FAILED",
        "CODEX_APP_SERVER_RESUME_MISMATCH",
    }
)

_RESULT_STATUSES = ("succeeded", "failed", "cancelled")


class SessionStoreError(HarnessError):
    """The session store file is unreadable or not in the expected shape."""

    code = "SESSION_STORE_INVALID"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"session store {path}: {problem}", rule="SESSION-STORE-001")
        self.path = path


class SessionPlanError(HarnessError, ValueError):
    """Inputs that do not describe one turn of one agent (e.g. a key for another runtime)."""

    code = "SESSION_PLAN_INVALID"


# --------------------------------------------------------------------------- the key


@dataclass(frozen=True)
class ExecutableIdentity:
    """Which executable ran: its resolved path and version (seed 001 §7)."""

    path: str
    version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "version": self.version}


@dataclass(frozen=True)
class CompatibilityKey:
    """Everything a stored native session depends on (seed 001 §7 "The compatibility key").

    "OD conversation and project identity; canonical project cwd; runtime id; provider/model
    route; DSH executable identity and tested compatibility family; profile protocol generation
    and plugin compatibility generation; behavior-affecting composition generation." Build it
    with :func:`compatibility_key`, which canonicalizes the cwd and the model route.
    """

    conversation_id: str
    project_id: str | None
    canonical_cwd: str
    runtime_id: str
    model_route: str
    executable_identity: ExecutableIdentity | None = None
    tested_family: str | None = None
    protocol_generation: str | None = None
    plugin_generation: str | None = None
    composition_generation: str | None = None

    def mismatches(self, other: CompatibilityKey) -> tuple[str, ...]:
        """Names of the fields that differ, in declaration order (empty = compatible)."""
        return tuple(
            f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.to_json() if isinstance(value, ExecutableIdentity) else value
        return out

    @classmethod
    def from_json(cls, data: Any) -> CompatibilityKey:
        if not isinstance(data, Mapping):
            raise ValueError("compatibility must be an object")
        exe = data.get("executable_identity")
        identity: ExecutableIdentity | None = None
        if exe is not None:
            if not isinstance(exe, Mapping):
                raise ValueError("compatibility.executable_identity must be an object or null")
            identity = ExecutableIdentity(
                path=_req_str(exe, "path"), version=_opt_str(exe, "version")
            )
        return cls(
            conversation_id=_req_str(data, "conversation_id"),
            project_id=_opt_str(data, "project_id"),
            canonical_cwd=_req_str(data, "canonical_cwd"),
            runtime_id=_req_str(data, "runtime_id"),
            model_route=_req_str(data, "model_route"),
            executable_identity=identity,
            tested_family=_opt_str(data, "tested_family"),
            protocol_generation=_opt_str(data, "protocol_generation"),
            plugin_generation=_opt_str(data, "plugin_generation"),
            composition_generation=_opt_str(data, "composition_generation"),
        )


def canonical_cwd(cwd: str) -> str:
    """The real path of ``cwd`` (seed 001 §7 "canonical project cwd"; SESSION-COMPAT-002).

    A symlinked or ``..``-laden spelling of the same directory gives the same key; a different
    directory never does. This is the one filesystem read of key building.
    """
    return os.path.realpath(os.path.abspath(cwd))


def model_route(model: str | None, provider: str | None = None) -> str:
    """``provider/model``, or ``default`` when no model is chosen.

    ref §8.3: ``options.model === 'default'`` always means "omit the model flag", i.e. the same
    route as no model at all.
    """
    chosen = (model or "").strip()
    if not chosen or chosen == "default":
        return "default"
    prefix = (provider or "").strip()
    return f"{prefix}/{chosen}" if prefix and not chosen.startswith(prefix + "/") else chosen


def version_family(policy: VersionPolicy | None, version: str | None) -> str | None:
    """The tested family a version belongs to (seed 001 §7 "tested compatibility family").

    The exact supported version when listed, the supported pattern when it matches, else
    ``"untested"``; ``None`` without a policy or a version.
    """
    if policy is None or not version:
        return None
    if version in policy.supported_versions:
        return version
    pattern = policy.supported_version_pattern
    if pattern and re.fullmatch(pattern, version) is not None:
        return f"pattern:{pattern}"
    return "untested"


def generation_digest(*parts: str) -> str:
    """A short stable digest of behaviour-affecting inputs (a composition generation)."""
    hasher = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8", "surrogatepass")
        hasher.update(len(encoded).to_bytes(8, "big"))
        hasher.update(encoded)
    return hasher.hexdigest()[:16]


def compatibility_key(
    *,
    conversation_id: str,
    defn: AgentDef,
    cwd: str,
    project_id: str | None = None,
    model: str | None = None,
    provider: str | None = None,
    detection: DetectionResult | None = None,
    executable: ExecutableIdentity | None = None,
    protocol_generation: str | int | None = None,
    plugin_generation: str | None = None,
    composition_generation: str | None = None,
) -> CompatibilityKey:
    """Build the key for one turn of ``defn``.

    ``detection`` (the def's ``DetectionResult``) supplies the executable
    identity (launch path + version), the tested family (from ``defn.version_policy``) and,
    when ``plugin_generation`` is not given, the compatibility probe's companion version.
    """
    identity = executable
    plugin = plugin_generation
    if detection is not None:
        if identity is None:
            path = detection.launch_path or detection.path
            if path:
                identity = ExecutableIdentity(path=path, version=detection.version)
        if plugin is None:
            plugin = detection.companion_version
    version = identity.version if identity is not None else None
    return CompatibilityKey(
        conversation_id=conversation_id,
        project_id=project_id,
        canonical_cwd=canonical_cwd(cwd),
        runtime_id=defn.id,
        model_route=model_route(model, provider),
        executable_identity=identity,
        tested_family=version_family(defn.version_policy, version),
        protocol_generation=None if protocol_generation is None else str(protocol_generation),
        plugin_generation=plugin,
        composition_generation=composition_generation,
    )


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class SessionRecord:
    """The one native handle stored for a conversation."""

    conversation_id: str
    runtime_id: str
    resume_style: ResumeStyle
    #: The handle: claude uuid, codex thread id, ACP session id, dsh session id, pi file path.
    native_id: str
    compatibility: CompatibilityKey
    #: The CLI confirmed this handle (reported it, or completed a turn with it). Only a
    #: validated record is ever resumed.
    validated: bool
    #: Seconds since the epoch, stamped by :meth:`SessionStore.put`.
    updated_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "conversation_id": self.conversation_id,
            "runtime_id": self.runtime_id,
            "resume_style": self.resume_style.value,
            "native_id": self.native_id,
            "compatibility": self.compatibility.to_json(),
            "validated": self.validated,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: Any) -> SessionRecord:
        if not isinstance(data, Mapping):
            raise ValueError("a record must be an object")
        validated = data.get("validated")
        if not isinstance(validated, bool):
            raise ValueError("validated must be a boolean")
        updated = data.get("updated_at", 0.0)
        if isinstance(updated, bool) or not isinstance(updated, (int, float)):
            raise ValueError("updated_at must be a number")
        return cls(
            conversation_id=_req_str(data, "conversation_id"),
            runtime_id=_req_str(data, "runtime_id"),
            resume_style=ResumeStyle(_req_str(data, "resume_style")),
            native_id=_req_str(data, "native_id"),
            compatibility=CompatibilityKey.from_json(data.get("compatibility")),
            validated=validated,
            updated_at=float(updated),
        )


def _req_str(data: Mapping[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string")
    return value


def _opt_str(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a string or null")
    return value


# --------------------------------------------------------------------------- the store


@contextlib.contextmanager
def _file_lock(path: str) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (held across read-modify-write)."""
    with open(path, "a+b") as handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)


if sys.platform == "win32":
    import msvcrt

    def _lock(handle: IO[bytes]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)

    def _unlock(handle: IO[bytes]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(handle: IO[bytes]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)

    def _unlock(handle: IO[bytes]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class SessionStore:
    """Session records in one JSON file, keyed by conversation id (SESSION-STORE-001).

    seed 001 §8: the host "persists only the opaque session id plus compatibility metadata in
    its own database"; the CLI's own session history is never read or edited. Every write goes
    to a temporary file in the same directory, is flushed to disk and renamed over the store,
    so a reader sees the old file or the new one, never half of one. Read-modify-write runs
    under a lock file (``<path>.lock``) so concurrent runs of different conversations do not
    lose each other's records. A malformed file raises :class:`SessionStoreError`; it is never
    silently treated as empty.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time
    ) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self._clock = clock
        self._mutex = threading.Lock()

    # -- reading

    def _read(self) -> dict[str, SessionRecord]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise SessionStoreError(self.path, f"unreadable: {exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SessionStoreError(self.path, f"not valid JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise SessionStoreError(self.path, "top level must be an object")
        version = data.get("version")
        if version != STORE_FORMAT_VERSION:
            raise SessionStoreError(
                self.path, f"format version {version!r}; expected {STORE_FORMAT_VERSION}"
            )
        sessions = data.get("sessions")
        if not isinstance(sessions, dict):
            raise SessionStoreError(self.path, "'sessions' must be an object")
        out: dict[str, SessionRecord] = {}
        for conversation_id, raw in sessions.items():
            try:
                record = SessionRecord.from_json(raw)
            except ValueError as exc:
                raise SessionStoreError(self.path, f"sessions[{conversation_id!r}]: {exc}") from exc
            if record.conversation_id != conversation_id:
                raise SessionStoreError(
                    self.path, f"sessions[{conversation_id!r}]: conversation_id does not match"
                )
            out[conversation_id] = record
        return out

    def _write(self, records: Mapping[str, SessionRecord]) -> None:
        directory = os.path.dirname(self.path)
        payload = {
            "version": STORE_FORMAT_VERSION,
            "sessions": {cid: records[cid].to_json() for cid in sorted(records)},
        }
        text = json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        fd, tmp = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(self.path)}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[dict[str, SessionRecord]]:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with self._mutex, _file_lock(self.path + ".lock"):
            records = self._read()
            before = dict(records)
            yield records
            if records != before:
                self._write(records)

    # -- public API

    def now(self) -> float:
        return self._clock()

    def records(self) -> dict[str, SessionRecord]:
        """Every stored record by conversation id."""
        with self._mutex:
            return self._read()

    def get(self, conversation_id: str) -> SessionRecord | None:
        return self.records().get(conversation_id)

    def put(self, record: SessionRecord) -> SessionRecord:
        """Store ``record`` for its conversation (replacing any), stamped with the clock."""
        stamped = SessionRecord(
            conversation_id=record.conversation_id,
            runtime_id=record.runtime_id,
            resume_style=record.resume_style,
            native_id=record.native_id,
            compatibility=record.compatibility,
            validated=record.validated,
            updated_at=self._clock(),
        )
        with self._transaction() as records:
            records[record.conversation_id] = stamped
        return stamped

    def clear(self, conversation_id: str, *, native_id: str | None = None) -> bool:
        """Remove the conversation's record; with ``native_id``, only if it is that handle."""
        with self._transaction() as records:
            current = records.get(conversation_id)
            if current is None or (native_id is not None and current.native_id != native_id):
                return False
            del records[conversation_id]
            return True


# --------------------------------------------------------------------------- planning


class TurnMode(str, enum.Enum):
    #: A new native session: bootstrap context + transcript + the new turn.
    FRESH = "fresh"
    #: Continue the stored native session: only the new turn.
    RESUME = "resume"


class FreshReason(str, enum.Enum):
    """Why a turn starts a fresh native session."""

    #: The def has no native resume (``ResumeStyle.NONE``): every turn carries the transcript.
    NO_NATIVE_RESUME = "no-native-resume"
    NO_RECORD = "no-record"
    #: A stored record the CLI never confirmed.
    NOT_VALIDATED = "not-validated"
    #: The stored record was made with another resume style.
    STYLE_CHANGED = "style-changed"
    #: The compatibility key differs (``TurnPlan.mismatched`` names the fields).
    KEY_MISMATCH = "key-mismatch"
    #: The resumed handle was unknown to the CLI; the turn is reseeded (seed 000 §8).
    EXPIRED = "expired"


@dataclass(frozen=True)
class TurnPlan:
    """What one turn does about the native session."""

    conversation_id: str
    runtime_id: str
    resume_style: ResumeStyle
    mode: TurnMode
    key: CompatibilityKey
    #: Why FRESH (``None`` for RESUME).
    reason: FreshReason | None = None
    #: The stored handle to continue (RESUME only): ``RunRequest.resume_session_id``.
    resume_session_id: str | None = None
    #: The host-minted id of a FRESH specify-style turn: ``RunRequest.new_session_id``.
    new_session_id: str | None = None
    #: KEY_MISMATCH: the key fields that differ from the stored record's.
    mismatched: tuple[str, ...] = ()

    @property
    def bootstrap(self) -> bool:
        """The prompt carries the bootstrap context and the transcript (seed 001 §8)."""
        return self.mode is TurnMode.FRESH


def _minted_id(style: ResumeStyle, factory: Callable[[], str]) -> str | None:
    """The id a fresh turn passes to the CLI: specify style only.

    seed 002 §3.1 specify style: "daemon 自己造一个 UUID 塞给 CLI … 存的就是自己造的那个"
    (the host mints the id and passes it; what it stores is the id it minted).
    """
    if style is not ResumeStyle.SPECIFY:
        return None
    new_id = factory()
    if not isinstance(new_id, str) or not new_id:
        raise SessionPlanError("new_session_id_factory must return a non-empty string")
    return new_id


def _fresh(
    key: CompatibilityKey,
    defn: AgentDef,
    reason: FreshReason,
    factory: Callable[[], str],
    mismatched: tuple[str, ...] = (),
) -> TurnPlan:
    new_id = _minted_id(defn.resume_style, factory)
    # capture style and the protocol styles: no id until the CLI reports one (seed 002 §3.1).
    return TurnPlan(
        conversation_id=key.conversation_id,
        runtime_id=defn.id,
        resume_style=defn.resume_style,
        mode=TurnMode.FRESH,
        key=key,
        reason=reason,
        new_session_id=new_id,
        mismatched=mismatched,
    )


def plan_turn(
    store: SessionStore,
    conversation_id: str,
    key: CompatibilityKey,
    defn: AgentDef,
    *,
    new_session_id_factory: Callable[[], str],
) -> TurnPlan:
    """FRESH or RESUME for this turn (SESSION-COMPAT-001, SESSION-RESUME-001).

    seed 001 §7: "A mismatch starts a new Harness session with bootstrap context. It never
    resumes old history under a different cwd, model route, or profile composition." A record
    is resumed only when it exists, was validated, has this def's resume style and its key
    equals ``key`` in every field.
    """
    if key.conversation_id != conversation_id:
        raise SessionPlanError(
            f"key is for conversation {key.conversation_id!r}, not {conversation_id!r}",
            rule="SESSION-COMPAT-001",
        )
    if key.runtime_id != defn.id:
        raise SessionPlanError(
            f"key is for runtime {key.runtime_id!r}, not {defn.id!r}", rule="SESSION-COMPAT-001"
        )
    factory = new_session_id_factory
    if defn.resume_style is ResumeStyle.NONE:
        # ref §8.1: adapters without native resume get the rendered transcript every turn.
        return _fresh(key, defn, FreshReason.NO_NATIVE_RESUME, factory)
    record = store.get(conversation_id)
    if record is None:
        return _fresh(key, defn, FreshReason.NO_RECORD, factory)
    if not record.validated:
        return _fresh(key, defn, FreshReason.NOT_VALIDATED, factory)
    if record.resume_style is not defn.resume_style:
        return _fresh(key, defn, FreshReason.STYLE_CHANGED, factory)
    differ = record.compatibility.mismatches(key)
    if differ:
        return _fresh(key, defn, FreshReason.KEY_MISMATCH, factory, differ)
    return TurnPlan(
        conversation_id=conversation_id,
        runtime_id=defn.id,
        resume_style=defn.resume_style,
        mode=TurnMode.RESUME,
        key=key,
        resume_session_id=record.native_id,
    )


def reseed_plan(plan: TurnPlan, *, new_session_id_factory: Callable[[], str]) -> TurnPlan:
    """The FRESH retry of a RESUME turn whose handle expired, on the SAME agent.

    seed 000 §8: "when a stored native session has expired, the daemon may clear that same
    agent's stale session and reseed the turn with the full transcript. That recovery never
    changes agent families." The plan keeps ``runtime_id``, style and key; only the mode, the
    reason and (specify style) a newly minted id change (SESSION-EXPIRED-001).
    """
    if plan.mode is not TurnMode.RESUME:
        raise SessionPlanError(
            "only a turn that resumed a native session can be reseeded", rule="SESSION-EXPIRED-001"
        )
    new_id = _minted_id(plan.resume_style, new_session_id_factory)
    return TurnPlan(
        conversation_id=plan.conversation_id,
        runtime_id=plan.runtime_id,
        resume_style=plan.resume_style,
        mode=TurnMode.FRESH,
        key=plan.key,
        reason=FreshReason.EXPIRED,
        new_session_id=new_id,
    )


# --------------------------------------------------------------------------- prompts


@dataclass(frozen=True)
class TranscriptMessage:
    """One earlier message of the conversation (the host's transcript is the source of truth)."""

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"transcript role must be 'user' or 'assistant', not {self.role!r}")


class TranscriptStore:
    """The host's transcript per conversation: one JSON file per conversation in ``directory``.

    seed 001 §7: "OD's conversation transcript remains the product source of truth"; a FRESH
    turn (first, mismatched or reseeded, seed 000 §8) is rebuilt from it. The file name is a
    digest of the conversation id, so any id is safe as a name. Writes are atomic (temp file +
    rename); a malformed file raises :class:`SessionStoreError` (never read as empty).
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.path.abspath(os.fspath(directory))

    def path_for(self, conversation_id: str) -> str:
        digest = hashlib.sha256(conversation_id.encode("utf-8", "surrogatepass")).hexdigest()
        return os.path.join(self.directory, f"{digest[:32]}.json")

    def load(self, conversation_id: str) -> list[TranscriptMessage]:
        path = self.path_for(conversation_id)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise SessionStoreError(path, f"transcript unreadable: {exc}") from exc
        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list) or data.get("conversation_id") != conversation_id:
            raise SessionStoreError(path, "transcript is not in the expected shape")
        try:
            return [TranscriptMessage(str(m["role"]), str(m["content"])) for m in messages]
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionStoreError(path, f"transcript message: {exc}") from exc

    def append(self, conversation_id: str, *messages: TranscriptMessage) -> None:
        os.makedirs(self.directory, exist_ok=True)
        path = self.path_for(conversation_id)
        with _file_lock(path + ".lock"):
            current = self.load(conversation_id)
            current.extend(messages)
            payload = {
                "conversation_id": conversation_id,
                "messages": [{"role": m.role, "content": m.content} for m in current],
            }
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".transcript.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(payload, handle, ensure_ascii=False)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


def default_state_dir(env: Mapping[str, str] | None = None) -> str:
    """The per-user state directory for session bookkeeping (``harness run --conversation``).

    ``$XDG_STATE_HOME/adapter-harness`` (default ``~/.local/state``); on Windows
    ``%LOCALAPPDATA%\\adapter-harness``.
    """
    source = os.environ if env is None else env
    if sys.platform == "win32":
        base = source.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "adapter-harness")
    state = source.get("XDG_STATE_HOME") or os.path.join(
        source.get("HOME") or os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(state, "adapter-harness")


def render_transcript(messages: Sequence[TranscriptMessage]) -> str:
    """``## user`` / ``## assistant`` blocks (ref §8.1: how transcripts travel in a prompt)."""
    return "\n\n".join(f"## {m.role}\n{m.content}" for m in messages)


def build_turn_prompt(
    plan: TurnPlan,
    transcript: Sequence[TranscriptMessage],
    new_turn: str,
    *,
    bootstrap: str = "",
) -> str:
    """The prompt for this turn (SESSION-RESUME-001, SESSION-FRESH-001).

    seed 001 §8: "The first turn contains the OD-composed system/bootstrap context and the
    current user request. A healthy resumed turn contains only the new turn … This prevents
    duplicate history." A FRESH turn (first, mismatched or reseeded) carries ``bootstrap``, the
    whole ``transcript`` (the messages before this turn) and the new turn.
    """
    if plan.mode is TurnMode.RESUME:
        return new_turn
    parts: list[str] = []
    if bootstrap.strip():
        parts.append(bootstrap.rstrip())
    if transcript:
        parts.append(render_transcript([*transcript, TranscriptMessage("user", new_turn)]))
    else:
        parts.append(new_turn)
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- outcomes


class SessionAction(str, enum.Enum):
    #: A new or refreshed handle was written.
    STORED = "stored"
    #: The stored handle stays as it was (cancel or failure after validation).
    KEPT = "kept"
    #: The conversation's record was removed.
    CLEARED = "cleared"
    #: Nothing was written.
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class SessionUpdate:
    action: SessionAction
    #: The record now stored for the conversation (``None`` when there is none).
    record: SessionRecord | None
    #: Re-run this turn with :func:`reseed_plan` (same agent, full transcript).
    reseed: bool = False
    reason: str = ""


def captured_native_id(
    resume_style: ResumeStyle, events: Sequence[Event], result_session_id: str | None
) -> str | None:
    """The handle the CLI itself reported during a run, else ``None``.

    The last ``status`` event carrying a ``session_id`` (codex ``thread.started``, claude
    ``system/init``, the dsh ``session`` frame, ACP ``session/new``). pi reports its handle only
    as the captured session file (``RunResult.session_id``, seed 000 §5.10). For the specify
    style ``RunResult.session_id`` echoes the id the host passed whether or not the CLI
    confirmed it, so it is not evidence and is ignored.
    """
    for event in reversed(events):
        if isinstance(event, Status) and event.session_id:
            return event.session_id
    if resume_style is ResumeStyle.SPECIFY:
        return None
    return result_session_id or None


def resume_expired(
    plan: TurnPlan,
    error_code: str | None,
    *,
    stderr: str = "",
    patterns: Sequence[str] = (),
) -> bool:
    """The run tried to resume and the CLI said the handle is unknown.

    Evidence is a protocol error code of :data:`EXPIRED_RESUME_ERROR_CODES`, or ``stderr``
    matching one of ``patterns`` (case-insensitive regexes the caller takes from the def, e.g.
    claude's "No conversation found with session ID"). Only the failure channel is searched,
    never assistant text. ref (upstream ``resolveAgentResumeFailurePolicy``): "Only a run that
    actually attempted native resume may clear the stored handle and auto-reseed".
    """
    if plan.mode is not TurnMode.RESUME:
        return False
    if error_code in EXPIRED_RESUME_ERROR_CODES:
        return True
    return any(re.search(p, stderr, re.IGNORECASE) for p in patterns if p)


def _status_value(result_status: str) -> str:
    value = str(getattr(result_status, "value", result_status))
    if value == "canceled":  # upstream spelling
        value = "cancelled"
    if value not in _RESULT_STATUSES:
        raise SessionPlanError(
            f"result status {result_status!r}; expected one of {', '.join(_RESULT_STATUSES)}"
        )
    return value


def _record(plan: TurnPlan, native_id: str) -> SessionRecord:
    return SessionRecord(
        conversation_id=plan.conversation_id,
        runtime_id=plan.runtime_id,
        resume_style=plan.resume_style,
        native_id=native_id,
        compatibility=plan.key,
        validated=True,
    )


def record_outcome(
    store: SessionStore,
    plan: TurnPlan,
    result_status: str,
    captured_native_id: str | None,
    *,
    expired: bool = False,
) -> SessionUpdate:
    """Store, keep or clear the conversation's handle after a run.

    ``result_status`` is ``succeeded`` / ``failed`` / ``cancelled`` (a
    :class:`~harness.runner.status.RunOutcome` works); ``captured_native_id`` is what the CLI
    reported (:func:`captured_native_id`); ``expired`` says the CLI rejected the resumed handle
    as unknown (:func:`resume_expired`).

    * RESUME + expired: clear the record and ask for a reseed on the same agent
      (SESSION-EXPIRED-001, seed 000 §8). ``expired`` on a FRESH turn is ignored: nothing was
      resumed, so nothing stored can be stale.
    * A handle the CLI confirmed is stored: the captured id, or for a specify-style turn that
      succeeded the id the host minted (SESSION-SPECIFY-001, SESSION-CAPTURE-001).
    * RESUME + cancelled/failed without a new handle: the handle is kept (seed 001 §7: "Once the
      profile has emitted a validated session frame, canceling the active OD run preserves that
      opaque session handle"; SESSION-CANCEL-001).
    * FRESH + failed/cancelled without a confirmed handle: nothing is stored
      (SESSION-FAILED-001).
    * FRESH + succeeded without a capturable handle (ambiguous pi capture, a CLI that reported
      nothing) or with no native resume: the old record is cleared, because the conversation
      advanced outside it (SESSION-ADVANCE-001; seed 000 §5.10 "ambiguous concurrent changes are
      not associated with the conversation").
    """
    status = _status_value(result_status)
    conv = plan.conversation_id
    if plan.mode is TurnMode.RESUME and expired:
        store.clear(conv, native_id=plan.resume_session_id)
        return SessionUpdate(
            SessionAction.CLEARED, None, reseed=True, reason="resumed native session expired"
        )
    handle = captured_native_id or None
    if plan.resume_style is ResumeStyle.NONE:
        handle = None
    elif handle is None and status == "succeeded":
        if plan.mode is TurnMode.RESUME:
            handle = plan.resume_session_id
        elif plan.resume_style is ResumeStyle.SPECIFY:
            handle = plan.new_session_id
    if handle is not None:
        if plan.mode is TurnMode.RESUME and status != "succeeded":
            current = store.get(conv)
            if current is not None and current.native_id == handle:
                return SessionUpdate(
                    SessionAction.KEPT, current, reason=f"{status} after a validated session"
                )
        stored = store.put(_record(plan, handle))
        return SessionUpdate(SessionAction.STORED, stored, reason=f"{status} with a confirmed id")
    if plan.mode is TurnMode.RESUME:
        return SessionUpdate(
            SessionAction.KEPT, store.get(conv), reason=f"{status} after a validated session"
        )
    if status == "succeeded":
        cleared = store.clear(conv)
        return SessionUpdate(
            SessionAction.CLEARED if cleared else SessionAction.UNCHANGED,
            None,
            reason="turn succeeded without a native handle; the conversation advanced",
        )
    return SessionUpdate(
        SessionAction.UNCHANGED, store.get(conv), reason=f"{status} before any validated session"
    )
