"""Shared builders for the session tests."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef
from harness.host.native_sessions import (
    CompatibilityKey,
    ExecutableIdentity,
    SessionStore,
    compatibility_key,
)


def minted_ids(prefix: str = "minted") -> Callable[[], str]:
    """A deterministic ``new_session_id_factory`` (``minted-1``, ``minted-2``, ...)."""
    counter = itertools.count(1)
    return lambda: f"{prefix}-{next(counter)}"


def never_called() -> str:
    raise AssertionError("this turn must not mint a session id")


def make_store(tmp_path: Path) -> SessionStore:
    ticks = itertools.count(1000)
    return SessionStore(tmp_path / "state" / "sessions.json", clock=lambda: float(next(ticks)))


def key_for(
    defn: AgentDef | str,
    cwd: Path,
    *,
    conversation_id: str = "conv-1",
    model: str | None = "deepseek-chat",
    version: str = "1.0.0",
    **extra: str,
) -> CompatibilityKey:
    agent = get_agent_def(defn) if isinstance(defn, str) else defn
    return compatibility_key(
        conversation_id=conversation_id,
        project_id="proj-1",
        defn=agent,
        cwd=str(cwd),
        model=model,
        provider=extra.pop("provider", "deepseek-official"),
        executable=ExecutableIdentity(path=f"/opt/bin/{agent.bin}", version=version),
        protocol_generation=extra.pop("protocol_generation", "1"),
        plugin_generation=extra.pop("plugin_generation", "plugin-1"),
        composition_generation=extra.pop("composition_generation", "comp-1"),
    )


def native_of(store: SessionStore, conversation_id: str) -> str | None:
    """The stored handle of a conversation, or ``None``."""
    record = store.get(conversation_id)
    return record.native_id if record is not None else None
