"""Installing the fake CLIs under the real binaries' names (``harness fakes install``).

Design: docs/design/fakes.md#harness.runtime.fakes_install
"""

from __future__ import annotations

import compileall
import functools
import io
import json
import os
import platform
import re
import stat
import string
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import fake_clis
from fake_clis.catalog import emulator_module_of, present_emulators
from harness.defs.types import AgentDef
from harness.errors import HarnessError

__all__ = [
    "LAUNCHER_MAX_PATH",
    "SHIM_MARKER",
    "WINDOWS_LAUNCHERS",
    "FakeEntry",
    "InstallReport",
    "exe_launcher",
    "install_fakes",
    "launcher_name",
    "launcher_shebang",
    "list_fakes",
    "prepare_fake_home",
    "shim_name",
    "shim_text",
]

#: What ``install_fakes`` can write per name on Windows (``launchers=``). With both, the
#: PATH walk (ref §5.2: ``''``, then PATHEXT ``.COM;.EXE;.BAT;.CMD``) selects the ``.exe``.
WINDOWS_LAUNCHERS: tuple[str, ...] = ("cmd", "exe")

#: distlib's launcher reads its own path, and the shebang before the archive, into
#: ``MAX_PATH`` (260) sized buffers (``PC/launcher.c``: ``script_path[MAX_PATH]``,
#: ``find_shebang(buffer, MAX_PATH)``, ``wbuffer[MAX_PATH]``).
LAUNCHER_MAX_PATH = 260

#: What a fake's HOME holds so a failing run stays short: pi's auto-retry (the pi fake
#: reads ``~/.pi/agent/settings.json`` as pi does) waits 20, 40, 80 ms instead of 2, 4,
#: 8 s. The retries and their events are the same; only the waits shrink.
_QUICK_HOME_FILES: Mapping[str, object] = {
    ".pi/agent/settings.json": {"retry": {"baseDelayMs": 20}},
}

_EXE_RULE = "RUN-FAKES-EXE-001"
_USER_FILES_RULE = "USERFILE-FAKES-001"

#: In every file ``install_fakes`` writes: the proof that it may replace that file later.
SHIM_MARKER = "fake CLI shim written by harness fakes install"
#: The largest file inspected for the marker (an ``.exe`` is the launcher plus a small zip).
_MAX_SHIM_BYTES = 4 * 1024 * 1024
#: The shims of versions before the marker, by shape (``shim_text`` without its marker line).
_LEGACY_SHIMS = (
    re.compile(r'#!/bin/sh\nexec "[^\n]*" -S "[^\n]*_shim\.py" \S+ \S+ "\$@"\n'),
    re.compile(r'@"[^\r\n]*" -S "[^\r\n]*_shim\.py" \S+ \S+ %\*\r\n'),
)
#: The zip entry's timestamp: fixed, so two installs write the same bytes.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class FakeEntry:
    """One emulated CLI: the agent id, the emulator module, the program name."""

    agent_id: str
    module: str
    prog: str


@dataclass
class InstallReport:
    #: shim path -> agent id
    written: dict[str, str] = field(default_factory=dict)
    #: human-readable reasons, one per skipped def or name
    skipped: list[str] = field(default_factory=list)
    #: path -> why it was left as it was: a file this installer did not write, a link
    #: (USERFILE-FAKES-001). Non-empty means the install is incomplete.
    kept: dict[str, str] = field(default_factory=dict)


def list_fakes() -> list[FakeEntry]:
    """Every emulator that is present, by agent id (sorted)."""
    entries: list[FakeEntry] = []
    for name, module in present_emulators():
        for agent_id, spec in getattr(module, "SPECS", {}).items():
            entries.append(FakeEntry(agent_id=agent_id, module=name, prog=spec.prog))
    return sorted(entries, key=lambda e: e.agent_id)


def _shim_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(fake_clis.__file__)), "_shim.py")


def _sh_quote(text: str) -> str:
    """Inside double quotes, sh expands ``$``, backquote and backslash: escape them."""
    out = text
    for char in ("\\", '"', "$", "`"):
        out = out.replace(char, "\\" + char)
    return out


def shim_name(bin_name: str, platform: str) -> str:
    return f"{bin_name}.cmd" if platform == "win32" else bin_name


def shim_text(agent_id: str, python: str, platform: str) -> str:
    """The shim's content for ``platform`` (``win32``: a ``.cmd``; else ``#!/bin/sh``).

    Every writer of a shim comes through here, so this is where the fakes' bytecode is
    made sure of (:func:`precompile_fakes`, once per process).
    """
    precompile_fakes()
    shim = _shim_path()
    # The emulator module's name lets the fake import only that emulator; "-" when no
    # emulator claims the id (the fake then prints the list of the ones that exist).
    module = _emulator_module(agent_id) or "-"
    if platform == "win32":
        # cmd.exe expands %VAR% even inside quotes: double every percent sign.
        exe, script = python.replace("%", "%%"), shim.replace("%", "%%")
        return f'@rem {SHIM_MARKER}\r\n@"{exe}" -S "{script}" {module} {agent_id} %*\r\n'
    return (
        f"#!/bin/sh\n# {SHIM_MARKER}\n"
        f'exec "{_sh_quote(python)}" -S "{_sh_quote(shim)}" {module} {agent_id} "$@"\n'
    )


@functools.cache
def _emulator_module(agent_id: str) -> str | None:
    return emulator_module_of(agent_id)


@functools.lru_cache(maxsize=1)
def precompile_fakes() -> bool:
    """Write the fakes' bytecode next to their sources, once per process.

    A fake starts hundreds of times in ``harness conform``; without a ``__pycache__``
    (a fresh clone, and ``PYTHONDONTWRITEBYTECODE`` set, as CI images often do) every
    start compiles the package again, which doubles its start-up CPU. ``compileall``
    writes regardless of that variable and skips files whose bytecode is current. An
    unwritable install dir is fine: the fakes then compile in memory as before.
    """
    try:
        return bool(compileall.compile_dir(os.path.dirname(fake_clis.__file__), quiet=2))
    except OSError:
        return False


# --------------------------------------------------------------------------- .exe launcher
# Rule RUN-FAKES-EXE-001 (design §"Fake CLIs": ".cmd/.exe on Windows"). The format is the
# one distlib's ScriptMaker writes and its launcher (``PC/launcher.c``) reads; the code
# here is ours.


def launcher_name(machine: str | None = None, pointer_bits: int | None = None) -> str:
    """The distlib console launcher for a Windows ``machine`` and interpreter pointer size.

    ``t32.exe`` for a 32-bit interpreter (x86; Windows runs it on x64 and ARM64 too),
    ``t64-arm.exe`` for a 64-bit one on an ARM64 machine, else ``t64.exe``. Defaults:
    ``platform.machine()`` (``AMD64``, ``ARM64``, ``x86`` on Windows) and ``sys.maxsize``.
    A pure function of its two arguments, so every branch is checked on any OS.
    """
    if machine is None:
        machine = platform.machine()
    if pointer_bits is None:
        pointer_bits = 64 if sys.maxsize > 2**32 else 32
    if pointer_bits == 32:
        return "t32.exe"
    if pointer_bits != 64:
        raise HarnessError(
            f"no Windows launcher for a {pointer_bits}-bit interpreter (32 or 64)", rule=_EXE_RULE
        )
    if machine.strip().upper() in {"ARM64", "AARCH64"}:
        return "t64-arm.exe"
    return "t64.exe"


@functools.cache
def _launcher_stub(name: str) -> bytes:
    """The launcher's bytes, read through distlib's resource API (once per name)."""
    try:
        # only .exe launchers (Windows fakes) need distlib; a missing one is reported
        from distlib.resources import finder  # type: ignore[import-untyped]
    except ImportError as exc:
        raise HarnessError(
            f"cannot build .exe launchers: distlib is not importable ({exc})", rule=_EXE_RULE
        ) from None
    resource = finder("distlib").find(name)
    data = getattr(resource, "bytes", None) if resource is not None else None
    if not isinstance(data, bytes) or not data.startswith(b"MZ"):
        raise HarnessError(f"distlib ships no launcher named {name!r}", rule=_EXE_RULE)
    return data


def launcher_shebang(python: str) -> bytes:
    """``#!"<python>" -S`` + newline, UTF-8: the line the launcher reads before the zip.

    The launcher takes the last ``#!`` in the ``MAX_PATH`` bytes before the archive, ends
    the line at the first CR or LF, decodes it as UTF-8, and needs the interpreter to end
    in ``.exe`` right before its closing quote. So an interpreter path that is not UTF-8,
    holds a quote, a line break, ``#!`` or an inner ``.exe`` followed by a space, does not
    end in ``.exe``, or makes the line longer than 260 bytes is refused with a
    :class:`HarnessError` naming the problem.
    """
    problem: str | None = None
    # launcher.c find_exe_extension: the first ".exe" (any case) followed by NUL, quote or
    # whitespace ends the executable, and a quoted one must be closed right there.
    inner_exe = any(
        python[i : i + 4].lower() == ".exe" and python[i + 4].isspace()
        for i in range(len(python) - 4)
    )
    if python[-4:].lower() != ".exe":
        problem = "does not end in .exe"
    elif any(c in python for c in ('"', "\r", "\n", "\0")):
        problem = "holds a quote, a line break or NUL"
    elif "#!" in python:
        problem = "holds '#!'"
    elif inner_exe:
        problem = "holds '.exe' followed by whitespace before its end"
    try:
        line = b'#!"' + python.encode("utf-8") + b'" -S\n'
    except UnicodeEncodeError:
        line, problem = b"", problem or "is not valid UTF-8"
    if problem is None and len(line) > LAUNCHER_MAX_PATH:
        problem = f"makes a {len(line)}-byte shebang (the launcher reads {LAUNCHER_MAX_PATH})"
    if problem is not None:
        raise HarnessError(
            f"interpreter {python!r} cannot be named in a launcher shebang: it {problem}",
            rule=_EXE_RULE,
        )
    return line


#: The archive's ``__main__.py``: what ``python -S <shim> <module> <agent>`` would do,
#: without ``runpy.run_path`` (which imports ``pkgutil``): read, compile, run as __main__.
_LAUNCHER_MAIN = string.Template(
    '''"""A fake CLI's entry point ($marker): runs the fakes' shim."""
import os
import sys

SHIM = $shim
# Python put this archive first on sys.path; the shim puts its package's dir there.
if sys.path and sys.path[0] == os.path.dirname(__file__):
    del sys.path[0]
try:
    with open(SHIM, "rb") as source:
        code = compile(source.read(), SHIM, "exec")
except OSError as exc:
    sys.stderr.write(sys.argv[0] + ": cannot open the fake CLI shim " + repr(SHIM) + ": ")
    sys.stderr.write(str(exc) + "\\n")
    sys.exit(2)
sys.argv[:1] = [SHIM, $module, $agent]
exec(code, {"__name__": "__main__", "__file__": SHIM, "__builtins__": __builtins__})
'''
)


def _launcher_zip(agent_id: str, shim: str) -> bytes:
    """A zip holding only ``__main__.py``, offsets relative to its own first byte."""
    module = _emulator_module(agent_id) or "-"
    source = _LAUNCHER_MAIN.substitute(
        marker=SHIM_MARKER,
        shim=repr(shim),
        module=repr(module),
        agent=repr(agent_id),
    )
    info = zipfile.ZipInfo("__main__.py", date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_STORED
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(info, source.encode("utf-8"))
    return buffer.getvalue()


def exe_launcher(
    agent_id: str,
    python: str,
    *,
    machine: str | None = None,
    pointer_bits: int | None = None,
    shim: str | None = None,
) -> bytes:
    """The ``<name>.exe`` for ``agent_id``: launcher + shebang + zip (RUN-FAKES-EXE-001).

    ``shim`` defaults to ``fake_clis/_shim.py`` of the imported package. Raises
    :class:`HarnessError` when no launcher can be built (see :func:`launcher_shebang`).
    """
    return _exe_head(python, machine, pointer_bits) + _launcher_zip(agent_id, shim or _shim_path())


def _exe_head(python: str, machine: str | None, pointer_bits: int | None) -> bytes:
    """Launcher + shebang: the same for every name of one install."""
    precompile_fakes()
    return _launcher_stub(launcher_name(machine, pointer_bits)) + launcher_shebang(python)


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class _NameTaken(Exception):
    """A name that was absent when inspected was taken before the shim was linked in."""


def _owned_file(path: Path, data: bytes) -> bool:
    """Whether ``data``, read from ``path``, is a shim this installer wrote."""
    if path.name.lower().endswith(".exe"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                main = archive.read("__main__.py").decode("utf-8", "replace")
        except (zipfile.BadZipFile, KeyError, OSError, ValueError, EOFError):
            return False
        # Earlier versions said "(written by harness fakes install)": a part of the marker.
        return "written by harness fakes install" in main
    text = data.decode("utf-8", "replace")
    head = text.split("\n", 2)[:2]
    if any(SHIM_MARKER in line for line in head):
        return True
    return any(pattern.fullmatch(text) for pattern in _LEGACY_SHIMS)


#: What :func:`_inspect` says of a free name and of a shim of ours.
_ABSENT, _OURS = "absent", "ours"


def _inspect(path: Path) -> str:
    """``_ABSENT``, ``_OURS``, or why ``path`` must be left as it is.

    Never follows a symbolic link: the entry itself is looked at (``lstat``) and a regular
    file is read through a descriptor opened without following one.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return _ABSENT
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link (not followed)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > _MAX_SHIM_BYTES:
        return "a file harness fakes install did not write"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(_MAX_SHIM_BYTES + 1)
    except OSError as exc:
        return f"cannot be read to tell whose it is ({exc.strerror or exc})"
    if _owned_file(path, data):
        return _OURS
    return "a file harness fakes install did not write"


def _place(path: Path, data: bytes, mode: int) -> str | None:
    """Write ``data`` as ``path`` without following a link or replacing a user's file.

    The bytes go to a new temp file beside ``path``; it is linked in when the name is free
    (``link`` never replaces what is there) or renamed over a shim of ours. Returns why
    ``path`` was left as it is, or ``None`` once it holds ``data``.
    """
    found = _inspect(path)
    if found not in (_ABSENT, _OURS):
        return found
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, mode)
        if found == _OURS:
            os.replace(temp, path)  # a rename replaces the entry, never writes through it
        else:
            _link_new(temp, path)
    except _NameTaken:
        return "appeared while installing; left as it was"
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
    return None


def _link_new(temp: str, path: Path) -> None:
    """Give the new file ``temp`` the name ``path``, which must still be free."""
    try:
        os.link(temp, path, follow_symlinks=False)
    except FileExistsError:
        raise _NameTaken from None
    except (NotImplementedError, OSError):
        # A file system without hard links: rename, after a last look at the name.
        if os.path.lexists(path):
            raise _NameTaken from None
        os.replace(temp, path)


def _owners(
    defs: Sequence[AgentDef], available: set[str]
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Binary name -> the def that owns it, over every def with an emulator, and the
    losing claims as ``(def id, name)``. Primary bins first, then fallbacks, so no
    fallback steals another def's own bin."""
    owners: dict[str, str] = {}
    lost: list[tuple[str, str]] = []
    for pass_fallbacks in (False, True):
        for defn in defs:
            if defn.id not in available:
                continue
            names = defn.fallback_bins if pass_fallbacks else (defn.bin,)
            for name in names:
                if owners.setdefault(name, defn.id) != defn.id:
                    lost.append((defn.id, name))
    return owners, lost


def prepare_fake_home(home: str | os.PathLike[str]) -> None:
    """Write the settings that keep the fakes' failing runs short into ``home``.

    For a HOME made for fake runs only (conform, the adapter-layer checks, the corpus):
    a pi fake run with an API error otherwise waits out 14 s of default retry delays.
    """
    for rel, content in _QUICK_HOME_FILES.items():
        path = Path(home, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content), encoding="utf-8")


def install_fakes(
    dest: str | os.PathLike[str],
    defs: Sequence[AgentDef],
    *,
    agents: Iterable[str] | None = None,
    python: str | None = None,
    platform: str = sys.platform,
    launchers: Sequence[str] = WINDOWS_LAUNCHERS,
    played_by: Mapping[str, str] | None = None,
) -> InstallReport:
    """Write a shim per binary name of each def that has an emulator (see module docs).

    ``played_by`` maps a def id to the emulated id whose fake plays it (an author's def
    derived from a built-in, played by the built-in's fake: RUN-FAKES-001); any other def
    is played by the fake of its own id.
    ``agents`` limits the install to the names those agents own in a full install. On
    ``win32``, ``launchers`` picks the files per name: ``"cmd"``, ``"exe"`` or both (the
    default); elsewhere it is not used. An ``.exe`` that cannot be built (see
    :func:`exe_launcher`; or a path past the launcher's ``MAX_PATH``) is reported in
    ``skipped`` and the ``.cmd`` still written when asked for. A name held by anything
    but a shim of ours is left as it is and reported in ``kept`` (USERFILE-FAKES-001).
    """
    kinds = _launcher_kinds(launchers)
    wanted = set(agents) if agents is not None else None
    played = dict(played_by or {})
    fakes = {e.agent_id for e in list_fakes()}
    available = {d.id for d in defs if played.get(d.id, d.id) in fakes}
    chosen = [d for d in defs if wanted is None or d.id in wanted]
    report = InstallReport()
    owners = _chosen_owners(defs, chosen, available, report)
    root = _install_dir(Path(dest))
    exe = python or sys.executable
    windows = platform == "win32"
    head: bytes | None = None
    if windows and "exe" in kinds and owners:
        try:
            head = _exe_head(exe, None, None)
        except HarnessError as exc:
            report.skipped.append(f".exe launchers: not written: {exc.message}")
    for name, agent_id in owners.items():
        fake = played.get(agent_id, agent_id)
        files: list[tuple[Path, bytes, int]] = []
        if not windows or "cmd" in kinds:
            text = shim_text(fake, exe, platform)
            files.append((root / shim_name(name, platform), text.encode("utf-8"), 0o755))
        if head is not None:
            files += _exe_file(root / f"{name}.exe", head, fake, agent_id, report)
        _write_shims(files, agent_id, report)
    return report


def _launcher_kinds(launchers: Sequence[str]) -> tuple[str, ...]:
    """``launchers`` without repeats: a non-empty choice of :data:`WINDOWS_LAUNCHERS`."""
    kinds = tuple(dict.fromkeys(launchers))
    if not kinds or any(k not in WINDOWS_LAUNCHERS for k in kinds):
        raise HarnessError(
            f"launchers must be a non-empty choice of {WINDOWS_LAUNCHERS}, got {tuple(launchers)}",
            rule=_EXE_RULE,
        )
    return kinds


def _chosen_owners(
    defs: Sequence[AgentDef],
    chosen: Sequence[AgentDef],
    available: set[str],
    report: InstallReport,
) -> dict[str, str]:
    """Binary name -> owning def, for the chosen defs only, settled over every def
    (RUN-FAKES-001); lost claims and defs without an emulator go to ``report.skipped``."""
    chosen_ids = {d.id for d in chosen}
    all_owners, lost = _owners(defs, available)
    for agent_id, name in lost:
        owner = all_owners[name]
        if agent_id in chosen_ids:
            how = "already installed for" if owner in chosen_ids else "not selected: it belongs to"
            report.skipped.append(f"{agent_id}: binary {name!r} {how} {owner!r}")
    owners = {name: owner for name, owner in all_owners.items() if owner in chosen_ids}
    for defn in chosen:
        if defn.id not in available:
            report.skipped.append(f"{defn.id}: no fake emulator for this agent")
    return owners


def _install_dir(root: Path) -> Path:
    """``root``, created if needed; a typed error when it cannot be (USERFILE-FAKES-001)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HarnessError(
            f"cannot install the fakes into {str(root)!r}: {exc.strerror or exc}",
            rule=_USER_FILES_RULE,
        ) from None
    if not root.is_dir():
        raise HarnessError(
            f"cannot install the fakes into {str(root)!r}: not a directory", rule=_USER_FILES_RULE
        )
    return root


def _exe_file(
    path: Path, head: bytes, fake: str, agent_id: str, report: InstallReport
) -> list[tuple[Path, bytes, int]]:
    """The ``.exe`` launcher to write at ``path``, or none when its path is too long."""
    where = os.path.abspath(path)
    if _utf16_units(where) >= LAUNCHER_MAX_PATH:
        # The launcher could not read its own path (GetModuleFileNameW, MAX_PATH).
        report.skipped.append(
            f"{agent_id}: {where!r}: not written: longer than the launcher's "
            f"MAX_PATH ({LAUNCHER_MAX_PATH - 1} characters)"
        )
        return []
    return [(path, head + _launcher_zip(fake, _shim_path()), 0o755)]


def _write_shims(
    files: Sequence[tuple[Path, bytes, int]], agent_id: str, report: InstallReport
) -> None:
    """Place each file; a name held by anything but our shim is kept (USERFILE-FAKES-001)."""
    for path, data, mode in files:
        try:
            why = _place(path, data, mode)
        except OSError as exc:
            raise HarnessError(
                f"cannot write the fake CLI shim {str(path)!r}: {exc.strerror or exc}",
                rule=_USER_FILES_RULE,
            ) from None
        if why is None:
            report.written[str(path)] = agent_id
        else:
            report.kept[str(path)] = why
