"""The plugin as adapter authors use it: throwaway pytest projects run with ``pytester``.

One project is the documented example (``docs/adapter-author-example/``), run against the
fake claude; the others each break one thing (a wrong argv, an unknown rule id, a bad def
file, a leaked process, a stale snapshot) and check that the plugin says so, by rule.
Projects load the plugin by module (``-p conformance.pytest_plugin``) after blocking the
entry point's name, so they behave the same whether or not the entry point is installed.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

# Imported here, before any in-process pytester run: pytester restores ``sys.modules`` after
# each run, so a module first imported inside a run is imported afresh by the next one.
# Fresh asyncio modules would pair with the C ``_asyncio`` module's first CancelledError
# class (wait_for then leaks CancelledError), and a fresh check module would register its
# checks a second time in the surviving registry of ``conformance.checks``.
import conformance.checks.defs
import conformance.checks.runs  # noqa: F401
import harness.recording.replay
import harness.runner  # noqa: F401
from conformance.snapshots import HEADER_LINE, parse_event_lines
from tests.support.processes import pid_alive

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "adapter-author-example"
PLUGIN = (
    "-p",
    "no:adapter_harness",
    "-p",
    "conformance.pytest_plugin",
    "-p",
    "no:cacheprovider",
    # The module is imported already (by this file), so pytest cannot rewrite its asserts.
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*PLUGIN, *args)


def write(pytester: pytest.Pytester, name: str, text: str) -> Path:
    path = pytester.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def copy_example(pytester: pytest.Pytester) -> int:
    """Copy the example project; the number of tests it holds."""
    test_text = (EXAMPLE / "test_my_adapter.py").read_text(encoding="utf-8")
    (pytester.path / "test_my_adapter.py").write_text(test_text, encoding="utf-8")
    adapter = (EXAMPLE / "my_adapter.py").read_text(encoding="utf-8")
    (pytester.path / "my_adapter.py").write_text(adapter, encoding="utf-8")
    return len(re.findall(r"^def test_", test_text, flags=re.MULTILINE))


def output(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines + result.errlines)


def expect(result: pytest.RunResult, **outcomes: int) -> None:
    """``assert_outcomes``, but a mismatch shows the inner session's whole output."""
    try:
        result.assert_outcomes(**outcomes)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- inner pytest output ---\n{output(result)}") from None


# ------------------------------------------------------------------------------ the example


@pytest.mark.rule(
    "PLUGIN-DEF-001",
    "PLUGIN-FAKE-001",
    "PLUGIN-RUN-001",
    "PLUGIN-REPLAY-001",
    "PLUGIN-MARK-002",
    "PLUGIN-SNAP-001",
    "PLUGIN-SNAP-002",
)
def test_the_example_passes_against_the_fake_claude(pytester: pytest.Pytester) -> None:
    count = copy_example(pytester)
    first = run(
        pytester,
        "--adapter-def",
        "my_adapter.py",
        "--snapshot-update",
        f"--basetemp={pytester.path / 'run-1'}",
    )
    expect(first, passed=count)
    snap = pytester.path / "__snapshots__" / "test_my_adapter" / "test_a_happy_run.jsonl"
    text = snap.read_text(encoding="utf-8")
    assert text.startswith(HEADER_LINE + "\n")
    events = parse_event_lines(text)
    # The happy scenario, normalized: the session id, the cwd and the duration are
    # placeholders; the machine's directories appear nowhere.
    assert events[0]["type"] == "status"
    assert events[0]["session_id"] == "<uuid-1>"
    tool = next(e for e in events if e["type"] == "tool_use")
    assert tool["input"]["file_path"] == "{cwd}/hello.html"
    usage = next(e for e in events if e["type"] == "usage")
    assert usage["duration_ms"] == "<ms>"
    assert "".join(e["delta"] for e in events if e["type"] == "text_delta") == (
        "I'll create the page.Done: hello.html is ready."
    )
    assert str(pytester.path) not in text
    # A second run in other directories, with new session ids, matches the snapshot.
    second = run(pytester, "--adapter-def", "my_adapter.py", f"--basetemp={pytester.path / 'b'}")
    expect(second, passed=count)
    assert snap.read_text(encoding="utf-8") == text


@pytest.mark.rule("PLUGIN-MARK-002", "PLUGIN-FAKE-001")
def test_a_def_with_a_wrong_argv_fails_naming_the_rule(pytester: pytest.Pytester) -> None:
    copy_example(pytester)
    adapter = pytester.path / "my_adapter.py"
    good = adapter.read_text(encoding="utf-8")
    bad = good.replace("return [*args, *HEADLESS]", 'return [*args, "--yolo", *HEADLESS]')
    assert bad != good
    adapter.write_text(bad, encoding="utf-8")
    result = run(pytester, "--adapter-def", "my_adapter.py", "-k", "happy_run")
    expect(result, failed=1)
    text = output(result)
    assert "adapter-harness rules" in text
    assert "RUN-HAPPY-TEXT-001 failed [mandatory; seed 002 §7.1]" in text
    assert "RUN-HAPPY-FILE-001 failed" in text
    assert "unknown option '--yolo'" in text
    assert "reproduce: python -m pytest test_my_adapter.py::test_a_happy_run" in text


@pytest.mark.rule("PLUGIN-REPRO-001", "PLUGIN-MARK-002")
def test_the_reproduce_command_runs_from_the_directory_pytest_started_in(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rootdir (its pytest.ini) is above the tests; pytest starts in their folder."""
    copy_example(pytester)
    sub = pytester.path / "adapters"
    sub.mkdir()
    for name in ("test_my_adapter.py", "my_adapter.py"):
        (pytester.path / name).rename(sub / name)
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    adapter = sub / "my_adapter.py"
    good = adapter.read_text(encoding="utf-8")
    adapter.write_text(
        good.replace("return [*args, *HEADLESS]", 'return [*args, "--yolo", *HEADLESS]'),
        encoding="utf-8",
    )
    monkeypatch.chdir(sub)
    result = run(pytester, "--adapter-def", "my_adapter.py", "-k", "happy_run")
    expect(result, failed=1)
    text = output(result)
    command = "python -m pytest test_my_adapter.py::test_a_happy_run --adapter-def my_adapter.py"
    assert f"reproduce: {command}" in text  # the node id says adapters/test_my_adapter.py


@pytest.mark.rule("PLUGIN-MARK-002")
def test_a_marked_rule_fails_a_test_whose_body_passed(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "my_adapter.py",
        (EXAMPLE / "my_adapter.py")
        .read_text(encoding="utf-8")
        .replace("return [*args, *HEADLESS]", 'return [*args, "--yolo", *HEADLESS]'),
    )
    write(
        pytester,
        "test_marked.py",
        """
        import pytest

        @pytest.mark.adapter_rule("RUN-HAPPY-TEXT-001")
        def test_marked(run_agent):
            run_agent(scenario="happy")

        def test_unmarked(run_agent):
            run_agent(scenario="happy")

        @pytest.mark.adapter_rule("RUN-HAPPY-TEXT-001")
        def test_marked_but_not_applicable(run_agent):
            run_agent(scenario="api_error")
        """,
    )
    result = run(pytester, "--adapter-def", "my_adapter.py")
    expect(result, failed=1, passed=2)
    text = output(result)
    assert "FAILED test_marked.py::test_marked - Failed: RUN-HAPPY-TEXT-001 failed" in text
    assert "the run's text differs from the scenario's text" in text


# ------------------------------------------------------------------------------ the marker


@pytest.mark.rule("PLUGIN-MARK-001")
def test_an_unknown_adapter_rule_id_is_a_collection_error(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "test_ids.py",
        """
        import pytest

        @pytest.mark.adapter_rule("RUN-HAPPY-TEXT-001")
        def test_known():
            pass

        @pytest.mark.adapter_rule("NOPE-RULE-999")
        def test_unknown():
            pass

        @pytest.mark.adapter_rule()
        def test_empty():
            pass
        """,
    )
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    expect(result, errors=1)
    text = output(result)
    assert "ERROR collecting test_ids.py" in text
    assert "test_ids.py::test_unknown: unknown adapter_rule id 'NOPE-RULE-999'" in text
    assert "test_ids.py::test_empty: @pytest.mark.adapter_rule() names no rule id" in text
    assert "test_known:" not in text


@pytest.mark.rule("PLUGIN-MARK-001")
def test_known_ids_collect_cleanly(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "test_ids.py",
        """
        import pytest

        pytestmark = pytest.mark.adapter_rule("EVENT-SCHEMA-001")

        class TestGroup:
            @pytest.mark.adapter_rule("RUN-HAPPY-TEXT-001", "PLUGIN-LEAK-001")
            def test_known(self):
                pass
        """,
    )
    result = run(pytester, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK


# ------------------------------------------------------------------------------ options, defs


@pytest.mark.rule("PLUGIN-ENTRY-001")
def test_options_form_one_prefixed_group(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    assert result.ret == pytest.ExitCode.OK
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("adapter-harness:"))
    group: list[str] = []
    for line in lines[start + 1 :]:
        if line and not line.startswith(" "):
            break
        group.append(line)
    flags = [m.group(1) for line in group if (m := re.match(r"\s+(--[\w-]+)", line))]
    assert flags == ["--adapter-def", "--adapter-agent", "--adapter-fake-as"]
    everywhere = {m.group(1) for line in lines for m in re.finditer(r"(--adapter-[\w-]+)", line)}
    assert everywhere == set(flags)


@pytest.mark.rule("PLUGIN-DEF-001")
def test_a_bad_def_file_stops_the_session_naming_each_field(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "bad_def.py",
        """
        from harness.defs.types import AgentDef, PromptDelivery

        AGENT_DEF = AgentDef(
            id="my-bad",
            name="Bad",
            bin="my-bad",
            build_args=lambda *a: [],
            stream_format="nope-json",
            prompt_delivery=PromptDelivery.ARGV,
        )
        """,
    )
    write(pytester, "test_x.py", "def test_x(agent_def):\n    pass\n")
    result = run(pytester, "--adapter-def", "bad_def.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = output(result)
    assert "--adapter-def bad_def.py is not a valid def file (DEFCHECK-LOAD-001)" in text
    assert "AGENT_DEF.stream_format: unknown stream format 'nope-json'" in text
    assert "AGENT_DEF.max_prompt_arg_bytes" in text


@pytest.mark.rule("PLUGIN-DEF-001")
def test_builtin_ids_missing_defs_and_unknown_ids(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "test_x.py",
        """
        def test_x(agent_def):
            assert agent_def.id == "claude"
        """,
    )
    expect(run(pytester, "--adapter-agent", "claude"), passed=1)
    unknown = run(pytester, "--adapter-agent", "nope")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown agent id 'nope'; known ids: amr, claude" in output(unknown)
    missing = run(pytester)
    expect(missing, errors=1)
    assert "no def under test: run pytest with --adapter-def PATH.py" in output(missing)
    wrong_fake = run(pytester, "--adapter-agent", "claude", "--adapter-fake-as", "nope")
    assert wrong_fake.ret == pytest.ExitCode.USAGE_ERROR
    assert "--adapter-fake-as 'nope': no fake emulator by that id" in output(wrong_fake)


@pytest.mark.rule("PLUGIN-DEF-002", "PLUGIN-RUN-001", "PLUGIN-FAKE-001")
def test_an_author_fixture_def_is_validated_before_use(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "test_bad_fixture.py",
        """
        import dataclasses
        import pytest
        from harness.defs.registry import get_agent_def

        @pytest.fixture
        def agent_def():
            return dataclasses.replace(
                get_agent_def("claude"), id="mine", bin="mine", prompt_delivery="stdin"
            )

        def test_uses_the_fake(fake_cli):
            fake_cli("happy")
        """,
    )
    write(
        pytester,
        "test_good_fixture.py",
        """
        import dataclasses
        import pytest
        from harness.defs.registry import get_agent_def

        @pytest.fixture
        def agent_def():
            return dataclasses.replace(get_agent_def("claude"), id="mine", bin="mine")

        def test_runs(run_agent):
            result = run_agent(scenario="happy")
            assert result.succeeded, result.error
            assert result.agent_id == "mine"
            assert run_agent.last.fake.emulator == "claude"
            assert run_agent.last.fake.executable.name.startswith("mine")
            assert run_agent.last.request.cwd == str(run_agent.last.fake.cwd)

        def test_refuses_unknown_overrides(run_agent):
            with pytest.raises(TypeError, match=r"\\['bogus', 'env'\\]"):
                run_agent(bogus=1, env={})

        def test_bad_scenario(fake_cli):
            fake_cli("no-such-scenario")
        """,
    )
    result = run(pytester)
    expect(result, passed=2, failed=1, errors=1)
    text = output(result)
    assert "agent_def is not a valid def (PLUGIN-DEF-002)" in text
    assert "agent_def.prompt_delivery: must be PromptDelivery.STDIN" in text
    assert "scenario: " in text and "no-such-scenario" in text


# ------------------------------------------------------------------------------ processes


@pytest.mark.rule("PLUGIN-LEAK-001")
def test_a_process_left_behind_fails_the_test_and_is_killed(pytester: pytest.Pytester) -> None:
    write(
        pytester,
        "test_leaks.py",
        """
        import subprocess
        import sys
        from pathlib import Path

        SLEEP = "import time; time.sleep(120)"
        HERE = Path(__file__).parent

        def test_child_left_running(fake_cli):
            fake = fake_cli("happy")
            proc = subprocess.Popen([sys.executable, "-c", SLEEP], env=fake.env)
            (HERE / "child.pid").write_text(str(proc.pid))

        def test_orphan_left_running(fake_cli):
            fake = fake_cli("happy")
            spawn = (
                "import subprocess, sys; "
                f"p = subprocess.Popen([sys.executable, '-c', {SLEEP!r}], "
                "start_new_session=True, stdout=subprocess.DEVNULL, "
                "stderr=subprocess.DEVNULL); print(p.pid)"
            )
            out = subprocess.run(
                [sys.executable, "-c", spawn], env=fake.env, capture_output=True, text=True
            )
            (HERE / "orphan.pid").write_text(out.stdout.strip())

        def test_waited_for(fake_cli):
            fake = fake_cli("happy")
            subprocess.run([sys.executable, "-c", "pass"], env=fake.env, check=True)

        def test_runner_reaps_a_hung_tree(run_agent):
            result = run_agent(scenario="spawn_tree", inactivity_timeout_ms=1000)
            assert not result.succeeded
        """,
    )
    result = run(pytester, "--adapter-agent", "claude")
    expect(result, failed=2, passed=2)
    text = output(result)
    for name in ("child", "orphan"):
        pid = int((pytester.path / f"{name}.pid").read_text())
        assert f"pid {pid}: " in text
        assert not pid_alive(pid), f"the leaked {name} {pid} is still running"
    # One report section per leaking test; the short summary may repeat the
    # message (its width depends on the terminal), so count section heads only.
    heads = [
        line
        for line in text.splitlines()
        if line.startswith("PLUGIN-LEAK-001: the test left processes running (now killed)")
    ]
    assert len(heads) == 2


# ------------------------------------------------------------------------------ snapshots

SNAPSHOT_TEST = """
from harness.events import Status, TextDelta, Usage

TEXT = "hello"

def test_events(snapshot_events, tmp_path):
    events = [
        Status(label="initializing", session_id="0b7e6f3a-2c1d-4e5f-8a9b-0c1d2e3f4a5b"),
        TextDelta(delta=TEXT + " " + str(tmp_path / "adapter-harness" / "cwd" / "a.txt")),
        Usage(usage={"input_tokens": 1}, duration_ms=12.5),
    ]
    assert snapshot_events == events
"""

EXPECTED_SNAPSHOT = "\n".join(
    [
        HEADER_LINE,
        '{"type": "status", "label": "initializing", "session_id": "<uuid-1>"}',
        '{"type": "text_delta", "delta": "hello {cwd}/a.txt"}',
        '{"type": "usage", "usage": {"input_tokens": 1}, "duration_ms": "<ms>"}',
        "",
    ]
)


@pytest.mark.rule("PLUGIN-SNAP-001", "PLUGIN-SNAP-003")
def test_snapshot_write_match_update_taint_and_unused(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under xdist the inner in-process session would inherit the worker's env and leave
    # unused-snapshot detection to a controller that does not exist.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        monkeypatch.delenv(name, raising=False)
    test_file = write(pytester, "test_snap.py", SNAPSHOT_TEST)
    snap = pytester.path / "__snapshots__" / "test_snap" / "test_events.jsonl"

    # Missing: the assertion fails until --snapshot-update writes a readable file.
    expect(run(pytester), failed=1)
    expect(run(pytester, "--snapshot-update"), passed=1)
    assert snap.read_text(encoding="utf-8") == EXPECTED_SNAPSHOT
    # A second run, in other directories, passes.
    expect(run(pytester, f"--basetemp={pytester.path / 'other'}"), passed=1)

    # A changed stream fails with a line diff; --snapshot-update rewrites the file.
    test_file.write_text(SNAPSHOT_TEST.replace('"hello"', '"bye"'), encoding="utf-8")
    changed = run(pytester)
    expect(changed, failed=1)
    assert "hello {cwd}/a.txt" in output(changed) and "bye {cwd}/a.txt" in output(changed)
    expect(run(pytester, "--snapshot-update"), passed=1)
    assert snap.read_text(encoding="utf-8") == EXPECTED_SNAPSHOT.replace("hello", "bye")

    # Another format version: tainted, regenerated on update, never a crash.
    snap.write_text(
        EXPECTED_SNAPSHOT.replace('"version": 1', '"version": 0').replace("hello", "bye"),
        encoding="utf-8",
    )
    tainted = run(pytester)
    expect(tainted, failed=1)
    assert "This snapshot needs to be regenerated" in output(tainted)
    expect(run(pytester, "--snapshot-update"), passed=1)
    assert snap.read_text(encoding="utf-8").startswith(HEADER_LINE + "\n")

    # Unused: a test of the file still asserts its own snapshot, the old one is asserted by no
    # test any more; the session fails until an update deletes it. (syrupy discovers a file's
    # snapshots through the assertions made in it on every version we support; a file that
    # asserts nothing at all is searched only by syrupy 7.)
    kept = "\n\ndef test_kept(snapshot_events):\n    assert snapshot_events == []\n"
    test_file.write_text(test_file.read_text(encoding="utf-8") + kept, encoding="utf-8")
    expect(run(pytester, "--snapshot-update"), passed=2)
    test_file.write_text(kept.lstrip(), encoding="utf-8")
    unused = run(pytester)
    expect(unused, passed=1)
    assert unused.ret != pytest.ExitCode.OK
    assert "1 snapshot unused" in output(unused)
    updated = run(pytester, "--snapshot-update")
    assert updated.ret == pytest.ExitCode.OK
    assert not snap.exists()
    assert snap.with_name("test_kept.jsonl").exists()
