"""ACP frame validation: the tag-dispatching ``oneOf`` against plain jsonschema, one process.

Every ACP recording under ``recordings/`` is replayed at its recorded chunking, first
with the validators built from plain ``jsonschema.Draft202012Validator`` (the baseline),
then with :class:`harness.protocols.schema_dispatch.DispatchingValidator`. Printed: CPU
seconds of each (best of N), the ratio baseline / new, and whether every replay's JSON
report (status, findings, counters) came out the same.

Run: ``python benchmarks/acp_schema.py [--repeat N]``. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.protocols.acp import schema as acp_schema
from harness.recording.corpus import corpus_files
from harness.recording.record import Recording, load_recording
from harness.recording.replay import replay_recording

_DISPATCHING = acp_schema.DispatchingValidator


def _use(validator_class: Any) -> None:
    """Build the ACP validators from ``validator_class`` from now on."""
    acp_schema.DispatchingValidator = validator_class
    acp_schema._validator.cache_clear()
    acp_schema._local_validator.cache_clear()


def _replay_all(recordings: list[Recording]) -> tuple[float, list[str]]:
    """CPU seconds to replay every recording once, and each replay's JSON report."""
    start = time.process_time()
    reports = [json.dumps(replay_recording(r).to_json(), sort_keys=True) for r in recordings]
    return time.process_time() - start, reports


def _best(recordings: list[Recording], repeat: int) -> tuple[float, list[str]]:
    _replay_all(recordings)  # warm: validators built, schemas loaded
    runs = [_replay_all(recordings) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[0][1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="best of N (default 20)")
    args = parser.parse_args()
    repeat = max(1, args.repeat)
    recordings = [load_recording(p) for p in corpus_files() if p.parent.name == "acp-json-rpc"]
    print(f"ACP recordings: {len(recordings)}")
    try:
        _use(jsonschema.Draft202012Validator)
        t_plain, plain = _best(recordings, repeat)
        _use(_DISPATCHING)
        t_fast, fast = _best(recordings, repeat)
    finally:
        _use(_DISPATCHING)
    print(f"  plain oneOf      : {t_plain:7.3f} s CPU (best of {repeat})")
    print(f"  tag-dispatched   : {t_fast:7.3f} s CPU (best of {repeat})")
    print(f"  ratio plain / new: {t_plain / t_fast:.2f}x")
    print(f"  same reports     : {plain == fast}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
