"""amr's saved session documents: read-modify-write, and the ledger of every request.

A document is ``<session_dir>/<durable id>.json``, replaced atomically, so both processes
of a continuation see whole documents. Each request of an amr process adds a ledger row
to the document of the session it names (rows before the session exists wait).

Design: docs/design/fakes.md#fake_clis.acp.server
"""

from __future__ import annotations

import os

from fake_clis import jsonio
from fake_clis.acp.wire import Session, is_durable_id
from fake_clis.base import write_text

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from fake_clis.base import FakeRun

__all__ = ["SessionStore"]


class SessionStore:
    """The saved documents of amr sessions, and this process's pending ledger rows."""

    def __init__(self, run: FakeRun, sessions: Mapping[str, Session]) -> None:
        self._run = run
        #: This process's open sessions, by ACP session id (the ledger's lookup).
        self._sessions = sessions
        #: Ledger rows of requests not yet written to a saved session.
        self._ledger_buffer: list[dict[str, Any]] = []

    def _doc_path(self, durable: str) -> str | None:
        if not is_durable_id(durable):
            return None
        return os.path.join(self._run.session_dir, f"{durable}.json")

    def write_doc(
        self, durable: str, change: Callable[[dict[str, Any]], Any], *, create: bool = False
    ) -> bool:
        """Read-modify-write the saved session ``durable`` (replaced atomically); False
        when it does not exist and ``create`` is false."""
        path = self._doc_path(durable)
        if path is None:
            return False
        doc = self._run.load_session(durable)
        if doc is None:
            if not create:
                return False
            doc = {"id": durable, "turns": []}
        change(doc)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        scratch = f"{path}.{os.getpid()}.tmp"
        write_text(scratch, jsonio.dumps(doc))
        os.replace(scratch, path)
        return True

    def ledger(self, method: str, params: dict[str, Any]) -> None:
        """One ledger row for a request, written to the session it names when that is
        saved already (else kept until this process creates or loads one)."""
        self._ledger_buffer.append(
            {"pid": os.getpid(), "method": method, "has_prompt": "prompt" in params}
        )
        named = params.get("sessionId")
        if method == "session/load":
            target = named if isinstance(named, str) else None
        else:
            session = self._sessions.get(named) if isinstance(named, str) else None
            target = session.durable_id if session is not None else None
        if target is not None:
            self.flush_ledger(target)

    def flush_ledger(self, durable: str) -> None:
        rows, self._ledger_buffer = self._ledger_buffer, []
        if rows and not self.write_doc(
            durable, lambda doc: doc.setdefault("ledger", []).extend(rows)
        ):
            self._ledger_buffer = rows + self._ledger_buffer
