"""The child environment: PATH assembly, Windows ``Path``, def env and strip rules.

Rules: LAUNCH-ENV-001, LAUNCH-ENV-002, LAUNCH-ENV-003.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.defs.types import EnvStripRule
from harness.host.launch import (
    Resolution,
    apply_env_strip_rules,
    dedupe_path_entries,
    launch_env,
    path_env_key,
)
from tests.launch._support import child_pids, make_def, new_children

HOME = "/home/u"
WIN_HOME = "C:\\Users\\u"


@pytest.fixture(autouse=True)
def _no_leftover_children() -> Iterator[None]:
    before = child_pids()
    yield
    assert new_children(before) == set(), "a test left a child process running"


def _resolution(
    selected: str | None,
    launch: str | None = None,
    *,
    toolchain: tuple[str, ...] = (),
    native_dirs: tuple[str, ...] = (),
) -> Resolution:
    return Resolution(
        configured_override_path=None,
        bundled_path=None,
        path_resolved_path=selected,
        app_bundle_path=None,
        selected_path=selected,
        launch_path=launch if launch is not None else selected,
        toolchain_dirs=toolchain,
        native_path_dirs=native_dirs,
    )


@pytest.mark.rule("LAUNCH-ENV-001")
def test_path_is_interpreter_then_bin_dir_then_existing_then_toolchain() -> None:
    res = _resolution("/opt/agent/bin/claude", toolchain=("/tc/one", "/usr/bin/"))
    env = launch_env(
        {"PATH": "/usr/bin:/bin:/opt/agent/bin/", "HOME": HOME},
        res,
        platform="linux",
        interpreter_dir="/py/bin",
        home=HOME,
        defn=make_def("claude"),
    )
    entries = env["PATH"].split(":")
    assert entries[:5] == ["/py/bin", "/opt/agent/bin", "/usr/bin", "/bin", "/tc/one"]
    # toolchain dirs appended last (seed 002 §5.3); duplicates dropped, trailing slash ignored
    assert f"{HOME}/.bun/bin" in entries[5:]
    assert f"{HOME}/.local/bin" in entries[5:]
    assert entries.count("/usr/bin") == 1 and "/usr/bin/" not in entries
    assert "/opt/agent/bin/" not in entries
    assert env["HOME"] == HOME


@pytest.mark.rule("LAUNCH-ENV-001")
def test_native_binary_dirs_are_prepended_when_launch_path_differs() -> None:
    native = "/n/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex"
    native_dir = native.rsplit("/", 1)[0]
    path_dir = native_dir.rsplit("/", 1)[0] + "/path"
    res = _resolution("/n/bin/codex", native, native_dirs=(native_dir, path_dir))
    env = launch_env(
        {"PATH": "/usr/bin"},
        res,
        platform="linux",
        interpreter_dir=None,
        home=HOME,
        defn=make_def("codex"),
    )
    assert env["PATH"].split(":")[:4] == ["/n/bin", native_dir, path_dir, "/usr/bin"]


@pytest.mark.rule("LAUNCH-ENV-001")
def test_native_dir_defaults_to_dirname_of_launch_path() -> None:
    res = _resolution("/n/bin/codex", "/vendor/codex/codex")
    env = launch_env(
        {}, res, platform="linux", interpreter_dir=None, home=HOME, defn=make_def("codex")
    )
    assert env["PATH"].split(":")[:2] == ["/n/bin", "/vendor/codex"]


@pytest.mark.rule("LAUNCH-ENV-002")
def test_windows_keeps_path_key_name_and_every_system_entry() -> None:
    base = {"Path": "C:\\Windows\\system32;C:\\Windows;C:\\Tools\\", "SystemRoot": "C:\\Windows"}
    res = _resolution("c:\\tools\\codex.cmd")
    env = launch_env(
        base,
        res,
        platform="win32",
        interpreter_dir="C:\\Python\\",
        home=WIN_HOME,
        defn=make_def("codex"),
    )
    assert "PATH" not in env
    entries = env["Path"].split(";")
    assert entries[:4] == ["C:\\Python\\", "c:\\tools", "C:\\Windows\\system32", "C:\\Windows"]
    # C:\Tools\ equals c:\tools on Windows: not repeated
    assert sum(e.rstrip("\\").lower() == "c:\\tools" for e in entries) == 1
    assert f"{WIN_HOME}\\.bun\\bin" in entries


@pytest.mark.rule("LAUNCH-ENV-002")
def test_windows_case_variants_of_path_are_merged_into_one_key() -> None:
    base = {"Path": "C:\\A", "PATH": "C:\\B"}
    env = launch_env(
        base,
        _resolution(None),
        platform="win32",
        interpreter_dir=None,
        home=WIN_HOME,
        defn=make_def("x"),
    )
    keys = [k for k in env if k.upper() == "PATH"]
    assert keys == ["Path"]
    assert env["Path"].split(";")[:2] == ["C:\\A", "C:\\B"]


@pytest.mark.rule("LAUNCH-ENV-002")
def test_path_key_defaults() -> None:
    assert path_env_key({}, "linux") == "PATH"
    assert path_env_key({"Path": "x"}, "linux") == "PATH"
    assert path_env_key({}, "win32") == "Path"
    assert path_env_key({"pAtH": "x"}, "win32") == "pAtH"
    env = launch_env(
        {}, _resolution("/a/b"), platform="linux", interpreter_dir=None, home=HOME, defn=make_def()
    )
    assert env["PATH"].startswith("/a:")


@pytest.mark.rule("LAUNCH-ENV-003")
def test_def_env_is_overlaid_and_base_env_is_not_mutated() -> None:
    base = {"PATH": "/usr/bin", "TRUST": "false", "KEEP": "1"}
    defn = make_def("gem", env={"TRUST": "true", "EXTRA": "x"})
    env = launch_env(
        base,
        _resolution("/usr/bin/gem"),
        platform="linux",
        interpreter_dir=None,
        home=HOME,
        defn=defn,
    )
    assert env["TRUST"] == "true" and env["EXTRA"] == "x" and env["KEEP"] == "1"
    assert base == {"PATH": "/usr/bin", "TRUST": "false", "KEEP": "1"}


@pytest.mark.rule("LAUNCH-ENV-003")
@pytest.mark.parametrize(
    ("env", "kept"),
    [
        ({"ANTHROPIC_API_KEY": "sk"}, False),
        ({"anthropic_api_key": "sk"}, False),  # key matched case-insensitively
        ({"ANTHROPIC_API_KEY": "sk", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, True),
        ({"ANTHROPIC_API_KEY": "sk", "anthropic_base_url": "http://127.0.0.1:9"}, True),
        ({"ANTHROPIC_API_KEY": "sk", "ANTHROPIC_BASE_URL": ""}, False),
        ({"ANTHROPIC_API_KEY": "sk", "ANTHROPIC_BASE_URL": "  "}, False),
    ],
)
def test_strip_rule(env: dict[str, str], kept: bool) -> None:
    rule = EnvStripRule(keys=("ANTHROPIC_API_KEY",), unless_set=("ANTHROPIC_BASE_URL",))
    out = apply_env_strip_rules({**env, "OTHER": "1"}, [rule])
    assert any(k.upper() == "ANTHROPIC_API_KEY" for k in out) is kept
    assert out["OTHER"] == "1"


@pytest.mark.rule("LAUNCH-ENV-003")
def test_strip_rules_apply_in_launch_env_after_def_env() -> None:
    defn = make_def(
        "codex",
        env={"CODEX_API_KEY": "from-def"},
        strip_env=(
            EnvStripRule(keys=("OPENAI_API_KEY", "CODEX_API_KEY"), unless_set=("OPENAI_BASE_URL",)),
        ),
    )
    env = launch_env(
        {"OPENAI_API_KEY": "sk", "PATH": "/usr/bin"},
        _resolution("/usr/bin/codex"),
        platform="linux",
        interpreter_dir=None,
        home=HOME,
        defn=defn,
    )
    assert "OPENAI_API_KEY" not in env and "CODEX_API_KEY" not in env
    env = launch_env(
        {"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": "http://127.0.0.1:1"},
        _resolution("/usr/bin/codex"),
        platform="linux",
        interpreter_dir=None,
        home=HOME,
        defn=defn,
    )
    assert env["OPENAI_API_KEY"] == "sk" and env["CODEX_API_KEY"] == "from-def"


_dir = st.sampled_from(["/a", "/a/", "/b", "/b//", "/c", "/usr/bin", "", "/d/e", "/d/e/"])


@pytest.mark.rule("LAUNCH-ENV-001")
@given(st.lists(_dir, max_size=12), st.sampled_from(["/py", "/a", None]))
def test_path_keeps_every_entry_once_in_first_seen_order(
    existing: list[str], interpreter: str | None
) -> None:
    env = launch_env(
        {"PATH": ":".join(existing)},
        _resolution("/a/tool"),
        platform="linux",
        interpreter_dir=interpreter,
        home=HOME,
        defn=make_def(),
    )
    entries = env["PATH"].split(":")
    norm = [e.rstrip("/") for e in entries]
    assert len(norm) == len(set(norm)), "duplicate PATH entry"
    assert "" not in entries
    expected_head = [d for d in (interpreter, "/a") if d]
    assert norm[: len(dedupe_path_entries(expected_head, "linux"))] == [
        d.rstrip("/") for d in dedupe_path_entries(expected_head, "linux")
    ]
    for e in existing:
        if e:
            assert e.rstrip("/") in norm
    # first-seen order of the existing entries not moved to the front is preserved
    head = {d.rstrip("/") for d in expected_head}
    first_seen = [
        d.rstrip("/") for d in dedupe_path_entries(existing, "linux") if d.rstrip("/") not in head
    ]
    positions = [norm.index(d) for d in first_seen]
    assert positions == sorted(positions)


def test_dedupe_keeps_root_and_drive_roots() -> None:
    assert dedupe_path_entries(["/", "//", "/x"], "linux") == ["/", "/x"]
    assert dedupe_path_entries(["C:\\", "c:\\", "C:"], "win32") == ["C:\\"]


@pytest.mark.rule("LAUNCH-ENV-004")
def test_env_value_rules_drop_values_outside_the_allowed_set() -> None:
    from harness.defs.codebuddy import AGENT_DEF as codebuddy
    from harness.host.launch import apply_env_value_rules

    rules = codebuddy.env_value_rules
    assert apply_env_value_rules({"CODEBUDDY_INTERNET_ENVIRONMENT": "ioa"}, rules) == {
        "CODEBUDDY_INTERNET_ENVIRONMENT": "ioa"
    }
    assert apply_env_value_rules({"codebuddy_internet_environment": "bogus", "X": "1"}, rules) == {
        "X": "1"
    }
