"""SIG-WATCHDOG-001: a harness that dies without running any code leaves no CLI behind.

Real processes throughout: the watchdog program fed through a real pipe, the in-process
:class:`~harness.runtime.watchdog.Watchdog`, and ``harness run`` and a probe driver killed
with SIGKILL while their CLI trees run. "Gone" is polled up to a bound, never timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.events import Event
from harness.runner import run_agent_async
from harness.runner.status import RunOutcome
from harness.runtime import watchdog, watchdog_main
from harness.runtime.watchdog import PROGRAM, Watchdog
from tests.runner.conftest import FakeWorld
from tests.support.processes import StdoutPump, alive, leaked_processes, pid_alive

pytestmark = [
    pytest.mark.rule("SIG-WATCHDOG-001"),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups"),
]

ROOT = Path(__file__).resolve().parents[2]
#: The upper bound for "gone" (a SIGTERM-ignoring tree waits out the grace first).
GONE_WITHIN_S = 30.0

#: A group leader that starts a child, which starts a grandchild; each prints its pid and
#: sleeps. argv[1] is what each does on SIGTERM: "ignore", "exit", or a marker path to
#: write and then exit.
TREE = """
import os, signal, subprocess, sys, time
how = sys.argv[1]
def on_term(signum, frame):
    if how not in ("ignore", "exit"):
        open(how + "." + str(os.getpid()), "w").close()
    os._exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN if how == "ignore" else on_term)
if len(sys.argv) > 2:
    subprocess.Popen([sys.executable, "-c", sys.argv[2], how, *sys.argv[3:]])
print(os.getpid(), flush=True)
while True:
    time.sleep(1)
"""


def _tree_argv(how: str) -> list[str]:
    return [sys.executable, "-c", TREE, how, TREE, TREE]  # leader, child, grandchild


def _start_group(how: str = "exit") -> tuple[subprocess.Popen[bytes], list[psutil.Process]]:
    """A new process group of three; returns the leader and all three once each has set
    its SIGTERM handling (each prints its pid then, on the stdout they share)."""
    leader = subprocess.Popen(_tree_argv(how), stdout=subprocess.PIPE, start_new_session=True)
    assert leader.stdout is not None
    pids = {int(leader.stdout.readline()) for _ in range(3)}
    family = _wait_for(lambda: _family(leader.pid), 3)
    assert {p.pid for p in family} == pids
    return leader, family


def _family(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def _wait_for(
    find: Callable[[], list[psutil.Process]], count: int, bound: float = 30.0
) -> list[psutil.Process]:
    deadline = time.monotonic() + bound
    found = find()
    while len(found) < count and time.monotonic() < deadline:
        time.sleep(0.05)
        found = find()
    assert len(found) >= count, f"expected {count} processes, found {found}"
    return found


def _gone(procs: list[psutil.Process], bound: float = GONE_WITHIN_S) -> list[psutil.Process]:
    """Poll until every process is gone or a zombie; the ones still alive at the bound."""
    deadline = time.monotonic() + bound
    while True:
        left = [p for p in procs if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _reap(leader: subprocess.Popen[bytes]) -> None:
    with_stdout = leader.stdout
    if with_stdout is not None:
        with_stdout.close()
    leader.wait(timeout=10)


@pytest.fixture
def program() -> Iterator[Callable[[], tuple[subprocess.Popen[bytes], int]]]:
    """Start the watchdog program on a fresh pipe; returns it and the pipe's write end."""
    started: list[tuple[subprocess.Popen[bytes], int]] = []

    def start() -> tuple[subprocess.Popen[bytes], int]:
        read_end, write_end = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(PROGRAM), str(read_end)],
            pass_fds=(read_end,),
            start_new_session=True,
        )
        os.close(read_end)
        started.append((proc, write_end))
        return proc, write_end

    yield start
    for proc, write_end in started:
        with contextlib.suppress(OSError):  # closed by the test already
            os.close(write_end)
        proc.wait(timeout=GONE_WITHIN_S)


# --------------------------------------------------------------------------- the program


def test_at_eof_the_program_kills_every_guarded_group_and_exits(
    program: Callable[[], tuple[subprocess.Popen[bytes], int]],
) -> None:
    first, first_family = _start_group()
    second, second_family = _start_group()
    proc, write_end = program()
    os.write(write_end, f"+{first.pid} 0\n+{second.pid} 0\n".encode())
    os.close(write_end)  # the harness died
    assert proc.wait(timeout=GONE_WITHIN_S) == 0
    assert _gone(first_family + second_family) == []
    assert first.wait(timeout=10) == -signal.SIGKILL  # a grace of 0: SIGKILL at once
    _reap(first)
    _reap(second)


def test_sigterm_comes_first_and_sigkill_after_the_grace(
    program: Callable[[], tuple[subprocess.Popen[bytes], int]], tmp_path: Path
) -> None:
    marker = str(tmp_path / "term")
    polite, polite_family = _start_group(marker)
    stubborn, stubborn_family = _start_group("ignore")
    proc, write_end = program()
    os.write(write_end, f"+{polite.pid} 500\n+{stubborn.pid} 500\n".encode())
    os.close(write_end)
    assert proc.wait(timeout=GONE_WITHIN_S) == 0
    assert _gone(polite_family + stubborn_family) == []
    # Every member of the polite group saw SIGTERM (and so could clean up); the group
    # that ignored it was killed once its grace was over.
    terminated = sorted(int(p.name.rsplit(".", 1)[1]) for p in tmp_path.glob("term.*"))
    assert terminated == sorted(p.pid for p in polite_family)
    assert polite.wait(timeout=10) == 0
    assert stubborn.wait(timeout=10) == -signal.SIGKILL
    _reap(polite)
    _reap(stubborn)


def test_a_released_group_is_left_alone(
    program: Callable[[], tuple[subprocess.Popen[bytes], int]],
) -> None:
    leader, family = _start_group()
    proc, write_end = program()
    os.write(write_end, f"+{leader.pid} 0\n-{leader.pid}\n".encode())
    os.close(write_end)
    assert proc.wait(timeout=GONE_WITHIN_S) == 0
    assert all(alive(p) for p in family)
    os.killpg(leader.pid, signal.SIGKILL)
    assert _gone(family) == []
    _reap(leader)


@given(st.binary(max_size=64))
def test_no_line_makes_the_program_raise_or_aim_at_a_foreign_group(line: bytes) -> None:
    groups: dict[int, float] = {}
    watchdog_main.apply(groups, line)
    assert all(pgid > 1 and pgid != os.getpgid(0) for pgid in groups)
    assert all(0 <= grace <= watchdog_main.MAX_GRACE_S for grace in groups.values())


@pytest.mark.parametrize("line", [b"+0 0", b"+1 0", b"-0", b"+-5 0", b"+ 7", b"*7 0", b"+7x 0"])
def test_lines_naming_no_cli_group_are_ignored(line: bytes) -> None:
    groups: dict[int, float] = {}
    watchdog_main.apply(groups, line)
    assert groups == {}


def test_the_programs_signal_numbers_are_the_platforms() -> None:
    assert (watchdog_main.SIGTERM, watchdog_main.SIGKILL) == (signal.SIGTERM, signal.SIGKILL)


def test_the_program_ignores_its_own_group() -> None:
    groups: dict[int, float] = {}
    watchdog_main.apply(groups, f"+{os.getpgid(0)} 0".encode())
    assert groups == {}


# --------------------------------------------------------------------------- in process


def test_the_watchdog_runs_only_while_a_group_is_guarded() -> None:
    dog = Watchdog()
    first, first_family = _start_group()
    second, second_family = _start_group()
    dog.guard(first.pid, 0)
    pid = dog.pid
    assert pid is not None
    process = psutil.Process(pid)
    # Right after exec the kernel may show no arguments yet: look until it does.
    assert _wait_for(lambda: [process] if _is_watchdog(process) else [], 1)
    assert os.getsid(pid) == pid  # its own session: a group signal at us spares it
    assert process.environ() == {}  # nothing of the run's environment, secrets included
    dog.guard(second.pid, 0)
    dog.release(first.pid)
    assert dog.pid == pid  # one watchdog for every group of the process
    dog.release(second.pid)
    assert dog.pid is None
    assert not alive(process)  # retired and reaped with the last group
    assert all(alive(p) for p in first_family + second_family)  # released: untouched
    for leader in (first, second):
        os.killpg(leader.pid, signal.SIGKILL)
        _reap(leader)
    assert dog.disabled is None


def _pipes_of(pid: int) -> set[str]:
    """The pipes process ``pid`` holds open, as ``pipe:[inode]`` (Linux ``/proc``)."""
    links = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed since the listing
    return {link for link in links if link.startswith("pipe:")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_pipe_is_held_by_the_harness_and_the_watchdog_alone() -> None:
    dog = Watchdog()
    leader, family = _start_group()
    dog.guard(leader.pid, 0)
    watchdog_pid = dog.pid
    assert watchdog_pid is not None
    # The watchdog's stdio is /dev/null: its one pipe is the one from this process.
    (pipe,) = _pipes_of(watchdog_pid)
    assert pipe in _pipes_of(os.getpid())  # the write end, here
    # Started while the pipe exists, even with close_fds off: no copy of either end.
    late = subprocess.Popen(_tree_argv("exit"), close_fds=False, start_new_session=True)
    late_family = _wait_for(lambda: _family(late.pid), 3)
    assert all(pipe not in _pipes_of(p.pid) for p in family + late_family)
    dog.release(leader.pid)
    assert not pid_alive(watchdog_pid)
    for group in (leader, late):
        os.killpg(group.pid, signal.SIGKILL)
    assert _gone(family + late_family) == []
    _reap(leader)
    late.wait(timeout=10)


#: Guards a group, forks, and reports from the child whether it still holds the pipe.
FORK_DRIVER = """
import os, sys
from harness.runtime import watchdog
watchdog.guard(int(sys.argv[1]), 0)
fd = watchdog.WATCHDOG._fd
child = os.fork()
if child == 0:
    try:
        os.fstat(fd)
        held = "held"
    except OSError:
        held = "closed"
    print(held, watchdog.WATCHDOG.pid, flush=True)
    os._exit(0)
os.waitpid(child, 0)
print("parent", watchdog.WATCHDOG.pid, flush=True)
watchdog.release(int(sys.argv[1]))
"""


def test_a_forked_child_lets_go_of_the_parents_watchdog() -> None:
    leader, family = _start_group()
    done = subprocess.run(
        [sys.executable, "-c", FORK_DRIVER, str(leader.pid)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    child, parent = done.stdout.splitlines()
    assert child == "closed None"  # neither the pipe nor the parent's watchdog is its own
    assert parent.startswith("parent ") and parent != "parent None"
    assert all(alive(p) for p in family)  # released by the parent: untouched
    os.killpg(leader.pid, signal.SIGKILL)
    assert _gone(family) == []
    _reap(leader)


def test_a_watchdog_that_cannot_start_is_reported_once(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    dog = Watchdog(executable=str(tmp_path / "no-python"))
    leader, family = _start_group()
    with caplog.at_level(logging.WARNING, logger=watchdog.__name__):
        dog.guard(leader.pid, 0)
        dog.guard(leader.pid + 1, 0)
        dog.release(leader.pid)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert lines[0].startswith("harness: the process watchdog is off: it could not start")
    assert "no-python" in lines[0]
    assert dog.pid is None and dog.disabled is not None
    os.killpg(leader.pid, signal.SIGKILL)
    assert _gone(family) == []
    _reap(leader)


def test_no_pipe_is_reported_not_raised(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pipe() -> tuple[int, int]:
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(watchdog.os, "pipe", no_pipe)
    dog = Watchdog()
    with caplog.at_level(logging.WARNING, logger=watchdog.__name__):
        dog.guard(4242, 0)
        dog.release(4242)
    (line,) = [r.getMessage() for r in caplog.records]
    assert "is off: it has no pipe (OSError: [Errno 24] Too many open files)" in line
    assert dog.pid is None


def test_a_missing_program_is_reported_by_name(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    missing = tmp_path / "watchdog_main.py"
    dog = Watchdog(program=missing)
    with caplog.at_level(logging.WARNING, logger=watchdog.__name__):
        dog.guard(4242, 0)
    assert [r.getMessage() for r in caplog.records] == [
        f"harness: the process watchdog is off: its program {missing} is missing; runs go "
        "on, but a harness killed now leaves its CLIs running"
    ]


def test_a_watchdog_that_died_is_reported_once_and_runs_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dog = Watchdog()
    leader, family = _start_group()
    dog.guard(leader.pid, 0)
    pid = dog.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert _gone([psutil.Process(pid)]) == []
    with caplog.at_level(logging.WARNING, logger=watchdog.__name__):
        dog.guard(leader.pid + 1, 0)  # the write finds no reader
        dog.release(leader.pid + 1)
        dog.release(leader.pid)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert f"the process watchdog (pid {pid}) is off: it stopped reading" in lines[0]
    assert dog.pid is None
    assert all(alive(p) for p in family)
    os.killpg(leader.pid, signal.SIGKILL)
    assert _gone(family) == []
    _reap(leader)


# --------------------------------------------------------------------------- the harness


def _is_watchdog(proc: psutil.Process) -> bool:
    try:
        return str(PROGRAM) in proc.cmdline()
    except psutil.Error:  # gone, or a zombie already (a probe's watchdog, retired)
        return False


def _watchdog_of(pid: int) -> list[psutil.Process]:
    return [p for p in _family(pid)[1:] if _is_watchdog(p)]


def _harness_run(world: FakeWorld, scenario: str, *extra: str) -> subprocess.Popen[bytes]:
    env = world.env()
    env["PYTHONPATH"] = str(ROOT)
    argv = [sys.executable, "-m", "harness.cli", "run", "claude", "--fake"]
    argv += ["--scenario", scenario, "--cwd", str(world.project()), *extra]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def test_a_killed_harness_run_leaves_no_cli_behind(
    world: FakeWorld, no_leaked_processes: str
) -> None:
    # spawn_tree: the CLI starts a child that starts a grandchild; both ignore SIGTERM.
    harness = _harness_run(world, "spawn_tree")
    pump = StdoutPump(harness)
    pump.until(b"Spawned helpers", timeout=60)

    def cli_tree() -> list[psutil.Process]:
        found = leaked_processes(no_leaked_processes, {harness.pid})
        return [p for p in found if not _is_watchdog(p)]

    tree = _wait_for(cli_tree, 3)
    guards = _watchdog_of(harness.pid)
    assert len(guards) == 1, guards
    harness.kill()
    assert harness.wait(timeout=10) == -signal.SIGKILL
    pump.drain()
    assert _gone(tree) == [], "the CLI tree outlived the harness"
    assert _gone(guards) == [], "the watchdog outlived its job"


def test_a_harness_run_that_ends_takes_its_watchdog_with_it(world: FakeWorld) -> None:
    harness = _harness_run(world, "hang", "--cancel-after", "1")
    pump = StdoutPump(harness)
    guards = _wait_for(lambda: _watchdog_of(harness.pid), 1)
    out = pump.drain(timeout=60)
    assert harness.wait(timeout=60) >= 0, out  # it ended by itself
    assert b"cancelled" in out
    assert _gone(guards) == []


def test_a_killed_probe_driver_leaves_no_probe_behind(no_leaked_processes: str) -> None:
    driver_code = (
        "import asyncio, os, sys\n"
        "from harness.runtime.probe import run_probe\n"
        "print('probing', flush=True)\n"
        "asyncio.run(run_probe(sys.argv[1:], env=dict(os.environ), timeout_s=600,"
        " max_output_bytes=4096))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    driver = subprocess.Popen(
        [sys.executable, "-c", driver_code, *_tree_argv("ignore")],
        env=env,
        stdout=subprocess.PIPE,
    )
    pump = StdoutPump(driver)
    pump.until(b"probing", timeout=60)

    def probe_tree() -> list[psutil.Process]:
        found = leaked_processes(no_leaked_processes, {driver.pid})
        return [p for p in found if not _is_watchdog(p)]

    tree = _wait_for(probe_tree, 3)
    guards = _wait_for(lambda: _watchdog_of(driver.pid), 1)
    driver.kill()
    assert driver.wait(timeout=10) == -signal.SIGKILL
    pump.drain()
    # A probe's grace is 0: SIGKILL at once, SIGTERM-ignoring members included.
    assert _gone(tree) == []
    assert _gone(guards) == []


def test_an_in_process_run_leaves_no_watchdog(world: FakeWorld) -> None:
    seen: list[int | None] = []

    def on_event(event: Event) -> None:
        seen.append(watchdog.WATCHDOG.pid)

    result = asyncio.run(run_agent_async(world.request("claude"), on_event=on_event))
    assert result.status is RunOutcome.SUCCEEDED
    guards = {pid for pid in seen if pid is not None}
    assert len(guards) == 1, seen  # one watchdog guarded the run while it ran
    assert watchdog.WATCHDOG.pid is None
    assert not any(pid_alive(pid) for pid in guards)
