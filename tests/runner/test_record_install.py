"""A recording names the CLI by its own name and writes where it is installed as
``{install}`` (RECORD-PATHS-001): a live CLI prints its install path in stack traces and
protocol metadata, and that path belongs to one machine, not to the recording."""

from __future__ import annotations

import asyncio
import io

import pytest

from harness.recording.record import RunRecorder, parse_recording
from harness.runner import run_agent_async
from harness.secrets.scrub import Scrubber, restore_text
from tests.runner.conftest import FakeWorld


@pytest.mark.rule("RECORD-PATHS-001")
def test_the_install_dir_becomes_a_placeholder_and_stays_one_unless_given() -> None:
    scrubber = Scrubber(paths={"install": "/opt/clis/npm", "cwd": "/work/p"})
    text = "at file:///opt/clis/npm/node_modules/x/cli.js:12 in /work/p"
    scrubbed = scrubber.scrub_text(text)
    assert scrubbed == "at file://{install}/node_modules/x/cli.js:12 in {cwd}"
    values = {"cwd": "/r/cwd", "home": "/r/home", "tmp": "/r/tmp"}
    kept = restore_text(scrubbed, values)
    assert kept == "at file://{install}/node_modules/x/cli.js:12 in /r/cwd"
    assert restore_text(scrubbed, {**values, "install": "/i"}).startswith("at file:///i/node_")
    # a CLI that prints the placeholder's own spelling gets it back unchanged
    assert restore_text(scrubber.scrub_text("{install}"), values) == "{install}"


@pytest.mark.rule("RECORD-PATHS-001")
def test_a_recording_names_the_program_and_hides_where_it_is_installed(
    world: FakeWorld,
) -> None:
    out = io.StringIO()
    request = world.request("claude", "text")
    recorder = RunRecorder(
        out, cwd=request.cwd, platform="linux", program="claude", install=str(world.bin)
    )
    result = asyncio.run(run_agent_async(request, tap=recorder))
    assert result.succeeded, result.error
    text = out.getvalue()
    assert str(world.bin) not in text
    recording = parse_recording(text.encode("utf-8"))
    assert recording.header.argv[0] == "claude"
    assert recording.header.argv[1:] == tuple(result.argv[1:])
