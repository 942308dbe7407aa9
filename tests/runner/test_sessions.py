"""RUN-SESSION-001: what the runner hands two-way sessions, and what it takes back."""

from __future__ import annotations

import base64
import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.transport import select_transport
from harness.protocols.base import SetDeadline
from harness.runner import RunOutcome, RunRequest, run_agent
from harness.runner.sessions import plan_session
from tests.runner.conftest import FakeWorld, text_of

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def _request(agent: str, cwd: Path, **kw: object) -> RunRequest:
    return RunRequest(defn=get_agent_def(agent, BUILTIN_DEFS), prompt="p", cwd=str(cwd), **kw)  # type: ignore[arg-type]


def _plan(request: RunRequest, env: dict[str, str] | None = None, platform: str = "linux"):  # type: ignore[no-untyped-def]
    defn = select_transport(request.defn, env or {}, request.transport)
    return plan_session(
        defn,
        request,
        cwd=request.cwd,
        env=env or {},
        platform=platform,
        home="/home/someone",
        request_id="run-1",
    )


@pytest.mark.rule("RUN-SESSION-001")
def test_pi_images_are_read_and_filtered_against_the_upload_root(tmp_path: Path) -> None:
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "shot.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(PNG)
    (uploads / "notes.txt").write_text("not an image", encoding="utf-8")
    request = _request(
        "pi",
        tmp_path,
        image_paths=(
            "uploads/shot.png",
            str(tmp_path / "outside.png"),
            "uploads/notes.txt",
            "uploads/missing.png",
        ),
        upload_root=str(uploads),
    )
    plan = _plan(request)
    assert list(plan.request.images) == [
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    ]
    assert plan.session_dir == str(tmp_path / ".pi" / "sessions")


@pytest.mark.rule("RUN-SESSION-001")
def test_resume_goes_to_the_session_unless_the_def_resumes_through_argv(tmp_path: Path) -> None:
    pi = _plan(_request("pi", tmp_path, resume_session_id="/s/a.jsonl"))
    assert pi.request.resume_session_id == "/s/a.jsonl"
    prime = _plan(_request("prime-agent", tmp_path, resume_session_id="/s/a.jsonl"))
    assert prime.request.resume_session_id is None  # ref §8.1 piRpcResumeViaProcessArgs
    assert prime.session_dir == "/home/someone/.prime/agent/sessions"


@pytest.mark.rule("RUN-SESSION-001")
@pytest.mark.parametrize(
    ("env", "platform", "sandbox"),
    [
        ({}, "linux", "workspace-write"),
        ({"WSL_DISTRO_NAME": "Ubuntu"}, "linux", "danger-full-access"),
        ({}, "win32", "danger-full-access"),
        ({"OD_CODEX_SANDBOX": "danger-full-access"}, "darwin", "danger-full-access"),
    ],
)
def test_app_server_sandbox_follows_the_codex_rule(
    tmp_path: Path, env: dict[str, str], platform: str, sandbox: str
) -> None:
    request = _request("codex", tmp_path, service_tier="flex", image_paths=("a.png",))
    plan = _plan(request, env, platform)
    assert plan.request.extra == {
        "sandbox": sandbox,
        "approval_policy": "never",
        "image_paths": ["a.png"],
        "service_tier": "flex",
    }


@pytest.mark.rule("RUN-SESSION-001", "RUN-CANCEL-ORDER-001")
def test_the_cancel_grace_reaches_the_session(tmp_path: Path) -> None:
    plan = _plan(_request("pi", tmp_path, cancel_grace_ms=1234))
    plan.session.start(plan.request, 0.0)
    actions = plan.session.cancel(1000.0)
    deadlines = [c for c in actions.controls if isinstance(c, SetDeadline)]
    assert [d.at_ms for d in deadlines] == [2234.0]
    assert actions.frames and json.loads(actions.frames[0])["type"] == "abort"


@pytest.mark.rule("RUN-SESSION-001")
def test_pi_session_file_is_captured_and_resumed(world: FakeWorld, tmp_path: Path) -> None:
    project = world.project()
    first = run_agent(world.request("pi", "text", cwd=project))
    assert first.succeeded, first.error
    session = first.session_id
    assert session is not None and session.endswith(".jsonl")
    assert Path(session).parent == project / ".pi" / "sessions" and Path(session).is_file()

    record = tmp_path / "record.json"
    second = run_agent(
        world.request(
            "pi",
            "text",
            cwd=project,
            resume_session_id=session,
            env_extra={"FAKE_CLI_RECORD": str(record)},
        )
    )
    assert second.succeeded, second.error
    frames = json.loads(record.read_text(encoding="utf-8"))["stdin_frames"]
    assert frames[0]["type"] == "new_session" and frames[0]["parentSession"] == session
    assert "PONG" in text_of(second.events)


@pytest.mark.rule("RUN-SESSION-001")
def test_prime_agent_resumes_through_argv_only(world: FakeWorld, tmp_path: Path) -> None:
    first = run_agent(world.request("prime-agent", "text"))
    assert first.succeeded, first.error
    session = first.session_id
    assert session is not None
    assert Path(session).parent == world.home / ".prime" / "agent" / "sessions"
    record = tmp_path / "record.json"
    second = run_agent(
        world.request(
            "prime-agent",
            "text",
            resume_session_id=session,
            env_extra={"FAKE_CLI_RECORD": str(record)},
        )
    )
    assert second.succeeded, second.error
    assert "--resume" in second.argv and session in second.argv
    frames = json.loads(record.read_text(encoding="utf-8"))["stdin_frames"]
    assert [f["type"] for f in frames if f["type"] == "new_session"] == []


LATE_DSH = """
import json, sys

def out(obj):
    sys.stdout.write(json.dumps(obj) + "\\n")
    sys.stdout.flush()

out({"v": 1, "type": "ready", "runtime": "open-design", "protocol_version": 1,
     "plugin_version": "0.0.1", "capabilities": {"session_resume": True,
     "session_cancel": True, "structured_events": True}})
rid = json.loads(sys.stdin.readline())["request_id"]
out({"v": 1, "type": "session", "request_id": rid, "session_id": "s-1", "resumed": False})
out({"v": 1, "type": "text", "request_id": rid, "content": "done"})
out({"v": 1, "type": "result", "request_id": rid, "status": "completed", "session_id": "s-1",
     "resume_rejected": False})
sys.stdin.read()  # the host closes stdin after the result
out({"v": 1, "type": "text", "request_id": rid, "content": "one more thing"})
"""


@pytest.mark.rule("RUN-SESSION-001")
@pytest.mark.skipif(sys.platform == "win32", reason="#! script")
def test_output_after_a_finished_session_is_still_read(world: FakeWorld, tmp_path: Path) -> None:
    """dsh: the runner reads to EOF after Finished; a late frame fails the run (seed 001 §6)."""
    script = tmp_path / "late-dsh"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(LATE_DSH), encoding="utf-8")
    script.chmod(0o755)
    result = run_agent(world.request("deepseek-harness", bin_override=str(script)))
    assert result.exit_code == 0
    assert result.status is RunOutcome.FAILED
    assert result.error is not None and result.error.code == "DSH_PROFILE_FRAME_AFTER_RESULT"
    assert result.error.source == "stream"
    assert text_of(result.events) == "done"
    assert result.session_id == "s-1"
