"""``harness dsh setup`` against the fake ``dsh`` (``fake_clis/dsh.py``) as a real process.

Rules: DSHSETUP-VERIFY-001, DSHSETUP-MISSING-001, DSHSETUP-VERSION-001, DSHSETUP-VERSION-002,
DSHSETUP-EXISTING-001, DSHSETUP-CONFIRM-001, DSHSETUP-PINNED-001, DSHSETUP-PROBE-001,
DSHSETUP-SECRET-001.

The fake's profile state comes from ``FAKE_DSH_PROFILE`` (missing / incompatible / installed)
until ``plugin add`` writes ``<home>/.dsh/profiles/open-design/package.json``, which then
wins; its ``plugin_add`` record holds the profile, the tarball path and the SHA-256 of the
bytes it read (seed 001 §4). Every call is also logged by the shim (see conftest).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import pexpect
import psutil
import pytest

from harness.cli import _build_parser, main
from harness.defs.registry import get_agent_def
from harness.host.launch import RealFileSystem
from harness.runtime.detect import DetectionResult, DiagnosticCode, detect_agent
from harness.runtime.dsh_setup import (
    DshSetupError,
    SetupFailure,
    SetupReport,
    SetupStatus,
    load_bundle,
    read_manifest,
    setup_dsh,
)
from tests.dsh_setup.conftest import DshWorld
from tests.fakes.conftest import REPO_ROOT

pytestmark = pytest.mark.posix

MANIFEST = read_manifest()
EMBEDDED = Path(str(REPO_ROOT / "harness" / "profile_bundle" / MANIFEST.file))
#: Not key-shaped on purpose: only the env-value redaction can catch it.
SECRET = "dskey-7f3a9c2e1b4d8a6f"


def run_setup(
    world: DshWorld,
    *,
    assume_yes: bool = True,
    answer: bool | None = None,
    asked: list[str] | None = None,
    extra: Mapping[str, str] | None = None,
    **env: str,
) -> SetupReport:
    """One setup against the fake; each question asked is appended to ``asked``."""
    questions = asked if asked is not None else []

    def ask(question: str) -> bool:
        questions.append(question)
        assert answer is not None
        return answer

    report = setup_dsh(
        assume_yes=assume_yes,
        ask=ask if answer is not None else None,
        env={**world.env(**env), **(extra or {})},
        platform=sys.platform,
        home=str(world.home),
    )
    return report


def plugin_calls(world: DshWorld) -> list[list[str]]:
    return [c for c in world.calls() if c[:1] == ["plugin"]]


# --------------------------------------------------------------------------- the install


@pytest.mark.rule("DSHSETUP-PINNED-001", "DSHSETUP-PROBE-001")
def test_happy_path_installs_the_embedded_bundle(world: DshWorld) -> None:
    report = run_setup(world, FAKE_DSH_PROFILE="missing")
    assert report.status is SetupStatus.READY
    assert report.installed is True
    assert report.version == "0.1.2-rc.1" and report.warning is None
    assert report.plugin_version == MANIFEST.version == "0.1.0"
    assert world.calls() == [
        ["--version"],
        ["--profile", "open-design", "--probe"],
        ["plugin", "--profile", "open-design", "add", str(EMBEDDED)],
        ["--profile", "open-design", "--probe"],
    ]
    (added,) = world.plugin_adds()
    assert added["profile"] == "open-design"
    assert added["package"] == "@open-design/dsh-runtime" and added["version"] == "0.1.0"
    # What dsh read is byte for byte what the manifest pins.
    assert added["sha256"] == MANIFEST.sha256
    assert json.loads(world.marker.read_text())["dshPlugin"]["sha256"] == MANIFEST.sha256


@pytest.mark.rule("DSHSETUP-PROBE-001")
def test_missing_profile_then_setup_then_detection_finds_it(world: DshWorld) -> None:
    defn = get_agent_def("deepseek-harness")
    env = world.env(FAKE_DSH_PROFILE="missing")

    def detect() -> DetectionResult:
        return asyncio.run(
            detect_agent(
                defn, env=env, platform=sys.platform, home=str(world.home), fs=RealFileSystem()
            )
        )

    before = detect()
    assert not before.available
    assert [d.code for d in before.diagnostics] == [DiagnosticCode.INCOMPATIBLE]
    report = run_setup(world, FAKE_DSH_PROFILE="missing")
    assert report.installed
    after = detect()
    assert after.available
    assert after.companion_version == "0.1.0"


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_a_shim_named_dsh_on_path_is_used_too(world: DshWorld) -> None:
    report = run_setup(world, via="PATH", FAKE_DSH_PROFILE="missing")
    assert report.installed and len(world.plugin_adds()) == 1


@pytest.mark.rule("DSHSETUP-EXISTING-001", "DSHSETUP-PROBE-001")
def test_an_incompatible_profile_is_repaired(world: DshWorld) -> None:
    report = run_setup(world, FAKE_DSH_PROFILE="incompatible")
    assert report.installed and report.plugin_version == "0.1.0"
    assert report.reason is not None and "protocol_version" in report.reason
    assert len(world.plugin_adds()) == 1


@pytest.mark.rule("DSHSETUP-EXISTING-001")
def test_a_compatible_profile_is_not_reinstalled_nor_asked_about(world: DshWorld) -> None:
    asked: list[str] = []
    report = run_setup(
        world, assume_yes=False, answer=True, asked=asked, FAKE_DSH_PROFILE="installed"
    )
    assert report.status is SetupStatus.READY
    assert report.installed is False and report.plugin_version == "0.1.0"
    assert asked == []
    assert plugin_calls(world) == [] and world.plugin_adds() == []
    assert not world.marker.exists()


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_cancelling_leaves_the_profile_unchanged(world: DshWorld) -> None:
    asked: list[str] = []
    report = run_setup(
        world, assume_yes=False, answer=False, asked=asked, FAKE_DSH_PROFILE="missing"
    )
    assert report.status is SetupStatus.CANCELLED
    assert len(asked) == 1
    assert plugin_calls(world) == [] and not world.marker.exists()
    # Asking again gives the same prompt again (seed 001 §4), and yes installs.
    again = run_setup(world, assume_yes=False, answer=True, FAKE_DSH_PROFILE="missing")
    assert again.installed and world.marker.exists()


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_no_terminal_and_no_yes_refuses(world: DshWorld) -> None:
    with pytest.raises(DshSetupError) as caught:
        run_setup(world, assume_yes=False, FAKE_DSH_PROFILE="missing")
    assert caught.value.failure is SetupFailure.CONFIRMATION_REQUIRED
    assert plugin_calls(world) == [] and not world.marker.exists()


# --------------------------------------------------------------------------- refusals


@pytest.mark.rule("DSHSETUP-VERIFY-001")
def test_a_tampered_bundle_is_refused_before_dsh_is_called(world: DshWorld, tmp_path: Path) -> None:
    copy = tmp_path / "tampered" / MANIFEST.file
    copy.parent.mkdir()
    shutil.copyfile(EMBEDDED, copy)
    data = bytearray(copy.read_bytes())
    data[-10] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(DshSetupError) as caught:
        setup_dsh(
            assume_yes=True,
            ask=None,
            env=world.env(FAKE_DSH_PROFILE="missing"),
            home=str(world.home),
            bundle=load_bundle(copy, MANIFEST),
        )
    assert caught.value.failure is SetupFailure.BUNDLE_TAMPERED
    assert caught.value.code == "DSH_SETUP_BUNDLE_TAMPERED"
    # dsh was never started: no call, no record, no plugin add, no profile.
    assert world.calls() == []
    assert world.records_of() == [] and world.plugin_adds() == []
    assert not world.marker.exists()


@pytest.mark.rule("DSHSETUP-VERIFY-001")
def test_the_same_copy_untampered_installs(world: DshWorld, tmp_path: Path) -> None:
    # The control for the test above: the copy mechanism itself is not what fails.
    copy = tmp_path / "copy" / MANIFEST.file
    copy.parent.mkdir()
    shutil.copyfile(EMBEDDED, copy)
    report = setup_dsh(
        assume_yes=True,
        ask=None,
        env=world.env(FAKE_DSH_PROFILE="missing"),
        home=str(world.home),
        bundle=load_bundle(copy, MANIFEST),
    )
    assert report.installed
    (added,) = world.plugin_adds()
    assert added["tarball"] == str(copy) and added["sha256"] == MANIFEST.sha256


@pytest.mark.rule("DSHSETUP-VERSION-002")
def test_an_untested_version_warns_and_installs(world: DshWorld) -> None:
    report = run_setup(world, FAKE_DSH_PROFILE="missing", FAKE_CLI_VERSION="0.9.0")
    assert report.version == "0.9.0"
    assert report.warning is not None and "not a tested version" in report.warning
    assert report.installed and len(world.plugin_adds()) == 1


@pytest.mark.rule("DSHSETUP-VERSION-001")
@pytest.mark.parametrize("version", ["nightly", "dsh (development build)"])
def test_an_unparseable_version_is_an_error(world: DshWorld, version: str) -> None:
    with pytest.raises(DshSetupError) as caught:
        run_setup(world, FAKE_DSH_PROFILE="missing", FAKE_CLI_VERSION=version)
    assert caught.value.failure is SetupFailure.VERSION_UNUSABLE
    assert caught.value.rule == "DSHSETUP-VERSION-001"
    assert world.calls() == [["--version"]]
    assert world.plugin_adds() == [] and not world.marker.exists()


@pytest.mark.rule("DSHSETUP-MISSING-001")
def test_no_dsh_anywhere_is_a_typed_error(world: DshWorld, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = world.env(via="none", PATH=str(empty))
    with pytest.raises(DshSetupError) as caught:
        setup_dsh(assume_yes=True, ask=None, env=env, home=str(world.home))
    assert caught.value.failure is SetupFailure.NOT_FOUND
    assert "official DeepSeek Harness" in caught.value.message
    assert world.calls() == []


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_environment_variables_cannot_redirect_package_profile_or_destination(
    world: DshWorld, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = tmp_path / "evil.tgz"
    shutil.copyfile(EMBEDDED, evil)
    attempts = dict.fromkeys(
        ("DSH_PROFILE", "OD_DSH_PROFILE", "HARNESS_DSH_PROFILE", "DSH_SETUP_PROFILE"), "evil"
    )
    attempts.update(
        dict.fromkeys(
            (
                "DSH_PACKAGE",
                "DSH_PLUGIN_PACKAGE",
                "HARNESS_DSH_BUNDLE",
                "HARNESS_DSH_TARBALL",
                "OD_DSH_RUNTIME_TARBALL",
            ),
            str(evil),
        )
    )
    attempts.update(HARNESS_DSH_DEST=str(tmp_path / "elsewhere"), DSH_PLUGIN_DIR=str(tmp_path))
    # Both ways in: the env handed to the setup, and the process env the command reads.
    report = run_setup(world, extra=attempts, FAKE_DSH_PROFILE="missing")
    assert report.installed
    world.marker.unlink()
    cli_env(world, monkeypatch, FAKE_DSH_PROFILE="missing", **attempts)
    assert main(["dsh", "setup", "--yes"]) == 0
    adds = world.plugin_adds()
    assert len(adds) == 2
    for added in adds:
        assert added["profile"] == "open-design"
        assert added["tarball"] == str(EMBEDDED) and added["sha256"] == MANIFEST.sha256
    assert world.marker.exists() and not (tmp_path / "elsewhere").exists()


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError(f"no subcommand {name!r}")


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_the_setup_command_has_no_option_for_package_profile_or_destination() -> None:
    parser = _build_parser()
    setup = subparser(subparser(parser, "dsh"), "setup")
    options = {s for action in setup._actions for s in action.option_strings}
    assert options == {"-h", "--help", "--yes", "--json"}
    assert [a for a in setup._actions if not a.option_strings] == []
    for bad in (
        ["--profile", "evil"],
        ["--package", "x.tgz"],
        ["--tarball", "x.tgz"],
        ["--dest", "/tmp"],
        ["x.tgz"],
    ):
        with pytest.raises(SystemExit) as caught:
            parser.parse_args(["dsh", "setup", *bad])
        assert caught.value.code == 2


# --------------------------------------------------------------------------- the command


def cli_env(world: DshWorld, monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    """Make ``os.environ`` exactly the world's env for an in-process ``harness`` call."""
    for key in list(os.environ):
        monkeypatch.delenv(key)
    for key, value in world.env(**env).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(world.home))


@pytest.mark.rule("DSHSETUP-PINNED-001", "DSHSETUP-PROBE-001")
def test_cli_json_report(
    world: DshWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env(world, monkeypatch, FAKE_DSH_PROFILE="missing")
    assert main(["dsh", "setup", "--yes", "--json"]) == 0
    out = capsys.readouterr().out
    report = json.loads(out)
    assert report["status"] == "ready" and report["installed"] is True
    assert {"version", "warning", "installed", "plugin_version"} <= set(report)
    assert report["plugin_version"] == "0.1.0" and report["sha256"] == MANIFEST.sha256


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_cli_without_a_terminal_or_yes_refuses(
    world: DshWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env(world, monkeypatch, FAKE_DSH_PROFILE="missing")
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # noqa: SIM115
    assert main(["dsh", "setup", "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["code"] == "DSH_SETUP_CONFIRMATION_REQUIRED"
    assert "--yes" in captured.err
    assert plugin_calls(world) == [] and not world.marker.exists()


def _spawn_setup(world: DshWorld, **env: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "harness.cli", "dsh", "setup"],
        env=world.env(**env),
        cwd=str(world.root),
        timeout=60,
        encoding="utf-8",
    )


def _close(child: pexpect.spawn) -> None:
    pid = child.pid
    child.close(force=True)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
@pytest.mark.parametrize(("answer", "code"), [("n", 1), ("", 1), ("y", 0)])
def test_cli_asks_on_a_terminal(world: DshWorld, answer: str, code: int) -> None:
    child = _spawn_setup(world, FAKE_DSH_PROFILE="missing")
    try:
        child.expect(r"Proceed\? \[y/N\] ")
        assert plugin_calls(world) == []  # nothing installed while the question is open
        assert str(EMBEDDED) in child.before
        child.sendline(answer)
        child.expect(pexpect.EOF)
        output = child.before
    finally:
        _close(child)
    assert child.exitstatus == code
    if code == 0:
        assert "installed @open-design/dsh-runtime 0.1.0" in output
        assert len(world.plugin_adds()) == 1 and world.marker.exists()
    else:
        assert "cancelled: nothing was installed" in output
        assert plugin_calls(world) == [] and not world.marker.exists()


# --------------------------------------------------------------------------- secrets

_LEAKY_DSH = """#!/bin/sh
# A dsh that leaks the user's key on stderr when its install fails.
case "$1" in
  --version) echo 0.1.2-rc.1 ;;
  --profile) echo "error: profile 'open-design' is not installed" >&2; exit 1 ;;
  plugin) echo "npm ERR! 401 token $DEEPSEEK_API_KEY rejected; Bearer $DEEPSEEK_API_KEY" >&2
          exit 1 ;;
esac
"""


@pytest.mark.rule("DSHSETUP-SECRET-001")
def test_no_secret_in_errors_even_when_dsh_prints_it(
    world: DshWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world.dsh.write_text(_LEAKY_DSH, encoding="utf-8")
    with pytest.raises(DshSetupError) as caught:
        run_setup(world, DEEPSEEK_API_KEY=SECRET)
    assert caught.value.failure is SetupFailure.INSTALL_FAILED
    assert "npm ERR! 401" in caught.value.message  # the cause is kept ...
    assert SECRET not in str(caught.value)  # ... the key is not
    cli_env(world, monkeypatch, DEEPSEEK_API_KEY=SECRET)
    assert main(["dsh", "setup", "--yes", "--json"]) == 1
    captured = capsys.readouterr()
    assert "INSTALL_FAILED" in captured.out
    assert SECRET not in captured.out and SECRET not in captured.err


@pytest.mark.rule("DSHSETUP-SECRET-001")
def test_no_secret_in_a_successful_report(
    world: DshWorld, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env(world, monkeypatch, FAKE_DSH_PROFILE="missing", DEEPSEEK_API_KEY=SECRET)
    assert main(["dsh", "setup", "--yes"]) == 0
    captured = capsys.readouterr()
    assert "installed" in captured.out
    assert SECRET not in captured.out and SECRET not in captured.err
