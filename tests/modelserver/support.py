"""Helpers for the model-server tests: a real HTTP client, an SSE splitter, request parts.

``post`` / ``request`` talk to a running server through :mod:`http.client` (a real
socket, not a test client). ``parse_sse`` splits a streamed body into ``(event,
data)`` pairs by the SSE rules (a blank line ends an event; ``event:`` and ``data:``
fields), written here by hand, not shared with the server. The tool definitions below
are written from the shapes real-clis.md records for each CLI.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fake_clis.scenario import Scenario, parse_scenario
from harness.modelserver import ModelServer


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[tuple[str | None, Any]]:
        return parse_sse(self.body)


def parse_sse(body: bytes) -> list[tuple[str | None, Any]]:
    """``(event name or None, decoded data)`` per SSE event; ``[DONE]`` stays a string."""
    out: list[tuple[str | None, Any]] = []
    text = body.decode("utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].lstrip(" "))
        joined = "\n".join(data)
        out.append((event, joined if joined == "[DONE]" else json.loads(joined)))
    return out


def request(
    server: ModelServer,
    method: str,
    path: str,
    body: Mapping[str, Any] | bytes | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        payload = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        hdrs = {"content-type": "application/json", **(headers or {})}
        conn.request(method, path, body=payload, headers=hdrs)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def post(server: ModelServer, path: str, body: Mapping[str, Any] | bytes, **kw: Any) -> Reply:
    return request(server, "POST", path, body, **kw)


def scenario_of(name: str, steps: list[dict[str, Any]], **top: Any) -> Scenario:
    """A scenario written inline (validated against the same schema as the files)."""
    return parse_scenario({"name": name, "steps": steps, **top}, source=f"<test {name}>")


# -- request bodies written from the documented shapes (real-clis.md) --------------------------
CLAUDE_WRITE: dict[str, Any] = {
    "name": "Write",
    "description": "Writes a file to the local filesystem.",
    "input_schema": {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The absolute path to the file to write (must be absolute, "
                "not relative)",
            },
            "content": {"type": "string", "description": "The content to write to the file"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    },
}
CLAUDE_BASH: dict[str, Any] = {
    "name": "Bash",
    "description": "Executes a given bash command.",
    "input_schema": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {"type": "number"},
            "description": {"type": "string"},
        },
        "required": ["command"],
    },
}
CLAUDE_TODO: dict[str, Any] = {
    "name": "TodoWrite",
    "description": "Write the todo list",
    "input_schema": {
        "type": "object",
        "properties": {"todos": {"type": "array", "items": {"type": "string"}}},
        "required": ["todos"],
    },
}

CODEX_EXEC: dict[str, Any] = {
    "type": "function",
    "name": "exec_command",
    "description": "Runs a command in a PTY, returning output or a session ID.",
    "strict": False,
    "parameters": {
        "type": "object",
        "properties": {
            "cmd": {"type": "string", "description": "Shell command to execute."},
            "justification": {"type": "string"},
            "sandbox_permissions": {
                "type": "string",
                "description": "Per-command sandbox override.",
                "enum": ["use_default", "require_escalated"],
            },
            "workdir": {"type": "string"},
        },
        "required": ["cmd"],
        "additionalProperties": False,
    },
}
CODEX_STDIN: dict[str, Any] = {
    "type": "function",
    "name": "write_stdin",
    "description": "Writes characters to an existing exec session.",
    "parameters": {
        "type": "object",
        "properties": {"session_id": {"type": "number"}, "chars": {"type": "string"}},
        "required": ["session_id"],
    },
}
CODEX_PATCH: dict[str, Any] = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool.",
    "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"},
}

CHAT_WRITE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "write",
        "description": "Write a file",
        "parameters": {
            "type": "object",
            "properties": {"filePath": {"type": "string"}, "content": {"type": "string"}},
            "required": ["filePath", "content"],
        },
    },
}
CHAT_BASH: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a bash command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command", "description"],
        },
    },
}
CHAT_TODO: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "todowrite",
        "description": "Write todos",
        "parameters": {"type": "object", "properties": {"todos": {"type": "array"}}},
    },
}

GEMINI_TOOLS: list[dict[str, Any]] = [
    {
        "functionDeclarations": [
            {
                "name": "write_file",
                "description": "Writes content to a specified file.",
                "parametersJsonSchema": {
                    "type": "object",
                    "properties": {
                        "file_path": {
                            "type": "string",
                            "description": "The absolute path to the file to write to.",
                        },
                        "content": {"type": "string"},
                    },
                    "required": ["file_path", "content"],
                },
            },
            {
                "name": "run_shell_command",
                "description": "Executes a given shell command.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {
                        "command": {"type": "STRING"},
                        "description": {"type": "STRING"},
                        "directory": {"type": "STRING"},
                    },
                    "required": ["command"],
                },
            },
            {
                "name": "save_memory",
                "description": "Saves a fact.",
                "parameters": {"type": "OBJECT", "properties": {"fact": {"type": "STRING"}}},
            },
        ]
    }
]
