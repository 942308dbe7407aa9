"""Capture real ``codex app-server`` runs, driven by our own session, for replay tests.

Not part of the test suite (it needs the 424 MB codex package); ``README.md`` beside it
says how to run it and when to refresh. Each scenario starts ``codex app-server`` with
``HOME`` and ``CODEX_HOME`` in a temporary directory and its model API pointed at
``mock_responses.py`` on 127.0.0.1 (fake key ``MOCK_API_KEY``). The IO loop below is a
minimal shell around :class:`~harness.protocols.codex_app_server.CodexAppServerSession`:
it writes the frames the session asks for, feeds stdout as read (each read cut after its
last newline), cancels
when a scenario says so, and records both directions in order.

Output: one ``<scenario>.jsonl`` per scenario. Line 1 is a header (format, codex
version, the session request); then ``{"dir": "stdin"|"stdout", "data": ...}`` per
frame written / chunk read, and ``{"dir": "cancel"}`` where the host cancelled. Machine
paths are replaced by ``/CAPTURE/...`` placeholders, the host name by ``HOST``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
sys.path.insert(0, str(REPO))

from harness.events import TextDelta  # noqa: E402
from harness.protocols.base import (  # noqa: E402
    Actions,
    CloseStdin,
    Finished,
    SessionRequest,
    SetDeadline,
    Terminate,
)
from harness.protocols.codex_app_server import CodexAppServerSession  # noqa: E402

FORMAT = "codex-app-server-capture"
PLACEHOLDER = "/CAPTURE"
MODEL = "gpt-5.5"  # real-clis: a known slug, so codex offers apply_patch

CONFIG = """model_provider = "mock"
check_for_update_on_startup = false
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
stream_max_retries = 1
request_max_retries = 0
[analytics]
enabled = false
[features]
plugins = false
"""


@dataclass
class Scenario:
    name: str
    prompt: str
    resume_from: str | None = None
    cancel_after_text: bool = False


SCENARIOS = (
    Scenario("text_turn", "Say hello please."),
    Scenario("patch_turn", "Create hello.html and a stylesheet for it."),
    Scenario("resume_turn", "Say hello again.", resume_from="text_turn"),
    Scenario("cancel_turn", "MOCK_HANG: take your time.", cancel_after_text=True),
    Scenario("error_turn", "MOCK_ERROR_400 please."),
    Scenario("retry_turn", "MOCK_DISCONNECT please."),
)


_INSTALLATION = re.compile(r'"installationId":"[^"]*"')


def scrub(text: str, root: str) -> str:
    """Machine paths, the host name and codex's installation id become placeholders."""
    text = text.replace(root, PLACEHOLDER)
    text = text.replace(f'"serverName":{json.dumps(socket.gethostname())}', '"serverName":"HOST"')
    return _INSTALLATION.sub('"installationId":"00000000-0000-0000-0000-000000000000"', text)


def run(
    codex: str, scenario: Scenario, root: str, env: dict[str, str], resume: str | None
) -> tuple[list[dict[str, Any]], CodexAppServerSession, SessionRequest]:
    cwd = os.path.join(root, "project")
    request = SessionRequest(prompt=scenario.prompt, cwd=cwd, model=MODEL, resume_session_id=resume)
    session = CodexAppServerSession()
    proc = subprocess.Popen(
        [codex, "app-server"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    chunks: queue.Queue[bytes] = queue.Queue()
    stdout_fd = proc.stdout.fileno()

    def reader() -> None:
        while True:
            chunk = os.read(stdout_fd, 65536)
            chunks.put(chunk)
            if not chunk:
                return

    threading.Thread(target=reader, daemon=True).start()
    records: list[dict[str, Any]] = []
    t0 = time.monotonic()
    deadline: float | None = None
    kill_at: float | None = None
    stdin_open = True

    def now() -> float:
        return (time.monotonic() - t0) * 1000

    def apply(actions: Actions) -> None:
        nonlocal deadline, kill_at, stdin_open
        for frame in actions.frames:
            records.append({"dir": "stdin", "data": scrub(frame.decode(), root)})
            if stdin_open:
                proc.stdin.write(frame)  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
        for control in actions.controls:
            if isinstance(control, CloseStdin) and stdin_open:
                stdin_open = False
                proc.stdin.close()  # type: ignore[union-attr]
            elif isinstance(control, Terminate):
                kill_at = now() + control.after_ms
            elif isinstance(control, SetDeadline):
                deadline = control.at_ms
            elif isinstance(control, Finished):
                deadline = None

    apply(session.start(request, now()))
    cancelled = False
    pending = b""
    limit = now() + 60_000
    while now() < limit:
        try:
            chunk = chunks.get(timeout=0.05)
        except queue.Empty:
            if deadline is not None and now() >= deadline:
                apply(session.tick(now()))
            if kill_at is not None and now() >= kill_at and proc.poll() is None:
                proc.kill()
            continue
        if not chunk:
            if pending:
                records.append({"dir": "stdout", "data": scrub(pending.decode(), root)})
                apply(session.receive(pending, now()))
            apply(session.end_of_output(now()))
            break
        # Each read is cut after its last newline (the rest waits for the next read), so
        # a record is whole UTF-8 lines and a machine path is never split by a read.
        data = pending + chunk
        cut = data.rfind(b"\n") + 1
        pending = data[cut:]
        if not cut:
            continue
        piece = data[:cut]
        records.append({"dir": "stdout", "data": scrub(piece.decode(), root)})
        actions = session.receive(piece, now())
        apply(actions)
        if (
            scenario.cancel_after_text
            and not cancelled
            and any(isinstance(e, TextDelta) for e in actions.events)
        ):
            cancelled = True
            records.append({"dir": "cancel"})
            apply(session.cancel(now()))
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    return records, session, request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="capture real codex app-server runs")
    parser.add_argument("--codex", required=True, help="path to the codex executable")
    parser.add_argument("--out", default=str(HERE))
    args = parser.parse_args(argv)
    version = subprocess.run(
        [args.codex, "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    root = tempfile.mkdtemp(prefix="codex-capture-")
    home = os.path.join(root, "home")
    os.makedirs(os.path.join(home, ".codex"))
    os.makedirs(os.path.join(root, "project"))
    port_file = os.path.join(root, "port")
    mock = subprocess.Popen(
        [sys.executable, str(HERE / "mock_responses.py"), "--port-file", port_file]
    )
    try:
        while not (os.path.exists(port_file) and Path(port_file).read_text()):
            time.sleep(0.05)
        port = Path(port_file).read_text()
        Path(home, ".codex", "config.toml").write_text(CONFIG.format(port=port))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "CODEX_HOME": os.path.join(home, ".codex"),
            "MOCK_API_KEY": "fake-key-not-a-secret",
        }
        threads: dict[str, str] = {}
        for scenario in SCENARIOS:
            resume = threads[scenario.resume_from] if scenario.resume_from else None
            records, session, request = run(args.codex, scenario, root, env, resume)
            if session.session_id:
                threads[scenario.name] = session.session_id
            header = {
                "format": FORMAT,
                "version": 1,
                "codex_version": version,
                "scenario": scenario.name,
                "request": {
                    k: scrub(v, root) if isinstance(v, str) else v
                    for k, v in asdict(request).items()
                    if k in ("prompt", "cwd", "model", "resume_session_id")
                },
                "status": session.status.value if session.status else None,
            }
            out = Path(args.out, f"{scenario.name}.jsonl")
            lines = [json.dumps(header, ensure_ascii=False)]
            lines += [json.dumps(r, ensure_ascii=False) for r in records]
            out.write_text("\n".join(lines) + "\n", encoding="utf-8")
            print(f"{out.name}: {header['status']}, {len(records)} records")
    finally:
        mock.terminate()
        mock.wait(10)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
