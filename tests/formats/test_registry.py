"""The format registry is the one source of format knowledge (harness/formats).

Every format a def may name has exactly one complete :class:`FormatSpec`; the def checks,
the runner, capture replay and conformance read their views from it; no other module
keeps its own table of format names; a broken entry is refused where it is declared.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.checks.loader import validate_def_data
from conformance.rules import checks as check_rules
from conformance.rules import streams as stream_rules
from harness.capture.adapters import CaptureAdapter, adapter_for
from harness.defs.registry import BUILTIN_DEFS, validate_def
from harness.defs.transport import select_transport
from harness.defs.types import AgentDef
from harness.errors import AgentDefError
from harness.formats import (
    FORMATS,
    FormatSpec,
    SessionSpec,
    UnknownStreamFormatError,
    check_def_format,
    create_parser,
    create_session,
    format_names,
    format_spec,
    is_two_way,
    jsonl_formats,
    keeps_turn_bookkeeping,
    known_dialects,
    load_target,
    one_way_formats,
    two_way_formats,
)
from harness.formats.registry import _index
from harness.protocols.base import SessionState, TwoWaySession
from harness.streams.base import StreamParser

ROOT = Path(__file__).resolve().parents[2]
SPECS = list(FORMATS.values())
ONE_WAY = [s for s in SPECS if not s.two_way]
TWO_WAY = [s for s in SPECS if s.two_way]


def _name(spec: FormatSpec) -> str:
    return spec.name


def _builtin_defs() -> Iterator[AgentDef]:
    """Every built-in def as each of its transports sees it."""
    for defn in BUILTIN_DEFS:
        yield defn
        for transport in defn.alt_transports:
            yield select_transport(defn, {}, transport.name)


def _builtin_def_for(stream_format: str) -> AgentDef:
    return next(d for d in _builtin_defs() if d.stream_format == stream_format)


# -- one spec per format -------------------------------------------------------------------


@pytest.mark.rule("DEF-FORMAT-001")
@pytest.mark.parametrize("spec", SPECS, ids=_name)
def test_the_def_checks_accept_exactly_the_registered_formats(spec: FormatSpec) -> None:
    base = _builtin_def_for(spec.name)
    dialects = sorted(known_dialects(spec.name)) if not spec.two_way else []
    defn = dataclasses.replace(base, event_parser=dialects[0] if dialects else None)
    validate_def(defn)
    check_def_format(defn)
    assert validate_def_data(defn, "def") == []
    renamed = dataclasses.replace(defn, stream_format=f"{spec.name}-unregistered")
    with pytest.raises(AgentDefError, match="unknown stream format"):
        check_def_format(renamed)
    assert any("unknown stream format" in p for p in validate_def_data(renamed, "def"))


@pytest.mark.rule("DEF-FORMAT-001")
@pytest.mark.parametrize("name", ["telepathy-jsonl", "json-event-stream/codex"])
def test_the_engine_and_the_def_file_loader_word_a_bad_format_alike(name: str) -> None:
    """One check, one wording: the engine raises what the loader lists (shorthand hint too)."""
    defn = dataclasses.replace(_builtin_def_for("claude-stream-json"), stream_format=name)
    with pytest.raises(AgentDefError) as info:
        check_def_format(defn)
    (problem,) = [p for p in validate_def_data(defn, "def") if "stream_format" in p]
    assert problem.removeprefix("def.stream_format: ") in str(info.value)
    hinted = "/" in name
    assert ("a parser is its own field" in problem) is hinted
    assert ("known: " in problem) is not hinted


def test_every_builtin_def_names_a_registered_format_and_every_format_is_used() -> None:
    assert {d.stream_format for d in _builtin_defs()} == set(format_names())


def test_names_are_the_keys_and_duplicates_are_refused() -> None:
    assert all(name == spec.name for name, spec in FORMATS.items())
    spec = FormatSpec(name="twice", parser="harness.streams.plain:create")
    with pytest.raises(ValueError, match="'twice' is registered twice"):
        _index((spec, spec))


# -- every spec is complete ----------------------------------------------------------------


@pytest.mark.parametrize("spec", ONE_WAY, ids=_name)
def test_a_one_way_spec_builds_a_parser_for_each_dialect(spec: FormatSpec) -> None:
    assert spec.parser is not None and spec.session is None
    assert callable(load_target(spec.parser))
    dialects: list[str | None] = [*sorted(known_dialects(spec.name))] or [None]
    for dialect in dialects:
        parser: StreamParser = create_parser(spec.name, dialect)
        assert isinstance(parser.feed(b""), list)
        assert isinstance(parser.finish(), list)


@pytest.mark.parametrize("spec", TWO_WAY, ids=_name)
def test_a_two_way_spec_names_a_session_its_grace_keyword_an_adapter(spec: FormatSpec) -> None:
    assert spec.session is not None and spec.parser is None
    cls = load_target(spec.session.target)
    assert spec.session.grace_keyword in inspect.signature(cls).parameters
    session: TwoWaySession = create_session(spec.name, grace_ms=1234)
    assert type(session) is cls
    assert session.state is SessionState.NEW
    adapter = adapter_for(spec.name)
    assert isinstance(adapter, CaptureAdapter)
    assert adapter.stream_format == spec.name
    assert type(adapter) is load_target(spec.session.capture_adapter)
    if spec.session.request_fields is not None:
        binding = load_target(spec.session.request_fields)
        assert list(inspect.signature(binding).parameters) == ["defn", "inputs"]


@pytest.mark.parametrize("spec", TWO_WAY, ids=_name)
def test_the_grace_reaches_the_session_under_its_keyword(
    spec: FormatSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert spec.session is not None
    cls = load_target(spec.session.target)
    seen: dict[str, object] = {}
    real_init = cls.__init__

    def spy(self: object, *args: object, **kwargs: object) -> None:
        seen.update(kwargs)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", spy)
    create_session(spec.name, grace_ms=4321)
    assert seen == {spec.session.grace_keyword: 4321}


# -- the former tables are views of the registry -------------------------------------------


def test_one_way_and_two_way_partition_the_formats() -> None:
    assert set(one_way_formats()) | set(two_way_formats()) == set(format_names())
    assert not set(one_way_formats()) & set(two_way_formats())
    for name in format_names():
        assert is_two_way(name) is format_spec(name).two_way
    assert not is_two_way("no-such-format")


def test_the_flag_views_follow_the_specs() -> None:
    assert tuple(sorted(jsonl_formats())) == check_rules.STRUCTURED_FORMATS
    assert jsonl_formats() == stream_rules._JSONL
    assert set(jsonl_formats()) == {s.name for s in SPECS if not s.text_stream}
    for spec in SPECS:
        assert keeps_turn_bookkeeping(spec.name) is spec.turn_bookkeeping
    assert not keeps_turn_bookkeeping("no-such-format")


def test_an_unknown_format_is_a_typed_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownStreamFormatError, match=r"known: .*'plain'"):
        format_spec("telepathy")
    with pytest.raises(UnknownStreamFormatError, match="one-way formats"):
        create_parser("acp-json-rpc")
    with pytest.raises(UnknownStreamFormatError, match="two-way formats"):
        create_session("plain")


def _members(node: ast.AST) -> list[ast.expr | None]:
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return list(node.elts)
    if isinstance(node, ast.Dict):
        return list(node.keys)
    return []


def _format_tables(path: Path) -> list[tuple[int, list[str]]]:
    """Collection literals (set, tuple, list, dict keys) listing two or more formats."""
    names = set(FORMATS)
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        named = sorted(
            {
                m.value
                for m in _members(node)
                if isinstance(m, ast.Constant) and isinstance(m.value, str) and m.value in names
            }
        )
        if len(named) >= 2:
            found.append((getattr(node, "lineno", 0), named))
    return found


def test_no_module_outside_the_registry_keeps_a_table_of_formats() -> None:
    registry = ROOT / "harness" / "formats" / "registry.py"
    hits = {
        str(path.relative_to(ROOT)): tables
        for top in ("harness", "conformance")
        for path in sorted((ROOT / top).rglob("*.py"))
        if path != registry and (tables := _format_tables(path))
    }
    assert hits == {}


def test_the_scan_finds_a_table_written_elsewhere(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        'TWO = frozenset({"pi-rpc", "dsh-profile-jsonl"})\nONE = ("plain",)\n'
        'def f(x):\n    return {"plain": 1, "pi-rpc": 2}.get(x)\n'
    )
    assert _format_tables(stray) == [
        (1, ["dsh-profile-jsonl", "pi-rpc"]),
        (4, ["pi-rpc", "plain"]),
    ]


# -- a broken entry is refused where it is declared ----------------------------------------


_SESSION = SessionSpec(
    target="harness.protocols.dsh:DshProfileSession",
    grace_keyword="cancel_grace_ms",
    capture_adapter="harness.capture.adapters:DshCaptureAdapter",
)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "exactly one of parser or session"),
        ({"parser": "harness.streams.plain:create", "session": _SESSION}, "exactly one"),
        ({"parser": "harness.streams.plain"}, "parser must be 'module:attr'"),
        (
            {"session": dataclasses.replace(_SESSION, capture_adapter="Adapter")},
            "session.capture_adapter must be 'module:attr'",
        ),
        (
            {"session": dataclasses.replace(_SESSION, grace_keyword="cancel-grace")},
            "grace_keyword must be an identifier",
        ),
        ({"session": _SESSION, "turn_bookkeeping": True}, "keeps its own turn state"),
    ],
)
def test_a_broken_spec_is_refused_naming_the_format(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as info:
        FormatSpec(name="broken-format", **fields)  # type: ignore[arg-type]
    assert "'broken-format'" in str(info.value)
