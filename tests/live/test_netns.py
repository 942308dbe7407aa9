"""Sealed launches (LIVE-NET-001): a live CLI runs in a loopback-only network namespace,
reaches the model server through the bridge, and every attempt outside loopback is
recorded and fails the rule.

The "public" connect goes to 192.0.2.1 (TEST-NET-1, documentation only) and only ever
from inside a namespace with no route out: where no namespace can be made, those tests
are skipped rather than attempted.
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.verdicts import Status
from harness.live.conform import net_finding
from harness.live.netns import (
    NetAttempt,
    NetEvidence,
    NetSeal,
    Sealing,
    nxdomain,
    parse_strace,
    probe_sealing,
)

SEALING = probe_sealing()
needs_ns = pytest.mark.skipif(not SEALING.sealed, reason=SEALING.reason or "not sealed")
needs_strace = pytest.mark.skipif(SEALING.strace is None, reason="strace is not installed")

PHONE_HOME = """
import socket, sys, urllib.request
try:
    socket.getaddrinfo("updates.phone-home.example", 443)
    print("resolved")
except OSError as exc:
    print("dns failed", exc.errno)
try:
    socket.create_connection(("192.0.2.1", 443), timeout=5)
    print("connected")
except OSError as exc:
    print("connect failed", exc.errno)
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/x", timeout=20).read().decode())
"""
LOOPBACK_ONLY = """
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/x", timeout=20).read().decode())
sys.exit(3)
"""


class _Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"host={self.headers.get('Host')} path={self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield int(srv.server_address[1])
    srv.shutdown()
    srv.server_close()


def _run_sealed(
    tmp_path: Path, port: int, script: str, label: str = "run"
) -> tuple[subprocess.CompletedProcess[str], NetEvidence]:
    cli = tmp_path / "cli.py"
    cli.write_text(script, encoding="utf-8")
    with NetSeal(tmp_path / "world", port, SEALING) as seal:
        exe = seal.launcher(sys.executable, label)
        assert exe != sys.executable
        proc = subprocess.run(
            [exe, "-I", str(cli), str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        return proc, seal.evidence()


@needs_ns
@needs_strace
@pytest.mark.rule("LIVE-NET-001")
def test_a_cli_that_phones_home_is_cut_off_recorded_and_fails(tmp_path: Path, server: int) -> None:
    (tmp_path / "world").mkdir()
    proc, evidence = _run_sealed(tmp_path, server, PHONE_HOME)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("dns failed")
    assert lines[1] == f"connect failed {101}"  # ENETUNREACH: no route out
    # The model server is reached through the bridge with the URL and Host unchanged.
    assert lines[2] == f"host=127.0.0.1:{server} path=/v1/x"
    found = {(a.kind, a.target) for a in evidence.attempts}
    assert ("connect", "192.0.2.1:443") in found
    assert ("dns", "updates.phone-home.example") in found
    assert all(a.source == "run" for a in evidence.attempts)
    finding = net_finding(evidence, repro_command="harness live diff x")
    assert finding.status is Status.FAIL
    assert "192.0.2.1:443" in finding.reason
    assert "updates.phone-home.example" in finding.reason


@needs_ns
@needs_strace
@pytest.mark.rule("LIVE-NET-001")
def test_a_loopback_only_cli_passes_and_keeps_its_exit_status(tmp_path: Path, server: int) -> None:
    (tmp_path / "world").mkdir()
    proc, evidence = _run_sealed(tmp_path, server, LOOPBACK_ONLY)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == f"host=127.0.0.1:{server} path=/v1/x"
    assert evidence.attempts == []
    assert evidence.launches == evidence.traced == 1
    finding = net_finding(evidence, repro_command="r")
    assert finding.status is Status.PASS, finding.reason


@needs_ns
def test_a_signal_to_the_launcher_reaches_the_cli_and_the_launcher_dies_of_it(
    tmp_path: Path,
) -> None:
    cli = tmp_path / "cli.py"
    cli.write_text("import sys, time\nprint('up', flush=True)\ntime.sleep(600)\n")
    with NetSeal(tmp_path, 9, SEALING) as seal:
        exe = seal.launcher(sys.executable, "run")
        proc = subprocess.Popen(
            [exe, "-I", str(cli)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "up"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == -signal.SIGTERM
        proc.stdout.close()


@needs_ns
def test_the_launcher_swaps_its_own_dir_on_path_for_the_clis(tmp_path: Path) -> None:
    cli = tmp_path / "cli.py"
    cli.write_text("import os\nprint(os.environ['PATH'])\n")
    with NetSeal(tmp_path, 9, SEALING) as seal:
        exe = seal.launcher(sys.executable, "run")
        env = {"PATH": os.pathsep.join((os.path.dirname(exe), "/usr/bin"))}
        out = subprocess.run(
            [exe, "-I", str(cli)], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()
    assert out.split(os.pathsep) == [os.path.dirname(sys.executable), "/usr/bin"]


def test_the_launcher_refuses_to_run_outside_a_namespace(tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("network namespaces are Linux only")
    if [n for _i, n in socket.if_nameindex() if n != "lo"] == []:
        pytest.skip("this machine has no interface besides lo")
    from harness.live import netns

    marker = tmp_path / "ran"
    proc = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            netns.__file__,
            "--bridge",
            str(tmp_path / "b.sock"),
            "--port",
            "9",
            "--evidence",
            str(tmp_path),
            "--label",
            "run",
            "--",
            "/bin/sh",
            "-c",
            f"touch {marker}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 125
    assert not marker.exists()
    assert "harness-netns:" in proc.stderr


@pytest.mark.rule("LIVE-NET-001")
def test_where_no_namespace_exists_the_verdict_says_not_sealed() -> None:
    sealing = probe_sealing(platform="darwin", refresh=True)
    assert not sealing.sealed
    assert "not sealed on this OS (darwin)" in sealing.reason
    finding = net_finding(NetEvidence(sealing), repro_command="r")
    assert finding.status is Status.SKIPPED
    assert "not sealed on this OS" in finding.reason
    seal = NetSeal("/nonexistent", 9, sealing)
    with seal:
        assert seal.launcher("/opt/cli/bin/x", "run") == "/opt/cli/bin/x"


@pytest.mark.rule("LIVE-NET-001")
def test_unrecorded_connects_are_never_a_silent_pass() -> None:
    sealing = Sealing(("unshare", "--net"), "network namespace", strace=None)
    finding = net_finding(NetEvidence(sealing, launches=2, traced=0), repro_command="r")
    assert finding.status is Status.SKIPPED
    assert "strace is not installed" in finding.reason
    dns = NetEvidence(sealing, [NetAttempt("dns", "api.example", "version", "1")], 0, 2)
    assert net_finding(dns, repro_command="r").status is Status.FAIL


def test_strace_lines_become_attempts_outside_loopback_only() -> None:
    log = "\n".join(
        [
            '10  connect(3, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110)'
            " = -1 ENOENT (No such file or directory)",
            "10  connect(3, {sa_family=AF_INET, sin_port=htons(53), "
            'sin_addr=inet_addr("10.0.0.53")}, 16) = 0',
            "10  connect(4, {sa_family=AF_INET, sin_port=htons(443), "
            'sin_addr=inet_addr("192.0.2.1")}, 16) = -1 ENETUNREACH (Network is unreachable)',
            "11  connect(5, {sa_family=AF_INET, sin_port=htons(8080), "
            'sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS (Operation now in progress)',
            "11  connect(6, {sa_family=AF_INET6, sin6_port=htons(443), "
            'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), '
            "sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)",
            "11  connect(7, {sa_family=AF_INET6, sin6_port=htons(80), "
            'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), '
            "sin6_scope_id=0}, 28) = 0",
            '12  sendto(8, ""..., 30, 0, {sa_family=AF_INET, sin_port=htons(123), '
            'sin_addr=inet_addr("198.51.100.7")}, 16) = -1 ENETUNREACH (Network is unreachable)',
            '12  sendto(9, ""..., 124, 0, NULL, 0) = 124',
        ]
    )
    got = parse_strace(log, "run", frozenset({"10.0.0.53"}))
    assert [(a.target, a.detail) for a in got] == [
        ("192.0.2.1:443", "connect -> ENETUNREACH"),
        ("[2001:db8::1]:443", "connect -> ENETUNREACH"),
        ("198.51.100.7:123", "sendto -> ENETUNREACH"),
    ]
    # Without the stub on that resolver, the DNS server connect is an attempt too.
    assert "10.0.0.53:53" in {a.target for a in parse_strace(log, "run")}


@given(st.text())
def test_parse_strace_never_raises(text: str) -> None:
    for attempt in parse_strace(text, "run"):
        assert attempt.kind == "connect"


def _query(name: str, qtype: int = 1) -> bytes:
    qname = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + qname + struct.pack("!HH", qtype, 1)


def test_the_dns_stub_names_the_query_and_answers_nxdomain() -> None:
    name, qtype, reply = nxdomain(_query("api.kilo.ai", 28))
    assert (name, qtype) == ("api.kilo.ai", 28)
    ident, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", reply[:12])
    assert ident == 0x1234
    assert flags & 0x8000  # a response
    assert flags & 0x0100  # recursion desired, echoed
    assert flags & 0xF == 3  # NXDOMAIN
    assert (qd, an, ns, ar) == (1, 0, 0, 0)
    assert reply[12:] == _query("api.kilo.ai", 28)[12:]


@given(st.binary(max_size=300))
def test_the_dns_stub_rejects_garbage_only_with_value_error(data: bytes) -> None:
    try:
        _name, _qtype, reply = nxdomain(data)
    except ValueError:
        return
    assert reply[:2] == data[:2]
    assert reply[3] & 0xF == 3


@needs_ns
@pytest.mark.rule("LIVE-NET-001")
def test_run_live_seals_the_version_probe_and_every_turn(tmp_path: Path) -> None:
    from harness.defs.registry import get_agent_def
    from harness.live.session import run_live
    from harness.runtime.fakes_install import shim_text

    defn = get_agent_def("claude")
    shim = tmp_path / "fake-claude"
    shim.write_text(shim_text(defn.id, sys.executable, sys.platform), encoding="utf-8")
    real = tmp_path / "claude"
    real.write_text(f'#!/bin/sh\nFAKE_CLI_SCENARIO=text exec {shim} "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    real.chmod(0o755)
    run = run_live(defn, "text", side="real", bin_path=str(real), work_base=tmp_path / "w")
    try:
        assert run.result.succeeded, run.result.error
        assert run.net is not None
        # the version probe, the help probe the runner asks for capabilities, and the turn
        assert run.net.launches == 3
        labels = sorted(p.name.split("-")[0] for p in (run.dirs.root / "net").glob("*.start"))
        assert labels == ["run", "run", "version"]  # the help probe goes through the run's launcher
        assert run.net.attempts == []
        assert run.wall_s > 0
    finally:
        run.dirs.cleanup()
