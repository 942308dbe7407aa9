"""The suite-wide leak check (:mod:`tests.support.processes`) finds what a test leaves.

Each case starts real processes inside a :class:`LeakCheck` of its own; the suite's own
check around the case then sees nothing, because the inner one killed what it found.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tests.support.processes import LEAK_TOKEN_VAR, LeakCheck, kill_tree, pid_alive

pytest_plugins = ["pytester"]

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)", "leak-check-sleeper"]


def _wait_for_file(path: Path, proc: subprocess.Popen[bytes]) -> str:
    """The pid the helper wrote to ``path`` once it exits (its grandchild runs on)."""
    assert proc.wait(timeout=30) == 0
    return path.read_text(encoding="utf-8")


def test_a_child_left_running_is_killed_and_named() -> None:
    check = LeakCheck()
    child = subprocess.Popen(SLEEPER)
    leaked = check.finish()
    assert leaked == [f"pid {child.pid}: {' '.join(SLEEPER)}"]
    assert not pid_alive(child.pid), "the leak is killed (and reaped)"
    child.wait(timeout=5)


@pytest.mark.posix
def test_an_orphaned_grandchild_is_found_by_the_token(tmp_path: Path) -> None:
    """Its parent exited, so it is no descendant of ours: only the token ties it to us."""
    pid_file = tmp_path / "pid"
    spawn = (
        "import subprocess, sys; "
        f"p = subprocess.Popen({SLEEPER!r}, start_new_session=True); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))"
    )
    check = LeakCheck()
    parent = subprocess.Popen([sys.executable, "-c", spawn])
    orphan = int(_wait_for_file(pid_file, parent))
    assert orphan not in {p.pid for p in psutil.Process().children(recursive=True)}
    leaked = check.finish()
    assert leaked == [f"pid {orphan}: {' '.join(SLEEPER)}"]
    assert not pid_alive(orphan)


def test_processes_from_before_the_test_and_finished_ones_are_not_leaks() -> None:
    earlier = subprocess.Popen(SLEEPER)
    try:
        check = LeakCheck()
        zombie = subprocess.Popen([sys.executable, "-c", "pass"])
        deadline = time.monotonic() + 30
        while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
        # Still starting when the check looks: it ends within the grace period.
        quick = subprocess.Popen([sys.executable, "-c", "pass"])
        assert check.finish() == []
        assert pid_alive(earlier.pid), "a process older than the test is left alone"
        assert quick.wait(timeout=5) == 0 and zombie.wait(timeout=5) == 0
    finally:
        kill_tree(earlier)


def test_the_token_is_set_for_the_test_and_restored_after() -> None:
    environ = {LEAK_TOKEN_VAR: "outer"}
    check = LeakCheck(environ)
    assert environ[LEAK_TOKEN_VAR] == check.token != "outer"
    assert check.finish() == []
    assert environ == {LEAK_TOKEN_VAR: "outer"}
    fresh: dict[str, str] = {}
    LeakCheck(fresh).restore()
    assert fresh == {}


def test_each_test_has_its_own_token(no_leaked_processes: str) -> None:
    assert os.environ[LEAK_TOKEN_VAR] == no_leaked_processes


# --------------------------------------------------------------------------- the fixture

CONFTEST = """
from tests.conftest import no_leaked_processes, pytest_collection_modifyitems
"""

LEAKING = """
import subprocess, sys
import pytest

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
kept = []

def test_leaks():
    subprocess.Popen([*SLEEPER, "left-by-test_leaks"])

@pytest.mark.keeps_processes("a server the next test reuses")
def test_keeps():
    kept.append(subprocess.Popen([*SLEEPER, "left-by-test_keeps"]))

def test_stops_what_was_kept():
    kept[0].kill()
    kept[0].wait()

def test_clean():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
"""


def test_the_suite_fixture_fails_a_leaking_test_unless_it_is_marked(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_leaky=LEAKING)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_leaks*",
            "*test left processes running (now killed):*",
            "*pid *:*left-by-test_leaks",
        ]
    )
    assert "left-by-test_keeps" not in result.stdout.str()


def test_keeps_processes_without_a_reason_stops_collection(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_bare=textwrap.dedent(
            """
            import pytest

            @pytest.mark.keeps_processes
            def test_bare():
                pass
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*keeps_processes needs a reason*", "*test_bare.py::test_bare"])
