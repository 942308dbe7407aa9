"""RUN-FILES-001, RUN-ARTIFACTS-001: files a run wrote, and plain-stream artifacts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from harness.events import Artifact, Event, TextDelta
from harness.runner import RunOutcome, RunResult, run_agent, run_agent_async
from harness.runner.snapshot import changed_paths, snapshot_tree
from tests.runner.conftest import FakeWorld

PAGE = "<!doctype html>\n<h1>Landing</h1>\n"


def artifact_text(identifier: str, body: str = PAGE) -> str:
    opener = f'<artifact identifier="{identifier}" type="text/html">'
    return f"Here it is.\n{opener}\n{body}</artifact>\n"


@pytest.mark.rule("RUN-FILES-001")
def test_snapshot_diff_reports_new_and_changed_files_only(tmp_path: Path) -> None:
    (tmp_path / "same.txt").write_text("x", encoding="utf-8")
    (tmp_path / "edit.txt").write_text("old", encoding="utf-8")
    (tmp_path / ".git").mkdir()
    before, truncated = snapshot_tree(str(tmp_path))
    assert not truncated
    (tmp_path / "edit.txt").write_text("new content", encoding="utf-8")
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "sub" / "deep" / "new.md").write_text("# hi", encoding="utf-8")
    (tmp_path / ".git" / "index").write_text("vcs", encoding="utf-8")
    after, _ = snapshot_tree(str(tmp_path))
    assert changed_paths(before, after) == ["edit.txt", "sub/deep/new.md"]


@pytest.mark.rule("RUN-FILES-001")
def test_snapshot_is_bounded(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("x", encoding="utf-8")
    entries, truncated = snapshot_tree(str(tmp_path), max_entries=10)
    assert truncated and len(entries) == 10


@pytest.mark.rule("RUN-FILES-001")
def test_a_run_reports_the_files_it_wrote(world: FakeWorld) -> None:
    project = world.project()
    (project / "keep.txt").write_text("untouched", encoding="utf-8")
    (project / "hello.html").write_text("an older page", encoding="utf-8")
    scenario = world.scenario_file(
        "two_files",
        [
            {"kind": "tool", "tool": "write", "path": "hello.html", "content": "<p>new</p>\n"},
            {"kind": "tool", "tool": "write", "path": "pages/about.html", "content": "<p>a</p>\n"},
            {"kind": "text", "text": "Wrote two files."},
            {"kind": "usage", "input_tokens": 1, "output_tokens": 1},
        ],
    )
    result = run_agent(world.request("claude", scenario, cwd=project))
    assert result.succeeded, result.error
    assert result.files_written == ("hello.html", "pages/about.html")
    assert not result.files_truncated


@pytest.mark.rule("RUN-ARTIFACTS-001")
def test_plain_artifact_is_written_and_named_against_existing_files(world: FakeWorld) -> None:
    """qwen writes hello.html itself, then answers with it as an artifact: the block gets -2."""
    project = world.project()
    html = "<!doctype html>\n<h1>Hello</h1>\n"
    scenario = world.scenario_file(
        "echo",
        [
            {"kind": "tool", "tool": "write", "path": "hello.html", "content": html},
            {"kind": "text", "text": artifact_text("hello", html)},
        ],
    )
    result = run_agent(world.request("qwen", scenario, cwd=project))
    assert result.succeeded, result.error
    artifacts = [e for e in result.events if isinstance(e, Artifact)]
    assert [(a.name, a.path, a.artifact_type) for a in artifacts] == [
        ("hello-2.html", "hello-2.html", "text/html")
    ]
    assert result.artifacts_written == ("hello-2.html",)
    assert set(result.files_written) == {"hello.html", "hello-2.html"}
    # The block's content, verbatim (it starts after the opening tag's ">").
    written = (project / "hello-2.html").read_text(encoding="utf-8")
    assert written == "\n" + (project / "hello.html").read_text(encoding="utf-8")


@pytest.mark.rule("RUN-ARTIFACTS-001")
def test_plain_artifact_names_cannot_leave_the_project(world: FakeWorld) -> None:
    project = world.project()
    scenario = world.scenario_file(
        "escape", [{"kind": "text", "text": artifact_text("../../escaped/../page")}]
    )
    outside = sorted(os.listdir(world.root))
    result = run_agent(world.request("qwen", scenario, cwd=project))
    assert result.succeeded, result.error
    (name,) = result.artifacts_written
    assert "/" not in name and "\\" not in name and name.endswith(".html")
    assert (project / name).read_text(encoding="utf-8") == "\n" + PAGE
    assert sorted(os.listdir(world.root)) == outside


@pytest.mark.rule("RUN-ARTIFACTS-001", "RUN-STATUS-001")
def test_artifacts_salvage_a_plain_run_that_exits_non_zero(world: FakeWorld) -> None:
    scenario = world.scenario_file(
        "salvage",
        [{"kind": "text", "text": artifact_text("landing")}, {"kind": "crash", "exit_code": 2}],
    )
    result = run_agent(world.request("qwen", scenario))
    assert result.exit_code == 2
    assert result.artifacts_written == ("landing.html",)
    assert result.status is RunOutcome.SUCCEEDED  # ref §10.1 rule 6


@pytest.mark.rule("RUN-ARTIFACTS-001", "RUN-CANCEL-ORDER-001")
def test_a_cancelled_plain_run_writes_no_artifact(world: FakeWorld) -> None:
    project = world.project()
    scenario = world.scenario_file(
        "cancelled_artifact", [{"kind": "text", "text": artifact_text("landing")}, {"kind": "hang"}]
    )

    async def main() -> RunResult:
        cancel = asyncio.Event()

        def on_event(event: Event) -> None:
            if isinstance(event, TextDelta) and "</artifact>" in event.delta:
                cancel.set()

        return await run_agent_async(
            world.request("qwen", scenario, cwd=project), on_event=on_event, cancel=cancel
        )

    result = asyncio.run(main())
    assert result.status is RunOutcome.CANCELLED
    assert result.artifacts_written == () and not (project / "landing.html").exists()
    # The block was still seen, and reported without a path.
    assert [(a.name, a.path) for a in result.events if isinstance(a, Artifact)] == [
        ("landing.html", None)
    ]
