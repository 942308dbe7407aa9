"""The amr fake's compaction continuation (seed 000 "AMR compaction continuation (ACP
extension v1)"), driven as two (or three) real processes by a hand-written JSON-RPC client.

Rules: FAKE-ACP-002 (every frame validates), FAKE-ACP-003 (initialize / session/new),
FAKE-ACP-005 (session/load), FAKE-ACP-007 (a cancel stops a continuation too), FAKE-ACP-008
(the ``compaction`` step and ``_session/continue``), FAKE-SCENARIO-001 (a fake that does not
emulate an optional step refuses the scenario).

The frames the client writes and the shapes it expects are written from the brief's
upstream facts (Open Design ``packages/contracts/src/api/amr-continuation.ts`` and its test
fake), not copied from the fake. Schema validation: every frame a fake writes is checked
with :func:`harness.protocols.acp.schema.validate_incoming`, the method of each response
taken from the request it answers; ``_session/continue`` is an extension method outside the
vendored schema, answered "like a prompt", so its response is checked against
``session/prompt``'s ``PromptResponse`` (its error responses against ``Error``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_clis.catalog import unemulated_steps
from fake_clis.scenario import ScenarioError, load_scenario
from harness.protocols.acp.schema import validate_incoming
from tests.fakes.conftest import FakeCli
from tests.fakes.test_acp import RawClient, stdout_frames

PROMPT = "Write the notes"
NOTES = "# Notes\n\nWritten once.\n"
COMPACTION_MESSAGE = "opencode compaction continuation ended before prompt completion"
UNSAFE = {"code": -32600, "message": "unsafe continuation"}
CAPABILITY = "com.open-design.nativeSessionContinue"


# --------------------------------------------------------------------------- the client


class Amr:
    """One amr process: a :class:`RawClient` with its own record file, and what it sent."""

    def __init__(self, fake: FakeCli, scenario: str, name: str) -> None:
        self.record_path = fake.root / f"record-{name}.json"
        self.client = RawClient(
            fake, "amr", scenario=scenario, FAKE_CLI_RECORD=str(self.record_path)
        )
        self.fake = fake
        #: request id -> method, for the schema check of the answers.
        self.sent: dict[int, str] = {}
        self.code: int | None = None

    @property
    def pid(self) -> int:
        return self.client.proc.pid

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; answer permission requests (allow once) until its response."""
        rid = self.client.request(method, params)
        self.sent[rid] = method
        while True:
            frame = self.client.until(
                lambda f: (
                    (f.get("id") == rid and "method" not in f)
                    or f.get("method") == "session/request_permission"
                )
            )
            if frame.get("method") != "session/request_permission":
                return frame
            outcome = {"outcome": "selected", "optionId": "allow_once"}
            self.client.send({"jsonrpc": "2.0", "id": frame["id"], "result": {"outcome": outcome}})

    def initialize(self) -> dict[str, Any]:
        result: dict[str, Any] = self.call("initialize", {"protocolVersion": 1})["result"]
        return result

    def session_params(self, **extra: Any) -> dict[str, Any]:
        return {"cwd": str(self.fake.cwd), "mcpServers": [], **extra}

    def frames(self) -> list[dict[str, Any]]:
        return stdout_frames(bytes(self.client.pump.received))

    def updates(self) -> list[dict[str, Any]]:
        return [f["params"] for f in self.frames() if f.get("method") == "session/update"]

    def close(self) -> int:
        self.code = self.client.close()
        return self.code

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.record_path.read_text(encoding="utf-8"))
        return data

    def schema_problems(self) -> list[tuple[dict[str, Any], list[str]]]:
        """Each frame checked against the vendored schema (see the module docstring)."""
        pending: dict[int | str, str] = {
            rid: ("session/prompt" if method == "_session/continue" else method)
            for rid, method in self.sent.items()
        }
        out = []
        for frame in self.frames():
            problems = validate_incoming(frame, pending)
            if problems:
                out.append((frame, problems))
        return out


def scenario_with(fake: FakeCli, **compaction: Any) -> str:
    """The bundled compaction scenario with other options on its compaction step."""
    raw = json.loads((Path(load_scenario("compaction").source)).read_text(encoding="utf-8"))
    for step in raw["steps"]:
        if step["kind"] == "compaction":
            step.update(compaction)
    name = "compaction_" + "_".join(f"{k}_{v}" for k, v in sorted(compaction.items())).lower()
    return fake.scenario_file(name, raw["steps"])


def prompt_params(session_id: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": PROMPT}]}


class Interrupted:
    """The first process after its prompt was interrupted."""

    def __init__(self, fake: FakeCli, scenario: str) -> None:
        self.proc = Amr(fake, scenario, "first")
        self.caps = self.proc.initialize()["agentCapabilities"]
        self.new = self.proc.call("session/new", self.proc.session_params())["result"]
        self.acp_id: str = self.new["sessionId"]
        self.durable: str = self.new["openCodeSessionId"]
        self.answer = self.proc.call("session/prompt", prompt_params(self.acp_id))
        self.error: dict[str, Any] = self.answer["error"]

    @property
    def cursor(self) -> dict[str, Any]:
        cursor: dict[str, Any] = self.error["data"]["continuation"]
        return cursor


def session_doc(fake: FakeCli, durable: str) -> dict[str, Any]:
    path = fake.home / ".fake-cli" / "amr" / "sessions" / f"{durable}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_and_continue(
    fake: FakeCli,
    scenario: str,
    durable: str,
    cursor: dict[str, Any],
    name: str = "second",
    **extra: Any,
) -> tuple[Amr, dict[str, Any], dict[str, Any]]:
    """A new process: initialize, session/load of the durable id, _session/continue."""
    proc = Amr(fake, scenario, name)
    proc.initialize()
    loaded = proc.call("session/load", proc.session_params(sessionId=durable))
    acp_id = loaded["result"]["sessionId"]
    answer = proc.call("_session/continue", {"sessionId": acp_id, "continuation": cursor, **extra})
    return proc, loaded["result"], answer


def texts(proc: Amr) -> list[str]:
    return [
        u["update"]["content"]["text"]
        for u in proc.updates()
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    ]


# --------------------------------------------------------------------------- the happy path


@pytest.mark.rule("FAKE-ACP-002", "FAKE-ACP-003", "FAKE-ACP-005", "FAKE-ACP-012", "FAKE-ACP-013")
def test_a_continuation_finishes_the_turn_in_a_new_process(fake: FakeCli) -> None:
    first = Interrupted(fake, "compaction")
    # initialize: loadSession and the extension, version 1.
    assert first.caps["loadSession"] is True
    assert first.caps["_meta"][CAPABILITY] == {"version": 1}
    # session/new: a per-process ACP id beside the durable OpenCode session id.
    assert first.acp_id.startswith("acp-") and first.durable.startswith("ses_")
    assert first.acp_id != first.durable
    assert {u["sessionId"] for u in first.proc.updates()} == {first.acp_id}
    # The interrupted prompt: the structured evidence, exactly.
    cursor = first.cursor
    assert first.error == {
        "code": -32600,
        "message": COMPACTION_MESSAGE,
        "data": {
            "kind": "opencode_continuation_incomplete",
            "code": "OPENCODE_COMPACTION_CONTINUATION_INCOMPLETE",
            "runtime": "opencode",
            "phase": "post_tool_resume",
            "retryable": False,
            "openCodeSessionId": first.durable,
            "continuation": {
                "version": 1,
                "userMessageId": cursor["userMessageId"],
                "assistantMessageId": cursor["assistantMessageId"],
                "toolResultsCommitted": True,
            },
        },
    }
    assert cursor["userMessageId"] != cursor["assistantMessageId"]
    assert texts(first.proc) == ["I'll write the notes."]
    assert (fake.cwd / "notes.md").read_text(encoding="utf-8") == NOTES
    assert first.proc.close() == 0
    first_record = first.proc.record()
    assert first_record["compactions"] == 1 and first_record["files_written"] == ["notes.md"]
    assert first_record["session_id"] == first.acp_id
    assert first_record["durable_session_id"] == first.durable

    second, loaded, answer = load_and_continue(fake, "compaction", first.durable, cursor)
    # session/load: the history under this process's own ACP id, and the durable id.
    acp_two = loaded["sessionId"]
    assert acp_two.startswith("acp-") and acp_two != first.acp_id
    assert loaded["openCodeSessionId"] == first.durable
    assert loaded["models"]["currentModelId"] == "anthropic/claude-sonnet-4-5"
    replayed = [u["update"]["sessionUpdate"] for u in second.updates()][:3]
    assert replayed == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    assert {u["sessionId"] for u in second.updates()} == {acp_two}
    # _session/continue: the rest of the turn, answered like a prompt.
    assert answer["result"] == {
        "stopReason": "end_turn",
        "usage": {"inputTokens": 200, "outputTokens": 30, "totalTokens": 230},
    }
    assert texts(second)[-1] == "Recovered and finished."
    assert second.close() == 0
    record = second.record()
    assert record["continues"] == [
        {
            "params": {"sessionId": acp_two, "continuation": cursor},
            "loaded": True,
            "previous_alive": False,
            "accepted": True,
            "reason": None,
        }
    ]
    assert "files_written" not in record and "compactions" not in record
    assert record["resumed"] is True and record["prior_turns"] == 1
    # Nothing ran twice: the file was written once, by the first process.
    assert (fake.cwd / "notes.md").read_text(encoding="utf-8") == NOTES
    # The same turn holds both halves; no continuation is pending any more.
    doc = session_doc(fake, first.durable)
    assert [t["text"] for t in doc["turns"]] == ["I'll write the notes.Recovered and finished."]
    assert [t["prompt"] for t in doc["turns"]] == [PROMPT]
    assert [(t["toolCallId"], t["status"]) for t in doc["turns"][0]["tools"]] == [
        ("call_write_notes", "completed")
    ]
    assert "continuation" not in doc
    # The ledger: both processes' requests, and no prompt from the second.
    rows = [(r["pid"], r["method"], r["has_prompt"]) for r in doc["ledger"]]
    assert rows == [
        (first.proc.pid, "initialize", False),
        (first.proc.pid, "session/new", False),
        (first.proc.pid, "session/prompt", True),
        (second.pid, "initialize", False),
        (second.pid, "session/load", False),
        (second.pid, "_session/continue", False),
    ]
    # Every frame of both processes validates.
    assert first.proc.schema_problems() == []
    assert second.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-013")
def test_a_cursor_is_continued_once(fake: FakeCli) -> None:
    first = Interrupted(fake, "compaction")
    first.proc.close()
    second, _, answer = load_and_continue(fake, "compaction", first.durable, first.cursor)
    assert answer["result"]["stopReason"] == "end_turn"
    second.close()
    third, _, again = load_and_continue(fake, "compaction", first.durable, first.cursor, "third")
    assert again["error"] == UNSAFE
    third.close()
    assert third.record()["continues"][0]["reason"] == "no continuation is pending"
    assert session_doc(fake, first.durable)["turns"][0]["text"].count("Recovered") == 1


# --------------------------------------------------------------------------- refusals


@pytest.mark.rule("FAKE-ACP-013")
def test_a_continuation_while_the_interrupted_process_lives_is_unsafe(fake: FakeCli) -> None:
    first = Interrupted(fake, "compaction")
    second, _, answer = load_and_continue(fake, "compaction", first.durable, first.cursor)
    assert answer["error"] == UNSAFE
    assert "Recovered and finished." not in texts(second)
    second.close()
    refused = second.record()["continues"][0]
    assert refused["previous_alive"] is True and refused["accepted"] is False
    assert refused["reason"] == "the interrupted process is still alive"
    # The refusal consumed nothing: once the first process is gone, it is safe.
    first.proc.close()
    third, _, later = load_and_continue(fake, "compaction", first.durable, first.cursor, "third")
    assert later["result"]["stopReason"] == "end_turn"
    third.close()
    assert third.record()["continues"][0]["previous_alive"] is False
    assert second.schema_problems() == [] and third.schema_problems() == []


CURSOR_CHANGES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "other-user-message": lambda c: {**c, "userMessageId": c["userMessageId"] + "x"},
    "other-assistant-message": lambda c: {**c, "assistantMessageId": "msg_other"},
    "version-as-true": lambda c: {**c, "version": True},
    "no-commit-claim": lambda c: {k: v for k, v in c.items() if k != "toolResultsCommitted"},
}


@pytest.mark.rule("FAKE-ACP-013")
@pytest.mark.parametrize("change", sorted(CURSOR_CHANGES))
def test_a_changed_cursor_is_unsafe(fake: FakeCli, change: str) -> None:
    first = Interrupted(fake, "compaction")
    first.proc.close()
    cursor = CURSOR_CHANGES[change](first.cursor)
    second, _, answer = load_and_continue(fake, "compaction", first.durable, cursor)
    assert answer["error"] == UNSAFE
    second.close()
    assert second.record()["continues"][0]["reason"] == "the cursor is not the saved one"
    assert "continuation" in session_doc(fake, first.durable)


@pytest.mark.rule("FAKE-ACP-013")
def test_a_continuation_with_a_prompt_is_unsafe(fake: FakeCli) -> None:
    first = Interrupted(fake, "compaction")
    first.proc.close()
    prompt = [{"type": "text", "text": PROMPT}]
    second, _, answer = load_and_continue(
        fake, "compaction", first.durable, first.cursor, prompt=prompt
    )
    assert answer["error"] == UNSAFE
    second.close()
    refused = second.record()["continues"][0]
    assert refused["reason"] == "a continuation carries no prompt" and refused["loaded"] is True
    rows = session_doc(fake, first.durable)["ledger"]
    assert [r["has_prompt"] for r in rows if r["method"] == "_session/continue"] == [True]
    assert (fake.cwd / "notes.md").read_text(encoding="utf-8") == NOTES


@pytest.mark.rule("FAKE-ACP-013")
def test_a_continuation_needs_this_process_to_load_the_session(fake: FakeCli) -> None:
    first = Interrupted(fake, "compaction")
    first.proc.close()
    second = Amr(fake, "compaction", "second")
    second.initialize()
    fresh = second.call("session/new", second.session_params())["result"]["sessionId"]
    continuation = {"sessionId": fresh, "continuation": first.cursor}
    assert second.call("_session/continue", continuation)["error"] == UNSAFE
    # The durable id is not an ACP session of this process either.
    by_durable = {"sessionId": first.durable, "continuation": first.cursor}
    assert second.call("_session/continue", by_durable)["error"] == UNSAFE
    second.close()
    reasons = [c["reason"] for c in second.record()["continues"]]
    assert reasons == [
        "the session was not loaded by this process",
        f"unknown session {first.durable!r}",
    ]
    assert second.schema_problems() == []


# --------------------------------------------------------------------------- step options


@pytest.mark.rule("FAKE-ACP-005", "FAKE-ACP-012", "FAKE-ACP-013")
def test_missing_history_fails_the_load(fake: FakeCli) -> None:
    scenario = scenario_with(fake, history="missing")
    first = Interrupted(fake, scenario)
    first.proc.close()
    second = Amr(fake, scenario, "second")
    second.initialize()
    answer = second.call("session/load", second.session_params(sessionId=first.durable))
    assert answer["error"] == {
        "code": -32600,
        "message": "session gone",
        "data": {"kind": "resume_failed", "retryable": True},
    }
    assert second.updates() == []
    # A session that was never saved fails the same way.
    unknown = second.call("session/load", second.session_params(sessionId="ses_nosuchsession"))
    assert unknown["error"]["message"] == "session gone"
    second.close()
    assert second.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-005", "FAKE-ACP-012", "FAKE-ACP-013")
def test_changed_history_answers_another_session_and_is_unsafe(fake: FakeCli) -> None:
    scenario = scenario_with(fake, history="changed")
    first = Interrupted(fake, scenario)
    first.proc.close()
    second, loaded, answer = load_and_continue(fake, scenario, first.durable, first.cursor)
    assert loaded["openCodeSessionId"].startswith("ses_")
    assert loaded["openCodeSessionId"] != first.durable
    assert answer["error"] == UNSAFE
    second.close()
    assert second.record()["continues"][0]["reason"] == "the persisted history changed"


@pytest.mark.rule("FAKE-ACP-013")
def test_legacy_evidence_offers_no_continuation(fake: FakeCli) -> None:
    scenario = scenario_with(fake, evidence="legacy")
    first = Interrupted(fake, scenario)
    assert first.error == {
        "code": -32600,
        "message": COMPACTION_MESSAGE,
        "data": {"kind": "opencode_prompt_error"},
    }
    first.proc.close()
    assert first.proc.record()["compactions"] == 1
    assert "continuation" not in session_doc(fake, first.durable)
    guessed = {
        "version": 1,
        "userMessageId": "msg_guess",
        "assistantMessageId": "msg_guess2",
        "toolResultsCommitted": True,
    }
    second, _, answer = load_and_continue(fake, scenario, first.durable, guessed)
    assert answer["error"] == UNSAFE
    second.close()
    assert second.record()["continues"][0]["reason"] == "no continuation is pending"
    assert first.proc.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-013")
def test_a_pending_tool_is_left_in_progress_under_a_commit_claim(fake: FakeCli) -> None:
    first = Interrupted(fake, scenario_with(fake, pending_tool=True))
    first.proc.close()
    updates = [u["update"] for u in first.proc.updates()]
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert len(calls) == 2 and calls[0]["toolCallId"] == "call_write_notes"
    pending = calls[1]
    assert pending["kind"] == "edit" and pending["status"] == "pending"
    assert pending["rawInput"]["path"] == str(fake.cwd / "pending.txt")
    later = [
        u["status"]
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u["toolCallId"] == pending["toolCallId"]
    ]
    assert later == ["in_progress"]
    assert first.cursor["toolResultsCommitted"] is True
    assert not (fake.cwd / "pending.txt").exists()
    assert first.proc.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-013")
def test_a_repeated_interruption_hits_the_continuation_once(fake: FakeCli) -> None:
    scenario = scenario_with(fake, repeat=True)
    first = Interrupted(fake, scenario)
    first.proc.close()
    second, _, answer = load_and_continue(fake, scenario, first.durable, first.cursor)
    assert answer["error"] == first.error
    assert "Recovered and finished." not in texts(second)
    second.close()
    record = second.record()
    assert record["compactions"] == 1 and record["continues"][0]["accepted"] is True
    third, _, last = load_and_continue(fake, scenario, first.durable, first.cursor, "third")
    assert last["result"]["stopReason"] == "end_turn"
    assert texts(third)[-1] == "Recovered and finished."
    third.close()
    assert (fake.cwd / "notes.md").read_text(encoding="utf-8") == NOTES
    assert second.schema_problems() == [] and third.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-003", "FAKE-ACP-013")
@pytest.mark.parametrize(("advertise", "meta"), [(None, None), (2, {"version": 2})])
def test_the_advertised_capability_follows_the_step(
    fake: FakeCli, advertise: int | None, meta: dict[str, int] | None
) -> None:
    first = Interrupted(fake, scenario_with(fake, advertise=advertise))
    first.proc.close()
    assert first.caps["loadSession"] is True
    assert first.caps.get("_meta", {}).get(CAPABILITY) == meta
    # Only the capability differs: the evidence is the same version-1 cursor.
    assert first.cursor["version"] == 1
    assert first.proc.schema_problems() == []


@pytest.mark.rule("FAKE-ACP-003")
def test_without_a_compaction_step_amr_advertises_version_1(fake: FakeCli) -> None:
    proc = Amr(fake, "text", "only")
    assert proc.initialize()["agentCapabilities"]["_meta"][CAPABILITY] == {"version": 1}
    proc.close()


# --------------------------------------------------------------------------- other fakes


@pytest.mark.rule("FAKE-SCENARIO-001")
@pytest.mark.parametrize(("agent", "prog"), [("kilo", "kilo"), ("vibe", "vibe-acp")])
def test_another_acp_fake_refuses_the_compaction_scenario(
    fake: FakeCli, agent: str, prog: str
) -> None:
    from harness.defs.registry import get_agent_def
    from tests.fakes.test_acp import def_argv

    result = fake.run(agent, def_argv(get_agent_def(agent)), scenario="compaction")
    assert result.code == 2
    assert result.err == f"{prog}: the fake does not emulate scenario step 'compaction'\n"
    assert result.stdout == b"" and result.record == {}
    assert unemulated_steps(agent, "compaction") == ["compaction"]
    assert unemulated_steps(agent, load_scenario("happy")) == []
    assert unemulated_steps("amr", "compaction") == []


@pytest.mark.rule("FAKE-ACP-013")
def test_other_acp_fakes_do_not_know_the_extension(fake: FakeCli) -> None:
    client = RawClient(fake, "kilo", scenario="text")
    client.answer(client.request("initialize", {"protocolVersion": 1}))
    result = client.answer(client.request("session/new", {"cwd": str(fake.cwd), "mcpServers": []}))[
        "result"
    ]
    assert result["sessionId"].startswith("ses_") and "openCodeSessionId" not in result
    continuation = {"sessionId": result["sessionId"], "continuation": {}}
    answer = client.answer(client.request("_session/continue", continuation))
    assert answer["error"]["code"] == -32601
    assert client.close() == 0


@pytest.mark.rule("FAKE-SCENARIO-001")
@pytest.mark.parametrize(
    ("option", "value"),
    [("history", "lost"), ("evidence", "none"), ("advertise", "1"), ("repeat", 1)],
)
def test_a_bad_compaction_option_is_named(fake: FakeCli, option: str, value: Any) -> None:
    path = fake.scenario_file("bad", [{"kind": "compaction", option: value}])
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert "$.steps[0]" in str(info.value)


@pytest.mark.rule("FAKE-ACP-013")
def test_pid_liveness_sees_this_process_and_not_a_reaped_one() -> None:
    import subprocess
    import sys

    from fake_clis.acp.continuation import pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    assert pid_alive(os.getpid()) is True
    assert pid_alive(child.pid) is False


@pytest.mark.rule("FAKE-ACP-013")
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_pid_liveness_counts_an_unreaped_exited_process_as_gone() -> None:
    import subprocess
    import sys

    from fake_clis.acp.continuation import pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    # Wait for the exit but leave the child unreaped (a zombie) until the end.
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
    try:
        assert pid_alive(child.pid) is False
    finally:
        child.wait(timeout=30)


@pytest.mark.rule("FAKE-ACP-007", "FAKE-ACP-013")
def test_a_cancel_stops_the_continuation(fake: FakeCli) -> None:
    steps = json.loads(Path(load_scenario("compaction").source).read_text(encoding="utf-8"))
    at = next(i for i, s in enumerate(steps["steps"]) if s["kind"] == "compaction")
    steps["steps"].insert(at + 1, {"kind": "sleep", "ms": 20_000})
    scenario = fake.scenario_file("compaction_slow", steps["steps"])
    first = Interrupted(fake, scenario)
    first.proc.close()
    second = Amr(fake, scenario, "second")
    second.initialize()
    loaded = second.call("session/load", second.session_params(sessionId=first.durable))
    acp_id = loaded["result"]["sessionId"]
    rid = second.client.request(
        "_session/continue", {"sessionId": acp_id, "continuation": first.cursor}
    )
    second.sent[rid] = "_session/continue"
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": acp_id}}
    second.client.send(cancel)
    answer = second.client.answer(rid)
    assert answer["result"] == {"stopReason": "cancelled"}
    assert "Recovered and finished." not in texts(second)
    second.close()
    assert second.record()["cancels"] == [acp_id]
    assert second.schema_problems() == []
