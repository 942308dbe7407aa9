"""Sealed launches: a live CLI runs in its own network namespace with loopback only.

Rules: LIVE-NET-001.
Design: docs/design/live.md#harness.live.netns
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Bridge",
    "NetAttempt",
    "NetEvidence",
    "NetSeal",
    "Sealing",
    "probe_sealing",
    "read_evidence",
]

#: The syscalls strace logs: every way a socket names a peer address.
TRACED = "connect,sendto,sendmsg,sendmmsg"
_LAUNCH_FAILED = 125
_IPV4 = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([0-9.]+)"\)')
_IPV6 = re.compile(r'sin6_port=htons\((\d+)\),.*?inet_pton\(AF_INET6, "([0-9a-fA-F:.]+)"')
_CALL = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(\w+)\(")
_RESULT = re.compile(r"\) = (-?\d+)(?: (E[A-Z0-9]+))?")


# -- what this machine allows -------------------------------------------------------------
@dataclass(frozen=True)
class Sealing:
    """How launches are sealed here: ``prefix`` is the ``unshare`` argv (empty: not sealed,
    ``reason`` says why), ``strace`` the strace binary that records attempts (or ``None``)."""

    prefix: tuple[str, ...]
    how: str
    strace: str | None = None
    reason: str = ""

    @property
    def sealed(self) -> bool:
        return bool(self.prefix)


_PROBED: dict[str, Sealing] = {}
_PROBE_LOCK = threading.Lock()


def probe_sealing(*, refresh: bool = False, platform: str | None = None) -> Sealing:
    """Find how this machine makes a loopback-only network namespace (cached).

    As root ``unshare --net``; else, or when that is refused, unprivileged user namespaces.
    """
    plat = platform or sys.platform
    with _PROBE_LOCK:
        if not refresh and plat in _PROBED:
            return _PROBED[plat]
        found = _probe(plat)
        _PROBED[plat] = found
        return found


def _probe(plat: str) -> Sealing:
    if not plat.startswith("linux"):
        return Sealing((), "none", reason=f"not sealed on this OS ({plat}): no network namespaces")
    unshare = shutil.which("unshare")
    if unshare is None:
        return Sealing((), "none", reason="not sealed: `unshare` (util-linux) is not installed")
    candidates: list[tuple[tuple[str, ...], str]] = [
        ((unshare, "--user", "--map-root-user", "--net"), "user and network namespace"),
    ]
    if os.geteuid() == 0:
        candidates.insert(0, ((unshare, "--net"), "network namespace"))
    errors: list[str] = []
    for prefix, how in candidates:
        try:
            proc = subprocess.run(
                [*prefix, "--", sys.executable, "-I", "-S", "-c", "pass"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            errors.append(f"{' '.join(prefix[1:])}: {exc}")
            continue
        if proc.returncode == 0:
            return Sealing(prefix, how, strace=shutil.which("strace"))
        errors.append(f"{' '.join(prefix[1:])}: {proc.stderr.strip() or proc.returncode}")
    return Sealing(
        (), "none", reason="not sealed: no namespace allowed here (" + "; ".join(errors) + ")"
    )


# -- the harness side of the relay ----------------------------------------------------------
def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides are done; then close both."""
    other = threading.Thread(target=_pump, args=(b, a), daemon=True)
    other.start()
    _pump(a, b)
    other.join()
    a.close()
    b.close()


class Bridge:
    """A Unix socket whose every connection is relayed to ``127.0.0.1:port`` (this
    namespace's model server). The sealed launcher relays into it from the CLI's side."""

    def __init__(self, path: str | os.PathLike[str], port: int) -> None:
        self.path = os.fspath(path)
        self.port = port
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()

    def __enter__(self) -> Bridge:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(self.path)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="netns-bridge", daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.port), timeout=10)
                up.settimeout(None)
            except OSError:
                conn.close()
                continue
            threading.Thread(target=_splice, args=(conn, up), daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        self._closed.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
            self._sock.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            os.unlink(self.path)


# -- evidence -------------------------------------------------------------------------------
@dataclass(frozen=True)
class NetAttempt:
    """One attempt to reach the network outside loopback (``kind`` ``connect`` or ``dns``)."""

    kind: str
    target: str
    #: Which launch made it (``version`` probe or ``run``) and the syscall or query type.
    source: str
    detail: str = ""

    def __str__(self) -> str:
        extra = f" ({self.detail})" if self.detail else ""
        return f"{self.source}: {self.kind} {self.target}{extra}"


@dataclass
class NetEvidence:
    """What the sealed launches of one live run recorded."""

    sealing: Sealing
    attempts: list[NetAttempt] = field(default_factory=list)
    #: Launches whose connect log exists (strace ran) / all launches seen.
    traced: int = 0
    launches: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def recorded(self) -> bool:
        """Every launch had its connects traced."""
        return self.launches > 0 and self.traced == self.launches


def _is_local(host: str) -> bool:
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback or addr.is_unspecified


def parse_strace(
    text: str, source: str, resolvers: frozenset[str] = frozenset()
) -> list[NetAttempt]:
    """The non-loopback attempts in a ``strace -e trace=connect,sendto,...`` log.

    An attempt to a resolver the DNS stub answered is left to the stub's log (it names
    the host); any other address outside loopback is an attempt.
    """
    out: list[NetAttempt] = []
    for line in text.splitlines():
        call = _CALL.match(line)
        if call is None or "resumed>" in line:
            continue
        host_port: tuple[str, str] | None = None
        if (m := _IPV4.search(line)) or (m := _IPV6.search(line)):
            host_port = (m.group(2), m.group(1))
        if host_port is None:
            continue
        host, port = host_port
        if _is_local(host) or (host in resolvers and port == "53"):
            continue
        results = _RESULT.findall(line)
        result = results[-1] if results else None
        outcome = (result[1] or result[0]) if result else "?"
        target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        out.append(NetAttempt("connect", target, source, f"{call.group(2)} -> {outcome}"))
    return out


def read_evidence(directory: str | os.PathLike[str], sealing: Sealing) -> NetEvidence:
    """Collect ``<label>-<pid>.{start,strace,dns}`` files the launcher wrote."""
    ev = NetEvidence(sealing)
    root = Path(directory)
    if not root.is_dir():
        return ev
    for start in sorted(root.glob("*.start")):
        stem = start.name[: -len(".start")]
        label = stem.rsplit("-", 1)[0]
        ev.launches += 1
        try:
            info = json.loads(start.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            ev.problems.append(f"{start.name}: unreadable ({exc})")
            info = {}
        resolvers = frozenset(str(r) for r in info.get("resolvers", []))
        ev.problems.extend(f"{label}: {p}" for p in info.get("problems", []))
        trace = root / f"{stem}.strace"
        if trace.is_file():
            ev.traced += 1
            text = trace.read_text(encoding="utf-8", errors="replace")
            ev.attempts.extend(parse_strace(text, label, resolvers))
        dns = root / f"{stem}.dns"
        if dns.is_file():
            for raw in dns.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    q = json.loads(raw)
                    ev.attempts.append(NetAttempt("dns", str(q["name"]), label, str(q["type"])))
    return ev


# -- the sealed launcher scripts ------------------------------------------------------------
class NetSeal:
    """The sealed world of one live run: a :class:`Bridge` to the model server at ``port``
    and launcher scripts whose launches log into one evidence directory."""

    def __init__(self, root: str | os.PathLike[str], port: int, sealing: Sealing) -> None:
        self.root = Path(root)
        self.port = port
        self.sealing = sealing
        self.evidence_dir = self.root / "net"
        self._bridge: Bridge | None = None
        self._sock_dir: str | None = None

    def __enter__(self) -> NetSeal:
        if not self.sealing.sealed:
            return self
        self.evidence_dir.mkdir(parents=True, exist_ok=True)
        sock = self.evidence_dir / "bridge.sock"
        if len(os.fsencode(sock)) > 100:  # sun_path holds 108 bytes
            self._sock_dir = tempfile.mkdtemp(prefix="harness-net-", dir="/tmp")
            sock = Path(self._sock_dir) / "bridge.sock"
        self._bridge = Bridge(sock, self.port).__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bridge is not None:
            self._bridge.__exit__(None, None, None)
            self._bridge = None
        if self._sock_dir is not None:
            shutil.rmtree(self._sock_dir, ignore_errors=True)

    def launcher(self, real_bin: str, label: str) -> str:
        """A script named like ``real_bin`` that runs it sealed (``real_bin`` as is when
        this machine cannot seal: the caller warns)."""
        if not self.sealing.sealed or self._bridge is None:
            return real_bin
        bindir = self.root / f"sealed-{label}"
        bindir.mkdir(exist_ok=True)
        target = bindir / os.path.basename(real_bin)
        argv = [
            *self.sealing.prefix,
            "--",
            sys.executable,
            "-I",
            "-S",
            os.path.abspath(__file__),
            "--bridge",
            self._bridge.path,
            "--port",
            str(self.port),
            "--evidence",
            str(self.evidence_dir),
            "--label",
            label,
            "--bindir",
            str(bindir),
        ]
        if self.sealing.strace:
            argv += ["--strace", self.sealing.strace]
        argv += ["--", real_bin]
        script = "#!/bin/sh\nexec " + " ".join(shlex.quote(a) for a in argv) + ' "$@"\n'
        target.write_text(script, encoding="utf-8")
        target.chmod(0o755)
        return str(target)

    def evidence(self) -> NetEvidence:
        return read_evidence(self.evidence_dir, self.sealing)


# -- the launcher, inside the namespace (stdlib only: run as ``python -I -S netns.py``) -----
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def _loopback_up() -> None:
    import fcntl  # Linux only (live mode's network namespace): no fcntl on Windows

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifr = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(s, _SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | _IFF_UP))


def _resolvers(path: str = "/etc/resolv.conf") -> list[str]:
    out: list[str] = []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            with contextlib.suppress(ValueError):
                out.append(str(ipaddress.ip_address(parts[1].split("%")[0])))
    return out


def _dns_name(packet: bytes) -> tuple[str, int, int]:
    """(query name, qtype, end of the question) of a DNS query; raises ValueError."""
    pos, labels = 12, []
    while True:
        if pos >= len(packet):
            raise ValueError("truncated name")
        n = packet[pos]
        pos += 1
        if n == 0:
            break
        if n & 0xC0:
            raise ValueError("compressed name in a query")
        labels.append(packet[pos : pos + n].decode("ascii", "replace"))
        pos += n
    if pos + 4 > len(packet):
        raise ValueError("truncated question")
    qtype = struct.unpack("!H", packet[pos : pos + 2])[0]
    return ".".join(labels), qtype, pos + 4


def nxdomain(packet: bytes) -> tuple[str, int, bytes]:
    """(name, qtype, NXDOMAIN reply) for a DNS query packet; raises ValueError."""
    if len(packet) < 12:
        raise ValueError("shorter than a DNS header")
    name, qtype, end = _dns_name(packet)
    flags = struct.unpack("!H", packet[2:4])[0]
    reply_flags = 0x8000 | (flags & 0x7900) | 0x0080 | 3  # QR, opcode+RD, RA, NXDOMAIN
    header = packet[:2] + struct.pack("!HHHHH", reply_flags, 1, 0, 0, 0)
    return name, qtype, header + packet[12:end]


def _serve_dns(sock: socket.socket, log: Any, lock: threading.Lock) -> None:
    while True:
        try:
            data, peer = sock.recvfrom(4096)
        except OSError:
            return
        try:
            name, qtype, reply = nxdomain(data)
        except ValueError as exc:
            name, qtype, reply = f"<unparsable query: {exc}>", 0, b""
        with lock:
            log.write(json.dumps({"name": name, "type": qtype}) + "\n")
            log.flush()
        if reply:
            with contextlib.suppress(OSError):
                sock.sendto(reply, peer)


def _serve_relay(listener: socket.socket, bridge: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(bridge)
        except OSError:
            conn.close()
            up.close()
            continue
        threading.Thread(target=_splice, args=(conn, up), daemon=True).start()


def _launch(opts: dict[str, str], command: list[str]) -> int:
    problems: list[str] = []
    _loopback_up()
    others = [name for _i, name in socket.if_nameindex() if name != "lo"]
    if others:
        print(f"harness-netns: refusing to run: interfaces besides lo: {others}", file=sys.stderr)
        return _LAUNCH_FAILED
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(opts["port"])))
    listener.listen(64)
    ip = shutil.which("ip") or next(
        (p for p in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip") if os.path.exists(p)), None
    )
    dns_socks: list[socket.socket] = []
    served: list[str] = []
    for ns in _resolvers():
        addr = ipaddress.ip_address(ns)
        if not addr.is_loopback:
            if ip is None:
                problems.append(f"no `ip` command: resolver {ns} left unreachable, names unseen")
                continue
            plen = "/32" if addr.version == 4 else "/128"
            proc = subprocess.run(
                [ip, "addr", "add", ns + plen, "dev", "lo"],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                problems.append(f"ip addr add {ns}: {proc.stderr.strip()}")
                continue
        family = socket.AF_INET if addr.version == 4 else socket.AF_INET6
        s = socket.socket(family, socket.SOCK_DGRAM)
        try:
            s.bind((ns, 53))
        except OSError as exc:
            problems.append(f"DNS stub on {ns}:53: {exc}")
            s.close()
            continue
        dns_socks.append(s)
        served.append(ns)
    if opts.get("bindir"):
        # The runner put this script's dir on PATH for the CLI's own; give it back.
        real_dir = os.path.dirname(command[0])
        parts = os.environ.get("PATH", "").split(os.pathsep)
        os.environ["PATH"] = os.pathsep.join(real_dir if p == opts["bindir"] else p for p in parts)
    evidence = Path(opts["evidence"])
    stem = evidence / f"{opts['label']}-{os.getpid()}"
    info = {"resolvers": served, "problems": problems, "command": command[:1]}
    Path(f"{stem}.start").write_text(json.dumps(info), encoding="utf-8")
    argv = command
    if opts.get("strace"):
        argv = [
            opts["strace"],
            "-f",
            "-qq",
            "--seccomp-bpf",
            "-e",
            f"trace={TRACED}",
            "-e",
            "signal=none",
            "-s",
            "0",
            "-o",
            f"{stem}.strace",
            "--",
            *command,
        ]
    pid = os.fork()
    if pid == 0:  # the CLI
        listener.close()
        for s in dns_socks:
            s.close()
        try:
            os.execv(argv[0], argv)
        except OSError as exc:
            print(f"harness-netns: cannot run {argv[0]}: {exc}", file=sys.stderr)
        os._exit(_LAUNCH_FAILED)
    return _relay_until_exit(pid, listener, dns_socks, opts["bridge"], f"{stem}.dns")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _relay_until_exit(
    pid: int, listener: socket.socket, dns_socks: list[socket.socket], bridge: str, dns_log: str
) -> int:
    """Serve the relay and the DNS stub until the CLI exits; end like it did."""

    def forward(signum: int, _frame: object) -> None:
        # strace -o FILE PROG blocks fatal signals: the CLI under it gets them directly.
        for target in (pid, *_children(pid)):
            with contextlib.suppress(OSError):
                os.kill(target, signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, forward)
    # The CLI alone holds the runner's pipes: their EOF is the CLI's.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    lock = threading.Lock()
    with open(dns_log, "a", encoding="utf-8") as log:
        for s in dns_socks:
            threading.Thread(target=_serve_dns, args=(s, log, lock), daemon=True).start()
        threading.Thread(target=_serve_relay, args=(listener, bridge), daemon=True).start()
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.waitstatus_to_exitcode(status)


def main(argv: list[str]) -> int:
    """``netns.py --bridge SOCK --port P --evidence DIR --label L [--bindir D] [--strace S]
    -- CMD...`` (``--bindir``: the launcher script's dir, swapped on PATH for CMD's)."""
    if "--" not in argv:
        print("harness-netns: usage: ... -- COMMAND [ARGS]", file=sys.stderr)
        return _LAUNCH_FAILED
    cut = argv.index("--")
    head, command = argv[:cut], argv[cut + 1 :]
    opts: dict[str, str] = {}
    for i in range(0, len(head) - 1, 2):
        opts[head[i].lstrip("-")] = head[i + 1]
    missing = [k for k in ("bridge", "port", "evidence", "label") if k not in opts]
    if missing or not command:
        print(f"harness-netns: missing {missing or 'COMMAND'}", file=sys.stderr)
        return _LAUNCH_FAILED
    try:
        return _launch(opts, command)
    except OSError as exc:
        print(f"harness-netns: cannot seal the launch: {exc}", file=sys.stderr)
        return _LAUNCH_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
