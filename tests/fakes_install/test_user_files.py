"""USERFILE-FAKES-001, USERFILE-FAKES-002: ``harness fakes install DIR`` and a user's files.

A name in DIR is written only when it is free or holds a shim the installer wrote; a
symbolic link is never followed, a user's file never overwritten, and each name left
alone is named with its reason (exit 1). ``--agent`` writes only the names those agents
own in a full install.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import AgentDef
from harness.runtime import fakes_install
from harness.runtime.fakes_install import SHIM_MARKER, install_fakes, shim_text

RULE = "USERFILE-FAKES-001"
AGENT_RULE = "USERFILE-FAKES-002"
WIN_PYTHON = r"C:\py\python.exe"
USER_BYTES = b"#!/bin/sh\necho the user's own claude\n"

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symbolic links")


def _claude() -> list[AgentDef]:
    return [get_agent_def("claude", BUILTIN_DEFS)]


def _listing(root: Path) -> list[str]:
    return sorted(os.listdir(root))


@posix_only
@pytest.mark.rule(RULE)
def test_a_symlink_under_a_shim_name_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "precious"
    target.write_bytes(b"keep me\n")
    target.chmod(0o600)
    dest = tmp_path / "bin"
    dest.mkdir()
    (dest / "claude").symlink_to(target)
    report = install_fakes(dest, _claude(), platform="linux")
    assert target.read_bytes() == b"keep me\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert (dest / "claude").is_symlink() and os.readlink(dest / "claude") == str(target)
    assert report.kept == {str(dest / "claude"): "a symbolic link (not followed)"}
    assert sorted(Path(p).name for p in report.written) == ["openclaude"]
    assert _listing(dest) == ["claude", "openclaude"]  # no temp file left behind


@posix_only
@pytest.mark.rule(RULE)
def test_a_dangling_symlink_creates_nothing_at_its_target(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    dest.mkdir()
    nowhere = tmp_path / "elsewhere" / "claude"
    nowhere.parent.mkdir()
    (dest / "claude").symlink_to(nowhere)
    report = install_fakes(dest, _claude(), platform="linux")
    assert not nowhere.exists()
    assert str(dest / "claude") in report.kept


@pytest.mark.rule(RULE)
def test_a_users_file_is_kept_and_named(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    dest.mkdir()
    mine = dest / "claude"
    mine.write_bytes(USER_BYTES)
    (dest / "odd").mkdir()
    report = install_fakes(dest, _claude(), platform="linux")
    assert mine.read_bytes() == USER_BYTES
    assert report.kept == {str(mine): "a file harness fakes install did not write"}
    assert list(report.written.values()) == ["claude"]  # openclaude, free, is written


@pytest.mark.rule(RULE)
def test_a_directory_under_a_shim_name_is_kept(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    (dest / "openclaude").mkdir(parents=True)
    report = install_fakes(dest, _claude(), platform="linux")
    assert report.kept == {str(dest / "openclaude"): "not a regular file"}
    assert (dest / "openclaude").is_dir()


@pytest.mark.rule(RULE)
def test_its_own_shims_are_replaced_in_place(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    first = install_fakes(dest, _claude(), platform="linux", python="/old/python")
    again = install_fakes(dest, _claude(), platform="linux")
    assert not again.kept and sorted(again.written) == sorted(first.written)
    for path in again.written:
        assert Path(path).read_text(encoding="utf-8") == shim_text(
            "claude", sys.executable, "linux"
        )
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o755
        assert SHIM_MARKER in Path(path).read_text(encoding="utf-8").splitlines()[1]
    assert _listing(dest) == ["claude", "openclaude"]


@pytest.mark.rule(RULE)
def test_a_shim_written_before_the_marker_is_recognised(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    dest.mkdir()
    old = shim_text("claude", sys.executable, "linux").replace(f"# {SHIM_MARKER}\n", "")
    assert SHIM_MARKER not in old
    (dest / "claude").write_text(old, encoding="utf-8")
    cmd = shim_text("claude", WIN_PYTHON, "win32").replace(f"@rem {SHIM_MARKER}\r\n", "")
    (dest / "claude.cmd").write_bytes(cmd.encode("utf-8"))
    assert not install_fakes(dest, _claude(), platform="linux").kept
    win = install_fakes(dest, _claude(), platform="win32", python=WIN_PYTHON, launchers=("cmd",))
    assert not win.kept
    assert SHIM_MARKER in (dest / "claude").read_text(encoding="utf-8")
    assert SHIM_MARKER in (dest / "claude.cmd").read_text(encoding="utf-8")


@pytest.mark.rule(RULE)
def test_windows_files_its_own_are_replaced_and_a_users_exe_is_kept(tmp_path: Path) -> None:
    dest = tmp_path / "bin"
    install_fakes(dest, _claude(), platform="win32", python=WIN_PYTHON)
    users_exe = b"MZ\x90\x00 a real claude.exe"
    (dest / "openclaude.exe").write_bytes(users_exe)
    (dest / "claude.cmd").write_bytes(b"@echo the user's claude\r\n")
    report = install_fakes(dest, _claude(), platform="win32", python=WIN_PYTHON)
    assert sorted(Path(p).name for p in report.written) == ["claude.exe", "openclaude.cmd"]
    assert sorted(Path(p).name for p in report.kept) == ["claude.cmd", "openclaude.exe"]
    assert (dest / "openclaude.exe").read_bytes() == users_exe
    assert (dest / "claude.cmd").read_bytes() == b"@echo the user's claude\r\n"


@pytest.mark.rule(RULE)
def test_a_name_taken_while_installing_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name was free when looked at; the user's file arrives before the link."""
    dest = tmp_path / "bin"
    dest.mkdir()
    late = dest / "claude"

    def arrives_after_the_look(path: Path) -> str:
        if path == late:
            late.write_bytes(USER_BYTES)
        return fakes_install._ABSENT

    monkeypatch.setattr(fakes_install, "_inspect", arrives_after_the_look)
    report = install_fakes(dest, _claude(), platform="linux")
    assert late.read_bytes() == USER_BYTES
    assert report.kept == {str(late): "appeared while installing; left as it was"}
    assert _listing(dest) == ["claude", "openclaude"]


@posix_only
@pytest.mark.rule(RULE)
def test_dir_itself_may_be_a_symlink_to_a_directory(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles-bin"
    real.mkdir()
    (tmp_path / "bin").symlink_to(real)
    report = install_fakes(tmp_path / "bin", _claude(), platform="linux")
    assert not report.kept and _listing(real) == ["claude", "openclaude"]


@pytest.mark.rule(RULE)
def test_a_dir_that_is_a_file_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "bin"
    a_file.write_bytes(b"not a dir")
    assert main(["fakes", "install", str(a_file), "--agent", "claude"]) == 2
    err = capsys.readouterr().err
    assert f"cannot install the fakes into {str(a_file)!r}" in err
    assert a_file.read_bytes() == b"not a dir"


@pytest.mark.rule(RULE)
def test_the_command_names_each_kept_path_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "bin"
    dest.mkdir()
    (dest / "claude").write_bytes(USER_BYTES)
    assert main(["fakes", "install", str(dest), "--agent", "claude"]) == 1
    captured = capsys.readouterr()
    assert (
        f"harness: kept {dest / 'claude'}: a file harness fakes install did not write; "
        "not overwritten" in captured.err
    )
    assert "1 shims written" in captured.out and "1 existing files kept" in captured.out
    assert main(["fakes", "install", str(dest), "--agent", "claude", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert list(data["kept"]) == [str(dest / "claude")]
    assert (dest / "claude").read_bytes() == USER_BYTES
    (dest / "claude").unlink()
    assert main(["fakes", "install", str(dest), "--agent", "claude", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kept"] == {}


@pytest.mark.rule(AGENT_RULE)
def test_agent_writes_only_the_names_that_agent_owns(tmp_path: Path) -> None:
    """byok-opencode falls back to opencode-cli and opencode, the opencode def's names:
    selecting it alone must not put its fake under them."""
    report = install_fakes(tmp_path / "one", BUILTIN_DEFS, agents=["byok-opencode"])
    assert sorted(Path(p).name for p in report.written) == ["opencode2"]
    assert any("'opencode-cli'" in s and "belongs to 'opencode'" in s for s in report.skipped)
    full = install_fakes(tmp_path / "all", BUILTIN_DEFS)
    for agent in ("byok-opencode", "opencode", "claude", "kilo"):
        alone = install_fakes(tmp_path / agent, BUILTIN_DEFS, agents=[agent])
        names = {Path(p).name: a for p, a in alone.written.items()}
        in_full = {Path(p).name: a for p, a in full.written.items() if a == agent}
        assert names == in_full, agent
