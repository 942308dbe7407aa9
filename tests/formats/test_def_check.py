"""Each def names a format the engine has: the def check in the formats layer.

Rules: DEF-FORMAT-001.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import AgentDef
from harness.errors import AgentDefError
from harness.formats import FORMATS, FormatSpec, check_def_format, dialect_check_skipped

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Dialects of the synthetic one-way format registered by the tests below.
DIALECTS = frozenset({"alpha", "beta"})


def create() -> None:
    """The synthetic format's parser factory: never called, only named by its spec."""


def _def(stream_format: str, event_parser: str | None) -> AgentDef:
    return dataclasses.replace(
        get_agent_def("claude"),
        id="synthetic",
        stream_format=stream_format,
        event_parser=event_parser,
    )


def _register(monkeypatch: pytest.MonkeyPatch, name: str, parser: str) -> None:
    """Add a one-way format to the format registry for one test."""
    monkeypatch.setitem(FORMATS, name, FormatSpec(name=name, parser=parser))


@pytest.mark.rule("DEF-FORMAT-001")
@pytest.mark.parametrize("defn", BUILTIN_DEFS, ids=lambda d: d.id)
def test_every_builtin_names_a_format_the_engine_has(defn: AgentDef) -> None:
    check_def_format(defn)


@pytest.mark.rule("DEF-FORMAT-001")
def test_unknown_stream_format_is_refused() -> None:
    with pytest.raises(AgentDefError) as info:
        check_def_format(_def("telepathy-jsonl", None))
    assert info.value.field == "stream_format"
    assert info.value.rule == "DEF-FORMAT-001"
    assert "unknown stream format 'telepathy-jsonl'" in str(info.value)
    assert "acp-json-rpc" in str(info.value)  # names the known formats


@pytest.mark.rule("DEF-FORMAT-001")
def test_unknown_dialect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _register(monkeypatch, "synthetic-stream", f"{__name__}:create")
    check_def_format(_def("synthetic-stream", "alpha"))
    with pytest.raises(AgentDefError) as info:
        check_def_format(_def("synthetic-stream", "gamma"))
    assert info.value.field == "event_parser"
    assert info.value.rule == "DEF-FORMAT-001"
    with pytest.raises(AgentDefError):
        check_def_format(_def("synthetic-stream", None))


@pytest.mark.rule("DEF-FORMAT-001")
def test_missing_parser_module_skips_only_the_dialect_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _register(monkeypatch, "future-stream", "harness.streams.not_written_yet_xyz:create")
    check_def_format(_def("future-stream", "anything"))
    skipped = dialect_check_skipped()
    assert "harness.streams.not_written_yet_xyz" in skipped["future-stream"]
    _register(monkeypatch, "future-stream", f"{__name__}:create")
    check_def_format(_def("future-stream", "beta"))
    assert "future-stream" not in dialect_check_skipped()


@pytest.mark.rule("DEF-FORMAT-001")
def test_broken_parser_module_skips_only_the_dialect_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "half_written_parser_xyz.py").write_text("raise RuntimeError('half-written')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _register(monkeypatch, "broken-stream", "half_written_parser_xyz:create")
    check_def_format(_def("broken-stream", None))
    assert dialect_check_skipped()["broken-stream"] == "RuntimeError: half-written"


@pytest.mark.rule("DEF-FORMAT-001")
def test_a_builtin_naming_an_unknown_format_fails_import_of_the_formats() -> None:
    script = textwrap.dedent(
        """
        import dataclasses
        import harness.defs.qwen as m
        m.AGENT_DEF = dataclasses.replace(m.AGENT_DEF, stream_format="telepathy-jsonl")
        try:
            import harness.formats
        except Exception as exc:
            print(type(exc).__name__, getattr(exc, "rule", None), getattr(exc, "field", None))
        else:
            print("imported")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.split() == ["AgentDefError", "DEF-FORMAT-001", "stream_format"], (
        result.stderr
    )
