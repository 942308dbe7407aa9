"""Codex events and items -> our events, shared by ``codex exec --json`` and the app-server.

Design: docs/design/streams.md#harness.streams.codex_items
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from harness.events import (
    Error,
    Status,
    TextDelta,
    ThinkingDelta,
    ToolInFlight,
    ToolResult,
    ToolUse,
    Usage,
)
from harness.streams._jsonev import (
    Emit,
    extract_error_message,
    is_number,
    nonempty_str,
    nullish,
    parse_json_objects,
    pick_usage,
    stringify_content,
    todo_write_input_from_items,
)

__all__ = [
    "CONNECTOR_TOOL_NOT_FOUND",
    "CodexEventMapper",
    "ItemPhase",
    "connector_tool_error_message",
    "normalize_item",
    "normalize_item_type",
    "reconnect_progress",
]

ItemPhase = Literal["started", "updated", "completed"]
_PHASES: dict[str, ItemPhase] = {
    "item.started": "started",
    "item.updated": "updated",
    "item.completed": "completed",
}

#: The connector API error code that becomes a fatal error (ref §2.2 codex).
CONNECTOR_TOOL_NOT_FOUND = "CONNECTOR_TOOL_NOT_FOUND"

# ref §2.2 codex, latest generation: "Reconnecting... <attempt>/<max>" plus one of
# two transport phrases. JS `\d` and `\b` are ASCII-only, hence the explicit classes.
_RECONNECT = re.compile(r"Reconnecting\.\.\.\s+([0-9]+)/([0-9]+)(?![A-Za-z0-9_])")
_RECONNECT_CAUSES = (
    "timeout waiting for child process to exit",
    "stream disconnected before completion",
)

#: file_change kinds we can name honestly; any other kind leaves the whole line raw.
_FILE_CHANGE_TOOLS = {"add": "Write", "update": "Edit"}

_USAGE_KEYS = (
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("reasoning_output_tokens", "thought_tokens"),
    ("cached_input_tokens", "cached_read_tokens"),
)

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def normalize_item_type(name: str) -> str:
    """An app-server item type in the exec spelling (CODEX-ITEMTYPE-001, wire §A.3.2).

    ``agentMessage`` -> ``agent_message``, ``commandExecution`` ->
    ``command_execution``, ``fileChange`` -> ``file_change``, ``mcpToolCall`` ->
    ``mcp_tool_call``, ``webSearch`` -> ``web_search``, ``todoList`` ->
    ``todo_list``; ``reasoning``, ``error`` and names already in snake_case are
    unchanged.
    """
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def normalize_item(item: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of an app-server item in the exec shape :meth:`CodexEventMapper.item` reads.

    The ``type`` and top-level keys go to snake_case (``aggregatedOutput`` ->
    ``aggregated_output``, ``exitCode`` -> ``exit_code``); a ``fileChange``
    change whose ``kind`` is an object ``{"type": "update", …}`` gets the bare
    kind string. Nothing else is reinterpreted.
    """
    out: dict[str, Any] = {}
    for key, value in item.items():
        out[normalize_item_type(key) if isinstance(key, str) else key] = value
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = normalize_item_type(kind)
    changes = out.get("changes")
    if out.get("type") == "file_change" and isinstance(changes, list):
        fixed: list[Any] = []
        for change in changes:
            kind_type = None
            if isinstance(change, dict) and isinstance(change.get("kind"), dict):
                kind_type = change["kind"].get("type")
            if isinstance(kind_type, str):
                fixed.append({**change, "kind": kind_type})
            else:
                fixed.append(change)
        out["changes"] = fixed
    return out


def _diff_stat(kind: str, diff: object) -> dict[str, int] | None:
    """Line counts of one change's patch, as the claude Write/Edit rows count them (ref §2.2)."""
    if not isinstance(diff, str) or not diff:
        return None
    if kind == "add":
        # An add's diff is the whole file text: Write counts content.split('\n').
        return {"added": len(diff.split("\n")), "removed": 0}
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return {"added": added, "removed": removed} if added or removed else None


def _file_changes(item: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]] | None:
    """``(tool id, tool name, input)`` per change, or None unless every change is recognized."""
    item_id = nonempty_str(item.get("id"))
    changes = item.get("changes")
    if item_id is None or not isinstance(changes, list) or not changes:
        return None
    out: list[tuple[str, str, dict[str, Any]]] = []
    for index, change in enumerate(changes):
        if not isinstance(change, dict):
            return None
        path = nonempty_str(change.get("path"))
        kind = change.get("kind")
        name = _FILE_CHANGE_TOOLS.get(kind) if isinstance(kind, str) else None
        if path is None or name is None:
            return None
        tool_input: dict[str, Any] = {"file_path": path}
        stat = _diff_stat(kind, change.get("diff"))  # type: ignore[arg-type]
        if stat is not None:
            tool_input["od_diff_stat"] = stat
        out.append((f"{item_id}#{index}", name, tool_input))
    return out


def _mcp_tool_name(item: dict[str, Any]) -> str | None:
    server = nonempty_str(item.get("server"))
    tool = nonempty_str(item.get("tool"))
    if server is None or tool is None:
        return None
    return f"mcp__{server}__{tool}"


def _connector_api_error(value: dict[str, Any]) -> dict[str, Any] | None:
    error = value.get("error")
    if not isinstance(error, dict):
        return None
    if isinstance(error.get("code"), str):
        return error
    data = error.get("data")
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        wrapped: dict[str, Any] = data["error"]
        if isinstance(wrapped.get("code"), str):
            return wrapped
    return None


def connector_tool_error_message(content: str) -> str | None:
    """The fatal message for a CONNECTOR_TOOL_NOT_FOUND tool output, else None (ref §2.2)."""
    if CONNECTOR_TOOL_NOT_FOUND not in content:
        return None
    found: dict[str, Any] | None = None
    for parsed in parse_json_objects(content):
        error = _connector_api_error(parsed)
        if error is not None and error.get("code") == CONNECTOR_TOOL_NOT_FOUND:
            found = error
            break
    if found is None:
        return None
    details = found.get("details")
    details = details if isinstance(details, dict) else {}
    connector_id = nonempty_str(details.get("connectorId"))
    tool_name = nonempty_str(details.get("toolName")) or "the requested connector tool"
    target = (
        f"Connector tool {tool_name} is not allowed for connector {connector_id}."
        if connector_id
        else f"Connector tool {tool_name} is not allowed."
    )
    return (
        f"{target} Re-list the connector catalog and choose one of the currently allowed "
        "read-only tools."
    )


def reconnect_progress(message: str) -> tuple[int, int] | None:
    """``(attempt, max)`` when ``message`` is codex's recoverable reconnect notice, else None.

    CODEX-RECONNECT-001 (ref §2.2, latest): the message must START with
    ``Reconnecting... <n>/<max>`` and name one of the two transport causes; an
    error that merely mentions "Reconnecting..." mid-sentence stays fatal.
    """
    if not any(cause in message for cause in _RECONNECT_CAUSES):
        return None
    match = _RECONNECT.match(message)
    if match is None:
        return None
    attempt, maximum = int(match.group(1)), int(match.group(2))
    if attempt <= 0 or maximum <= 0:
        return None
    return attempt, maximum


class CodexEventMapper:
    """The codex state machine: decoded codex dicts in, events out through ``emit``.

    One instance per run. Methods that may decline return ``bool`` (``False``
    = not a shape we recognize; the caller reports it as ``raw``).
    """

    __slots__ = (
        "_emit",
        "_error_emitted",
        "_last_message_ended_with_newline",
        "_previous_was_agent_message",
        "_reasoning_any",
        "_reasoning_by_item",
        "_tool_uses",
    )

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._tool_uses: set[str] = set()
        self._error_emitted = False
        self._previous_was_agent_message = False
        self._last_message_ended_with_newline = False
        self._reasoning_by_item: dict[str, int] = {}
        self._reasoning_any = False

    # -- exec-json entry point ------------------------------------------------

    def handle_event(self, obj: dict[str, Any]) -> bool:
        """Route one ``codex exec --json`` object (wire §A.3.1) to the methods below."""
        kind = obj.get("type")
        if not isinstance(kind, str):
            return False
        phase = _PHASES.get(kind)
        if phase is not None:
            item = obj.get("item")
            return isinstance(item, dict) and self.item(phase, item)
        route = _EVENT_ROUTES.get(kind)
        return route is not None and route(self, obj)

    #: :class:`~harness.streams._jsonev.DialectHandler` interface (json_events dispatcher).
    handle = handle_event

    def finish(self) -> None:
        """Codex holds nothing across lines."""

    def _on_thread_started(self, obj: dict[str, Any]) -> bool:
        self.thread_started(obj.get("thread_id"))
        return True

    def _on_turn_started(self, obj: dict[str, Any]) -> bool:
        self.turn_started()
        return True

    def _on_turn_completed(self, obj: dict[str, Any]) -> bool:
        return self.turn_completed(obj.get("usage"))

    def _on_error(self, obj: dict[str, Any]) -> bool:
        self.error(obj)
        return True

    def _on_turn_failed(self, obj: dict[str, Any]) -> bool:
        self.turn_failed(obj)
        return True

    # -- lifecycle --------------------------------------------------------------

    def thread_started(self, thread_id: object) -> None:
        """CODEX-SESSION-001 (seed 002 §7.3, seed 000 §5.3): the thread id is the session id.

        ``thread.started`` maps to ``status`` with the id on ``session_id``, the
        same channel claude uses, so capture-style resume needs one code path.
        """
        self._emit(Status(label="initializing", session_id=nonempty_str(thread_id)))

    def turn_started(self) -> None:
        """CODEX-TURN-001 (ref §2.2): a new turn resets the paragraph state; status thinking."""
        self._clear_paragraph()
        self._emit(_THINKING)

    def turn_completed(self, usage: object) -> bool:
        """CODEX-USAGE-001 (ref §2.2): cumulative turn usage under our key names."""
        if not isinstance(usage, dict):
            return False
        self._emit(Usage(usage=pick_usage(usage, _USAGE_KEYS)))
        return True

    def error(self, obj: dict[str, Any]) -> None:
        """A top-level codex ``error``: a reconnect notice becomes status, else a latched error."""
        message = extract_error_message(
            nullish(obj.get("message"), obj.get("error")), "Codex error"
        )
        progress = reconnect_progress(message)
        if progress is not None:
            # CODEX-RECONNECT-001 (ref §2.2 latest): an ephemeral machine status,
            # never the raw SDK sentence.
            self._emit(Status(label="agent_reconnecting", detail=f"{progress[0]}/{progress[1]}"))
            return
        self._error_once(message)

    def turn_failed(self, obj: dict[str, Any]) -> None:
        """``turn.failed``: the same first-error-only latch as ``error`` (CODEX-ERROR-ONCE-001)."""
        self._error_once(
            extract_error_message(
                nullish(obj.get("error"), obj.get("message")), "Codex turn failed"
            )
        )

    # -- items ------------------------------------------------------------------

    def item(self, phase: ItemPhase, item: dict[str, Any]) -> bool:
        """One item lifecycle event. ``item['type']`` must be in the exec (snake_case) spelling.

        Returns False for a shape this mapping does not recognize (the caller
        reports it as raw): e.g. an ``agent_message`` at ``item.started``, any
        ``item.updated`` but a todo list, or a file change of unknown kind.
        """
        kind = item.get("type")
        if not isinstance(kind, str):
            return False
        if kind == "reasoning":
            self._reasoning(item)
            return True
        routes = _ITEM_ROUTES.get(phase)
        route = routes.get(kind) if routes is not None else None
        return route is not None and route(self, item)

    # -- item kinds ---------------------------------------------------------------

    def _reasoning(self, item: dict[str, Any]) -> None:
        """CODEX-REASONING-001 (ref §2.2): emit only the unseen suffix of each reasoning item.

        Codex replays the accumulated summary on every lifecycle event of the
        same item; a new item's first delta is prefixed with a blank line when
        any reasoning was emitted before, so distinct items stay separate.
        """
        key = item.get("id")
        if type(key) is not str:
            key = ""
        text = item.get("text")
        if type(text) is not str:
            return
        emitted = self._reasoning_by_item.get(key, 0)
        if len(text) <= emitted:
            return
        suffix = text[emitted:]
        if emitted == 0 and self._reasoning_any:
            suffix = "\n\n" + suffix
        self._emit(ThinkingDelta(delta=suffix))
        self._reasoning_by_item[key] = len(text)
        self._reasoning_any = True

    def _todo_list(self, item: dict[str, Any]) -> bool:
        """CODEX-TODO-001 (ref §2.2): every todo_list event is a full TodoWrite snapshot."""
        item_id = item.get("id")
        if not isinstance(item_id, str):
            return False
        todo_input = todo_write_input_from_items(item.get("items"))
        if todo_input is None:
            return False
        self._clear_paragraph()
        self._emit(ToolUse(id=item_id, name="TodoWrite", input=todo_input))
        return True

    def _command_started(self, item: dict[str, Any]) -> bool:
        if not isinstance(item.get("id"), str):
            return False
        self._clear_paragraph()
        self._bash_tool_use(item)
        return True

    def _file_change_started(self, item: dict[str, Any]) -> bool:
        changes = _file_changes(item)
        if changes is None:
            return False
        self._clear_paragraph()
        self._file_change_tool_uses(changes)
        return True

    def _mcp_started(self, item: dict[str, Any]) -> bool:
        name = _mcp_tool_name(item)
        item_id = nonempty_str(item.get("id"))
        if name is None or item_id is None:
            return False
        self._clear_paragraph()
        self._mcp_tool_use(item, item_id, name)
        return True

    def _web_search_started(self, item: dict[str, Any]) -> bool:
        """CODEX-WEBSEARCH-001 (ref §2.2 latest): the started query is always empty.

        So the call shows as in flight now and settles at completion. Claimed
        even without an id (nothing to show yet), as upstream.
        """
        item_id = nonempty_str(item.get("id"))
        if item_id is not None:
            self._clear_paragraph()
            self._emit(ToolInFlight(id=item_id, name="web_search", input={}))
        return True

    def _warning(self, item: dict[str, Any]) -> bool:
        """CODEX-WARNING-001 (ref §2.2): an error ITEM is a non-fatal notice.

        The turn keeps running; fatal failures come as top-level error/turn.failed.
        """
        message = nonempty_str(item.get("message"))
        if message is None:
            return False
        self._emit(Status(label="warning", detail=message))
        return True

    def _bash_tool_use(self, item: dict[str, Any]) -> None:
        """CODEX-BASH-001: one ``Bash`` tool_use per command id, whichever event comes first."""
        item_id: str = item["id"]
        if item_id in self._tool_uses:
            return
        self._tool_uses.add(item_id)
        command = item.get("command")
        self._emit(
            ToolUse(
                id=item_id,
                name="Bash",
                input={"command": command if isinstance(command, str) else ""},
            )
        )

    def _command_completed(self, item: dict[str, Any]) -> bool:
        """CODEX-BASH-001 + CODEX-CONNECTOR-001 (ref §2.2)."""
        item_id = item.get("id")
        if type(item_id) is not str:
            return False
        self._clear_paragraph()
        if item_id not in self._tool_uses:
            self._bash_tool_use(item)
        output = item.get("aggregated_output")
        content = stringify_content("" if output is None else output)
        exit_code = item.get("exit_code")
        # A numeric exit code decides; without one, status 'failed' does.
        is_error = exit_code != 0 if is_number(exit_code) else item.get("status") == "failed"
        self._emit(ToolResult(tool_use_id=item_id, content=content, is_error=is_error))
        if CONNECTOR_TOOL_NOT_FOUND in content:
            connector_error = connector_tool_error_message(content)
            if connector_error is not None:
                self._error_once(connector_error)
        return True

    def _file_change_tool_uses(self, changes: list[tuple[str, str, dict[str, Any]]]) -> None:
        for tool_id, name, tool_input in changes:
            if tool_id in self._tool_uses:
                continue
            self._tool_uses.add(tool_id)
            self._emit(ToolUse(id=tool_id, name=name, input=tool_input))

    def _file_change_completed(self, item: dict[str, Any]) -> bool:
        """CODEX-FILECHANGE-001 (ref §2.2 latest): one Write/Edit call per changed file.

        Ids are ``<item id>#<index>``; an unknown kind (e.g. ``delete``) leaves
        the whole line ``raw`` rather than mislabel or drop part of the batch.
        """
        changes = _file_changes(item)
        if changes is None:
            return False
        self._clear_paragraph()
        self._file_change_tool_uses(changes)
        is_error = item.get("status") == "failed"
        for tool_id, _name, _input in changes:
            self._emit(ToolResult(tool_use_id=tool_id, content="", is_error=is_error))
        return True

    def _mcp_tool_use(self, item: dict[str, Any], item_id: str, name: str) -> None:
        if item_id in self._tool_uses:
            return
        self._tool_uses.add(item_id)
        arguments = item.get("arguments")
        self._emit(
            ToolUse(id=item_id, name=name, input=arguments if isinstance(arguments, dict) else {})
        )

    def _mcp_completed(self, item: dict[str, Any]) -> bool:
        """CODEX-MCP-001 (ref §2.2 latest): ``mcp__<server>__<tool>``; failed or error object."""
        name = _mcp_tool_name(item)
        item_id = nonempty_str(item.get("id"))
        if name is None or item_id is None:
            return False
        self._clear_paragraph()
        self._mcp_tool_use(item, item_id, name)
        error = item.get("error")
        error = error if isinstance(error, dict) else None
        message = error.get("message") if error is not None else None
        message = message if isinstance(message, str) else ""
        content = message or stringify_content(nullish(item.get("result"), ""))
        is_error = item.get("status") == "failed" or error is not None
        self._emit(ToolResult(tool_use_id=item_id, content=content, is_error=is_error))
        return True

    def _web_search_completed(self, item: dict[str, Any]) -> bool:
        """CODEX-WEBSEARCH-001: a completed ``search`` action settles into tool_use + result."""
        action = item.get("action")
        query = nonempty_str(item.get("query"))
        item_id = nonempty_str(item.get("id"))
        if not isinstance(action, dict) or action.get("type") != "search":
            return False
        if query is None or item_id is None:
            return False
        self._clear_paragraph()
        if item_id not in self._tool_uses:
            self._tool_uses.add(item_id)
            self._emit(ToolUse(id=item_id, name="web_search", input={"query": query}))
        self._emit(ToolResult(tool_use_id=item_id, content="", is_error=False))
        return True

    def _agent_message(self, item: dict[str, Any]) -> bool:
        """CODEX-PARA-001 (seed 002 §7.3): restore the paragraph break between messages.

        Codex cuts a reply into discrete items; prefix ``\\n`` iff the previous
        event was an agent_message, it did not end with ``\\n``, and this text
        does not start with one.
        """
        text = nonempty_str(item.get("text"))
        if text is None:
            return False
        needs_boundary = (
            self._previous_was_agent_message
            and not self._last_message_ended_with_newline
            and not text.startswith("\n")
        )
        self._emit(TextDelta(delta="\n" + text if needs_boundary else text))
        self._previous_was_agent_message = True
        self._last_message_ended_with_newline = text.endswith("\n")
        return True

    # -- shared -------------------------------------------------------------------

    def _clear_paragraph(self) -> None:
        """A tool row between two messages: no paragraph newline is owed (CODEX-PARA-001)."""
        self._previous_was_agent_message = False
        self._last_message_ended_with_newline = False

    def _error_once(self, message: str) -> None:
        """CODEX-ERROR-ONCE-001 (seed 002 §7.3 ``codexErrorEmitted``): first error only."""
        if self._error_emitted:
            return
        self._error_emitted = True
        self._emit(Error(message=message))


_THINKING = Status(label="thinking")

_EVENT_ROUTES: dict[str, Callable[[CodexEventMapper, dict[str, Any]], bool]] = {
    "thread.started": CodexEventMapper._on_thread_started,
    "turn.started": CodexEventMapper._on_turn_started,
    "turn.completed": CodexEventMapper._on_turn_completed,
    "error": CodexEventMapper._on_error,
    "turn.failed": CodexEventMapper._on_turn_failed,
}

#: phase -> item type -> handler; an absent pair is unrecognized (-> raw). Reasoning is
#: handled before this table, in every phase.
_ITEM_ROUTES: dict[str, dict[str, Callable[[CodexEventMapper, dict[str, Any]], bool]]] = {
    "started": {
        "todo_list": CodexEventMapper._todo_list,
        "command_execution": CodexEventMapper._command_started,
        "file_change": CodexEventMapper._file_change_started,
        "mcp_tool_call": CodexEventMapper._mcp_started,
        "web_search": CodexEventMapper._web_search_started,
    },
    "updated": {
        "todo_list": CodexEventMapper._todo_list,
    },
    "completed": {
        "todo_list": CodexEventMapper._todo_list,
        "error": CodexEventMapper._warning,
        "command_execution": CodexEventMapper._command_completed,
        "file_change": CodexEventMapper._file_change_completed,
        "mcp_tool_call": CodexEventMapper._mcp_completed,
        "web_search": CodexEventMapper._web_search_completed,
        "agent_message": CodexEventMapper._agent_message,
    },
}
