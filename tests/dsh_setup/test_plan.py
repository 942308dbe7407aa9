"""The pure setup planner (``harness.runtime.dsh_setup.plan_step``): every decision, no process.

Rules: DSHSETUP-VERIFY-001, DSHSETUP-MISSING-001, DSHSETUP-VERSION-001, DSHSETUP-VERSION-002,
DSHSETUP-EXISTING-001, DSHSETUP-CONFIRM-001, DSHSETUP-PINNED-001, DSHSETUP-PROBE-001.

Probe frames are written by hand from seed 001 §5; ``dsh --version`` lines from the def's
tested versions (ref §8.3).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.runtime.dsh_setup import (
    PACKAGE,
    PROFILE,
    AskConfirmation,
    Bundle,
    BundleManifest,
    RunCommand,
    SetupDone,
    SetupFacts,
    SetupFailed,
    SetupFailure,
    SetupStatus,
    Step,
    StepKind,
    install_argv,
    plan_step,
)
from harness.runtime.probe import ProbeResult

DSH = "/opt/dsh/bin/dsh"
SHA = "ab" * 32
TARBALL = "/opt/harness/profile_bundle/open-design-dsh-runtime-0.1.0.tgz"
MANIFEST = BundleManifest(
    file="open-design-dsh-runtime-0.1.0.tgz",
    sha256=SHA,
    profile="open-design",
    package="@open-design/dsh-runtime",
    version="0.1.0",
)
BUNDLE = Bundle(manifest=MANIFEST, path=TARBALL, sha256=SHA)


def result(
    stdout: str = "",
    stderr: str = "",
    *,
    code: int | None = 0,
    os_error: str | None = None,
    timed_out: bool = False,
) -> ProbeResult:
    return ProbeResult(
        argv=(),
        stdout=stdout,
        stderr=stderr,
        exit_code=None if os_error or timed_out else code,
        signal=None,
        timed_out=timed_out,
        os_error=os_error,
        output_overflow=False,
        duration_s=0.01,
    )


def probe_frame(**changes: Any) -> str:
    """seed 001 §5: the probe frame, one JSON line."""
    frame: dict[str, Any] = {
        "v": 1,
        "type": "probe",
        "runtime": "open-design",
        "protocol_version": 1,
        "plugin_version": "0.1.0",
        "capabilities": {
            "session_resume": True,
            "session_cancel": True,
            "structured_events": True,
        },
    }
    frame.update(changes)
    return json.dumps(frame) + "\n"


VERSION_OK = result("0.1.2-rc.1\n")
PROFILE_MISSING = result(
    stderr="error: profile 'open-design' is not installed; install it with `dsh plugin ...`",
    code=1,
)
PROBE_OK = result(probe_frame())
INSTALL_OK = result("added @open-design/dsh-runtime@0.1.0 to profile open-design\n")


def facts(**changes: Any) -> SetupFacts:
    base = SetupFacts(bundle=BUNDLE, launch_path=DSH)
    return dataclasses.replace(base, **changes)


def walk(
    start: SetupFacts,
    results: dict[StepKind, ProbeResult],
    answer: bool | None = None,
) -> tuple[list[RunCommand], list[str], Step]:
    """Drive the planner like the IO loop does; return commands run, questions, last step."""
    commands: list[RunCommand] = []
    questions: list[str] = []
    current = start
    for _ in range(12):
        step = plan_step(current)
        if isinstance(step, AskConfirmation):
            questions.append(step.question)
            assert answer is not None, "the planner asked, but the test gave no answer"
            current = dataclasses.replace(current, confirmed=answer)
            continue
        if not isinstance(step, RunCommand):
            return commands, questions, step
        commands.append(step)
        got = results[step.kind]
        if step.kind is StepKind.VERSION:
            current = dataclasses.replace(current, version=got)
        elif step.kind is StepKind.PRECHECK:
            current = dataclasses.replace(current, precheck=got)
        elif step.kind is StepKind.INSTALL:
            current = dataclasses.replace(current, install=got)
        else:
            current = dataclasses.replace(current, probe=got)
    raise AssertionError("the planner did not finish within 12 steps")


def failure_of(step: Step) -> SetupFailure:
    assert isinstance(step, SetupFailed), f"expected a failure, got {step!r}"
    return step.error.failure


HAPPY = {
    StepKind.VERSION: VERSION_OK,
    StepKind.PRECHECK: PROFILE_MISSING,
    StepKind.INSTALL: INSTALL_OK,
    StepKind.PROBE: PROBE_OK,
}


# --------------------------------------------------------------------------- the whole walk


@pytest.mark.rule("DSHSETUP-PINNED-001", "DSHSETUP-PROBE-001", "DSHSETUP-CONFIRM-001")
def test_missing_profile_is_confirmed_installed_and_probed() -> None:
    commands, questions, last = walk(facts(interactive=True), HAPPY, answer=True)
    assert [c.kind for c in commands] == [
        StepKind.VERSION,
        StepKind.PRECHECK,
        StepKind.INSTALL,
        StepKind.PROBE,
    ]
    assert commands[0].argv == (DSH, "--version")
    assert commands[1].argv == commands[3].argv == (DSH, "--profile", "open-design", "--probe")
    # seed 001 §4: `dsh plugin --profile open-design add <embedded pinned tarball>`.
    assert commands[2].argv == (DSH, "plugin", "--profile", "open-design", "add", TARBALL)
    assert len(questions) == 1
    assert isinstance(last, SetupDone)
    report = last.report
    assert report.status is SetupStatus.READY
    assert report.installed is True
    assert report.version == "0.1.2-rc.1"
    assert report.warning is None
    assert report.plugin_version == "0.1.0"
    assert report.reason is not None and "exited 1" in report.reason
    assert report.to_json()["sha256"] == SHA


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_the_question_names_package_version_digest_and_command() -> None:
    _, questions, _ = walk(facts(interactive=True), HAPPY, answer=True)
    (question,) = questions
    assert "@open-design/dsh-runtime 0.1.0" in question
    assert SHA in question
    assert f"dsh plugin --profile open-design add {TARBALL}" in question
    assert "not installed" in question  # why the install is needed


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_yes_installs_without_asking() -> None:
    commands, questions, last = walk(facts(assume_yes=True), HAPPY)
    assert questions == []
    assert StepKind.INSTALL in [c.kind for c in commands]
    assert isinstance(last, SetupDone) and last.report.installed


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_cancel_changes_nothing() -> None:
    commands, questions, last = walk(facts(interactive=True), HAPPY, answer=False)
    assert len(questions) == 1
    assert [c.kind for c in commands] == [StepKind.VERSION, StepKind.PRECHECK]
    assert isinstance(last, SetupDone)
    assert last.report.status is SetupStatus.CANCELLED
    assert last.report.installed is False and last.report.plugin_version is None


@pytest.mark.rule("DSHSETUP-CONFIRM-001")
def test_no_terminal_and_no_yes_refuses_before_installing() -> None:
    commands, questions, last = walk(facts(interactive=False, assume_yes=False), HAPPY)
    assert questions == []
    assert StepKind.INSTALL not in [c.kind for c in commands]
    assert failure_of(last) is SetupFailure.CONFIRMATION_REQUIRED
    assert "--yes" in str(last.error)  # type: ignore[union-attr]


# --------------------------------------------------------------------------- the bundle


@pytest.mark.rule("DSHSETUP-VERIFY-001")
@pytest.mark.parametrize("changes", [{}, {"assume_yes": True}, {"version": VERSION_OK}])
def test_a_tampered_bundle_stops_before_any_command(changes: dict[str, Any]) -> None:
    tampered = dataclasses.replace(BUNDLE, sha256="cd" * 32)
    step = plan_step(facts(bundle=tampered, **changes))
    assert failure_of(step) is SetupFailure.BUNDLE_TAMPERED
    assert isinstance(step, SetupFailed)
    assert step.error.code == "DSH_SETUP_BUNDLE_TAMPERED"
    assert step.error.rule == "DSHSETUP-VERIFY-001"
    assert "cd" * 32 in step.error.message and SHA in step.error.message


@pytest.mark.rule("DSHSETUP-VERIFY-001")
@pytest.mark.parametrize(
    "field_value",
    [("package", "@evil/runtime"), ("profile", "evil")],
)
def test_a_manifest_for_another_package_or_profile_is_refused(
    field_value: tuple[str, str],
) -> None:
    field, value = field_value
    manifest = dataclasses.replace(MANIFEST, **{field: value})
    bundle = dataclasses.replace(BUNDLE, manifest=manifest)
    assert failure_of(plan_step(facts(bundle=bundle))) is SetupFailure.BUNDLE_INVALID


@pytest.mark.rule("DSHSETUP-VERIFY-001")
@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ([], "JSON object"),
        ({**dataclasses.asdict(MANIFEST), "version": ""}, "version"),
        ({k: v for k, v in dataclasses.asdict(MANIFEST).items() if k != "version"}, "version"),
        ({**dataclasses.asdict(MANIFEST), "sha256": "XY"}, "sha256"),
        ({**dataclasses.asdict(MANIFEST), "sha256": SHA.upper()}, "sha256"),
        ({**dataclasses.asdict(MANIFEST), "file": "../x.tgz"}, "file"),
    ],
)
def test_manifest_validation_names_the_field(data: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        BundleManifest.from_json(data)


# --------------------------------------------------------------------------- dsh itself


@pytest.mark.rule("DSHSETUP-MISSING-001")
def test_no_dsh_is_a_typed_error_pointing_to_the_installer() -> None:
    step = plan_step(facts(launch_path=None, override_problem="DSH_BIN='x' is not absolute"))
    assert failure_of(step) is SetupFailure.NOT_FOUND
    assert isinstance(step, SetupFailed)
    message = step.error.message
    assert "official DeepSeek Harness" in message and "DSH_BIN" in message
    assert "is not absolute" in message


@pytest.mark.rule("DSHSETUP-MISSING-001")
@pytest.mark.parametrize("broken", [result(os_error="ENOENT"), result(code=127), result(code=126)])
def test_a_dsh_that_cannot_run_is_not_found(broken: ProbeResult) -> None:
    commands, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.VERSION: broken})
    assert [c.kind for c in commands] == [StepKind.VERSION]
    assert failure_of(last) is SetupFailure.NOT_FOUND


@pytest.mark.rule("DSHSETUP-VERSION-001")
@pytest.mark.parametrize(
    "version",
    [
        result(code=1, stderr="boom"),
        result(timed_out=True),
        result(""),
        result("   \n\n"),
        result("nightly\n"),
        result("dsh version unknown\n"),
    ],
    ids=["exit-1", "timeout", "empty", "blank", "nightly", "words"],
)
def test_an_unusable_version_is_an_error_and_nothing_is_installed(version: ProbeResult) -> None:
    commands, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.VERSION: version})
    assert [c.kind for c in commands] == [StepKind.VERSION]
    assert failure_of(last) is SetupFailure.VERSION_UNUSABLE
    assert isinstance(last, SetupFailed) and last.error.rule == "DSHSETUP-VERSION-001"


@pytest.mark.rule("DSHSETUP-VERSION-002")
@pytest.mark.parametrize("line", ["0.9.0", "v0.3.1", "dsh 1.0.0-beta.2"])
def test_an_untested_version_warns_and_continues(line: str) -> None:
    commands, _, last = walk(
        facts(assume_yes=True), {**HAPPY, StepKind.VERSION: result(line + "\n")}
    )
    assert StepKind.INSTALL in [c.kind for c in commands]
    assert isinstance(last, SetupDone)
    assert last.report.status is SetupStatus.READY
    assert last.report.warning is not None and "not a tested version" in last.report.warning
    assert last.report.version == line.rsplit(maxsplit=1)[-1].lstrip("v")


@pytest.mark.rule("DSHSETUP-VERSION-002")
@pytest.mark.parametrize("line", ["0.1.2-rc.1", "v0.1.0-rc.8", "dsh 0.1.1-rc.2"])
def test_a_tested_version_gives_no_warning(line: str) -> None:
    _, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.VERSION: result(line + "\n")})
    assert isinstance(last, SetupDone) and last.report.warning is None


# --------------------------------------------------------------------------- profile state


@pytest.mark.rule("DSHSETUP-EXISTING-001")
@pytest.mark.parametrize("interactive", [True, False])
def test_a_compatible_profile_is_neither_asked_about_nor_reinstalled(interactive: bool) -> None:
    commands, questions, last = walk(
        facts(interactive=interactive), {**HAPPY, StepKind.PRECHECK: PROBE_OK}
    )
    assert questions == []
    assert [c.kind for c in commands] == [StepKind.VERSION, StepKind.PRECHECK]
    assert isinstance(last, SetupDone)
    assert last.report.status is SetupStatus.READY
    assert last.report.installed is False
    assert last.report.plugin_version == "0.1.0"


@pytest.mark.rule("DSHSETUP-EXISTING-001", "DSHSETUP-PROBE-001")
def test_an_incompatible_profile_is_repaired() -> None:
    incompatible = result(probe_frame(protocol_version=2))
    commands, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.PRECHECK: incompatible})
    assert StepKind.INSTALL in [c.kind for c in commands]
    assert isinstance(last, SetupDone) and last.report.installed
    assert last.report.reason is not None and "protocol_version" in last.report.reason


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_a_failed_install_is_a_typed_error_with_the_cause() -> None:
    failed = result(stderr="npm ERR! code E404\n", code=1)
    commands, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.INSTALL: failed})
    assert [c.kind for c in commands][-1] is StepKind.INSTALL
    assert failure_of(last) is SetupFailure.INSTALL_FAILED
    assert isinstance(last, SetupFailed)
    assert "E404" in last.error.message and "exited 1" in last.error.message


@pytest.mark.rule("DSHSETUP-PROBE-001")
@pytest.mark.parametrize(
    "probe",
    [
        result(probe_frame(protocol_version=2)),
        result(probe_frame(runtime="multica")),
        result(probe_frame(capabilities={"session_resume": False})),
        result(probe_frame(plugin_version="0.0.9")),
        result(probe_frame() + probe_frame()),
        result("not json\n"),
        result(stderr="error: profile 'open-design' is not installed", code=1),
        result(timed_out=True),
    ],
    ids=[
        "protocol-2",
        "other-runtime",
        "no-resume",
        "other-plugin-version",
        "two-frames",
        "not-json",
        "still-missing",
        "timeout",
    ],
)
def test_after_install_the_probe_must_be_compatible_and_pinned(probe: ProbeResult) -> None:
    commands, _, last = walk(facts(assume_yes=True), {**HAPPY, StepKind.PROBE: probe})
    assert [c.kind for c in commands][-1] is StepKind.PROBE
    assert failure_of(last) is SetupFailure.INCOMPATIBLE
    assert isinstance(last, SetupFailed) and last.error.rule == "DSHSETUP-PROBE-001"


# --------------------------------------------------------------------------- pinned inputs


@pytest.mark.rule("DSHSETUP-PINNED-001")
def test_nothing_a_caller_gives_can_name_package_profile_or_destination() -> None:
    # The facts are the planner's only input: none of them is a package, profile or path
    # other than the verified bundle itself.
    assert {f.name for f in dataclasses.fields(SetupFacts)} == {
        "bundle",
        "launch_path",
        "override_problem",
        "assume_yes",
        "interactive",
        "version",
        "precheck",
        "confirmed",
        "install",
        "probe",
    }
    assert install_argv(DSH, BUNDLE) == (DSH, "plugin", "--profile", PROFILE, "add", TARBALL)
    assert PROFILE == "open-design" and PACKAGE == "@open-design/dsh-runtime"


_RESULTS = st.sampled_from(
    [
        VERSION_OK,
        result("0.9.0\n"),
        result("nightly\n"),
        result(code=1),
        result(os_error="ENOENT"),
        result(timed_out=True),
        PROFILE_MISSING,
        PROBE_OK,
        result(probe_frame(protocol_version=2)),
        result(probe_frame(plugin_version="9.9.9")),
        INSTALL_OK,
        result(stderr="npm ERR!", code=1),
    ]
)


@pytest.mark.rule("DSHSETUP-PINNED-001", "DSHSETUP-CONFIRM-001", "DSHSETUP-VERIFY-001")
@given(
    outcomes=st.fixed_dictionaries({kind: _RESULTS for kind in StepKind}),
    assume_yes=st.booleans(),
    interactive=st.booleans(),
    answer=st.booleans(),
    tampered=st.booleans(),
    launch=st.sampled_from([DSH, "/home/u/.local/bin/dsh", "C:\\dsh\\dsh.cmd"]),
)
def test_any_walk_installs_only_the_pinned_bundle_with_consent(
    *,
    outcomes: dict[StepKind, ProbeResult],
    assume_yes: bool,
    interactive: bool,
    answer: bool,
    tampered: bool,
    launch: str,
) -> None:
    bundle = dataclasses.replace(BUNDLE, sha256="00" * 32) if tampered else BUNDLE
    start = SetupFacts(
        bundle=bundle, launch_path=launch, assume_yes=assume_yes, interactive=interactive
    )
    commands, questions, last = walk(start, outcomes, answer=answer)
    assert isinstance(last, (SetupDone, SetupFailed))
    if tampered:
        assert commands == [] and failure_of(last) is SetupFailure.BUNDLE_TAMPERED
        return
    installs = [c for c in commands if c.kind is StepKind.INSTALL]
    for install in installs:
        assert install.argv == (launch, "plugin", "--profile", "open-design", "add", TARBALL)
    if installs:
        assert assume_yes or (interactive and answer and len(questions) == 1)
    if questions:
        assert interactive and not assume_yes
    if isinstance(last, SetupDone) and last.report.installed:
        assert last.report.plugin_version == MANIFEST.version
    # Each command runs at most once, in the fixed order.
    kinds = [c.kind for c in commands]
    assert kinds == [k for k in StepKind if k in kinds]
