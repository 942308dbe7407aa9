"""A fake that traps SIGTERM exits with its CLI's code even when the signal lands mid-write."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A run whose stdout is inside a write when SIGTERM arrives: the handler's flush re-enters
# the buffer, which raises RuntimeError ("reentrant call inside <_io.BufferedWriter ...>").
_SCRIPT = textwrap.dedent(
    """
    import os, signal, time
    from fake_clis import base

    class Stdout:
        def flush(self):
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stdout>'>")

    class Run:
        stdout = Stdout()
        def finish_record(self):
            pass

    base.trap_sigterm(Run(), 143)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
    """
)


def test_a_reentrant_flush_still_exits_with_the_trapped_code() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=60, check=False
    )
    assert (proc.returncode, proc.stderr) == (143, "")
