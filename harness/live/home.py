"""The temporary world of one live run: HOME, work dir, TMPDIR, config files, env.

Every run gets a fresh HOME with the
recipe's files, its own TMPDIR (claude, codex, opencode and gemini leave files in
``$TMPDIR``) and ``PWD`` equal to the work dir (opencode takes its project dir from
``$PWD``, not from getcwd). The child env is built from a short allow-list of this
process's variables, never inherited whole: no real key or proxy setting reaches a live
CLI (LIVE-ISOLATION-001).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

from harness.live.recipes import Recipe, TransportSpec, fill, fill_json

__all__ = [
    "INHERITED_ENV",
    "LiveDirs",
    "build_env",
    "make_dirs",
    "placeholder_values",
    "unpack_npm_pack",
    "write_home_files",
]

#: The only variables taken from this process's env (locale and the tool chain).
INHERITED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "SYSTEMROOT", "COMSPEC")
#: Proxies would route loopback traffic elsewhere; they are never passed on.
_LOOPBACK = "127.0.0.1,localhost,::1"


@dataclass(frozen=True)
class LiveDirs:
    root: Path
    home: Path
    cwd: Path
    tmp: Path

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def make_dirs(base: str | os.PathLike[str] | None = None, *, prefix: str = "live-") -> LiveDirs:
    """A fresh ``root`` with ``home/``, ``work/`` and ``tmp/`` inside (under ``base``, or the
    system temp dir)."""
    if base is not None:
        Path(base).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=os.fspath(base) if base else None))
    root = root.resolve()
    dirs = LiveDirs(root=root, home=root / "home", cwd=root / "work", tmp=root / "tmp")
    for d in (dirs.home, dirs.cwd, dirs.tmp):
        d.mkdir()
    return dirs


def placeholder_values(
    recipe: Recipe, dirs: LiveDirs, *, base_url: str, port: int
) -> dict[str, str]:
    """The values of the placeholders for one run."""
    return {
        "base_url": base_url.rstrip("/"),
        "port": str(port),
        "home": str(dirs.home),
        "fake_key": recipe.fake_key,
        "model": recipe.model or "",
        "cwd": str(dirs.cwd),
        "tmp": str(dirs.tmp),
    }


def write_home_files(recipe: Recipe, dirs: LiveDirs, values: Mapping[str, str]) -> list[Path]:
    """Create the recipe's files under the temporary HOME (placeholders filled)."""
    written: list[Path] = []
    for i, spec in enumerate(recipe.files):
        target = dirs.home / spec.path
        # Recipe paths are relative and free of '..' (checked at load); stay inside HOME.
        if dirs.home.resolve() not in (target.resolve(), *target.resolve().parents):
            raise ValueError(f"{recipe.path}: files[{i}].path escapes HOME: {spec.path!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        where = f"{recipe.path}: files[{i}]"
        if spec.npm_pack is not None:
            written.extend(unpack_npm_pack(spec.npm_pack, target, where=where))
            continue
        if spec.is_json:
            text = json.dumps(fill_json(spec.json_value, values, where=where), indent=2) + "\n"
        else:
            text = fill(spec.content or "", values, where=where)
        target.write_text(text, encoding="utf-8")
        if spec.mode is not None and sys.platform != "win32":
            target.chmod(spec.mode)
        written.append(target)
    return written


def unpack_npm_pack(resource: str, target: Path, *, where: str) -> list[Path]:
    """Unpack the ``package/`` entries of the npm-pack tarball ``resource``
    (``<python package>/<file>.tgz``, shipped with the harness) under ``target``.

    Only regular files under ``package/`` are accepted, with no ``..`` and no absolute name;
    anything else is a :class:`ValueError` naming the recipe entry and the member.
    """
    module, _, name = resource.partition("/")
    try:
        data = resources.files(module).joinpath(name).read_bytes()
    except (ModuleNotFoundError, OSError) as exc:
        raise ValueError(f"{where}.npm_pack: cannot read {resource!r} ({exc})") from None
    written: list[Path] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                rel = PurePosixPath(member.name)
                if (
                    not member.isfile()
                    or rel.is_absolute()
                    or ".." in rel.parts
                    or rel.parts[:1] != ("package",)
                    or len(rel.parts) < 2
                ):
                    raise ValueError(
                        f"{where}.npm_pack: {resource!r} holds {member.name!r}, "
                        "not a regular file under package/"
                    )
                handle = archive.extractfile(member)
                assert handle is not None  # a regular file always has a reader
                out = target.joinpath(*rel.parts[1:])
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(handle.read())
                written.append(out)
    except (tarfile.TarError, EOFError) as exc:
        raise ValueError(f"{where}.npm_pack: {resource!r} is not a gzipped tar ({exc})") from None
    return written


def build_env(
    recipe: Recipe,
    dirs: LiveDirs,
    values: Mapping[str, str],
    *,
    transport: TransportSpec | None = None,
    path_prepend: tuple[str, ...] = (),
    base_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete child env: allow-listed basics, HOME, TMPDIR, PWD, then the recipe's
    env, telemetry env and the transport's env (in that order, placeholders filled)."""
    source = os.environ if base_env is None else base_env
    env = {k: source[k] for k in INHERITED_ENV if source.get(k)}
    if path_prepend:
        env["PATH"] = os.pathsep.join((*path_prepend, env.get("PATH", "")))
    env["HOME"] = str(dirs.home)
    env["USERPROFILE"] = str(dirs.home)
    env["NO_PROXY"] = env["no_proxy"] = _LOOPBACK
    if recipe.isolate_tmpdir:
        env["TMPDIR"] = env["TMP"] = env["TEMP"] = str(dirs.tmp)
    if recipe.isolate_pwd:
        env["PWD"] = str(dirs.cwd)
    layers: list[tuple[str, Mapping[str, str]]] = [
        ("env", recipe.env),
        ("telemetry.env", recipe.telemetry_env),
    ]
    if transport is not None:
        layers.append((f"transports[{transport.name}].env", transport.env))
    for where, layer in layers:
        for key, value in layer.items():
            env[key] = fill(value, values, where=f"{recipe.path}: {where}.{key}")
    return env
