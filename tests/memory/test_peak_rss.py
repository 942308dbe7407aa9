"""Peak RSS of real ``harness`` processes on inputs of tens of MB (design §Reliability).

Rule PARSE-MEMORY-001 (and PLAIN-TEXT-BOUND-001 for ``plain``): ``harness parse`` reads
its input in chunks and prints events as they come, so its peak RSS does not grow with
the input. Each case runs the command under a small Python that waits for it and reports
``RUSAGE_CHILDREN``'s ``ru_maxrss`` (the command is its only child), and asserts a bound
the whole-file reader exceeded several times over on the same input. A memory bound,
not a timing: nothing here depends on how fast the machine is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.memory.inputs import write_capture, write_plain_line

resource = pytest.importorskip("resource", reason="peak RSS is read with the POSIX resource module")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")

SIZE = 32_000_000
#: Python with the harness imported is ~20 MiB; whole-file reading cost 5-12x the input.
BOUND_MIB = 80

_MEASURE = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "sys.stderr.write(done.stderr.decode(errors='replace')[-2000:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode)\n"
)


def peak_mib(*argv: str) -> tuple[float, int, str]:
    """Peak RSS (MiB) and exit code of ``python -m harness argv``, and its stderr tail."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "harness", *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    kib, code = done.stdout.split()
    return int(kib) / 1024, int(code), done.stderr


@pytest.mark.rule("PARSE-MEMORY-001")
@pytest.mark.parametrize("fmt", ["pi-rpc", "claude-stream-json"])
def test_parse_of_a_large_capture_stays_small(tmp_path: Path, fmt: str) -> None:
    capture = tmp_path / "capture.jsonl"
    write_capture(fmt, capture, SIZE)
    peak, code, err = peak_mib("parse", "--format", fmt, str(capture))
    assert code == 0, err
    assert peak < BOUND_MIB, f"harness parse --format {fmt} peaked at {peak:.0f} MiB"


@pytest.mark.rule("PARSE-MEMORY-001", "PLAIN-TEXT-BOUND-001")
def test_parse_of_one_long_plain_line_stays_small(tmp_path: Path) -> None:
    capture = tmp_path / "stdout.txt"
    write_plain_line(capture, SIZE)
    peak, code, err = peak_mib("parse", "--format", "plain", str(capture))
    assert code == 0, err
    assert peak < BOUND_MIB, f"harness parse --format plain peaked at {peak:.0f} MiB"
