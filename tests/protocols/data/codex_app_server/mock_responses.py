"""A scripted OpenAI Responses API on 127.0.0.1, for capturing real ``codex app-server`` runs.

Used only by ``capture.py`` (see ``README.md`` beside it); the test suite never starts it.
Stdlib only. It binds 127.0.0.1 and never opens a connection of its own.

Every ``POST /v1/responses`` is answered with a Server-Sent Events stream in the
sequence codex 0.171.0 accepts (reference ``real-clis.md``, "codex (0.171.0)"):
``response.created``, ``response.in_progress``, then per output item
``response.output_item.added`` ... ``response.output_item.done``, and
``response.completed`` with ``usage``. How the reply is chosen:

* the request already carries a tool output -> the final text ``"Done."``;
* the last user text names ``hello.html`` and an ``apply_patch`` tool is offered -> one
  ``apply_patch`` custom tool call that adds ``hello.html`` and ``style.css``, its input
  streamed in small ``response.custom_tool_call_input.delta`` pieces so codex can emit
  ``item/fileChange/patchUpdated`` previews;
* the last user text contains ``MOCK_ERROR_400`` -> HTTP 400 with an OpenAI error body;
* the last user text contains ``MOCK_DISCONNECT`` -> an SSE stream that ends before
  ``response.completed`` (codex retries it, then fails the turn);
* the last user text contains ``MOCK_HANG`` -> the first text delta, then nothing: the
  stream stays open (up to 30 s) so the client can interrupt the turn;
* otherwise a reasoning summary and the text ``"Hello from the mock."`` in three deltas.

Run: ``python mock_responses.py --port-file FILE`` (port 0 = any free port; the chosen
port is written to FILE). Each request's path and reply kind is appended to ``--log``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATCH = (
    "*** Begin Patch\n"
    "*** Add File: hello.html\n"
    "+<!doctype html>\n"
    '+<link rel="stylesheet" href="style.css">\n'
    "+<h1>Hello from the mock</h1>\n"
    "*** Add File: style.css\n"
    "+h1 { color: teal; }\n"
    "*** End Patch\n"
)

USAGE = {
    "input_tokens": 1200,
    "input_tokens_details": {"cached_tokens": 200},
    "output_tokens": 40,
    "output_tokens_details": {"reasoning_tokens": 8},
    "total_tokens": 1240,
}


def _last_user_text(body: dict[str, Any]) -> str:
    text = ""
    for item in body.get("input") or []:
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        for part in item.get("content") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                text = part["text"]
    return text


def _has_tool_output(body: dict[str, Any]) -> bool:
    return any(
        isinstance(item, dict)
        and item.get("type") in ("custom_tool_call_output", "function_call_output")
        for item in body.get("input") or []
    )


def _offers_apply_patch(body: dict[str, Any]) -> bool:
    return any(
        isinstance(tool, dict) and tool.get("name") == "apply_patch"
        for tool in body.get("tools") or []
    )


class _Stream:
    """Builds one SSE reply; ``seq`` numbers the events as the real API does."""

    def __init__(self, response_id: str, model: str) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.response_id = response_id
        self.model = model
        self.output: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, {"type": kind, "sequence_number": len(self.events), **fields}))

    def response(self, status: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.response_id,
            "object": "response",
            "created_at": 1767225600,
            "status": status,
            "model": self.model,
            "output": self.output if status == "completed" else [],
        }
        if status == "completed":
            out["usage"] = USAGE
        return out

    def begin(self) -> None:
        self.add("response.created", response=self.response("in_progress"))
        self.add("response.in_progress", response=self.response("in_progress"))

    def end(self) -> None:
        self.add("response.completed", response=self.response("completed"))

    def reasoning(self, item_id: str, summary: str) -> None:
        index = len(self.output)
        self.add(
            "response.output_item.added",
            output_index=index,
            item={"type": "reasoning", "id": item_id, "summary": []},
        )
        self.add(
            "response.reasoning_summary_part.added",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        )
        for piece in (summary[: len(summary) // 2], summary[len(summary) // 2 :]):
            self.add(
                "response.reasoning_summary_text.delta",
                item_id=item_id,
                output_index=index,
                summary_index=0,
                delta=piece,
            )
        self.add(
            "response.reasoning_summary_text.done",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            text=summary,
        )
        self.add(
            "response.reasoning_summary_part.done",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            part={"type": "summary_text", "text": summary},
        )
        item = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": summary}],
        }
        self.output.append(item)
        self.add("response.output_item.done", output_index=index, item=item)

    def message(self, item_id: str, pieces: list[str]) -> None:
        index = len(self.output)
        text = "".join(pieces)
        self.add(
            "response.output_item.added",
            output_index=index,
            item={
                "type": "message",
                "id": item_id,
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        self.add(
            "response.content_part.added",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=part,
        )
        for piece in pieces:
            self.add(
                "response.output_text.delta",
                item_id=item_id,
                output_index=index,
                content_index=0,
                delta=piece,
            )
        self.add(
            "response.output_text.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            text=text,
        )
        done_part = {"type": "output_text", "text": text, "annotations": []}
        self.add(
            "response.content_part.done",
            item_id=item_id,
            output_index=index,
            content_index=0,
            part=done_part,
        )
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [done_part],
        }
        self.output.append(item)
        self.add("response.output_item.done", output_index=index, item=item)

    def apply_patch(self, item_id: str, call_id: str, patch: str, piece: int) -> None:
        index = len(self.output)
        self.add(
            "response.output_item.added",
            output_index=index,
            item={
                "type": "custom_tool_call",
                "id": item_id,
                "call_id": call_id,
                "name": "apply_patch",
                "input": "",
                "status": "in_progress",
            },
        )
        for start in range(0, len(patch), piece):
            self.add(
                "response.custom_tool_call_input.delta",
                item_id=item_id,
                output_index=index,
                delta=patch[start : start + piece],
            )
        self.add(
            "response.custom_tool_call_input.done",
            item_id=item_id,
            output_index=index,
            input=patch,
        )
        item = {
            "type": "custom_tool_call",
            "id": item_id,
            "call_id": call_id,
            "name": "apply_patch",
            "input": patch,
            "status": "completed",
        }
        self.output.append(item)
        self.add("response.output_item.done", output_index=index, item=item)

    def encode(self) -> bytes:
        return b"".join(
            f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode() for kind, data in self.events
        )


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-responses/1"
    counter = 0
    log_path: str | None = None

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _log(self, entry: dict[str, Any]) -> None:
        if Handler.log_path:
            with open(Handler.log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _hang(self, head: bytes, seconds: float) -> None:
        """Send ``head`` as an open-ended stream, then hold the connection."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(head)
        self.wfile.flush()
        self.close_connection = True
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(0.05)

    def do_GET(self) -> None:
        self._log({"method": "GET", "path": self.path})
        self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if not self.path.rstrip("/").endswith("/responses") or not isinstance(body, dict):
            self._log({"method": "POST", "path": self.path, "reply": "404"})
            self._send(404, "application/json", b'{"error":{"message":"not found"}}')
            return
        Handler.counter += 1
        n = Handler.counter
        model = str(body.get("model") or "mock")
        text = _last_user_text(body)
        stream = _Stream(f"resp_mock_{n}", model)
        if "MOCK_ERROR_400" in text and not _has_tool_output(body):
            error = {
                "error": {
                    "message": "The mock rejected this request (MOCK_ERROR_400).",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "mock_error",
                }
            }
            self._log({"method": "POST", "path": self.path, "reply": "400"})
            self._send(400, "application/json", json.dumps(error).encode())
            return
        stream.begin()
        if "MOCK_DISCONNECT" in text and not _has_tool_output(body):
            stream.message(f"msg_mock_{n}", ["Partial "])
            stream.events.pop()  # no output_item.done, and no response.completed
            self._log({"method": "POST", "path": self.path, "reply": "disconnect"})
            self._send(200, "text/event-stream", stream.encode())
            return
        if "MOCK_HANG" in text and not _has_tool_output(body):
            stream.message(f"msg_mock_{n}", ["Working on it"])
            del stream.events[-3:]  # keep output_item.added, content_part.added, one delta
            self._log({"method": "POST", "path": self.path, "reply": "hang"})
            self._hang(stream.encode(), 30.0)
            return
        if _has_tool_output(body):
            kind = "final-text"
            stream.message(f"msg_mock_{n}", ["Done."])
        elif "hello.html" in text and _offers_apply_patch(body):
            kind = "apply-patch"
            stream.apply_patch(f"ctc_mock_{n}", f"call_mock_{n}", PATCH, 24)
        else:
            kind = "text"
            stream.reasoning(f"rs_mock_{n}", "Planning a short greeting.")
            stream.message(f"msg_mock_{n}", ["Hello ", "from the ", "mock."])
        stream.end()
        self._log({"method": "POST", "path": self.path, "reply": kind, "model": model})
        self._send(200, "text/event-stream", stream.encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log")
    args = parser.parse_args(argv)
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    with open(args.port_file, "w", encoding="utf-8") as fh:
        fh.write(str(server.server_address[1]))
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
