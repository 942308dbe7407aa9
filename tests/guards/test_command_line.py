"""Windows command lines that cannot carry an argument are refused (harness/guards/command_line.py).

Rules: WIN-CMDLINE-SHIM-001, WIN-CMDLINE-EXE-001. The properties run the argv the guard sees
through the parsers modelled in ``tests/guards/winsplit.py`` (cmd.exe ``/d /s /c`` with a
``%*``-forwarding shim and the C runtime; the C runtime and ``CommandLineToArgvW`` for a
direct launch): the guard accepts an argv exactly when the round trip gives it back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.cli import main
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext, Transport
from harness.guards.command_line import UnfaithfulCommandLineError, check_windows_command_line
from harness.guards.windows_cmdline import (
    cmd_shim_argument_loss,
    cmd_shim_command_line,
    describe_sequence,
    direct_exe_argument_loss,
    direct_exe_command_line,
)
from harness.runner import RunOutcome, run_agent
from harness.runner.types import RunRequest
from tests.guards import winsplit

SHIM = "C:\\npm\\deepseek.cmd"
EXE = "C:\\tools\\deepseek.exe"
#: The environment cmd.exe expands %NAME% from in the model (a secret among it).
ENV = {"PATH": "C:\\Windows", "SECRET": "sk-test-0000", "A": "expanded-a", "X Y": "xy"}

YOLO_PROMPT = 'copy "C:\\tmp\\" --yolo now'


def _shim_round_trip(argv: Sequence[str]) -> list[str] | None:
    """What the shim's program receives, or ``None`` when cmd.exe would split the line."""
    try:
        return winsplit.split_cmd_shim(cmd_shim_command_line(argv), ENV)
    except winsplit.CmdSplitError:
        return None


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return ["exec", "--auto", prompt, *extra_allowed_dirs]


def make_def(
    delivery: PromptDelivery = PromptDelivery.ARGV, transports: tuple[Transport, ...] = ()
) -> AgentDef:
    return AgentDef(
        id="fake-argv",
        name="Fake Argv CLI",
        bin="fake-argv",
        build_args=_build_args,
        stream_format="plain",
        prompt_delivery=delivery,
        max_prompt_arg_bytes=30_000 if delivery is PromptDelivery.ARGV else None,
        alt_transports=transports,
    )


# --- the facts as observed ---------------------------------------------------------------


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
def test_a_prompt_that_would_become_a_flag_is_refused() -> None:
    argv = [SHIM, "exec", "--auto", YOLO_PROMPT]
    # Control: through the shim the CLI would see --yolo as a flag of its own.
    assert _shim_round_trip(argv) == [SHIM, "exec", "--auto", 'copy "C:\\tmp"', "--yolo", "now"]
    loss = cmd_shim_argument_loss(argv)
    assert loss is not None
    assert (loss.index, loss.offset, loss.sequence) == (3, 12, '\\"')
    error = check_windows_command_line(make_def(), SHIM, argv[1:], prompt=YOLO_PROMPT)
    assert isinstance(error, UnfaithfulCommandLineError)
    assert error.code == "AGENT_ARGUMENT_UNREPRESENTABLE"
    assert error.rule == "WIN-CMDLINE-SHIM-001" and error.launch == "cmd-shim"
    assert str(error).startswith("[WIN-CMDLINE-SHIM-001] Fake Argv CLI on Windows runs through")
    assert "argument 3 (it carries the prompt)" in error.message
    assert '\\" (U+005C U+0022) at offset 12' in error.message
    assert "Nothing was started." in error.message
    assert YOLO_PROMPT not in error.message and "--yolo" not in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
@pytest.mark.parametrize(
    ("prompt", "offset", "sequence"),
    [("first line\nrm -rf ~", 10, "\n"), ("a\r\nb", 1, "\r"), ("my dir\\", 6, "\\")],
)
def test_a_prompt_the_shim_would_cut_or_change_is_refused(
    prompt: str, offset: int, sequence: str
) -> None:
    argv = [SHIM, "exec", "--auto", prompt]
    assert _shim_round_trip(argv) != argv
    error = check_windows_command_line(make_def(), SHIM, argv[1:], prompt=prompt)
    assert error is not None
    assert (error.index, error.offset, error.sequence) == (3, offset, sequence)
    assert f"{describe_sequence(sequence)} at offset {offset}" in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
def test_the_line_feed_message_says_the_rest_is_dropped() -> None:
    error = check_windows_command_line(make_def(), SHIM, ["exec", "one\ntwo"], prompt="one\ntwo")
    assert error is not None
    assert "U+000A LINE FEED at offset 3" in error.message
    assert "every later one would be dropped" in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
@pytest.mark.parametrize(
    ("args", "index"),
    [
        (["exec", ""], 2),  # an empty argument vanishes
        ([";x"], 1),  # %* drops a leading delimiter of the first argument
        (["exec", "50\\%"], 2),  # the % escape puts a quote after the backslash
        (["exec", "C:\\dir with space\\"], 2),  # escapes the closing quote
        (["exec", "nul\x00byte"], 2),
    ],
)
def test_any_argument_not_only_the_prompt_is_checked(args: list[str], index: int) -> None:
    for delivery in PromptDelivery:  # a def that takes its prompt on stdin is checked too
        error = check_windows_command_line(make_def(delivery), SHIM, args)
        assert error is not None and error.index == index
        assert f"argument {index} as written" in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
@pytest.mark.parametrize(
    "program",
    ["C:\\a;b\\x.cmd", "C:\\a,b\\x.cmd", "C:\\a=b\\x.cmd", 'C:\\a"b\\x.cmd', "C:\\a\nb\\x.cmd"],
)
def test_a_shim_path_cmd_exe_would_cut_is_refused(program: str) -> None:
    argv = [program, "exec"]
    assert _shim_round_trip(argv) != argv
    error = check_windows_command_line(make_def(), program, ["exec"])
    assert error is not None and error.index == 0
    assert "cannot carry the program path" in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
@pytest.mark.parametrize(
    "args",
    [
        ["exec", "--auto", 'say "hi" to 100% of %SECRET% & <you> | ^me'],
        ["exec", "--auto", "C:\\tmp\\file.txt is a\\\\path"],
        ["--model", "deepseek-chat", "--add-dir", "C:\\Program Files\\x"],
    ],
)
def test_text_the_shim_carries_is_accepted(args: list[str]) -> None:
    argv = [SHIM, *args]
    assert _shim_round_trip(argv) == argv
    assert check_windows_command_line(make_def(), SHIM, args) is None
    assert check_windows_command_line(make_def(), "C:\\a b;c\\x.cmd", args) is None


@pytest.mark.rule("WIN-CMDLINE-EXE-001")
def test_a_direct_launch_carries_what_the_shim_cannot() -> None:
    args = ["exec", "--auto", YOLO_PROMPT, "one\ntwo", "", "tail\\", ";x", "50\\%"]
    for parser in ("ucrt", "shell32"):
        assert winsplit.split(direct_exe_command_line([EXE, *args]), parser) == [EXE, *args]
    assert check_windows_command_line(make_def(), EXE, args) is None


@pytest.mark.rule("WIN-CMDLINE-EXE-001")
@pytest.mark.parametrize(
    ("program", "args", "index", "offset"),
    [
        (EXE, ["exec", "a\x00b"], 2, 1),
        ('C:\\odd"name\\x.exe', ["exec"], 0, 6),
        ("C:\\dir with space\\", ["exec"], 0, 17),
        ("\\\\host\\share\\x\x00.exe", [], 0, 14),
    ],
)
def test_a_direct_launch_refuses_what_it_cannot_carry(
    program: str, args: list[str], index: int, offset: int
) -> None:
    error = check_windows_command_line(make_def(), program, args)
    assert error is not None
    assert error.rule == "WIN-CMDLINE-EXE-001" and error.launch == "direct-exe"
    assert (error.index, error.offset) == (index, offset)
    assert "is started with one CreateProcess command line" in error.message


@pytest.mark.rule("WIN-CMDLINE-SHIM-001", "WIN-CMDLINE-EXE-001")
@pytest.mark.parametrize("resolved_bin", [None, "/usr/bin/deepseek", "deepseek", "bin\\x.exe"])
def test_a_non_windows_launch_is_not_checked(resolved_bin: str | None) -> None:
    assert check_windows_command_line(make_def(), resolved_bin, ["", "a\nb", 'x\\"y']) is None


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
def test_the_advice_names_a_transport_that_keeps_the_prompt_off_argv() -> None:
    stdin = Transport("stdin-json", "plain", _build_args, prompt_delivery=PromptDelivery.STDIN)
    defn = make_def(PromptDelivery.ARGV, (stdin,))
    error = check_windows_command_line(defn, SHIM, ["exec", "a\nb"], prompt="a\nb")
    assert error is not None
    assert "use the 'stdin-json' transport" in error.message
    plain = check_windows_command_line(make_def(), SHIM, ["exec", "a\nb"])
    assert plain is not None and "pick an adapter with stdin support" in plain.message


# --- the guard against the model, both directions ------------------------------------------

_TRICKY = ' \t"\\%^&|<>!,;=\r\n\u00a0\u00ffé😀'
_arg = st.text(
    alphabet=st.one_of(st.sampled_from(_TRICKY), st.sampled_from("ab-"), st.characters()),
    max_size=12,
).filter(lambda s: "\x00" not in s)
_path_char = st.sampled_from('abcXYZ019_-. ,;=%^&()"\\\u00ff\n')


@st.composite
def _program(draw: st.DrawFn, suffix: str) -> str:
    stem = draw(st.text(alphabet=_path_char, min_size=1, max_size=10))
    return f"{draw(st.sampled_from('CDz'))}:\\{stem}{suffix}"


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
@given(program=_program(".cmd"), args=st.lists(_arg, max_size=5))
@example(program=SHIM, args=["exec", "--auto", YOLO_PROMPT])
@example(program=SHIM, args=["%SECRET%", '"%A%"', "%X Y%", "a&b", "^%", "|<>", '"', "\\\\"])
@example(program="C:\\0.cmd", args=["", ";"])
@example(program="C:\\a b\\x.cmd", args=["x\\ \\y", "\\"])
def test_the_shim_guard_accepts_exactly_what_round_trips(program: str, args: list[str]) -> None:
    argv = [program, *args]
    loss = cmd_shim_argument_loss(argv)
    back = _shim_round_trip(argv)
    if loss is None:
        assert back == argv
    else:
        assert back != argv
        assert argv[loss.index][loss.offset : loss.offset + len(loss.sequence)] == loss.sequence


@pytest.mark.rule("WIN-CMDLINE-EXE-001")
@pytest.mark.parametrize("parser", ["ucrt", "shell32"])
@given(program=_program(".exe") | _program(" dir\\"), args=st.lists(_arg, max_size=5))
@example(program="C:\\a b\\x.exe", args=["", '"', "\\", 'a\\"b', "c d\\", " "])
def test_the_direct_guard_accepts_exactly_what_round_trips(
    parser: str, program: str, args: list[str]
) -> None:
    argv = [program, *args]
    loss = direct_exe_argument_loss(argv)
    back = winsplit.split(direct_exe_command_line(argv), parser)
    assert (loss is None) is (back == argv)


@pytest.mark.rule("WIN-CMDLINE-SHIM-001", "WIN-CMDLINE-EXE-001")
@given(program=st.sampled_from([SHIM, EXE]), args=st.lists(st.text(), max_size=4))
def test_a_nul_is_always_refused(program: str, args: list[str]) -> None:
    """CreateProcess takes a NUL-terminated string: a NUL ends the command line there."""
    error = check_windows_command_line(make_def(), program, [*args, "x\x00"])
    assert error is not None


# --- where the guard runs: harness argv and the runner ---------------------------------------


def _argv_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["argv", "deepseek", "--platform", "win32", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
def test_harness_argv_reports_the_refusal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _argv_cli(capsys, "--bin", SHIM, "--prompt", YOLO_PROMPT, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["budget"] == {"ok": True}
    verdict = report["command_line"]
    assert verdict["ok"] is False and verdict["launch"] == "cmd-shim"
    assert verdict["rule"] == "WIN-CMDLINE-SHIM-001"
    assert verdict["code"] == "AGENT_ARGUMENT_UNREPRESENTABLE"
    assert (verdict["argument"], verdict["offset"], verdict["sequence"]) == (3, 12, '\\"')
    assert "AGENT_ARGUMENT_UNREPRESENTABLE: [WIN-CMDLINE-SHIM-001]" in err

    code, out, _ = _argv_cli(capsys, "--bin", SHIM, "--prompt", "line one\nrm -rf ~")
    assert code == 1
    assert "budget:   ok\n" in out
    assert "cmdline:  FAIL AGENT_ARGUMENT_UNREPRESENTABLE [WIN-CMDLINE-SHIM-001]" in out
    assert "U+000A LINE FEED at offset 8" in out
    # The argv line shows what cmd.exe is handed, not a POSIX or MSVCRT rendering.
    assert '\nargv:     cmd.exe /d /s /c "C:\\npm\\deepseek.cmd exec --auto "line one' in out


@pytest.mark.rule("WIN-CMDLINE-SHIM-001", "WIN-CMDLINE-EXE-001")
def test_harness_argv_accepts_what_survives(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _argv_cli(capsys, "--bin", SHIM, "--prompt", 'say "hi" 100%', "--json")
    assert code == 0 and json.loads(out)["command_line"] == {"ok": True, "launch": "cmd-shim"}
    code, out, _ = _argv_cli(capsys, "--bin", EXE, "--prompt", YOLO_PROMPT)
    assert code == 0
    assert "cmdline:  ok (every argument survives the direct-exe launch)" in out
    linux = ["argv", "deepseek", "--platform", "linux", "--bin", "/x/deepseek", "--json"]
    code = main([*linux, "--prompt", YOLO_PROMPT])
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["command_line"] == {"ok": True, "launch": None}


@pytest.mark.rule("WIN-CMDLINE-SHIM-001")
def test_the_runner_refuses_before_spawn(tmp_path: Path) -> None:
    defn = get_agent_def("deepseek")
    request = RunRequest(defn=defn, prompt=YOLO_PROMPT, cwd=str(tmp_path), bin_override=SHIM)
    result = run_agent(request)
    assert result.status is RunOutcome.FAILED
    assert result.error is not None
    assert result.error.code == "AGENT_ARGUMENT_UNREPRESENTABLE"
    assert result.error.rule == "WIN-CMDLINE-SHIM-001"
    assert result.error.source == "budget"
    assert result.pid is None and result.argv == ()
    assert YOLO_PROMPT not in result.error.message
