"""RUN-FAKES-EXE-001: the Windows ``<name>.exe`` launchers ``harness fakes install`` writes.

An ``.exe`` is distlib's console launcher + ``#!"<python>" -S`` + a zip whose
``__main__.py`` runs ``fake_clis/_shim.py``. Everything here runs on Linux: the launcher
bytes are checked against the PE header and against a model of how ``PC/launcher.c``
(pypa/distlib) finds the shebang, and the zip part is run the way the launcher runs it,
``python -S <the .exe> ARGS`` (Python runs a zip with data in front of it). One test runs
the ``.exe`` itself and is marked ``windows``.
"""

from __future__ import annotations

import importlib.resources
import io
import json
import os
import platform
import struct
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import fake_clis
from fake_clis.catalog import emulator_module_of
from harness.cli import main as cli_main
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.host.launch import FakeFileSystem, resolve_executable
from harness.runtime.fakes_install import (
    LAUNCHER_MAX_PATH,
    InstallReport,
    exe_launcher,
    install_fakes,
    launcher_name,
    launcher_shebang,
    shim_text,
)
from tests.fakes.conftest import FakeCli

RULE = "RUN-FAKES-EXE-001"
SHIM = str(Path(fake_clis.__file__).resolve().parent / "_shim.py")
WIN_PYTHON = r"C:\Program Files\Python 3\python.exe"
#: PE ``Machine`` field per distlib launcher (IMAGE_FILE_MACHINE_*).
PE_MACHINE = {"t32.exe": 0x014C, "t64.exe": 0x8664, "t64-arm.exe": 0xAA64}
#: Arguments a caller may pass; none may be altered on the way to the fake.
AWKWARD_ARGS = [
    "",
    "two words",
    'say "hi" twice',
    "back\\slash\\",
    "ünïcødé 李 🙂",
    "--flag=a b",
    "%PATH%",
    "$HOME `x`",
    "^&|<>",
]


def distlib_launcher(name: str) -> bytes:
    """The launcher as distlib ships it, read here without the module under test."""
    return importlib.resources.files("distlib").joinpath(name).read_bytes()


def zip_start(data: bytes) -> int:
    """Where the appended archive starts, computed as ``PC/launcher.c`` does.

    The last end-of-central-directory record; start = its offset - cd size - cd offset.
    """
    eocd = data.rfind(b"PK\x05\x06")
    assert eocd >= 0, "no end-of-central-directory record"
    cd_size, cd_offset = struct.unpack_from("<II", data, eocd + 12)
    return eocd - int(cd_size) - int(cd_offset)


def launcher_reads(data: bytes) -> tuple[str, str]:
    """``(executable, arguments)`` of the shebang as distlib's launcher would take them.

    A model of ``find_shebang`` + ``process`` in ``PC/launcher.c``: the last ``#!`` in the
    ``MAX_PATH`` bytes before the archive, cut at the first CR/LF, decoded as UTF-8; the
    executable ends at the first ``.exe`` followed by end, quote or whitespace, and a
    quoted one must close right there.
    """
    start = zip_start(data)
    window = data[max(0, start - LAUNCHER_MAX_PATH) : start]
    at = window.rfind(b"#!")
    assert at >= 0, "the launcher would find no shebang"
    line = window[at:]
    ends = [i for i in (line.find(b"\r"), line.find(b"\n")) if i >= 0]
    assert ends, "the launcher would find no line end"
    text = line[2 : min(ends)].decode("utf-8").lstrip()
    lowered = text.lower()
    pos = 0
    while True:
        pos = lowered.find(".exe", pos)
        assert pos >= 0, "the launcher needs a command ending in .exe"
        after = text[pos + 4 : pos + 5]
        if after in ("", '"') or after.isspace():
            break
        pos += 4
    end = pos + 4
    if text.startswith('"'):
        assert text[end : end + 1] == '"', "a quoted executable must close after .exe"
        return text[1:end], text[end + 1 :].strip()
    return text[:end], text[end:].strip()


def run_exe(
    exe: Path, args: list[str], fake: FakeCli, **kw: str
) -> subprocess.CompletedProcess[bytes]:
    """Run an ``.exe`` the way its launcher does: ``python -S <exe> ARGS``."""
    return subprocess.run(
        [sys.executable, "-S", str(exe), *args],
        capture_output=True,
        cwd=fake.cwd,
        env=fake.env(**kw),
        timeout=60,
        check=False,
    )


# --------------------------------------------------------------------------- the bytes


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(
    ("machine", "bits", "expected"),
    [
        ("AMD64", 64, "t64.exe"),
        ("x86_64", 64, "t64.exe"),
        ("ARM64", 64, "t64-arm.exe"),
        ("aarch64", 64, "t64-arm.exe"),
        ("AMD64", 32, "t32.exe"),
        ("x86", 32, "t32.exe"),
        ("ARM64", 32, "t32.exe"),
    ],
)
def test_the_launcher_fits_the_machine_and_pointer_size(
    machine: str, bits: int, expected: str
) -> None:
    assert launcher_name(machine, bits) == expected
    data = exe_launcher("claude", WIN_PYTHON, machine=machine, pointer_bits=bits)
    stub = distlib_launcher(expected)
    assert data.startswith(stub)
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe : pe + 4] == b"PE\0\0"
    assert struct.unpack_from("<H", data, pe + 4)[0] == PE_MACHINE[expected]
    # IMAGE_SUBSYSTEM_WINDOWS_CUI: a console launcher, so the fake keeps its pipes.
    assert struct.unpack_from("<H", data, pe + 24 + 68)[0] == 3


@pytest.mark.rule(RULE)
def test_the_default_launcher_is_this_interpreters() -> None:
    bits = 64 if sys.maxsize > 2**32 else 32
    assert launcher_name() == launcher_name(platform.machine(), bits)
    with pytest.raises(HarnessError, match="16-bit") as caught:
        launcher_name("AMD64", 16)
    assert caught.value.rule == RULE


@pytest.mark.rule(RULE)
def test_an_exe_is_launcher_then_shebang_then_a_zip() -> None:
    data = exe_launcher("claude", WIN_PYTHON, machine="AMD64", pointer_bits=64)
    stub = distlib_launcher("t64.exe")
    shebang = b'#!"C:\\Program Files\\Python 3\\python.exe" -S\n'
    assert data[: len(stub)] == stub
    assert data[len(stub) : len(stub) + len(shebang)] == shebang
    # The central directory's offsets count from the zip's own start: the launcher's
    # computed archive start is exactly where the shebang ends.
    assert zip_start(data) == len(stub) + len(shebang)
    archive = data[len(stub) + len(shebang) :]
    assert archive.startswith(b"PK\x03\x04")
    with zipfile.ZipFile(io.BytesIO(data)) as whole, zipfile.ZipFile(io.BytesIO(archive)) as own:
        assert whole.namelist() == own.namelist() == ["__main__.py"]
        assert whole.testzip() is None
        main = whole.read("__main__.py").decode("utf-8")
    assert repr(SHIM) in main and repr("claude") in main
    assert repr(emulator_module_of("claude")) in main
    assert launcher_reads(data) == (WIN_PYTHON, "-S")
    # Fixed timestamps: installing twice writes the same bytes.
    assert exe_launcher("claude", WIN_PYTHON, machine="AMD64", pointer_bits=64) == data


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(
    "python",
    [
        r"C:\py\python.exe",
        r"C:\PY\PYTHON.EXE",
        r"C:\Users\Zoë 李\AppData\Local\Programs\Python\Python311\python.exe",
        r"\\server\share\tools.exe.d\python.exe",  # ".exe." does not end the executable
        "C:\\" + "p" * (LAUNCHER_MAX_PATH - 22) + "\\python.exe",  # a line of MAX_PATH bytes
    ],
)
def test_the_launcher_reads_back_every_interpreter_it_accepts(python: str) -> None:
    line = launcher_shebang(python)
    assert line == b'#!"' + python.encode("utf-8") + b'" -S\n'
    assert len(line) <= LAUNCHER_MAX_PATH
    data = exe_launcher("qwen", python, machine="AMD64", pointer_bits=64)
    assert launcher_reads(data) == (python, "-S")


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(
    ("python", "problem"),
    [
        ("/usr/bin/python3", "does not end in .exe"),
        (r"C:\py\python.exe.bak", "does not end in .exe"),
        ('C:\\a"b\\python.exe', "quote"),
        ("C:\\a\r\nb\\python.exe", "line break"),
        (r"C:\#!\python.exe", "'#!'"),
        (r"C:\tools.exe dir\python.exe", "followed by whitespace"),
        ("C:\\\udcff\\python.exe", "UTF-8"),
        ("C:\\" + "p" * (LAUNCHER_MAX_PATH - 21) + "\\python.exe", "261-byte shebang"),
    ],
)
def test_an_interpreter_the_launcher_cannot_read_is_refused(python: str, problem: str) -> None:
    with pytest.raises(HarnessError) as caught:
        launcher_shebang(python)
    assert problem in caught.value.message and caught.value.rule == RULE


# --------------------------------------------------------------------------- running it


@pytest.mark.rule(RULE)
@pytest.mark.parametrize("agent", ["claude", "codex", "qwen", "copilot"])
def test_the_exe_runs_the_same_fake_as_the_posix_shim(
    agent: str, tmp_path: Path, fake: FakeCli
) -> None:
    posix = install_fakes(tmp_path / "posix", BUILTIN_DEFS, agents=[agent], platform="linux")
    win = install_fakes(
        tmp_path / "win", BUILTIN_DEFS, agents=[agent], python=WIN_PYTHON, platform="win32"
    )
    bin_name = get_agent_def(agent, BUILTIN_DEFS).bin
    script = tmp_path / "posix" / bin_name
    exe = tmp_path / "win" / f"{bin_name}.exe"
    assert str(script) in posix.written and str(exe) in win.written
    for args in (["--version"], ["--help"], ["--no-such-flag-anywhere"]):
        via_shim = subprocess.run(
            [str(script), *args],
            capture_output=True,
            cwd=fake.cwd,
            env=fake.env(),
            timeout=60,
            check=False,
        )
        via_exe = run_exe(exe, args, fake)
        assert (via_exe.returncode, via_exe.stdout, via_exe.stderr) == (
            via_shim.returncode,
            via_shim.stdout,
            via_shim.stderr,
        ), (agent, args)
    assert run_exe(exe, ["--version"], fake).stdout.strip()


@pytest.mark.rule(RULE)
def test_the_exe_hands_the_fake_its_arguments_verbatim(tmp_path: Path, fake: FakeCli) -> None:
    exe = tmp_path / "claude.exe"
    exe.write_bytes(exe_launcher("claude", WIN_PYTHON))
    prompt = "Say " + " ".join(AWKWARD_ARGS[1:])
    args = ["-p", "--output-format", "json", prompt]
    done = run_exe(exe, args, fake, scenario="text")
    assert done.returncode == 0, done.stderr
    record = fake.record()
    assert record["prompt"] == prompt and record["prompt_via"] == "argv"
    assert record["argv"] == args


@pytest.mark.rule(RULE)
def test_the_zip_main_builds_the_shims_argv_and_runs_it_as_main(
    tmp_path: Path, fake: FakeCli
) -> None:
    probe = tmp_path / "probe dir" / "probe.py"
    probe.parent.mkdir()
    probe.write_text(
        "import json, sys\n"
        "print(json.dumps({'argv': sys.argv, 'name': __name__, 'file': __file__,"
        " 'path': sys.path}))\n"
        "sys.exit(7)\n",
        encoding="utf-8",
    )
    exe = tmp_path / "codex.exe"
    exe.write_bytes(exe_launcher("codex", WIN_PYTHON, shim=str(probe)))
    done = run_exe(exe, AWKWARD_ARGS, fake)
    assert done.returncode == 7, done.stderr  # the shim's exit code is the .exe's
    seen = json.loads(done.stdout)
    module = emulator_module_of("codex")
    assert seen["argv"] == [str(probe), module, "codex", *AWKWARD_ARGS]
    assert seen["name"] == "__main__" and seen["file"] == str(probe)
    # The archive is off sys.path, as the script's own dir is for `python -S _shim.py`.
    assert str(exe) not in seen["path"]


@pytest.mark.rule(RULE)
def test_a_missing_shim_is_named_with_exit_2(tmp_path: Path, fake: FakeCli) -> None:
    gone = tmp_path / "moved" / "_shim.py"
    exe = tmp_path / "qwen.exe"
    exe.write_bytes(exe_launcher("qwen", WIN_PYTHON, shim=str(gone)))
    done = run_exe(exe, ["--version"], fake)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2
    assert repr(str(gone)) in err and "Traceback" not in err


@pytest.mark.rule(RULE)
@pytest.mark.windows
def test_on_windows_the_exe_itself_runs_the_fake(tmp_path: Path, fake: FakeCli) -> None:
    report = install_fakes(tmp_path / "bin", BUILTIN_DEFS, agents=["qwen"])
    exe = tmp_path / "bin" / "qwen.exe"
    cmd = tmp_path / "bin" / "qwen.cmd"
    assert str(exe) in report.written and str(cmd) in report.written
    direct = subprocess.run(
        [str(exe), "--version"], capture_output=True, env=fake.env(), timeout=60, check=False
    )
    shimmed = subprocess.run(
        [str(cmd), "--version"], capture_output=True, env=fake.env(), timeout=60, check=False
    )
    assert direct.returncode == shimmed.returncode == 0
    assert direct.stdout == shimmed.stdout and direct.stdout.strip()


# --------------------------------------------------------------------------- install


@pytest.mark.rule(RULE)
def test_a_windows_install_writes_a_cmd_and_an_exe_per_name(tmp_path: Path) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    python = r"C:\py\python.exe"
    report = install_fakes(tmp_path, [claude], python=python, platform="win32")
    names = sorted(Path(p).name for p in report.written)
    assert names == ["claude.cmd", "claude.exe", "openclaude.cmd", "openclaude.exe"]
    assert set(report.written.values()) == {"claude"}
    assert not any(".exe" in reason for reason in report.skipped)
    for name in ("claude", "openclaude"):
        cmd = (tmp_path / f"{name}.cmd").read_bytes().decode("utf-8")
        assert cmd == shim_text("claude", python, "win32")
        data = (tmp_path / f"{name}.exe").read_bytes()
        assert data.startswith(b"MZ") and launcher_reads(data) == (python, "-S")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            assert repr("claude") in archive.read("__main__.py").decode("utf-8")


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(
    ("launchers", "expected"),
    [
        (("cmd",), ["claude.cmd", "openclaude.cmd"]),
        (("exe",), ["claude.exe", "openclaude.exe"]),
        (("exe", "cmd", "exe"), ["claude.cmd", "claude.exe", "openclaude.cmd", "openclaude.exe"]),
    ],
)
def test_launchers_picks_the_windows_files(
    tmp_path: Path, launchers: tuple[str, ...], expected: list[str]
) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    report = install_fakes(
        tmp_path, [claude], python=r"C:\py\python.exe", platform="win32", launchers=launchers
    )
    assert sorted(Path(p).name for p in report.written) == expected
    assert sorted(os.listdir(tmp_path)) == expected


@pytest.mark.rule(RULE)
@pytest.mark.parametrize("launchers", [(), ("bat",), ("cmd", "ps1")])
def test_an_unknown_launcher_kind_is_refused(tmp_path: Path, launchers: tuple[str, ...]) -> None:
    with pytest.raises(HarnessError, match="launchers must be") as caught:
        install_fakes(tmp_path, BUILTIN_DEFS, platform="win32", launchers=launchers)
    assert caught.value.rule == RULE
    assert not list(tmp_path.iterdir())


@pytest.mark.rule(RULE, "RUN-FAKES-001")
def test_a_posix_install_is_unchanged_by_launchers(tmp_path: Path) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    for kinds in (("cmd", "exe"), ("exe",)):
        dest = tmp_path / "-".join(kinds)
        report = install_fakes(dest, [claude], platform="linux", launchers=kinds)
        assert sorted(Path(p).name for p in report.written) == ["claude", "openclaude"]
        for path in report.written:
            assert os.stat(path).st_mode & 0o777 == 0o755
            text = Path(path).read_text(encoding="utf-8")
            assert text == shim_text("claude", sys.executable, "linux")


@pytest.mark.rule(RULE)
def test_an_unlaunchable_interpreter_skips_the_exe_and_keeps_the_cmd(tmp_path: Path) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    report = install_fakes(tmp_path, [claude], python="/usr/bin/python3", platform="win32")
    assert sorted(Path(p).name for p in report.written) == ["claude.cmd", "openclaude.cmd"]
    assert any(
        r.startswith(".exe launchers: not written") and "does not end in .exe" in r
        for r in report.skipped
    )


@pytest.mark.rule(RULE)
def test_an_exe_past_max_path_is_skipped_by_name(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 200) / ("e" * 60)
    claude = get_agent_def("claude", BUILTIN_DEFS)
    report = install_fakes(deep, [claude], python=r"C:\py\python.exe", platform="win32")
    assert sorted(Path(p).name for p in report.written) == ["claude.cmd", "openclaude.cmd"]
    too_long = [r for r in report.skipped if "MAX_PATH" in r]
    assert len(too_long) == 2 and any("openclaude.exe" in r for r in too_long)


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(("launchers", "picked"), [(("cmd", "exe"), ".exe"), (("cmd",), ".cmd")])
def test_windows_resolution_picks_the_exe_when_both_exist(
    tmp_path: Path, launchers: tuple[str, ...], picked: str
) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    install_fakes(
        tmp_path, [claude], python=r"C:\py\python.exe", platform="win32", launchers=launchers
    )
    # The installed files, as a Windows directory on PATH (ref §5.2 PATH walk + PATHEXT).
    fs = FakeFileSystem(
        {f"C:\\fakes\\{p.name}": p.read_bytes() for p in tmp_path.iterdir()}, platform="win32"
    )
    env = {"PATH": r"C:\fakes", "PATHEXT": ".COM;.EXE;.BAT;.CMD"}
    found = resolve_executable(claude, platform="win32", env=env, fs=fs, home=r"C:\Users\u")
    # Spelled as PATHEXT spells it (C:\fakes\claude.EXE): the disk is case-insensitive.
    assert found.launch_path is not None
    assert found.launch_path.lower() == f"c:\\fakes\\claude{picked}"


# --------------------------------------------------------------------------- the command


@pytest.mark.rule(RULE)
@pytest.mark.parametrize(
    ("choice", "expected"),
    [(None, ("cmd", "exe")), ("both", ("cmd", "exe")), ("cmd", ("cmd",)), ("exe", ("exe",))],
)
def test_fakes_install_passes_the_windows_launcher_choice(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    choice: str | None,
    expected: tuple[str, ...],
) -> None:
    seen: list[tuple[str, ...]] = []
    real = install_fakes

    def spy(dest: str, defs: Sequence[AgentDef], **kw: Any) -> InstallReport:
        seen.append(tuple(kw["launchers"]))
        return real(dest, defs, **kw)

    monkeypatch.setattr("harness.commands.fakes.install_fakes", spy)
    argv = ["fakes", "install", str(tmp_path / "bin"), "--agent", "kilo", "--json"]
    if choice is not None:
        argv += ["--windows-launcher", choice]
    assert cli_main(argv) == 0
    assert seen == [expected]
    written = json.loads(capsys.readouterr().out)["written"]
    assert sorted(Path(p).name for p in written) == ["kilo", "kilocode"]


@pytest.mark.rule(RULE)
def test_fakes_install_refuses_an_unknown_windows_launcher(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli_main(["fakes", "install", str(tmp_path / "bin"), "--windows-launcher", "ps1"])
    assert exited.value.code == 2
    assert "--windows-launcher: invalid choice: 'ps1'" in capsys.readouterr().err
    assert not (tmp_path / "bin").exists()
