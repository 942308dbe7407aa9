"""Plain-stream artifacts, written after the run (seed 000 §5.13, rule RUN-ARTIFACTS-001).

"At run completion, the daemon scans the captured plain stdout for ``<artifact>`` blocks
... and writes them through the normal project artifact path"; names are slugged and
"collisions receive -2, -3" against the project's files (ref §2.5). The plain parser
(:mod:`harness.streams.plain`) emits one ``artifact`` event per block at end of output,
named against nothing; the runner holds those events back and, once the tree is reaped,
extracts again against the cwd's current names, writes the files with
:func:`harness.host.artifacts.write_artifacts` (which refuses any name that could leave the
project and never overwrites), and publishes the events with their final name and path.
A cancelled run writes nothing: the held events are published as they were.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from harness.events import Artifact, Error, Event
from harness.host.artifacts import (
    ArtifactError,
    ArtifactNamesExhaustedError,
    extract_artifacts,
    write_artifacts,
)

__all__ = ["write_held_artifacts"]


def write_held_artifacts(
    held: Sequence[Event], stdout_text: str | None, cwd: str, *, cancelled: bool
) -> tuple[list[Event], list[str]]:
    """The events to publish in place of ``held``, and the file names written."""
    if cancelled or stdout_text is None:
        return list(held), []
    try:
        existing = os.listdir(cwd)
    except OSError:
        existing = []
    late: list[Event] = []
    try:
        found = extract_artifacts(stdout_text, existing)
    except ArtifactNamesExhaustedError as exc:
        found = list(exc.allocated)
        late.append(Error(message=exc.message, code=exc.code))
    try:
        report = write_artifacts(cwd, found)
    except ArtifactError as exc:  # the project directory itself is unusable
        return [*held, Error(message=exc.message, code=exc.code)], []
    # WIN-ARTIFACT-DEVICE-001: a refused artifact costs itself only; it is reported.
    late[:0] = [Error(message=r.message, code=r.error.code, terminal=False) for r in report.refused]
    events: list[Event] = [
        Artifact(
            name=a.name,
            identifier=a.identifier or None,
            artifact_type=a.artifact_type,
            path=a.name,
        )
        for a in report.written
    ]
    return events + late, [a.name for a in report.written]
