"""Peak RSS of real ``harness`` processes on inputs of tens of MB (design §Reliability).

Rule PARSE-MEMORY-001 (and PLAIN-TEXT-BOUND-001 for ``plain``): ``harness parse`` reads
its input in chunks and prints events as they come, so its peak RSS does not grow with
the input. Rule REPLAY-MEMORY-001: ``harness replay`` checks the recording line by line,
then streams its stdout. Rule RUN-MEMORY-001: ``harness run`` keeps a bounded head and
tail of the events of a plain CLI printing one huge line. Each case runs the command
under a small Python that waits for it and reports ``RUSAGE_CHILDREN``'s ``ru_maxrss``
(the command is its only child; a run's CLI is measured apart, so ``harness run`` reports
its own ``RUSAGE_SELF``), and asserts a bound the whole-file reader (and the whole-event
result) exceeded on the same input. A memory bound, not a timing: nothing here depends
on how fast the machine is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.memory.inputs import write_capture, write_plain_line, write_recording

resource = pytest.importorskip("resource", reason="peak RSS is read with the POSIX resource module")

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")

SIZE = 32_000_000
#: A plain recording has one chunk per short line: a smaller one keeps the test quick.
PLAIN_RECORDING_SIZE = 8_000_000
#: Whole-event retention held a 64 MB line's text again (as 64 KiB deltas) on top of the rest.
RUN_LINE_SIZE = 64_000_000
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


#: ``harness`` run in this Python, its own peak (RUSAGE_SELF) written to the file named first:
#: a run's CLI is the harness's child, and a child's memory is not the harness's. It is
#: started by the small :data:`_MEASURE` Python, not by pytest: a process's peak starts
#: at its parent's size when it was spawned.
_MEASURE_SELF = (
    "import resource, runpy, sys\n"
    "report, sys.argv = sys.argv[1], ['harness', *sys.argv[2:]]\n"
    "code = 0\n"
    "try:\n"
    "    runpy.run_module('harness', run_name='__main__', alter_sys=True)\n"
    "except SystemExit as exc:\n"
    "    code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)\n"
    "with open(report, 'w') as out:\n"
    "    out.write(f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} {code}')\n"
)


def own_peak_mib(tmp_path: Path, *argv: str) -> tuple[float, int, str]:
    """Peak RSS (MiB) of the harness process alone running ``argv``, its exit code, stderr."""
    report = tmp_path / "peak.txt"
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-c", _MEASURE_SELF, str(report), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    kib, code = report.read_text(encoding="utf-8").split()
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


@pytest.mark.rule("REPLAY-MEMORY-001")
@pytest.mark.parametrize(
    ("fmt", "size"),
    [("claude-stream-json", SIZE), ("pi-rpc", SIZE), ("plain", PLAIN_RECORDING_SIZE)],
)
def test_replay_of_a_large_recording_stays_small(tmp_path: Path, fmt: str, size: int) -> None:
    recording = tmp_path / "run.jsonl"
    write_recording(fmt, recording, size)
    peak, code, err = peak_mib("replay", str(recording))
    assert code == 0, err
    assert peak < BOUND_MIB, f"harness replay of a {fmt} recording peaked at {peak:.0f} MiB"


@pytest.mark.rule("RUN-MEMORY-001")
def test_plain_run_of_one_long_line_stays_small(tmp_path: Path) -> None:
    scenario = tmp_path / "one-line.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "one-line",
                "description": "one stdout line of tens of MB",
                "steps": [{"kind": "oversize", "bytes": RUN_LINE_SIZE}],
            }
        ),
        encoding="utf-8",
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    peak, code, err = own_peak_mib(
        tmp_path,
        *("run", "qwen", "--fake", "--scenario", str(scenario), "--prompt", "hi"),
        *("--cwd", str(cwd)),
    )
    assert code == 0, err
    assert peak < BOUND_MIB, f"harness run of one long plain line peaked at {peak:.0f} MiB"
