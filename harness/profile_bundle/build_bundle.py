"""Build the pinned ``@open-design/dsh-runtime`` tarball and its SHA-256 manifest.

Seed 001 §4: the profile bundle reaches the user as "an exact packed tarball plus a SHA-256
manifest", installed with ``dsh plugin --profile open-design add <embedded pinned tarball>``;
seed 000 §5.12 shows the file name ``pnpm pack`` gives it, ``open-design-dsh-runtime-0.1.0.tgz``.

Rules: DSHSETUP-BUNDLE-001.
Design: docs/design/dsh.md#harness.profile_bundle.build_bundle
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import sys
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "MANIFEST_NAME",
    "NPM_PACK_MTIME",
    "PACKAGE",
    "PROFILE",
    "SOURCE_DIR",
    "SOURCE_FILES",
    "TARBALL_NAME",
    "VERSION",
    "build_tarball",
    "check_bundle",
    "main",
    "manifest_for",
    "package_files",
    "tar_members",
    "write_bundle",
]

#: seed 001 §4: the bundle's package identity.
PACKAGE = "@open-design/dsh-runtime"
#: seed 000 §5.12: the version its packed file name carries.
VERSION = "0.1.0"
#: seed 001 §4: the profile it is installed into.
PROFILE = "open-design"
#: ``pnpm pack`` / ``npm pack`` name: scope without ``@``, ``/`` -> ``-``, then ``-<version>``.
TARBALL_NAME = f"{PACKAGE.lstrip('@').replace('/', '-')}-{VERSION}.tgz"
MANIFEST_NAME = "manifest.json"
#: npm pack stamps every entry with 1985-10-26T08:15:00Z (seconds since the epoch).
NPM_PACK_MTIME = 499_162_500

_HERE = Path(__file__).resolve().parent

#: The package's sources (``index.js``, ``protocol.js``, ``cordis.patch.yml``), kept as real
#: files beside this builder so they can be read, linted and tested with plain Node.
SOURCE_DIR = _HERE / "package"
#: The source files packed as they are, in the order the tarball sorts them anyway.
SOURCE_FILES = ("cordis.patch.yml", "index.js", "protocol.js")

_README = f"""# {PACKAGE}

The Open Design host adapter for DeepSeek Harness, as the adapter harness pins it.

It is a DeepSeek Harness plugin bundle (`dsh.bundle.patch` in `package.json`): its
`cordis.patch.yml` rides over `@deepseek-ai/dsh-base` and inserts the `open-design-runtime`
plugin (`index.js`). Install it into the user's own Harness installation as the `{PROFILE}`
profile:

    dsh plugin --profile {PROFILE} add {TARBALL_NAME}
    dsh --profile {PROFILE} --probe

The profile speaks the newline-delimited JSON protocol, generation 1 (`protocol.js`):

* `--probe` prints one probe frame: the `{PROFILE}` runtime identity, protocol version 1 and
  the session_resume, session_cancel and structured_events capabilities;
* `--models` prints one models frame (every advertised model and its reasoning choices);
* `--stdio` writes `ready`, reads one `execute` from stdin, answers `session`, then
  `thinking`, `text`, `tool_call`, `tool_result` and `usage` frames, and exactly one
  `result`; a `cancel` for the active request ends it with `result: cancelled`. A resume
  (`resume_session_id`) goes through the runtime's own `ctx.agents.resume()`; a missing
  session is a failed result with `resume_rejected: true`, never a new session.

The agent loop, tools, model provider, credentials and session persistence are the
runtime's own services. The harness ships this exact tarball with a SHA-256 manifest and
verifies the digest before it calls `dsh`.
"""


def _package_json() -> bytes:
    data: dict[str, Any] = {
        "name": PACKAGE,
        "version": VERSION,
        "description": "Open Design host adapter profile for DeepSeek Harness (protocol 1)",
        "license": "Apache-2.0",
        "type": "module",
        "main": "index.js",
        "exports": {
            ".": "./index.js",
            "./protocol": "./protocol.js",
            "./cordis.patch.yml": "./cordis.patch.yml",
            "./package.json": "./package.json",
        },
        "files": ["index.js", "protocol.js", "cordis.patch.yml", "README.md"],
        # The profile launcher reads this: the package is a patch layer (a bundle).
        "dsh": {"bundle": {"patch": "./cordis.patch.yml"}},
    }
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def _source(name: str) -> bytes:
    path = SOURCE_DIR / name
    try:
        return path.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(
            f"{path}: the bundle sources are missing ({exc.strerror or exc}); "
            "build the bundle from a source checkout"
        ) from None


def package_files() -> dict[str, bytes]:
    """Path inside the tarball -> content, for every file of the package."""
    files = {f"package/{name}": _source(name) for name in SOURCE_FILES}
    files["package/README.md"] = _README.encode("utf-8")
    files["package/package.json"] = _package_json()
    return files


def _tar_bytes(files: Mapping[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name in sorted(files):
            data = files[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = NPM_PACK_MTIME
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.type = tarfile.REGTYPE
            archive.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def build_tarball(files: Mapping[str, bytes] | None = None) -> bytes:
    """The gzipped tarball (deterministic: sorted entries, fixed stamps, gzip mtime 0)."""
    tar = _tar_bytes(package_files() if files is None else files)
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(tar)
    return out.getvalue()


def manifest_for(data: bytes) -> dict[str, str]:
    """``{file, sha256, profile, package, version}`` for tarball bytes ``data``."""
    return {
        "file": TARBALL_NAME,
        "sha256": hashlib.sha256(data).hexdigest(),
        "profile": PROFILE,
        "package": PACKAGE,
        "version": VERSION,
    }


def write_bundle(dest: Path = _HERE) -> tuple[Path, Path]:
    """Write the tarball and ``manifest.json`` into ``dest``; return both paths."""
    data = build_tarball()
    tarball = dest / TARBALL_NAME
    manifest = dest / MANIFEST_NAME
    tarball.write_bytes(data)
    manifest.write_text(json.dumps(manifest_for(data), indent=2) + "\n", encoding="utf-8")
    return tarball, manifest


def tar_members(data: bytes) -> list[tuple[str, int, int, int, int, bytes]]:
    """``(name, mode, mtime, uid, gid, content)`` of every entry of gzipped tarball ``data``."""
    out: list[tuple[str, int, int, int, int, bytes]] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for info in archive.getmembers():
            handle = archive.extractfile(info) if info.isfile() else None
            content = handle.read() if handle is not None else b""
            out.append((info.name, info.mode, int(info.mtime), info.uid, info.gid, content))
    return out


def check_bundle(dest: Path = _HERE) -> list[str]:
    """Problems with the committed bundle in ``dest`` (empty when it is exactly what we build).

    The entries (names, modes, stamps, owners, contents) must equal a fresh build's, and the
    manifest must equal :func:`manifest_for` of the committed tarball's bytes. The compressed
    bytes are not compared: another zlib build may compress the same tar differently, and
    the manifest pins whatever bytes were committed.
    """
    problems: list[str] = []
    tarball = dest / TARBALL_NAME
    try:
        data = tarball.read_bytes()
    except OSError as exc:
        return [f"{tarball}: cannot read ({exc.strerror or exc})"]
    try:
        committed = tar_members(data)
    except (tarfile.TarError, OSError, EOFError) as exc:
        return [f"{tarball}: not a gzipped tar ({exc})"]
    if committed != tar_members(build_tarball()):
        problems.append(f"{tarball}: entries differ from a fresh build")
    if data[:2] != b"\x1f\x8b" or int.from_bytes(data[4:8], "little") != 0:
        problems.append(f"{tarball}: gzip header must carry mtime 0")
    try:
        manifest = json.loads((dest / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problems.append(f"{dest / MANIFEST_NAME}: unreadable ({exc})")
    else:
        if manifest != manifest_for(data):
            problems.append(f"{dest / MANIFEST_NAME}: does not match the committed tarball")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    parser.add_argument("--dest", type=Path, default=_HERE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        problems = check_bundle(args.dest)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    tarball, manifest = write_bundle(args.dest)
    print(f"wrote {tarball} and {manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
