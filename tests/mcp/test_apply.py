"""Applying a plan on a real filesystem (MCP-MANAGED-001/002/003; seed 002 §8.1).

Security property (hypothesis): whatever the cwd's shape (``..``, ``.``, symlinks out of and
within the root, equal to the root, missing dirs) and whatever sits at ``.mcp.json`` (a file, a
symlink out), applying and then restoring a plan never changes anything outside the real
managed root, never writes through a symlink, and restores the tree exactly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.defs.types import McpInjection
from harness.mcp.apply import McpApplyError, apply_injection, restore_injection
from harness.mcp.inject import FileWrite, InjectionPlan, plan_injection
from harness.mcp.journal import JOURNAL_NAME
from harness.mcp.servers import McpServerConfig
from tests.mcp._support import (
    ENV_SECRET,
    STDIO_ENTRY,
    TOKENS,
    all_servers,
    assert_no_secret,
    builtin_with,
    servers,
)

CLAUDE = builtin_with(McpInjection.CLAUDE_MCP_JSON)


def _plan(
    cwd: Path | str, root: Path | str, chosen: tuple[McpServerConfig, ...] | None = None
) -> InjectionPlan:
    return plan_injection(
        CLAUDE,
        all_servers() if chosen is None else chosen,
        TOKENS,
        cwd=str(cwd),
        managed_projects_root=str(root),
    )


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "projects"
    project = root / "p1"
    outside = tmp_path / "outside"
    project.mkdir(parents=True)
    outside.mkdir()
    (outside / ".mcp.json").write_text("USER OWNED\n")
    (outside / "target.json").write_text("TARGET\n")
    return {"root": root, "project": project, "outside": outside, "tmp": tmp_path}


@pytest.mark.rule("MCP-MANAGED-001")
def test_writes_the_planned_file_privately(layout: dict[str, Path]) -> None:
    plan = _plan(layout["project"], layout["root"])
    applied = apply_injection(plan)
    target = layout["project"] / ".mcp.json"
    assert applied.written == (str(target),)
    assert target.read_text("utf-8") == plan.writes[0].content
    assert json.loads(target.read_text("utf-8"))["mcpServers"]["github"]["env"] == {
        "GITHUB_TOKEN": ENV_SECRET
    }
    if os.name == "posix":
        assert stat.S_IMODE(target.stat().st_mode) == 0o600  # holds env values and tokens
    # No temp left; the restore journal (SIG-JOURNAL-001) is there until the restore.
    names = sorted(p.name for p in layout["project"].iterdir())
    assert names == [".harness-mcp-journal.json", ".mcp.json"]
    assert_no_secret(repr(applied))
    restore_injection(applied)
    assert sorted(p.name for p in layout["project"].iterdir()) == []


@pytest.mark.rule("MCP-MANAGED-001")
def test_restore_puts_back_the_previous_state(layout: dict[str, Path]) -> None:
    target = layout["project"] / ".mcp.json"
    applied = apply_injection(_plan(layout["project"], layout["root"]))
    restore_injection(applied)
    assert not target.exists()
    target.write_text("OLD\n")
    applied = apply_injection(_plan(layout["project"], layout["root"]))
    assert target.read_text() != "OLD\n"
    restore_injection(applied)
    assert target.read_text() == "OLD\n"


@pytest.mark.rule("MCP-MANAGED-002")
def test_a_stale_file_is_removed_when_no_server_is_enabled(layout: dict[str, Path]) -> None:
    target = layout["project"] / ".mcp.json"
    target.write_text('{"mcpServers": {"old": {"command": "x"}}}\n')
    disabled = servers({**STDIO_ENTRY, "enabled": False})
    applied = apply_injection(_plan(layout["project"], layout["root"], disabled))
    assert applied.removed == (str(target),) and not target.exists()
    restore_injection(applied)
    assert target.exists()
    target.unlink()
    assert apply_injection(_plan(layout["project"], layout["root"], disabled)).removed == ()


@pytest.mark.rule("MCP-MANAGED-002")
def test_a_user_repo_file_is_never_removed(layout: dict[str, Path]) -> None:
    disabled = servers({**STDIO_ENTRY, "enabled": False})
    applied = apply_injection(_plan(layout["outside"], layout["root"], disabled))
    assert applied.removed == () and (layout["outside"] / ".mcp.json").read_text() == "USER OWNED\n"


@pytest.mark.rule("MCP-MANAGED-003")
@pytest.mark.posix
def test_a_symlinked_mcp_json_is_refused_for_write_and_remove(layout: dict[str, Path]) -> None:
    link = layout["project"] / ".mcp.json"
    link.symlink_to(layout["outside"] / "target.json")
    with pytest.raises(McpApplyError, match="symbolic link") as info:
        apply_injection(_plan(layout["project"], layout["root"]))
    assert info.value.rule == "MCP-MANAGED-003" and str(link) in str(info.value)
    disabled = servers({**STDIO_ENTRY, "enabled": False})
    with pytest.raises(McpApplyError, match="symbolic link"):
        apply_injection(_plan(layout["project"], layout["root"], disabled))
    assert link.is_symlink() and (layout["outside"] / "target.json").read_text() == "TARGET\n"


@pytest.mark.rule("MCP-MANAGED-003")
@pytest.mark.posix
def test_a_project_dir_symlinked_out_of_the_root_is_refused(layout: dict[str, Path]) -> None:
    escape = layout["root"] / "linked"
    escape.symlink_to(layout["outside"], target_is_directory=True)
    plan = _plan(escape, layout["root"])
    assert plan.writes  # lexically inside: only the real-path check can catch it
    with pytest.raises(McpApplyError, match="not strictly inside"):
        apply_injection(plan)
    assert (layout["outside"] / ".mcp.json").read_text() == "USER OWNED\n"
    assert sorted(p.name for p in layout["outside"].iterdir()) == [".mcp.json", "target.json"]


@pytest.mark.rule("MCP-MANAGED-003")
@pytest.mark.posix
def test_a_project_symlinked_to_the_root_itself_is_refused(layout: dict[str, Path]) -> None:
    to_root = layout["root"] / "self"
    to_root.symlink_to(layout["root"], target_is_directory=True)
    with pytest.raises(McpApplyError, match="not strictly inside"):
        apply_injection(_plan(to_root, layout["root"]))
    assert not (layout["root"] / ".mcp.json").exists()


@pytest.mark.rule("MCP-MANAGED-001")
@pytest.mark.posix
def test_a_symlinked_root_and_an_internal_link_are_fine(layout: dict[str, Path]) -> None:
    alias = layout["tmp"] / "alias"
    alias.symlink_to(layout["root"], target_is_directory=True)
    apply_injection(_plan(alias / "p1", alias))
    inner = layout["root"] / "inner"
    inner.symlink_to(layout["project"], target_is_directory=True)
    apply_injection(_plan(inner, layout["root"]))
    assert (layout["project"] / ".mcp.json").is_file()


@pytest.mark.rule("MCP-MANAGED-003")
def test_tampered_plans_are_refused(layout: dict[str, Path]) -> None:
    plan = _plan(layout["project"], layout["root"])
    content = plan.writes[0].content
    cases = [
        dataclasses.replace(plan, writes=(FileWrite(str(layout["project"] / "x.json"), content),)),
        dataclasses.replace(plan, managed_root=None),
        dataclasses.replace(
            plan, writes=(FileWrite(str(layout["outside"] / ".mcp.json"), content),)
        ),
        dataclasses.replace(plan, writes=(FileWrite(str(layout["root"] / ".mcp.json"), content),)),
        dataclasses.replace(plan, writes=(), removals=(str(layout["outside"] / ".mcp.json"),)),
        dataclasses.replace(
            plan, writes=(FileWrite(str(layout["root"] / "nope" / ".mcp.json"), content),)
        ),
    ]
    for tampered in cases:
        with pytest.raises(McpApplyError):
            apply_injection(tampered)
    assert (layout["outside"] / ".mcp.json").read_text() == "USER OWNED\n"
    assert not (layout["root"] / ".mcp.json").exists()


@pytest.mark.rule("MCP-MANAGED-003")
def test_a_directory_named_mcp_json_is_refused(layout: dict[str, Path]) -> None:
    (layout["project"] / ".mcp.json").mkdir()
    with pytest.raises(McpApplyError, match="not a regular file"):
        apply_injection(_plan(layout["project"], layout["root"]))


@pytest.mark.rule("MCP-ENV-001")
def test_apply_returns_only_the_variables_to_set(layout: dict[str, Path]) -> None:
    opencode = builtin_with(McpInjection.OPENCODE_ENV_CONTENT)
    plan = plan_injection(
        opencode, all_servers(), TOKENS, cwd=str(layout["project"]), managed_projects_root=None
    )
    assert set(apply_injection(plan).env) == {"OPENCODE_CONFIG_CONTENT"}
    empty = plan_injection(
        opencode, (), None, cwd=str(layout["project"]), managed_projects_root=None
    )
    assert dict(apply_injection(empty).env) == {}


# -- the security property -------------------------------------------------------------------

_SEGMENTS = ["projects", "p1", "link-out", "link-in", "evil", "outside", "..", ".", "missing"]


def _snapshot(base: Path) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(base))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", "")
            else:
                out[rel] = ("file", path.read_text("utf-8"))
    return out


def _build(base: Path, mcp_json_is_link: bool) -> None:
    (base / "projects" / "p1").mkdir(parents=True)
    (base / "outside").mkdir()
    (base / "outside" / ".mcp.json").write_text("USER OWNED\n")
    (base / "outside" / "target.json").write_text("TARGET\n")
    (base / "projects" / "link-out").symlink_to(base / "outside", target_is_directory=True)
    (base / "projects" / "link-in").symlink_to(base / "projects" / "p1", target_is_directory=True)
    (base / "projects" / "p1" / "evil").symlink_to(base / "outside", target_is_directory=True)
    (base / "link-root").symlink_to(base / "projects", target_is_directory=True)
    if mcp_json_is_link:
        (base / "projects" / "p1" / ".mcp.json").symlink_to(base / "outside" / "target.json")


@pytest.mark.rule("MCP-MANAGED-003", "MCP-MANAGED-001", "SIG-JOURNAL-001")
@pytest.mark.posix
@settings(max_examples=100)
@given(
    segments=st.tuples(
        st.sampled_from(["projects", "link-root", "outside", "..", "."]),
        st.lists(st.sampled_from(_SEGMENTS), max_size=4),
    ).map(lambda t: [t[0], *t[1]]),
    root_name=st.sampled_from(["projects", "projects/", "link-root", "projects/p1/.."]),
    mcp_json_is_link=st.booleans(),
    enabled=st.booleans(),
)
# Pinned shapes: each escape route, the root itself, and the legitimate ones.
@example(["projects", "link-out"], "projects", False, True)
@example(["projects", "link-out"], "projects", False, False)
@example(["projects", "p1", "evil"], "link-root", False, True)
@example(["link-root", "link-out"], "projects", False, True)
@example(["projects", "p1", "evil", "..", "p1"], "projects", False, True)
@example(["projects"], "projects/", False, True)
@example(["projects", "p1", ".."], "projects/p1/..", False, False)
@example(["projects", "p1"], "projects", True, True)
@example(["projects", "p1"], "projects", True, False)
@example(["projects", "link-in"], "link-root", False, True)
@example(["outside"], "projects", False, False)
def test_nothing_outside_the_real_managed_root_ever_changes(
    segments: list[str], root_name: str, mcp_json_is_link: bool, enabled: bool
) -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(os.path.realpath(temp))
        _build(base, mcp_json_is_link)
        before = _snapshot(base)
        cwd = os.path.join(str(base), *segments) if segments else str(base)
        chosen = servers({**STDIO_ENTRY, "enabled": enabled})
        plan = _plan(cwd, os.path.join(str(base), root_name), chosen)
        try:
            applied = apply_injection(plan)
        except McpApplyError as exc:
            assert_no_secret(str(exc))
            assert _snapshot(base) == before
            return
        after = _snapshot(base)
        real_root = base / "projects"
        for rel in set(before) | set(after):
            if before.get(rel) == after.get(rel):
                continue
            changed = base / rel
            # the injected file, and beside it the run's restore journal (SIG-JOURNAL-001)
            assert changed.name in (".mcp.json", JOURNAL_NAME), rel
            assert not changed.is_symlink()
            real_dir = Path(os.path.realpath(changed.parent))
            assert real_root in real_dir.parents, (rel, cwd)
        restore_injection(applied)
        assert _snapshot(base) == before
