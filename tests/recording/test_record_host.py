"""RECORD-HOST-001: the recording machine's host name is written ``{host}``.

``harness/secrets/hosts.py`` decides which names count and where one stands as a whole
token; ``harness/secrets/scrub.py`` writes it; ``RunRecorder`` passes the machine's names.
The end-to-end case records a real subprocess that prints this machine's names.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.recording.record import (
    RecordingHeader,
    RecordingWriter,
    host_spellings,
    load_recording,
    parse_recording,
    restore_paths,
)
from harness.secrets.hosts import (
    MIN_HOST_NAME,
    NEVER_SCRUBBED_HOSTS,
    find_hosts,
    host_literals,
    host_names,
)
from harness.secrets.scrub import REDACTED, Scrubber, StreamScrubber, restore_text
from tests.helpers import split_at

ROOT = Path(__file__).resolve().parents[2]
VALUES = {"cwd": "/w", "home": "/h", "tmp": "/t"}


# -- which names count ---------------------------------------------------------------------------


@pytest.mark.rule("RECORD-HOST-001")
def test_host_names_add_each_short_form_once() -> None:
    assert host_names("vm.corp.example", "vm", None, "") == ("vm.corp.example", "vm")
    assert host_names("build-7", "BUILD-7.lan") == ("build-7", "BUILD-7.lan", "BUILD-7")


@pytest.mark.rule("RECORD-HOST-001")
def test_literals_are_lowercased_and_longest_first() -> None:
    assert host_literals(["VM", "vm", "Vm.Corp.Example"]) == (b"vm.corp.example", b"vm")


@pytest.mark.rule("RECORD-HOST-001")
@pytest.mark.parametrize(
    "name",
    [
        pytest.param("x", id="one-letter"),
        pytest.param("", id="empty"),
        *(pytest.param(name, id=name) for name in sorted(NEVER_SCRUBBED_HOSTS)),
        pytest.param("LocalHost", id="localhost-any-case"),
        pytest.param("42", id="number"),
        pytest.param("10.0.0.7", id="address"),
        pytest.param("my host", id="not-a-host-name"),
    ],
)
def test_names_that_are_never_scrubbed(name: str) -> None:
    assert host_literals([name]) == ()
    text = f"a {name} b http://{name}:8080/v1 [{name}]"
    assert Scrubber(hosts=[name]).scrub_text(text) == text


@pytest.mark.rule("RECORD-HOST-001")
def test_two_characters_is_long_enough() -> None:
    assert MIN_HOST_NAME == 2
    assert Scrubber(hosts=["vm"]).scrub_text("on vm") == "on {host}"


# -- where a name matches ------------------------------------------------------------------------


@pytest.mark.rule("RECORD-HOST-001")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param('"serverName":"vm"', '"serverName":"{host}"', id="json-value"),
        pytest.param("user@vm:~$ ls", "user@{host}:~$ ls", id="prompt"),
        pytest.param("running on vm.", "running on {host}.", id="end-of-sentence"),
        pytest.param("VM and Vm", "{host} and {host}", id="any-case"),
        pytest.param("(vm)\t[vm]\n{vm}", "({host})\t[{host}]\n{{host}}", id="brackets"),
        pytest.param("vmstat avm vm2 vm_id vm-a a-vm", None, id="words"),
        pytest.param("sysctl vm.max_map_count", None, id="dotted-name"),
        pytest.param("a.vm b", None, id="a-label-of-another-name"),
        pytest.param("vmä äv", None, id="non-ascii-continues"),
        pytest.param("vm", "{host}", id="whole-text"),
    ],
)
def test_a_host_name_matches_only_as_a_whole_token(text: str, expected: str | None) -> None:
    """``None``: the text stays as it is."""
    assert Scrubber(hosts=["vm"]).scrub_text(text) == (text if expected is None else expected)


@pytest.mark.rule("RECORD-HOST-001")
def test_the_full_name_wins_over_its_short_form() -> None:
    scrubber = Scrubber(hosts=host_names("vm.corp.example"))
    text = "vm.corp.example vm vm.corp.example. vm.corp"
    assert scrubber.scrub_text(text) == "{host} {host} {host}. vm.corp"


@pytest.mark.rule("RECORD-HOST-001", "RECORD-PATHS-001", "RECORD-SECRET-LITERAL-001")
def test_paths_and_secrets_win_over_a_host_name_inside_them() -> None:
    scrubber = Scrubber(hosts=["vm"], paths={"home": "/home/vm"}, secrets=["pass vm word"])
    assert scrubber.scrub_text("/home/vm/x vm pass vm word") == f"{{home}}/x {{host}} {REDACTED}"


@pytest.mark.rule("RECORD-HOST-001")
def test_literal_host_placeholder_text_is_escaped_and_restored() -> None:
    scrubber = Scrubber(hosts=["host"])
    text = "{host} host {!host} {host:json}"
    scrubbed = scrubber.scrub_text(text)
    assert scrubbed == "{!host} {host} {!!host} {!host:json}"
    # Not restored (like {install}): only the escapes lose their "!".
    assert restore_text(scrubbed, VALUES) == "{host} {host} {!host} {host:json}"


@pytest.mark.rule("RECORD-HOST-001")
def test_paths_are_refused_under_the_host_placeholder() -> None:
    with pytest.raises(ValueError, match="unknown placeholder 'host'"):
        Scrubber(paths={"host": "/h"})


_HOSTISH = st.sampled_from(
    [
        *("vm", "vm", "vmstat", "a", "-", ".", "_", " ", "\n", '"', ":", "@", "ä"),
        *("{", "}", "!", "{!", "host}", "host", ":json}", "{host}", "{cwd}", "/w"),
        *("bü", "cher", "Bücher"),
    ]
)


@pytest.mark.rule("RECORD-HOST-001")
@settings(max_examples=300)
@given(parts=st.lists(_HOSTISH, max_size=14))
@example(parts=["{", "host", "}"])
@example(parts=["{!", "vm", "host}"])
@example(parts=["vm", "."])
def test_placeholders_round_trip_losslessly_given_the_host(parts: list[str]) -> None:
    """Restoring with the host's own name gives back the text: nothing but the host name
    and the escapes was rewritten."""
    text = "".join(parts)
    scrubbed = Scrubber(hosts=["vm"], paths={"cwd": "/w"}).scrub_text(text)
    assert restore_text(scrubbed, {**VALUES, "host": "vm"}) == text
    assert find_hosts(scrubbed.encode(), 0, host_literals(["vm"])) == []


@pytest.mark.rule("RECORD-HOST-001")
@settings(max_examples=200)
@given(
    parts=st.lists(_HOSTISH, max_size=14),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
@example(parts=["a ", "vm", " b"], cuts=[3])
@example(parts=["vm", ".", "x"], cuts=[3])
@example(parts=["ä", "vm"], cuts=[1, 3])
@example(parts=["a ", "bü", "cher"], cuts=[4])
def test_streaming_equals_scrubbing_the_whole_stream(parts: list[str], cuts: list[int]) -> None:
    """However the stream is cut, a name is matched as in the whole stream (a trailing
    ``bü`` is held back: ``cher`` may follow)."""
    scrubber = Scrubber(hosts=[*host_names("vm.lan"), "bücher"])
    data = "".join(parts).encode()
    stream = StreamScrubber(scrubber)
    out: list[bytes] = []
    for key, chunk in enumerate(split_at(data, cuts)):
        out += [d for _, d in stream.push(key, chunk)]
    out += [d for _, d in stream.flush()]
    assert b"".join(out) == scrubber.scrub_bytes(data)


# -- the recorder --------------------------------------------------------------------------------


def _header(argv: tuple[str, ...] = ("cli",)) -> RecordingHeader:
    return RecordingHeader(
        agent="a",
        stream_format="plain",
        event_parser=None,
        transport="default",
        argv=argv,
        prompt_delivery="stdin",
        platform="linux",
        cli_version=None,
    )


@pytest.mark.rule("RECORD-HOST-001")
def test_the_writer_scrubs_a_name_split_across_chunks_and_replay_keeps_it() -> None:
    writer = RecordingWriter(
        _header(("cli", "--on", "build-7")), cwd="/w", home="/h", tmp="/t", hosts=["build-7"]
    )
    lines = [writer.header_line()]
    for t, part in enumerate([b"hello from bui", b"ld-7\n", b"build-77 build-7"]):
        lines.append(writer.chunk("stdout", part, float(t)))
    lines.append(writer.exit(0, None, 3.0))
    recording = parse_recording("".join(lines).encode(), source="mem")
    assert recording.header.argv == ("cli", "--on", "{host}")
    assert [c.data for c in recording.chunks] == [
        b"hello from {host}",
        b"\n",
        b"build-77 {host}",
    ]
    restored = restore_paths(recording, cwd="/x", home="/y", tmp="/z")
    assert restored.header.argv == ("cli", "--on", "{host}")
    assert restored.chunks[0].data == b"hello from {host}"


_PRINT_HOST = (
    "import json, platform, socket;"
    "print(json.dumps({'serverName': socket.gethostname(), 'node': platform.node()}));"
    "print('vmstat-like words stay: ' + socket.gethostname() + 'x')"
)


@pytest.mark.rule("RECORD-HOST-001")
def test_a_recording_of_a_cli_printing_the_host_name_holds_none(tmp_path: Path) -> None:
    out = tmp_path / "host.jsonl"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLI_")},
        "PYTHONPATH": str(ROOT),
    }
    argv = [sys.executable, "-m", "harness.cli", "record", "--agent", "claude"]
    argv += ["--out", str(out), "--cwd", str(tmp_path), "--cli-version", "1.0.0"]
    argv += ["--expect", "failed", "--", sys.executable, "-c", _PRINT_HOST]
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=120, check=False)
    assert out.exists(), proc.stderr.decode()
    recording = load_recording(out)
    lines = b"".join(c.data for c in recording.chunks if c.direction.value == "stdout")
    printed, words = lines.decode().splitlines()[:2]
    names = host_spellings()
    literals = host_literals(names)

    def expected(name: str) -> str:
        # This machine's name may be one that is never scrubbed (a container's "localhost").
        return "{host}" if name.lower().encode() in literals else name

    assert json.loads(printed) == {
        "serverName": expected(socket.gethostname()),
        "node": expected(platform.node()),
    }
    assert words == f"vmstat-like words stay: {socket.gethostname()}x"
    assert find_hosts(out.read_bytes(), 0, literals) == []
