"""``harness run`` of a CLI whose answer holds a lone surrogate escape (``"a\\ud800b"``, which
JSON allows and UTF-8 cannot carry): the run succeeds and prints the text with U+FFFD, as
text and as ``--json``, on every JSON wire format (ROBUST-SURROGATE-001, ROBUST-JSONOUT-001).

Plain-text formats are not here: a CLI writing UTF-8 cannot print a lone surrogate at all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_REGISTRY
from harness.streams.decoder import loads_json

#: One agent per (stream format, event parser) pair that is not plain text.
AGENTS = sorted(
    {
        (d.stream_format, d.event_parser or ""): d.id
        for d in reversed(list(BUILTIN_REGISTRY.values()))
        if d.stream_format != "plain"
    }.values()
)


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "surrogate.json"
    # Written by hand so the file holds the escape itself, as a CLI's JSON output would.
    path.write_text(
        '{"name": "surrogate", "description": "A lone surrogate in the answer.",'
        ' "steps": [{"kind": "text", "text": "a\\ud800b", "chunks": ["a\\ud800", "b"]}]}',
        encoding="utf-8",
    )
    return path


@pytest.mark.rule("ROBUST-SURROGATE-001", "ROBUST-JSONOUT-001")
@pytest.mark.parametrize(
    ("agent", "flags"),
    # --json on every format; the text rendering is one code path for all, so once.
    [(agent, ("--json",)) for agent in AGENTS] + [("claude", ())],
)
def test_harness_run_prints_a_lone_surrogate_as_the_replacement_character(
    tmp_path: Path, agent: str, flags: tuple[str, ...]
) -> None:
    scenario = _scenario(tmp_path)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            agent,
            "--fake",
            "--scenario",
            str(scenario),
            "--cwd",
            str(tmp_path),
            *flags,
        ],
        capture_output=True,
        timeout=120,
        env=env,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, (flags, err)
    assert "Traceback" not in err
    out = proc.stdout.decode("utf-8")  # strict: the output always encodes
    if flags:
        events = [loads_json(line) for line in out.splitlines()]  # strict: no Infinity
        texts = [
            str(event.get("delta") or event.get("text") or "")
            for event in events
            if isinstance(event, dict) and event.get("type") in ("text_delta", "text")
        ]
        assert "\ufffd" in "".join(texts), out
    else:
        assert "\ufffd" in out, out
