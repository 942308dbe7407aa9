"""Detection against real tiny executables (POSIX sh scripts written into tmp_path).

Rules: DETECT-LAUNCHPATH-001, DETECT-VERSION-001..004, DETECT-TIMEOUT-001/002,
DETECT-POLICY-001, DETECT-COMPAT-001, DETECT-CAPS-001, DETECT-MODELS-001, DETECT-AUTH-001,
DETECT-CONCURRENT-001, DETECT-PARALLEL-001, DETECT-ISOLATION-001, DETECT-ORDER-001/002.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    AuthProbe,
    CompatibilityProbe,
    EnvStripRule,
    ListModels,
    ModelOption,
    NodeWrapperNative,
    VersionPolicy,
)
from harness.host.launch import FakeFileSystem, RealFileSystem
from harness.runtime.detect import (
    AuthStatus,
    DetectionResult,
    DiagnosticCode,
    VersionProbeOutcome,
    classify_version_probe,
    detect_all,
    detect_all_sync,
    detect_stream,
)
from harness.runtime.probe import ProbeResult, run_probe
from tests.launch._support import (
    SYSTEM_PATH,
    child_pids,
    is_gone,
    make_def,
    new_children,
    write_script,
)

FALLBACK = (DEFAULT_MODEL_OPTION, ModelOption("fb-1", "Fallback One"))


@pytest.fixture(autouse=True)
def _no_leftover_children() -> Iterator[None]:
    before = child_pids()
    yield
    assert new_children(before) == set(), "a test left a child process running"


class Lab:
    """A tmp bin dir of fake CLIs, a fake home, and a detect() bound to them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.home = root / "home"
        self.home.mkdir()

    def script(self, name: str, body: str, *, executable: bool = True) -> Path:
        return write_script(self.bin / name, body, executable=executable)

    def agent(self, agent_id: str, body: str, **fields: Any) -> AgentDef:
        """A def whose bin is a script answering with ``body`` (a sh ``case "$1"``)."""
        self.script(f"h3-{agent_id}", body)
        fields.setdefault("fallback_models", FALLBACK)
        return make_def(agent_id, bin=f"h3-{agent_id}", **fields)

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": f"{self.bin}{os.pathsep}{SYSTEM_PATH}", "LC_ALL": "C", **extra}

    def detect(self, defs: Sequence[AgentDef], **kw: Any) -> list[DetectionResult]:
        env = kw.pop("env", None) or self.env()
        return detect_all_sync(
            defs, env=env, platform=sys.platform, home=str(self.home), fs=RealFileSystem(), **kw
        )

    def one(self, defn: AgentDef, **kw: Any) -> DetectionResult:
        (result,) = self.detect([defn], **kw)
        return result


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


def _codes(result: DetectionResult) -> list[DiagnosticCode]:
    return [d.code for d in result.diagnostics]


def _parse_lines(text: str) -> list[ModelOption] | None:
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    return [ModelOption(i, i.upper()) for i in ids] or None


VERSION_OK = 'case "$1" in --version) echo "fake 1.2.3";; esac\n'


# --------------------------------------------------------------------------- version probe


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-001")
def test_exit_126_is_not_executable(lab: Lab) -> None:
    result = lab.one(lab.agent("a", "exit 126\n"))
    assert result.available is False
    assert result.path == str(lab.bin / "h3-a")
    assert DiagnosticCode.NOT_EXECUTABLE in _codes(result)
    assert result.models == FALLBACK and result.models_source == "fallback"


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-001")
def test_file_without_execute_bit_is_not_executable(lab: Lab) -> None:
    lab.script("h3-noexec", VERSION_OK, executable=False)
    result = lab.one(make_def("noexec", bin="h3-noexec"))
    assert result.available is False
    assert result.path == str(lab.bin / "h3-noexec")
    assert _codes(result) == [DiagnosticCode.NOT_EXECUTABLE]
    assert "EACCES" in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-002")
def test_exit_127_is_missing(lab: Lab) -> None:
    result = lab.one(lab.agent("a", "exit 127\n"))
    assert result.available is False
    assert _codes(result) == [DiagnosticCode.MISSING_TARGET]


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-002")
@pytest.mark.parametrize(
    ("shebang", "needle"),
    [
        ("#!/nonexistent/h3-interpreter", "ENOENT"),
        ("#!/etc/passwd/sh", "ENOTDIR"),
        ("#!/usr/bin/env h3-no-such-interpreter", "exited 127"),
    ],
)
def test_missing_interpreter_is_missing(lab: Lab, shebang: str, needle: str) -> None:
    path = lab.bin / "h3-shebang"
    path.write_text(f"{shebang}\necho never\n")
    path.chmod(0o755)
    result = lab.one(make_def("shebang", bin="h3-shebang"))
    assert result.available is False
    assert _codes(result) == [DiagnosticCode.MISSING_TARGET]
    assert needle in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-002")
def test_bin_not_found_anywhere(lab: Lab) -> None:
    result = lab.one(make_def("ghost", bin="h3-ghost-never-installed", fallback_models=FALLBACK))
    assert result.available is False and result.path is None and result.launch_path is None
    assert _codes(result) == [DiagnosticCode.NOT_ON_PATH]
    assert str(lab.bin) in result.diagnostics[0].message
    assert str(lab.home / ".local" / "bin") in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-004")
def test_version_is_first_non_blank_line_trimmed(lab: Lab) -> None:
    body = 'case "$1" in --version) printf "\\n   \\n  fake 1.2.3  \\nbuild 42\\n";; esac\n'
    result = lab.one(lab.agent("a", body))
    assert result.available is True
    assert result.version == "fake 1.2.3"
    assert result.diagnostics == ()


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-004")
def test_custom_version_args_and_policy_parse(lab: Lab) -> None:
    body = 'case "$1" in version) echo "fake version 0.1.2-rc.1 (abc)";; *) exit 3;; esac\n'
    policy = VersionPolicy(
        supported_versions=("0.1.2-rc.1",),
        parse=lambda raw: raw.split()[2],
    )
    result = lab.one(lab.agent("a", body, version_args=("version",), version_policy=policy))
    assert result.available is True
    assert result.version == "0.1.2-rc.1"
    assert result.diagnostics == ()


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-004")
def test_clean_exit_without_output_has_no_version(lab: Lab) -> None:
    result = lab.one(lab.agent("a", "exit 0\n"))
    assert result.available is True and result.version is None


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-003")
def test_exit_1_is_available_without_version(lab: Lab) -> None:
    result = lab.one(
        lab.agent("a", "echo 'fake 9.9.9'\necho 'unknown flag --version' >&2\nexit 1\n")
    )
    assert result.available is True
    assert result.version is None
    assert _codes(result) == [DiagnosticCode.VERSION_UNKNOWN]
    assert "exited 1" in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-003")
def test_killed_by_signal_is_available_without_version(lab: Lab) -> None:
    result = lab.one(lab.agent("a", "kill -KILL $$\n"))
    assert result.available is True and result.version is None
    assert "signal 9" in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-VERSION-003", "DETECT-TIMEOUT-001")
def test_hung_version_probe_times_out_and_its_tree_is_killed(lab: Lab) -> None:
    pids = lab.root / "pids"
    pids.mkdir()
    body = f"""
echo $$ > "{pids}/leader"
sleep 30 &
echo $! > "{pids}/background"
sleep 30
"""
    result = lab.one(lab.agent("hang", body, version_probe_timeout_ms=400))
    assert result.available is True
    assert result.version is None
    assert "timed out" in result.diagnostics[0].message
    leader = int((pids / "leader").read_text())
    background = int((pids / "background").read_text())
    assert is_gone(leader), "the hung probe survived its timeout"
    assert is_gone(background), "the hung probe's background child survived"


@pytest.mark.rule("DETECT-VERSION-001", "DETECT-VERSION-002", "DETECT-VERSION-003")
@pytest.mark.parametrize(
    ("fields", "outcome"),
    [
        ({"os_error": "EACCES"}, VersionProbeOutcome.NOT_EXECUTABLE),
        ({"exit_code": 126}, VersionProbeOutcome.NOT_EXECUTABLE),
        ({"os_error": "ENOENT"}, VersionProbeOutcome.MISSING_TARGET),
        ({"os_error": "ENOTDIR"}, VersionProbeOutcome.MISSING_TARGET),
        ({"exit_code": 127}, VersionProbeOutcome.MISSING_TARGET),
        ({"os_error": "ENOEXEC"}, VersionProbeOutcome.SPAWNED),
        ({"exit_code": 1}, VersionProbeOutcome.SPAWNED),
        ({"exit_code": 2}, VersionProbeOutcome.SPAWNED),
        ({"signal": 9}, VersionProbeOutcome.SPAWNED),
        ({"timed_out": True, "signal": 9}, VersionProbeOutcome.SPAWNED),
        ({"output_overflow": True, "signal": 9}, VersionProbeOutcome.SPAWNED),
        ({"exit_code": 0}, VersionProbeOutcome.SPAWNED),
    ],
)
def test_version_probe_classification_table(
    fields: dict[str, Any], outcome: VersionProbeOutcome
) -> None:
    base: dict[str, Any] = {
        "argv": ("/x", "--version"),
        "stdout": "",
        "stderr": "",
        "exit_code": None,
        "signal": None,
        "timed_out": False,
        "os_error": None,
        "output_overflow": False,
        "duration_s": 0.0,
    }
    assert classify_version_probe(ProbeResult(**{**base, **fields})) is outcome


# --------------------------------------------------------------------------- run_probe


@pytest.mark.posix
@pytest.mark.rule("DETECT-TIMEOUT-001")
def test_run_probe_kills_a_background_straggler_after_a_clean_exit(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg"
    script = write_script(tmp_path / "s", f'sleep 30 &\necho $! > "{pidfile}"\necho done\n')
    result = asyncio.run(
        run_probe([str(script)], env={"PATH": SYSTEM_PATH}, timeout_s=10, max_output_bytes=1000)
    )
    assert result.ok and result.stdout == "done\n" and not result.timed_out
    assert is_gone(int(pidfile.read_text()))


@pytest.mark.posix
@pytest.mark.rule("DETECT-TIMEOUT-001")
def test_run_probe_caps_output_and_kills_a_flood(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s", "exec yes flood\n")
    result = asyncio.run(
        run_probe([str(script)], env={"PATH": SYSTEM_PATH}, timeout_s=10, max_output_bytes=4096)
    )
    assert result.output_overflow is True and not result.ok
    assert len(result.stdout.encode()) == 4096
    assert result.stdout.startswith("flood\n")


@pytest.mark.posix
@pytest.mark.rule("DETECT-TIMEOUT-001")
def test_cancelling_run_probe_kills_the_probe(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = write_script(tmp_path / "s", f'echo $$ > "{pidfile}"\nexec sleep 30\n')

    async def scenario() -> None:
        task = asyncio.ensure_future(
            run_probe([str(script)], env={"PATH": SYSTEM_PATH}, timeout_s=60, max_output_bytes=10)
        )
        for _ in range(200):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert is_gone(int(pidfile.read_text()))


@pytest.mark.posix
@pytest.mark.rule("DETECT-TIMEOUT-001")
def test_run_probe_reports_errno_names(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("data")

    async def probe(path: str) -> str | None:
        result = await run_probe([path], env={}, timeout_s=5, max_output_bytes=10)
        return result.os_error

    assert asyncio.run(probe(str(tmp_path / "missing"))) == "ENOENT"
    assert asyncio.run(probe(str(plain))) == "EACCES"
    assert asyncio.run(probe(str(plain / "x"))) == "ENOTDIR"


# --------------------------------------------------------------------------- policy, compat


@pytest.mark.posix
@pytest.mark.rule("DETECT-POLICY-001")
def test_required_version_missing_is_unavailable(lab: Lab) -> None:
    policy = VersionPolicy(supported_versions=("1.0.0",), require_version=True)
    result = lab.one(lab.agent("a", "exit 1\n", version_policy=policy))
    assert result.available is False
    assert DiagnosticCode.VERSION_REQUIRED in _codes(result)
    not_required = VersionPolicy(supported_versions=("1.0.0",), require_version=False)
    assert lab.one(lab.agent("b", "exit 1\n", version_policy=not_required)).available is True


@pytest.mark.posix
@pytest.mark.rule("DETECT-POLICY-001")
def test_parse_returning_none_fails_a_required_version(lab: Lab) -> None:
    policy = VersionPolicy(supported_versions=("1.0.0",), parse=lambda raw: None)
    result = lab.one(lab.agent("a", VERSION_OK, version_policy=policy))
    assert result.available is False and result.version is None


@pytest.mark.posix
@pytest.mark.rule("DETECT-POLICY-001")
def test_untested_version_only_warns(lab: Lab) -> None:
    policy = VersionPolicy(
        supported_versions=("1.0.0",),
        supported_version_pattern=r"^1\.1\.\d+$",
        parse=lambda raw: raw.split()[-1],
    )
    untested = lab.one(lab.agent("a", VERSION_OK, version_policy=policy))
    assert untested.available is True and untested.version == "1.2.3"
    assert _codes(untested) == [DiagnosticCode.VERSION_UNTESTED]
    body = 'case "$1" in --version) echo "fake 1.1.7";; esac\n'
    tested = lab.one(lab.agent("b", body, version_policy=policy))
    assert tested.available is True and tested.diagnostics == ()


@pytest.mark.posix
@pytest.mark.rule("DETECT-POLICY-001")
def test_raising_version_parse_counts_as_no_version(lab: Lab) -> None:
    def boom(raw: str) -> str:
        raise ValueError(f"bad {raw}")

    policy = VersionPolicy(supported_versions=("1",), require_version=False, parse=boom)
    result = lab.one(lab.agent("a", VERSION_OK, version_policy=policy))
    assert result.available is True and result.version is None
    assert DiagnosticCode.VERSION_UNKNOWN in _codes(result)


@pytest.mark.posix
@pytest.mark.rule("DETECT-COMPAT-001")
def test_compatibility_probe_success_and_failures(lab: Lab) -> None:
    body = """case "$1" in
  --version) echo "fake 1.2.3";;
  --probe) echo "$PROBE_REPLY"; exit "${PROBE_EXIT:-0}";;
esac
"""

    def parse(text: str) -> str:
        if not text.startswith("companion "):
            raise ValueError(f"unexpected probe output {text.strip()!r}")
        return text.split()[1]

    compat = CompatibilityProbe(args=("--probe",), parse=parse)
    defn = lab.agent("a", body, compatibility_probe=compat)
    ok = lab.one(defn, env=lab.env(PROBE_REPLY="companion 0.4.0"))
    assert ok.available is True and ok.companion_version == "0.4.0"
    assert ok.to_json()["companion_version"] == "0.4.0"

    bad = lab.one(defn, env=lab.env(PROBE_REPLY="nope"))
    assert bad.available is False
    assert _codes(bad) == [DiagnosticCode.INCOMPATIBLE]
    assert "unexpected probe output 'nope'" in bad.diagnostics[0].message
    assert bad.version == "fake 1.2.3" and bad.path == str(lab.bin / "h3-a")

    failed = lab.one(defn, env=lab.env(PROBE_REPLY="companion 1", PROBE_EXIT="4"))
    assert failed.available is False and _codes(failed) == [DiagnosticCode.INCOMPATIBLE]


@pytest.mark.posix
@pytest.mark.rule("DETECT-COMPAT-001")
def test_compatibility_probe_runs_only_after_a_passing_version_probe(lab: Lab) -> None:
    marker = lab.root / "compat-ran"
    body = f"""case "$1" in
  --version) exit 127;;
  --probe) touch "{marker}"; echo "companion 1";;
esac
"""
    compat = CompatibilityProbe(args=("--probe",), parse=lambda text: text.split()[1])
    result = lab.one(lab.agent("a", body, compatibility_probe=compat))
    assert result.available is False
    assert not marker.exists()


# --------------------------------------------------------------------------- help / models / auth

HELP_BODY = """case "$1" in
  --version) echo "fake 1.2.3";;
  -p) [ "$2" = "--help" ] && echo "Usage: fake -p [--add-dir DIR] [--model M]";;
  --help) echo "Usage: fake [--include-partial-messages] [--add-dir DIR]";;
  --broken-help) echo "--include-partial-messages --add-dir"; exit 2;;
esac
"""
FLAGS = {
    "--include-partial-messages": "partialMessages",
    "--stream-partial": "partialMessages",
    "--add-dir": "addDir",
}


@pytest.mark.posix
@pytest.mark.rule("DETECT-CAPS-001")
def test_capabilities_from_help_output(lab: Lab) -> None:
    full = lab.one(lab.agent("a", HELP_BODY, help_args=("--help",), capability_flags=FLAGS))
    assert full.capabilities == {"partialMessages": True, "addDir": True}
    old = lab.one(lab.agent("b", HELP_BODY, help_args=("-p", "--help"), capability_flags=FLAGS))
    assert old.capabilities == {"partialMessages": False, "addDir": True}
    assert old.diagnostics == ()


@pytest.mark.posix
@pytest.mark.rule("DETECT-CAPS-001")
def test_failed_help_probe_turns_every_optional_flag_off(lab: Lab) -> None:
    result = lab.one(
        lab.agent("a", HELP_BODY, help_args=("--broken-help",), capability_flags=FLAGS)
    )
    assert result.available is True
    assert result.capabilities == {}
    assert _codes(result) == [DiagnosticCode.HELP_PROBE_FAILED]


@pytest.mark.posix
@pytest.mark.rule("DETECT-CAPS-001")
def test_no_help_probe_without_help_args(lab: Lab) -> None:
    marker = lab.root / "help-ran"
    body = f'case "$1" in --help) touch "{marker}"; echo --add-dir;; esac\n'
    result = lab.one(lab.agent("a", body, capability_flags=FLAGS))
    assert result.capabilities == {}
    assert not marker.exists()


MODELS_BODY = """case "$1" in
  --version) echo "fake 1.2.3";;
  models) printf 'm-2\\nm-1\\n\\nm-2\\n';;
  models-empty) ;;
  models-fail) echo m-1; exit 1;;
esac
"""


@pytest.mark.posix
@pytest.mark.rule("DETECT-MODELS-001")
def test_live_model_listing_puts_default_first(lab: Lab) -> None:
    listing = ListModels(args=("models",), parse=_parse_lines)
    result = lab.one(lab.agent("a", MODELS_BODY, list_models=listing))
    assert result.models_source == "live"
    assert result.models == (
        DEFAULT_MODEL_OPTION,
        ModelOption("m-2", "M-2"),
        ModelOption("m-1", "M-1"),
    )


@pytest.mark.posix
@pytest.mark.rule("DETECT-MODELS-001")
def test_parsed_default_is_moved_to_the_front(lab: Lab) -> None:
    def parse(text: str) -> list[ModelOption]:
        return [ModelOption("m-1", "One"), ModelOption("default", "CLI default")]

    listing = ListModels(args=("models",), parse=parse)
    result = lab.one(lab.agent("a", MODELS_BODY, list_models=listing))
    assert [m.id for m in result.models] == ["default", "m-1"]
    assert result.models[0].label == "CLI default"


def _raise(text: str) -> list[ModelOption] | None:
    raise ValueError("garbled")


@pytest.mark.posix
@pytest.mark.rule("DETECT-MODELS-001")
@pytest.mark.parametrize(
    ("args", "parse", "problem"),
    [
        (("models-fail",), _parse_lines, "exited 1"),
        (("models-empty",), _parse_lines, "listed no models"),
        (("models",), lambda text: None, "listed no models"),
        (("models",), lambda text: [], "listed no models"),
        (("models",), _raise, "ValueError: garbled"),
    ],
)
def test_model_listing_falls_back(
    lab: Lab, args: tuple[str, ...], parse: Any, problem: str
) -> None:
    listing = ListModels(args=args, parse=parse)
    result = lab.one(lab.agent("a", MODELS_BODY, list_models=listing))
    assert result.available is True
    assert result.models == FALLBACK and result.models_source == "fallback"
    assert _codes(result) == [DiagnosticCode.MODELS_FALLBACK]
    assert problem in result.diagnostics[0].message


@pytest.mark.posix
@pytest.mark.rule("DETECT-MODELS-001")
def test_no_listing_uses_fallbacks(lab: Lab) -> None:
    result = lab.one(lab.agent("a", VERSION_OK))
    assert result.models == FALLBACK and result.models_source == "fallback"
    bare = lab.one(lab.agent("b", VERSION_OK, fallback_models=()))
    assert bare.models == (DEFAULT_MODEL_OPTION,)


AUTH_BODY = """case "$1" in
  --version) echo "fake 1.2.3";;
  auth) case "$AUTH_MODE" in
          ok) echo "Logged in as dev@example.com";;
          missing) echo "Error: Not logged in. Run 'fake login'." >&2; exit 1;;
          json) echo '{"loggedIn": false, "method": null}';;
          silent) exit 3;;
        esac;;
esac
"""


@pytest.mark.posix
@pytest.mark.rule("DETECT-AUTH-001")
@pytest.mark.parametrize(
    ("mode", "status", "needle"),
    [
        ("ok", AuthStatus.OK, "signed in"),
        ("missing", AuthStatus.MISSING, "Not logged in"),
        ("json", AuthStatus.MISSING, '"loggedIn": false'),
        ("silent", AuthStatus.UNKNOWN, "could not be verified with `h3-a auth status`"),
    ],
)
def test_declared_auth_probe(lab: Lab, mode: str, status: AuthStatus, needle: str) -> None:
    defn = lab.agent("a", AUTH_BODY, auth_probe=AuthProbe(args=("auth", "status")))
    result = lab.one(defn, env=lab.env(AUTH_MODE=mode))
    assert result.available is True
    assert result.auth_status is status
    assert result.auth_message is not None and needle in result.auth_message
    payload = result.to_json()
    assert payload["auth_status"] == status.value and payload["auth_message"]


@pytest.mark.posix
@pytest.mark.rule("DETECT-AUTH-001")
def test_no_auth_probe_means_no_auth_field(lab: Lab) -> None:
    result = lab.one(lab.agent("a", AUTH_BODY), env=lab.env(AUTH_MODE="missing"))
    assert result.auth_status is None and result.auth_message is None
    payload = result.to_json()
    assert "auth_status" not in payload and "auth_message" not in payload


# --------------------------------------------------------------------------- launch path + env


@pytest.mark.posix
@pytest.mark.rule("DETECT-LAUNCHPATH-001")
def test_probes_run_the_native_binary_with_the_launch_env(lab: Lab) -> None:
    pkg = lab.root / "npm" / "lib" / "node_modules" / "@h3" / "tool"
    wrapper = pkg / "bin" / "tool.js"
    wrapper.parent.mkdir(parents=True)
    # The wrapper itself cannot run here (no such node): probing it would say "missing".
    wrapper.write_text("#!/usr/bin/env h3-no-such-node\n")
    wrapper.chmod(0o755)
    arch = "x64"
    triple = "x86_64-unknown-linux-musl"
    plat = "linux"
    if sys.platform == "darwin":
        plat, triple = "darwin", "x86_64-apple-darwin"
    native_dir = pkg / "node_modules" / "@h3" / f"tool-{plat}-{arch}" / "vendor" / triple / "tool"
    native = write_script(
        native_dir / "tool",
        """case "$1" in
  --version) echo "native 9.9.9";;
  env) echo "$PATH"; echo "EXTRA=$EXTRA"; echo "SECRET=${SECRET-unset}";;
esac
""",
    )
    (lab.bin / "h3-tool").symlink_to(wrapper)
    seen: list[str] = []

    def capture(text: str) -> list[ModelOption] | None:
        seen.append(text)
        return None

    defn = make_def(
        "tool",
        bin="h3-tool",
        node_wrapper_native=NodeWrapperNative("@h3/tool-", "tool", "tool"),
        list_models=ListModels(args=("env",), parse=capture),
        env={"EXTRA": "from-def"},
        strip_env=(EnvStripRule(keys=("SECRET",), unless_set=("SECRET_BASE_URL",)),),
    )
    interp = str(lab.root / "interp")
    result = lab.one(defn, env=lab.env(SECRET="s3"), arch=arch, interpreter_dir=interp)
    assert result.available is True
    assert result.path == str(lab.bin / "h3-tool")
    assert result.launch_path == str(native)
    assert result.version == "native 9.9.9"
    path_line, extra_line, secret_line = seen[0].splitlines()
    # interpreter dir, the wrapper's dir, the native dir, then the existing PATH (lab.bin is
    # already there, so it is not repeated), then the toolchain dirs.
    entries = path_line.split(":")
    assert entries[:4] == [interp, str(lab.bin), str(native_dir), SYSTEM_PATH.split(":")[0]]
    assert entries.count(str(lab.bin)) == 1
    assert str(lab.home / ".bun" / "bin") in entries
    assert extra_line == "EXTRA=from-def"
    assert secret_line == "SECRET=unset"


@pytest.mark.posix
@pytest.mark.rule("DETECT-LAUNCHPATH-001")
def test_toolchain_interpreter_resolves_in_the_probe_env(lab: Lab) -> None:
    """seed 002 §5.3: a `#!/usr/bin/env bun` CLI whose bun lives in ~/.bun/bin still runs."""
    write_script(lab.home / ".bun" / "bin" / "h3bun", 'echo "h3bun ran $2"\n')
    path = lab.bin / "h3-pi"
    path.write_text("#!/usr/bin/env h3bun\n")
    path.chmod(0o755)
    result = lab.one(make_def("pi", bin="h3-pi"))
    assert result.available is True
    assert result.version == "h3bun ran --version"


@pytest.mark.posix
@pytest.mark.rule("DETECT-LAUNCHPATH-001")
def test_invalid_override_is_reported_and_path_is_used(lab: Lab) -> None:
    defn = lab.agent("a", VERSION_OK, bin_env_key="H3A_BIN")
    result = lab.one(defn, env=lab.env(H3A_BIN="relative/h3-a"))
    assert result.available is True and result.path == str(lab.bin / "h3-a")
    assert _codes(result) == [DiagnosticCode.OVERRIDE_IGNORED]
    override = write_script(lab.root / "custom" / "h3-a", 'echo "custom 2.0"\n')
    result = lab.one(defn, env=lab.env(H3A_BIN=str(override)))
    assert result.path == str(override) and result.version == "custom 2.0"


# --------------------------------------------------------------------------- timeouts


def _canned_runner(calls: list[tuple[tuple[str, ...], float, int]]) -> Any:
    async def runner(
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        timeout_s: float,
        max_output_bytes: int,
        cwd: str | None = None,
    ) -> ProbeResult:
        calls.append((tuple(argv[1:]), timeout_s, max_output_bytes))
        return ProbeResult(
            argv=tuple(argv),
            stdout="companion 1\nm-1\n",
            stderr="",
            exit_code=0,
            signal=None,
            timed_out=False,
            os_error=None,
            output_overflow=False,
            duration_s=0.0,
        )

    return runner


@pytest.mark.rule("DETECT-TIMEOUT-002")
def test_default_and_declared_probe_timeouts() -> None:
    fs = FakeFileSystem({"/bin/tool": b"x"})
    full: dict[str, Any] = {
        "help_args": ("--help",),
        "capability_flags": {"--x": "x"},
        "list_models": ListModels(args=("models",), parse=_parse_lines),
        "auth_probe": AuthProbe(args=("auth",)),
        "compatibility_probe": CompatibilityProbe(args=("--probe",), parse=lambda t: t),
    }
    calls: list[tuple[tuple[str, ...], float, int]] = []
    detect_all_sync(
        [make_def("tool", **full)],
        env={"PATH": "/bin"},
        platform="linux",
        home="/h",
        fs=fs,
        runner=_canned_runner(calls),
    )
    timeouts = {args: t for args, t, _ in calls}
    assert timeouts == {
        ("--version",): 3.0,
        ("--probe",): 5.0,
        ("--help",): 5.0,
        ("models",): 5.0,
        ("auth",): 5.0,
    }
    declared: dict[str, Any] = {
        **full,
        "version_probe_timeout_ms": 15_000,
        "list_models": ListModels(args=("models",), parse=_parse_lines, timeout_ms=60_000),
        "auth_probe": AuthProbe(args=("auth",), timeout_ms=1_500),
        "compatibility_probe": CompatibilityProbe(
            args=("--probe",), parse=lambda t: t, timeout_ms=10_000
        ),
    }
    calls.clear()
    detect_all_sync(
        [make_def("tool", **declared)],
        env={"PATH": "/bin"},
        platform="linux",
        home="/h",
        fs=fs,
        runner=_canned_runner(calls),
    )
    timeouts = {args: t for args, t, _ in calls}
    assert timeouts == {
        ("--version",): 15.0,
        ("--probe",): 10.0,
        ("--help",): 5.0,
        ("models",): 60.0,
        ("auth",): 1.5,
    }
    assert [args for args, _, _ in calls][:2] == [("--version",), ("--probe",)]


# --------------------------------------------------------------------------- concurrency


@pytest.mark.posix
@pytest.mark.rule("DETECT-PARALLEL-001")
def test_all_defs_are_probed_concurrently(lab: Lab) -> None:
    n = 8
    defs = [
        lab.agent(f"p{i}", 'case "$1" in --version) sleep 0.5; echo "p 1.0";; esac\n')
        for i in range(n)
    ]
    start = time.monotonic()
    results = lab.detect(defs)
    elapsed = time.monotonic() - start
    assert [r.version for r in results] == ["p 1.0"] * n
    assert elapsed < n * 0.5 * 0.6, f"{n} probes of 0.5 s took {elapsed:.2f} s: not concurrent"


@pytest.mark.posix
@pytest.mark.rule("DETECT-CONCURRENT-001")
def test_help_models_and_auth_run_concurrently(lab: Lab) -> None:
    body = """case "$1" in
  --version) echo "fake 1.0";;
  --help) sleep 0.5; echo "--add-dir";;
  models) sleep 0.5; echo m-1;;
  auth) sleep 0.5; echo "Logged in";;
esac
"""
    defn = lab.agent(
        "a",
        body,
        help_args=("--help",),
        capability_flags={"--add-dir": "addDir"},
        list_models=ListModels(args=("models",), parse=_parse_lines),
        auth_probe=AuthProbe(args=("auth",)),
    )
    start = time.monotonic()
    result = lab.one(defn)
    elapsed = time.monotonic() - start
    assert result.capabilities == {"addDir": True}
    assert result.models_source == "live" and result.auth_status is AuthStatus.OK
    assert elapsed < 3 * 0.5 * 0.6, f"3 probes of 0.5 s took {elapsed:.2f} s: not concurrent"


@pytest.mark.posix
@pytest.mark.rule("DETECT-PARALLEL-001")
def test_concurrency_limit_bounds_defs_in_flight(lab: Lab) -> None:
    defs = [
        lab.agent(f"c{i}", 'case "$1" in --version) sleep 0.15; echo "c 1";; esac\n')
        for i in range(5)
    ]

    def counting_runner(active: set[str], peaks: list[int]) -> Any:
        async def runner(argv: Sequence[str], **kw: Any) -> ProbeResult:
            active.add(argv[0])
            peaks.append(len(active))
            try:
                return await run_probe(argv, **kw)
            finally:
                active.discard(argv[0])

        return runner

    peaks: list[int] = []
    results = lab.detect(defs, concurrency=2, runner=counting_runner(set(), peaks))
    assert all(r.available for r in results)
    assert max(peaks) == 2
    peaks.clear()
    lab.detect(defs, runner=counting_runner(set(), peaks))
    assert max(peaks) == 5


# --------------------------------------------------------------------------- isolation, order


@pytest.mark.posix
@pytest.mark.rule("DETECT-ISOLATION-001", "DETECT-COMPAT-001")
def test_a_raising_parse_only_affects_its_own_def(lab: Lab) -> None:
    def explode(text: str) -> str:
        raise RuntimeError("parser bug")

    good_a = lab.agent("a", VERSION_OK)
    bad = lab.agent(
        "bad", VERSION_OK, compatibility_probe=CompatibilityProbe(args=("x",), parse=explode)
    )
    good_c = lab.agent("c", VERSION_OK)
    results = lab.detect([good_a, bad, good_c])
    assert [r.id for r in results] == ["a", "bad", "c"]
    assert [r.available for r in results] == [True, False, True]
    assert _codes(results[1]) == [DiagnosticCode.INCOMPATIBLE]
    assert "RuntimeError: parser bug" in results[1].diagnostics[0].message


class _ExplodingFs(RealFileSystem):
    def __init__(self, poison: str) -> None:
        self.poison = poison

    def is_file(self, path: str) -> bool:
        if path.endswith(self.poison):
            raise RuntimeError(f"disk on fire at {path}")
        return super().is_file(path)


@pytest.mark.posix
@pytest.mark.rule("DETECT-ISOLATION-001")
def test_an_exception_inside_one_def_probe_is_isolated(lab: Lab) -> None:
    defs = [lab.agent("a", VERSION_OK), lab.agent("boom", VERSION_OK), lab.agent("c", VERSION_OK)]
    results = detect_all_sync(
        defs,
        env=lab.env(),
        platform=sys.platform,
        home=str(lab.home),
        fs=_ExplodingFs("h3-boom"),
    )
    assert [r.available for r in results] == [True, False, True]
    crashed = results[1]
    assert _codes(crashed) == [DiagnosticCode.PROBE_CRASHED]
    assert "RuntimeError: disk on fire" in crashed.diagnostics[0].message
    assert crashed.models == FALLBACK and crashed.models_source == "fallback"


ORDER_SLEEPS = {"slow": 0.9, "fast": 0.0, "mid": 0.45}


def _order_defs(lab: Lab) -> list[AgentDef]:
    return [
        lab.agent(name, f'case "$1" in --version) sleep {delay}; echo "{name} 1";; esac\n')
        for name, delay in ORDER_SLEEPS.items()
    ]


@pytest.mark.posix
@pytest.mark.rule("DETECT-ORDER-001")
def test_stream_yields_in_completion_order(lab: Lab) -> None:
    defs = _order_defs(lab)

    async def collect() -> list[str]:
        out: list[str] = []
        async for result in detect_stream(
            defs, env=lab.env(), home=str(lab.home), fs=RealFileSystem()
        ):
            out.append(result.id)
        return out

    assert asyncio.run(collect()) == ["fast", "mid", "slow"]


@pytest.mark.posix
@pytest.mark.rule("DETECT-ORDER-002")
def test_batch_returns_registry_order(lab: Lab) -> None:
    defs = _order_defs(lab)
    results = asyncio.run(detect_all(defs, env=lab.env(), home=str(lab.home), fs=RealFileSystem()))
    assert [r.id for r in results] == ["slow", "fast", "mid"]
    assert [r.version for r in results] == ["slow 1", "fast 1", "mid 1"]


@pytest.mark.posix
@pytest.mark.rule("DETECT-ORDER-001", "DETECT-TIMEOUT-001")
def test_closing_the_stream_early_kills_pending_probes(lab: Lab) -> None:
    pids = lab.root / "pids"
    pids.mkdir()
    hung = [
        lab.agent(
            f"hang{i}", f'echo $$ > "{pids}/{i}"\nexec sleep 30\n', version_probe_timeout_ms=60_000
        )
        for i in range(2)
    ]
    first = lab.agent("first", 'case "$1" in --version) sleep 0.4; echo "first 1";; esac\n')

    async def take_one() -> str:
        stream = detect_stream(
            [*hung, first], env=lab.env(), home=str(lab.home), fs=RealFileSystem()
        )
        try:
            async for result in stream:
                return result.id
        finally:
            await stream.aclose()
        return ""

    assert asyncio.run(take_one()) == "first"
    written = list(pids.iterdir())
    assert len(written) == 2
    for pidfile in written:
        assert is_gone(int(pidfile.read_text())), "a pending probe outlived the closed stream"


@pytest.mark.posix
def test_to_json_shape(lab: Lab) -> None:
    result = lab.one(lab.agent("a", VERSION_OK, capability_flags={"--x": "x"}))
    payload = result.to_json()
    assert list(payload) == [
        "id",
        "name",
        "available",
        "path",
        "launch_path",
        "version",
        "capabilities",
        "models",
        "models_source",
        "diagnostics",
    ]
    assert payload["models"] == [
        {"id": "default", "label": "Default (CLI config)"},
        {
            "id": "fb-1",
            "label": "Fallback One",
        },
    ]
    assert payload["diagnostics"] == []
