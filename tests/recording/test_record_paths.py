"""RECORD-PATHS-REAL-001: a recording's cwd, home and temp directory become placeholders
whether the CLI prints them as given or resolved through symlinks (macOS: ``/tmp`` and
``/var`` are links into ``/private``). The end-to-end case records a real subprocess with
``harness record`` under symlinked directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.recording.record import load_recording, path_spellings
from harness.secrets.scrub import Scrubber

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")


def _linked(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """``<tmp>/real/<name>`` and a link ``<tmp>/links/<name>`` to it."""
    real = tmp_path / "real" / name
    real.mkdir(parents=True)
    link = tmp_path / "links" / name
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(real, target_is_directory=True)
    return link, real


@pytest.mark.rule("RECORD-PATHS-REAL-001")
def test_path_spellings_adds_the_resolved_path_once(tmp_path: Path) -> None:
    link, real = _linked(tmp_path, "proj")
    assert path_spellings(str(link)) == (str(link), str(real.resolve()))
    assert path_spellings(str(real.resolve()), None, "") == (str(real.resolve()),)
    assert path_spellings("relative/dir") == ("relative/dir",)


@pytest.mark.rule("RECORD-PATHS-REAL-001")
def test_every_spelling_of_a_directory_becomes_its_placeholder() -> None:
    scrubber = Scrubber(
        paths={
            "cwd": ("/tmp/w/proj", "/private/tmp/w/proj"),
            "tmp": ["/tmp", "/private/tmp"],
            "home": "/Users/al",
        }
    )
    text = "/private/tmp/w/proj/a /tmp/w/proj/b /private/tmp/x /tmp/y /Users/al/.cfg"
    assert scrubber.scrub_text(text) == "{cwd}/a {cwd}/b {tmp}/x {tmp}/y {home}/.cfg"


_PRINT_PATHS = (
    "import json, os, tempfile;"
    "print(json.dumps({"
    "'cwd': os.getcwd(),"
    "'home': os.path.realpath(os.environ['HOME']),"
    "'tmp': os.path.realpath(tempfile.gettempdir()),"
    "'file': os.path.join(os.getcwd(), 'notes.md')}))"
)


@pytest.mark.rule("RECORD-PATHS-REAL-001")
def test_a_recording_under_symlinked_dirs_holds_no_resolved_path(tmp_path: Path) -> None:
    cwd, real_cwd = _linked(tmp_path, "project")
    home, real_home = _linked(tmp_path, "home")
    tmp, real_tmp = _linked(tmp_path, "tmp")
    out = tmp_path / "paths.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLI_")},
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "PYTHONPATH": str(ROOT),
    }
    argv = [sys.executable, "-m", "harness.cli", "record", "--agent", "claude"]
    argv += ["--out", str(out), "--cwd", str(cwd), "--cli-version", "1.0.0"]
    argv += ["--expect", "failed", "--", sys.executable, "-c", _PRINT_PATHS]
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=120, check=False)
    assert out.exists(), proc.stderr.decode()
    recording = load_recording(out)
    data = b"".join(c.data for c in recording.chunks if c.direction.value == "stdout")
    printed = json.loads(data.decode().splitlines()[0])
    assert printed == {
        "cwd": "{cwd}",
        "home": "{home}",
        "tmp": "{tmp}",
        "file": "{cwd}/notes.md",
    }
    text = out.read_text(encoding="utf-8")
    for real in (real_cwd, real_home, real_tmp):
        assert str(real.resolve()) not in text
