"""Plain-stream artifact handoff: the confined writer (extraction re-exported).

Seed 000 §5.13: a ``plain`` CLI's ``<artifact>`` blocks become project files at run
completion. :func:`extract_artifacts` (pure, :mod:`harness.streams.artifact_text`, which
the plain parser calls) names them; :func:`write_artifacts` is the IO half, called by the
runner: it refuses any name that could land outside the project directory
(ARTIFACT-WRITE-CONFINE-001) and never replaces an existing file
(ARTIFACT-WRITE-NOCLOBBER-001). It refuses one artifact at a time: an unusable name
(``aux.html``) costs that artifact only, the others are written, and the refusal is
returned for the runner to report (WIN-ARTIFACT-DEVICE-001).

Windows device names (``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM0``-``COM9``,
``LPT0``-``LPT9``, their superscript-digit forms, ``CONIN$``, ``CONOUT$``; any case, any
extension, spaces before the first dot) are refused on every platform: a project written
on Linux or macOS is opened on Windows too, where such a file cannot be handled.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.streams.artifact_text import (
    ARTIFACT_EXTENSIONS,
    MAX_ARTIFACTS_PER_RUN,
    MAX_COLLISION_SUFFIX,
    ArtifactError,
    ArtifactNamesExhaustedError,
    ExtractedArtifact,
    artifact_slug,
    extract_artifacts,
    markdown_skip_ranges,
)

__all__ = [
    "ARTIFACT_EXTENSIONS",
    "MAX_ARTIFACTS_PER_RUN",
    "MAX_COLLISION_SUFFIX",
    "ArtifactError",
    "ArtifactExistsError",
    "ArtifactNameError",
    "ArtifactNamesExhaustedError",
    "ArtifactRefusal",
    "ArtifactWriteError",
    "ArtifactWriteReport",
    "ExtractedArtifact",
    "artifact_slug",
    "check_artifact_name",
    "extract_artifacts",
    "markdown_skip_ranges",
    "write_artifacts",
]

#: Windows device names: ``con.html`` opens the console, not a file in the project.
#: Microsoft's "Naming Files, Paths, and Namespaces" lists COM0/LPT0 and the superscript
#: digits ¹ ² ³ besides 1-9.
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"{base}{n}" for base in ("com", "lpt") for n in (*"0123456789", "¹", "²", "³")}
)


class ArtifactNameError(ArtifactError):
    """A file name that could resolve outside the project directory."""

    code = "ARTIFACT_NAME_UNSAFE"

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(
            f"refusing artifact name {name!r}: {problem}", rule="ARTIFACT-WRITE-CONFINE-001"
        )
        self.name = name
        self.problem = problem


class ArtifactExistsError(ArtifactError):
    """The target file already exists; artifacts never replace project files."""

    code = "ARTIFACT_EXISTS"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"refusing to overwrite existing file {path!r}; extract with the project's "
            "current file names so collisions get a -N suffix",
            rule="ARTIFACT-WRITE-NOCLOBBER-001",
        )
        self.path = path


class ArtifactWriteError(ArtifactError):
    """The OS refused the write (or the content cannot be encoded as UTF-8)."""

    code = "ARTIFACT_WRITE_FAILED"

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"could not write artifact {path!r}: {problem}")
        self.path = path


# -- writing -------------------------------------------------------------------


def check_artifact_name(name: str) -> None:
    """Raise :class:`ArtifactNameError` unless ``name`` is one plain file name.

    ARTIFACT-WRITE-CONFINE-001: the name must stay directly inside the project
    directory on every platform: no path separators (``/`` or ``\\``), so no
    absolute paths and no ``..`` components; no ``:`` (drive letters such as
    ``C:x`` and NTFS streams); not ``.`` or ``..``; no NUL or control
    characters; no trailing dot or space (Windows drops them, changing the
    target); not a Windows device name such as ``con.html``.
    """
    if not name:
        raise ArtifactNameError(name, "the name is empty")
    if name in (".", ".."):
        raise ArtifactNameError(name, "the name is a directory reference")
    if "/" in name or "\\" in name:
        raise ArtifactNameError(name, "the name contains a path separator")
    if ":" in name:
        raise ArtifactNameError(name, "the name contains ':' (drive letter or stream)")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        raise ArtifactNameError(name, "the name contains a control character")
    if name[-1] in ". ":
        raise ArtifactNameError(name, "the name ends with a dot or a space")
    device = name.split(".", 1)[0].rstrip(" ").lower()
    if device in _WINDOWS_DEVICES:
        # WIN-ARTIFACT-DEVICE-001: on every platform (see the module docstring).
        raise ArtifactNameError(
            name,
            f"{device.upper()!r} is a reserved Windows device name (whatever the extension); "
            "refused on every platform so the project stays usable on Windows",
        )


@dataclass(frozen=True, slots=True)
class ArtifactRefusal:
    """One artifact :func:`write_artifacts` did not write, and why."""

    artifact: ExtractedArtifact
    error: ArtifactError

    @property
    def message(self) -> str:
        """What the runner reports: the artifact (identifier and name) and the reason."""
        who = f"artifact {self.artifact.identifier!r} ({self.artifact.name})"
        if not self.artifact.identifier:
            who = f"artifact {self.artifact.name!r}"
        return f"{who} was not written: {self.error.message}"


@dataclass(frozen=True, slots=True)
class ArtifactWriteReport:
    """What :func:`write_artifacts` did: the written artifacts in order, and the refused."""

    #: The artifacts written, in input order.
    written: tuple[ExtractedArtifact, ...]
    #: Their files, parallel to ``written``.
    paths: tuple[Path, ...]
    #: The artifacts refused, in input order; nothing of them was written.
    refused: tuple[ArtifactRefusal, ...]


def _refusal(root: Path, artifact: ExtractedArtifact, seen: set[str]) -> ArtifactError | None:
    try:
        check_artifact_name(artifact.name)
    except ArtifactNameError as exc:
        return exc
    target = root / artifact.name
    if artifact.name in seen:
        return ArtifactExistsError(str(target))
    if target.is_symlink():
        return ArtifactNameError(artifact.name, "the target is a symbolic link")
    if os.path.lexists(target):
        return ArtifactExistsError(str(target))
    return None


def _write_one(target: Path, data: bytes) -> ArtifactError | None:
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_BINARY", 0)
    )
    try:
        fd = os.open(target, flags, 0o644)
    except FileExistsError:
        if target.is_symlink():
            return ArtifactNameError(target.name, "the target is a symbolic link")
        return ArtifactExistsError(str(target))
    except OSError as exc:
        return ArtifactWriteError(str(target), exc.strerror or str(exc))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        return ArtifactWriteError(str(target), exc.strerror or str(exc))
    return None


def write_artifacts(
    project_dir: str | os.PathLike[str], artifacts: Sequence[ExtractedArtifact]
) -> ArtifactWriteReport:
    """Create one file per artifact directly in ``project_dir``; refuse the unusable ones.

    Each artifact is judged on its own (WIN-ARTIFACT-DEVICE-001): an unsafe name
    (:func:`check_artifact_name`: outside the project, a Windows device name, ...), a
    symlink at the target (ARTIFACT-WRITE-CONFINE-001), an existing entry or a name used
    earlier in ``artifacts`` (ARTIFACT-WRITE-NOCLOBBER-001), content that is not valid
    Unicode, or an OS refusal costs that artifact only: it is returned in ``refused``
    and the others are written. Every name is checked before any file is written.
    Files are created exclusively (``O_EXCL``, and ``O_NOFOLLOW`` where the OS has it),
    so a symlink planted after the check is refused too. Content is written as UTF-8
    bytes, unchanged. Raises :class:`ArtifactWriteError` only when ``project_dir`` is
    not a directory (nothing can be written).
    """
    root = Path(project_dir)
    if not root.is_dir():
        raise ArtifactWriteError(str(root), "the project directory does not exist")
    seen: set[str] = set()
    outcome: dict[int, ArtifactError | None] = {}
    payloads: list[tuple[int, Path, bytes]] = []
    for index, artifact in enumerate(artifacts):
        error = _refusal(root, artifact, seen)
        seen.add(artifact.name)
        if error is None:
            target = root / artifact.name
            try:
                payloads.append((index, target, artifact.content.encode("utf-8")))
            except UnicodeEncodeError as exc:
                error = ArtifactWriteError(str(target), f"content is not valid Unicode: {exc}")
        outcome[index] = error
    paths: dict[int, Path] = {}
    for index, target, data in payloads:
        outcome[index] = _write_one(target, data)
        if outcome[index] is None:
            paths[index] = target
    written: list[ExtractedArtifact] = []
    refused: list[ArtifactRefusal] = []
    for index, artifact in enumerate(artifacts):
        error = outcome[index]
        if error is None:
            written.append(artifact)
        else:
            refused.append(ArtifactRefusal(artifact, error))
    return ArtifactWriteReport(
        written=tuple(written),
        paths=tuple(paths[i] for i in sorted(paths)),
        refused=tuple(refused),
    )
