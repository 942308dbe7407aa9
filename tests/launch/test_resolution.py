"""Executable resolution on a fake filesystem, for every platform on any OS.

Rules: LAUNCH-ORDER-001, LAUNCH-OVERRIDE-001, LAUNCH-PATH-001, LAUNCH-PATHEXT-001,
LAUNCH-APPBUNDLE-001.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs.types import AgentDef
from harness.host.launch import (
    FakeFile,
    FakeFileSystem,
    Resolution,
    bundled_path,
    expand_home,
    resolve_executable,
    user_toolchain_dirs,
    windows_extensions,
)
from tests.launch._support import child_pids, make_def, new_children

HOME = "/home/u"
WIN_HOME = "C:\\Users\\u"


@pytest.fixture(autouse=True)
def _no_leftover_children() -> Iterator[None]:
    before = child_pids()
    yield
    assert new_children(before) == set(), "a test left a child process running"


def _resolve(
    defn: AgentDef, fs: FakeFileSystem, env: dict[str, str], platform: str = "linux"
) -> Resolution:
    home = WIN_HOME if platform == "win32" else HOME
    return resolve_executable(defn, platform=platform, env=env, fs=fs, home=home, arch="x64")


# --------------------------------------------------------------------------- override


@pytest.mark.rule("LAUNCH-OVERRIDE-001", "LAUNCH-ORDER-001")
def test_valid_override_beats_path() -> None:
    fs = FakeFileSystem({"/opt/custom/claude": b"x", "/usr/bin/claude": b"x"})
    defn = make_def("claude", bin_env_key="CLAUDE_BIN")
    res = _resolve(defn, fs, {"PATH": "/usr/bin", "CLAUDE_BIN": "  /opt/custom/claude\n"})
    assert res.configured_override_path == "/opt/custom/claude"
    assert res.path_resolved_path == "/usr/bin/claude"
    assert res.selected_path == "/opt/custom/claude"
    assert res.launch_path == "/opt/custom/claude"
    assert res.override_problem is None


@pytest.mark.rule("LAUNCH-OVERRIDE-001")
def test_override_tilde_is_expanded_against_home() -> None:
    fs = FakeFileSystem({f"{HOME}/bin/claude": b"x"})
    defn = make_def("claude", bin_env_key="CLAUDE_BIN")
    res = _resolve(defn, fs, {"PATH": "", "CLAUDE_BIN": "~/bin/claude"})
    assert res.selected_path == f"{HOME}/bin/claude"


@pytest.mark.rule("LAUNCH-OVERRIDE-001")
@pytest.mark.parametrize(
    ("value", "files", "problem"),
    [
        ("bin/claude", {"/usr/bin/claude": FakeFile(b"x")}, "not an absolute path"),
        ("~other/claude", {"/usr/bin/claude": FakeFile(b"x")}, "not an absolute path"),
        ("/opt/missing/claude", {"/usr/bin/claude": FakeFile(b"x")}, "not an existing file"),
        (
            "/opt/custom/claude",
            {"/opt/custom/claude": FakeFile(b"x", executable=False), "/usr/bin/claude": FakeFile()},
            "not executable",
        ),
        (
            "/opt/custom",
            {"/opt/custom/other": FakeFile(b"x"), "/usr/bin/claude": FakeFile()},
            "not an existing file",
        ),
    ],
)
def test_invalid_override_is_ignored(value: str, files: dict[str, FakeFile], problem: str) -> None:
    fs = FakeFileSystem(files)
    defn = make_def("claude", bin_env_key="CLAUDE_BIN")
    res = _resolve(defn, fs, {"PATH": "/usr/bin", "CLAUDE_BIN": value})
    assert res.configured_override_path is None
    assert res.selected_path == "/usr/bin/claude"
    assert res.override_problem is not None and problem in res.override_problem
    assert "CLAUDE_BIN" in res.override_problem


@pytest.mark.rule("LAUNCH-OVERRIDE-001")
def test_override_key_of_another_def_is_not_used() -> None:
    fs = FakeFileSystem({"/opt/custom/claude": b"x"})
    defn = make_def("claude", bin_env_key="CLAUDE_BIN")
    res = _resolve(defn, fs, {"PATH": "", "CODEX_BIN": "/opt/custom/claude"})
    assert res.selected_path is None
    assert res.override_problem is None


@pytest.mark.rule("LAUNCH-OVERRIDE-001", "LAUNCH-PATHEXT-001")
@pytest.mark.parametrize(
    ("override", "pathext", "accepted"),
    [
        ("C:\\tools\\claude.cmd", None, True),
        ("C:\\tools\\claude.EXE", None, True),
        ("C:\\tools\\claude.bat", ".COM", True),  # .BAT is always allowed
        ("C:\\tools\\claude", None, False),  # no extension
        ("C:\\tools\\claude.ps1", None, False),
        ("C:\\tools\\claude.ps1", ".PS1;.EXE", True),
        ("tools\\claude.exe", None, False),  # relative: not absolute
    ],
)
def test_win32_override_needs_executable_extension(
    override: str, pathext: str | None, accepted: bool
) -> None:
    fs = FakeFileSystem({override: b"x"}, platform="win32")
    defn = make_def("claude", bin_env_key="CLAUDE_BIN")
    env = {"Path": "", "CLAUDE_BIN": override}
    if pathext is not None:
        env["PATHEXT"] = pathext
    res = _resolve(defn, fs, env, platform="win32")
    assert (res.configured_override_path == override) is accepted
    # Windows has no X_OK: a FakeFile marked non-executable is still accepted by extension.
    assert (res.override_problem is None) is accepted


# --------------------------------------------------------------------------- bundled hook


@pytest.mark.rule("LAUNCH-ORDER-001")
def test_bundled_hook_is_a_no_op_without_declared_bundles() -> None:
    fs = FakeFileSystem({"/usr/bin/vela": b"x"})
    defn = make_def("amr", bin="vela")
    assert bundled_path(defn, platform="linux", env={}, fs=fs, home=HOME) is None


@pytest.mark.rule("LAUNCH-ORDER-001")
def test_bundled_sits_between_override_and_path() -> None:
    base = make_def("amr", bin="vela", bin_env_key="VELA_BIN")
    defn = dataclasses.replace(base, bundled_paths=("/missing/vela", "~/app/bin/vela"))
    files = {f"{HOME}/app/bin/vela": b"x", "/usr/bin/vela": b"x", "/opt/vela": b"x"}
    fs = FakeFileSystem(files)
    res = _resolve(defn, fs, {"PATH": "/usr/bin"})
    assert res.bundled_path == f"{HOME}/app/bin/vela"
    assert res.selected_path == f"{HOME}/app/bin/vela"
    res = _resolve(defn, fs, {"PATH": "/usr/bin", "VELA_BIN": "/opt/vela"})
    assert res.selected_path == "/opt/vela"


# --------------------------------------------------------------------------- PATH walk


@pytest.mark.rule("LAUNCH-PATH-001")
def test_primary_bin_later_on_path_beats_fallback_earlier() -> None:
    fs = FakeFileSystem({"/a/openclaude": b"x", "/b/claude": b"x"})
    defn = make_def("claude", fallback_bins=("openclaude",))
    res = _resolve(defn, fs, {"PATH": "/a:/b"})
    assert res.selected_path == "/b/claude"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_primary_bin_wins_even_when_a_fallback_sorts_first() -> None:
    fs = FakeFileSystem({"/a/opencode": b"x", "/b/opencode-cli": b"x"})
    defn = make_def("opencode", bin="opencode-cli", fallback_bins=("opencode",))
    assert _resolve(defn, fs, {"PATH": "/a:/b"}).selected_path == "/b/opencode-cli"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_fallback_bin_used_when_primary_absent() -> None:
    fs = FakeFileSystem({"/b/openclaude": b"x", "/c/opencode": b"x"})
    defn = make_def("claude", fallback_bins=("openclaude", "opencode"))
    res = _resolve(defn, fs, {"PATH": "/a:/b:/c"})
    assert res.selected_path == "/b/openclaude"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_first_dir_wins_for_the_same_name_and_dirs_are_not_required_to_be_executable() -> None:
    fs = FakeFileSystem(
        {"/a/claude": FakeFile(b"x", executable=False), "/b/claude": FakeFile(b"x")}
    )
    res = _resolve(make_def("claude"), fs, {"PATH": "/a:/b"})
    # Existence, not X_OK: the version probe then reports /a/claude as not executable.
    assert res.selected_path == "/a/claude"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_a_directory_named_like_the_bin_is_not_selected() -> None:
    fs = FakeFileSystem({"/a/claude/readme": b"x", "/b/claude": b"x"})
    res = _resolve(make_def("claude"), fs, {"PATH": "/a:/b"})
    assert res.selected_path == "/b/claude"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_nothing_found_reports_every_searched_dir() -> None:
    fs = FakeFileSystem({})
    res = _resolve(make_def("claude"), fs, {"PATH": "/a:/b/:/a"})
    assert res.selected_path is None and res.launch_path is None
    assert res.searched_dirs[:2] == ("/a", "/b/")
    assert f"{HOME}/.local/bin" in res.searched_dirs
    assert len(res.searched_dirs) == len(set(res.searched_dirs))


@pytest.mark.rule("LAUNCH-PATH-001")
def test_toolchain_dirs_are_searched_after_path() -> None:
    fs = FakeFileSystem({f"{HOME}/.bun/bin/pi": b"x"})
    res = _resolve(make_def("pi"), fs, {"PATH": "/usr/bin"})
    assert res.selected_path == f"{HOME}/.bun/bin/pi"
    assert f"{HOME}/.bun/bin" in res.toolchain_dirs
    fs.add("/usr/bin/pi", b"x")
    assert _resolve(make_def("pi"), fs, {"PATH": "/usr/bin"}).selected_path == "/usr/bin/pi"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_toolchain_dirs_from_env_and_nvm_versions() -> None:
    fs = FakeFileSystem(
        {
            f"{HOME}/.nvm/versions/node/v9.11.2/bin/node": b"x",
            f"{HOME}/.nvm/versions/node/v20.1.0/bin/codex": b"x",
            f"{HOME}/.nvm/versions/node/v18.19.0/bin/codex": b"x",
        }
    )
    env = {"NVM_BIN": "/nvm/active/bin", "npm_config_prefix": "/npm-prefix", "PNPM_HOME": "rel"}
    dirs = user_toolchain_dirs("linux", env, HOME, fs=fs)
    assert dirs[0] == "/nvm/active/bin"
    assert "/npm-prefix/bin" in dirs
    assert "rel" not in dirs  # relative values are ignored
    nvm = [d for d in dirs if "/versions/node/" in d]
    assert nvm == [
        f"{HOME}/.nvm/versions/node/v20.1.0/bin",
        f"{HOME}/.nvm/versions/node/v18.19.0/bin",
        f"{HOME}/.nvm/versions/node/v9.11.2/bin",
    ]
    res = _resolve(make_def("codex"), fs, {"PATH": "/usr/bin"})
    assert res.selected_path == f"{HOME}/.nvm/versions/node/v20.1.0/bin/codex"


@pytest.mark.rule("LAUNCH-PATH-001")
def test_homebrew_dirs_only_on_darwin() -> None:
    darwin = user_toolchain_dirs("darwin", {}, HOME)
    assert darwin[-2:] == ["/opt/homebrew/bin", "/usr/local/bin"]
    assert "/opt/homebrew/bin" not in user_toolchain_dirs("linux", {}, HOME)
    win = user_toolchain_dirs("win32", {"APPDATA": "C:\\Users\\u\\AppData\\Roaming"}, WIN_HOME)
    assert "C:\\Users\\u\\AppData\\Roaming\\npm" in win
    assert "C:\\Users\\u\\.bun\\bin" in win
    assert all(not d.startswith("/") for d in win)


@pytest.mark.rule("LAUNCH-PATH-001")
def test_absolute_bin_is_checked_directly() -> None:
    fs = FakeFileSystem({"/opt/wrap/claude-wrapper": b"x"})
    res = _resolve(make_def("wrap", bin="/opt/wrap/claude-wrapper"), fs, {"PATH": "/usr/bin"})
    assert res.selected_path == "/opt/wrap/claude-wrapper"
    res = _resolve(make_def("wrap", bin="/opt/wrap/none"), fs, {"PATH": "/usr/bin"})
    assert res.selected_path is None


# --------------------------------------------------------------------------- win32


@pytest.mark.rule("LAUNCH-PATHEXT-001")
def test_windows_extension_list() -> None:
    assert windows_extensions({}) == ["", ".COM", ".EXE", ".BAT", ".CMD"]
    assert windows_extensions({"PathExt": ".exe;CMD;;.Ps1;.EXE"}) == [
        "",
        ".exe",
        ".CMD",
        ".Ps1",
        ".BAT",
    ]


@pytest.mark.rule("LAUNCH-PATHEXT-001")
def test_win32_path_key_is_found_case_insensitively_and_split_on_semicolons() -> None:
    fs = FakeFileSystem({"C:\\Tools\\Codex.CMD": b"@node x"}, platform="win32")
    env = {"Path": "C:\\Windows;c:\\tools\\", "PATHEXT": ".EXE;.CMD"}
    res = _resolve(make_def("codex"), fs, env, platform="win32")
    assert res.selected_path is not None
    assert res.selected_path.lower() == "c:\\tools\\codex.cmd"
    assert res.searched_dirs[:2] == ("C:\\Windows", "c:\\tools\\")


@pytest.mark.rule("LAUNCH-PATHEXT-001")
def test_win32_tries_bare_name_then_pathext_then_fallbacks_within_each_dir() -> None:
    fs = FakeFileSystem(
        {"C:\\a\\codex.bat": b"x", "C:\\a\\codex.cmd": b"x", "C:\\b\\codex": b"x"},
        platform="win32",
    )
    env = {"PATH": "C:\\a;C:\\b", "PATHEXT": ".CMD"}
    # dir order first, then '' -> PATHEXT (.CMD) -> .EXE .CMD .BAT inside a dir; the
    # filesystem is case-insensitive, the returned name carries the PATHEXT spelling.
    assert _resolve(make_def("codex"), fs, env, "win32").selected_path == "C:\\a\\codex.CMD"
    fs.add("C:\\a\\codex", b"x")
    assert _resolve(make_def("codex"), fs, env, "win32").selected_path == "C:\\a\\codex"
    fs2 = FakeFileSystem({"C:\\a\\codex.bat": b"x"}, platform="win32")
    assert _resolve(make_def("codex"), fs2, env, "win32").selected_path == "C:\\a\\codex.BAT"


@pytest.mark.rule("LAUNCH-PATHEXT-001")
def test_win32_path_dirs_dedupe_case_insensitively() -> None:
    fs = FakeFileSystem({}, platform="win32")
    env = {"Path": "C:\\A;c:\\a\\;C:\\B"}
    res = _resolve(make_def("codex"), fs, env, platform="win32")
    assert res.searched_dirs[:2] == ("C:\\A", "C:\\B")


# --------------------------------------------------------------------------- app bundle


@pytest.mark.rule("LAUNCH-APPBUNDLE-001", "LAUNCH-ORDER-001")
def test_darwin_app_bundle_comes_after_path() -> None:
    bundle = "/Applications/Codex.app/Contents/Resources/codex"
    user_bundle = "~/Applications/Codex.app/Contents/Resources/codex"
    defn = make_def("codex", app_bundle_paths=(bundle, user_bundle))
    fs = FakeFileSystem({bundle: b"\xcf\xfa\xed\xfe"})
    res = _resolve(defn, fs, {"PATH": "/usr/bin"}, platform="darwin")
    assert res.app_bundle_path == bundle
    assert res.selected_path == bundle
    fs.add("/opt/homebrew/bin/codex", b"x")
    res = _resolve(defn, fs, {"PATH": "/usr/bin"}, platform="darwin")
    assert res.selected_path == "/opt/homebrew/bin/codex"
    assert res.app_bundle_path == bundle


@pytest.mark.rule("LAUNCH-APPBUNDLE-001")
def test_app_bundle_tilde_candidate_and_non_darwin_platforms() -> None:
    defn = make_def(
        "codex", app_bundle_paths=("~/Applications/Codex.app/Contents/Resources/codex",)
    )
    path = f"{HOME}/Applications/Codex.app/Contents/Resources/codex"
    fs = FakeFileSystem({path: b"x"})
    assert _resolve(defn, fs, {"PATH": ""}, platform="darwin").selected_path == path
    linux = _resolve(defn, fs, {"PATH": ""}, platform="linux")
    assert linux.app_bundle_path is None and linux.selected_path is None


# --------------------------------------------------------------------------- order property


@pytest.mark.rule("LAUNCH-ORDER-001")
@given(st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_selected_is_the_first_available_source(
    has_override: bool, has_bundle: bool, has_path: bool, has_app: bool
) -> None:
    files: dict[str, bytes] = {}
    if has_override:
        files["/override/codex"] = b"x"
    if has_bundle:
        files["/bundle/codex"] = b"x"
    if has_path:
        files["/usr/bin/codex"] = b"x"
    if has_app:
        files["/Applications/Codex.app/codex"] = b"x"
    base = make_def(
        "codex", bin_env_key="CODEX_BIN", app_bundle_paths=("/Applications/Codex.app/codex",)
    )
    defn = dataclasses.replace(base, bundled_paths=("/bundle/codex",))
    env = {"PATH": "/usr/bin", "CODEX_BIN": "/override/codex"}
    res = _resolve(defn, FakeFileSystem(files), env, platform="darwin")
    expected = next(
        (
            p
            for ok, p in [
                (has_override, "/override/codex"),
                (has_bundle, "/bundle/codex"),
                (has_path, "/usr/bin/codex"),
                (has_app, "/Applications/Codex.app/codex"),
            ]
            if ok
        ),
        None,
    )
    assert res.selected_path == expected


def test_expand_home_forms() -> None:
    assert expand_home("~", HOME, "linux") == HOME
    assert expand_home("~/x", HOME, "linux") == f"{HOME}/x"
    assert expand_home("~\\x", HOME, "linux") == "~\\x"
    assert expand_home("~\\x", WIN_HOME, "win32") == f"{WIN_HOME}\\x"
    assert expand_home("/a/~/b", HOME, "linux") == "/a/~/b"
