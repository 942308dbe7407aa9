"""The bundle's ``open-design-runtime`` plugin, driven by plain Node with stub Harness services.

The real ``dsh`` is not needed here (``tests/live/test_dsh_bundle_live.py`` boots the same
tarball under it): ``stub_runtime/drive.mjs`` hands the plugin a context whose ``agents``,
``sessions``, ``sessionQuery`` and ``llm`` services emit the durable session events a real
agent loop appends. Every stdout line must be a generation-1 frame the harness's own
validator (:func:`harness.protocols.dsh_frames.parse_runtime_frame`) accepts.

Rules: DSHBUNDLE-PLUGIN-001 (the tarball is a Harness plugin bundle), DSHBUNDLE-STDIO-001
(ready, session, content frames, one result), DSHBUNDLE-RESUME-001 (resume through the
runtime's service; a missing target fails, never a new session), DSHBUNDLE-CANCEL-001.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

from harness.profile_bundle import build_bundle
from harness.protocols.dsh_frames import parse_runtime_frame

NODE = shutil.which("node")
DRIVER = Path(__file__).with_name("stub_runtime") / "drive.mjs"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

_STUB_AGENT = "export function installModelSelection(agentCtx, selection) { return () => {} }\n"
_STUB_LLM = (
    "export function createUserMessage(input) "
    "{ return Object.freeze({ ...input, role: 'user' }) }\n"
)


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """The committed tarball unpacked as a profile's ``node_modules`` would hold it."""
    modules = tmp_path / "profile" / "node_modules"
    target = modules / "@open-design" / "dsh-runtime"
    data = (Path(build_bundle.__file__).parent / build_bundle.TARBALL_NAME).read_bytes()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member)
            assert handle is not None
            path = target / member.name.removeprefix("package/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(handle.read())
    for name, text in (("dsh-agent", _STUB_AGENT), ("dsh-llm", _STUB_LLM)):
        stub = modules / "@deepseek-ai" / name
        stub.mkdir(parents=True)
        (stub / "package.json").write_text(
            json.dumps({"name": f"@deepseek-ai/{name}", "type": "module", "main": "index.js"}),
            encoding="utf-8",
        )
        (stub / "index.js").write_text(text, encoding="utf-8")
    return target


class Drive:
    def __init__(self, proc: subprocess.CompletedProcess[str], log: Path) -> None:
        self.returncode = proc.returncode
        self.stderr = proc.stderr
        self.lines = [line for line in proc.stdout.splitlines() if line.strip()]
        self.frames: list[dict[str, Any]] = [json.loads(line) for line in self.lines]
        self.log: dict[str, Any] = json.loads(log.read_text("utf-8")) if log.exists() else {}

    def types(self) -> list[str]:
        return [f["type"] for f in self.frames]


def _drive(
    package: Path,
    tmp_path: Path,
    args: list[str],
    commands: list[dict[str, Any]] | None = None,
    *,
    script: str = "text",
    sessions: dict[str, Any] | None = None,
    cwd: Path | None = None,
) -> Drive:
    assert NODE is not None
    work = cwd or tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = dict(os.environ, STUB_SCRIPT=script, STUB_LOG=str(tmp_path / "log.json"))
    if sessions is not None:
        (tmp_path / "sessions.json").write_text(json.dumps(sessions), encoding="utf-8")
        env["STUB_SESSIONS"] = str(tmp_path / "sessions.json")
    stdin = "".join(json.dumps(c) + "\n" for c in commands or [])
    proc = subprocess.run(
        [NODE, str(DRIVER), str(package), *args],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=60,
    )
    return Drive(proc, tmp_path / "log.json")


def _execute(cwd: Path, **fields: Any) -> dict[str, Any]:
    return {
        "v": 1,
        "type": "execute",
        "request_id": "req-1",
        "cwd": str(cwd),
        "prompt": "Say hello",
        "mcp_servers": [],
        **fields,
    }


def _valid(drive: Drive) -> None:
    for line in drive.lines:
        parse_runtime_frame(json.loads(line))


@pytest.mark.rule("DSHBUNDLE-PLUGIN-001")
def test_the_tarball_is_a_harness_plugin_bundle(package: Path) -> None:
    manifest = json.loads((package / "package.json").read_text("utf-8"))
    assert manifest["dsh"] == {"bundle": {"patch": "./cordis.patch.yml"}}
    assert manifest["exports"]["./cordis.patch.yml"] == "./cordis.patch.yml"
    patch = (package / "cordis.patch.yml").read_text("utf-8")
    inserted = "- insert:\n    - id: open-design-runtime\n      name: '@open-design/dsh-runtime'"
    assert inserted in patch
    for name in ("index.js", "protocol.js"):
        assert (package / name).is_file()


@pytest.mark.rule("DSHBUNDLE-PLUGIN-001")
def test_probe_and_models_frames(package: Path, tmp_path: Path) -> None:
    probe = _drive(package, tmp_path, ["--probe"])
    assert probe.returncode == 0, probe.stderr
    assert probe.frames == [
        {
            "v": 1,
            "type": "probe",
            "runtime": "open-design",
            "protocol_version": 1,
            "plugin_version": build_bundle.VERSION,
            "compatibility_generation": "od-dsh.1",
            "capabilities": {
                "session_resume": True,
                "session_cancel": True,
                "structured_events": True,
            },
        }
    ]
    models = _drive(package, tmp_path, ["--models"])
    assert models.returncode == 0, models.stderr
    assert models.frames[0]["models"] == [
        {
            "provider": "deepseek-official",
            "provider_name": "DeepSeek",
            "id": "deepseek-flash",
            "name": "Flash",
            "reasoning_options": [
                {"id": "low", "name": "Low"},
                {"id": "high", "name": "High", "default": True},
            ],
        }
    ]


@pytest.mark.rule("DSHBUNDLE-PLUGIN-001")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bogus"], "unknown option '--bogus'"),
        ([], "one of --probe, --stdio or --models is required"),
        (["--probe", "--stdio"], "cannot be combined"),
        (["hello"], "unexpected argument 'hello'"),
    ],
)
def test_bad_app_arguments_are_refused(
    package: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    drive = _drive(package, tmp_path, args)
    assert drive.returncode == 1
    assert drive.frames == []
    assert message in drive.stderr


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
def test_a_tool_run_streams_every_frame_kind_then_one_result(package: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    drive = _drive(package, tmp_path, ["--stdio"], [_execute(work)], script="tool")
    assert drive.returncode == 0, drive.stderr
    _valid(drive)
    assert drive.types() == [
        "ready",
        "session",
        "thinking",
        "text",
        "tool_call",
        "tool_result",
        "text",
        "usage",
        "result",
    ]
    assert all(f.get("request_id") == "req-1" for f in drive.frames[1:])
    session = drive.frames[1]
    assert session["resumed"] is False and session["session_id"].startswith("session-")
    call, result = drive.frames[4], drive.frames[5]
    assert call["name"] == "write" and json.loads(call["arguments"]) == {"file_path": "a.txt"}
    # Only the appended result is projected; a later surface replacement is not a new result.
    assert (result["call_id"], result["name"], result["output"]) == ("c1", "write", "Created")
    assert result["is_error"] is False
    usage = drive.frames[7]
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"]) == (15, 5, 1)
    final = drive.frames[-1]
    assert final["status"] == "completed" and final["output"] == "Hello."
    assert final["stop_reason"] == "end_turn" and final["resume_rejected"] is False
    assert drive.log["created"][0]["cwd"] == str(work.resolve())
    assert drive.log["prompts"] == ["Say hello"] and drive.log["flushed"] == 1
    assert "Say hello" not in drive.stderr


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
def test_a_provider_error_is_one_failed_result(package: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    drive = _drive(package, tmp_path, ["--stdio"], [_execute(work)], script="error")
    assert drive.returncode == 1
    _valid(drive)
    assert drive.types() == ["ready", "session", "result"]
    assert drive.frames[-1]["status"] == "failed"
    assert drive.frames[-1]["error"] == {"code": "SERVER", "message": "Internal server error"}


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
def test_an_agent_failure_without_a_terminal_turn_fails_the_run(
    package: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    drive = _drive(package, tmp_path, ["--stdio"], [_execute(work)], script="throw")
    assert drive.returncode == 1
    _valid(drive)
    assert drive.frames[-1]["status"] == "failed"
    assert drive.frames[-1]["error"]["code"] == "RUNTIME_ERROR"


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
@pytest.mark.parametrize(
    ("command", "code"),
    [
        ({"v": 1, "type": "execute", "request_id": "r"}, "INVALID_COMMAND"),
        ("not json", "MALFORMED_COMMAND"),
    ],
)
def test_a_bad_host_command_is_a_protocol_error(
    package: Path, tmp_path: Path, command: Any, code: str
) -> None:
    assert NODE is not None
    work = tmp_path / "work"
    work.mkdir()
    line = command if isinstance(command, str) else json.dumps(command)
    proc = subprocess.run(
        [NODE, str(DRIVER), str(package), "--stdio"],
        input=line + "\n",
        check=False,
        capture_output=True,
        text=True,
        cwd=work,
        timeout=60,
    )
    frames = [json.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    assert proc.returncode == 1
    assert [f["type"] for f in frames] == ["ready", "protocol_error"]
    assert frames[1]["code"] == code
    parse_runtime_frame(frames[1])


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
def test_the_execute_cwd_must_be_the_process_directory(package: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    drive = _drive(package, tmp_path, ["--stdio"], [_execute(other)])
    assert drive.returncode == 1
    assert drive.types() == ["ready", "protocol_error"]
    assert drive.frames[1]["code"] == "CWD_MISMATCH"
    assert drive.log["created"] == []


@pytest.mark.rule("DSHBUNDLE-STDIO-001")
def test_an_unadvertised_model_or_effort_is_refused(package: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    model = _drive(
        package,
        tmp_path,
        ["--stdio"],
        [_execute(work, model={"provider": "deepseek-official", "id": "nope"})],
    )
    assert model.frames[-1]["code"] == "UNKNOWN_MODEL"
    effort = _drive(package, tmp_path, ["--stdio"], [_execute(work, reasoning_effort="max")])
    assert effort.frames[-1]["code"] == "UNSUPPORTED_REASONING_EFFORT"
    chosen = _drive(package, tmp_path, ["--stdio"], [_execute(work, reasoning_effort="low")])
    assert chosen.returncode == 0, chosen.stderr
    assert chosen.log["created"][0]["agentOptions"] == {
        "provider": "deepseek-official",
        "model": "deepseek-flash",
    }


@pytest.mark.rule("DSHBUNDLE-RESUME-001")
def test_resume_goes_through_the_runtime_and_keeps_the_id(package: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    sid = "session-earlier"
    drive = _drive(
        package,
        tmp_path,
        ["--stdio"],
        [_execute(work, resume_session_id=sid)],
        sessions={sid: {"cwd": str(work.resolve())}},
    )
    assert drive.returncode == 0, drive.stderr
    _valid(drive)
    assert drive.frames[1] == {
        "v": 1,
        "type": "session",
        "request_id": "req-1",
        "session_id": sid,
        "resumed": True,
    }
    assert drive.frames[-1]["session_id"] == sid
    assert [r["resumeSessionId"] for r in drive.log["resumed"]] == [sid]
    assert drive.log["created"] == []


@pytest.mark.rule("DSHBUNDLE-RESUME-001")
@pytest.mark.parametrize(
    ("sessions", "code"),
    [({}, "SESSION_NOT_FOUND"), ({"session-x": {"cwd": "/elsewhere"}}, "SESSION_REJECTED")],
)
def test_a_missing_or_foreign_resume_target_fails_and_creates_nothing(
    package: Path, tmp_path: Path, sessions: dict[str, Any], code: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    drive = _drive(
        package,
        tmp_path,
        ["--stdio"],
        [_execute(work, resume_session_id="session-x")],
        sessions=sessions,
    )
    assert drive.returncode == 1
    _valid(drive)
    assert drive.types() == ["ready", "result"]
    result = drive.frames[-1]
    assert result["status"] == "failed" and result["resume_rejected"] is True
    assert result["session_id"] == "session-x" and result["error"]["code"] == code
    assert drive.log["created"] == [] and drive.log["resumed"] == []


@pytest.mark.rule("DSHBUNDLE-CANCEL-001")
def test_a_cancel_for_the_active_request_ends_with_cancelled(package: Path, tmp_path: Path) -> None:
    assert NODE is not None
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, STUB_SCRIPT="hang", STUB_LOG=str(tmp_path / "log.json"))
    proc = subprocess.Popen(
        [NODE, str(DRIVER), str(package), "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=work,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert json.loads(proc.stdout.readline())["type"] == "ready"
        proc.stdin.write(json.dumps(_execute(work)) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["type"] == "session"
        # A cancel for another request changes nothing; the active one's ends the run.
        for request_id in ("req-other", "req-1"):
            cancel = {"v": 1, "type": "cancel", "request_id": request_id}
            proc.stdin.write(json.dumps(cancel) + "\n")
        proc.stdin.flush()
        rest = [json.loads(line) for line in proc.stdout if line.strip()]
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert [f["type"] for f in rest] == ["result"]
    assert rest[0]["status"] == "cancelled" and rest[0]["stop_reason"] == "cancelled"
    parse_runtime_frame(rest[0])
    log = json.loads((tmp_path / "log.json").read_text("utf-8"))
    assert log["cancelled"] == [{"kind": "user"}]
