"""Writing the file reports (``json``, ``junit``, ``html``) of a verdict into a directory."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from conformance.reports import FILE_KINDS, FILE_NAMES, ReportMeta, html, json_report, junit
from conformance.verdicts import Verdict

__all__ = ["write_reports"]


def write_reports(
    verdict: Verdict, meta: ReportMeta, kinds: Iterable[str], out_dir: str | Path
) -> dict[str, Path]:
    """Write each file report kind (``json``, ``junit``, ``html``) into ``out_dir``."""
    renderers = {"json": json_report.render, "junit": junit.render, "html": html.render}
    wanted = list(dict.fromkeys(kinds))
    unknown = [k for k in wanted if k not in renderers]
    if unknown:
        raise ValueError(f"unknown report kind(s) {unknown}; known: {', '.join(FILE_KINDS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for kind in wanted:
        path = out / FILE_NAMES[kind]
        path.write_text(renderers[kind](verdict, meta), encoding="utf-8", newline="\n")
        written[kind] = path
    return written
