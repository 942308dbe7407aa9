"""Scenario files: what the "model" does in one fake run, independent of wire format.

A scenario is JSON (``fake_clis/scenarios/<name>.json``, schema
``scenario.schema.json`` beside them). ``steps`` run in order; each emulator
renders every step in its own CLI's frame shapes. Faults are steps too, so a
scenario can say "stream some text, then crash mid-line".

Design: docs/design/fakes.md#fake_clis.scenario
"""

from __future__ import annotations

import os

from fake_clis import jsonio

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


__all__ = [
    "OPTIONAL_STEP_KINDS",
    "SCENARIO_DIR",
    "STEP_KINDS",
    "Scenario",
    "ScenarioError",
    "Step",
    "list_scenarios",
    "load_scenario",
    "parse_scenario",
]

#: The bundled scenarios (a ``str``: pathlib stays off a fake's start path).
SCENARIO_DIR = os.path.join(os.path.dirname(os.path.realpath(__file__)), "scenarios")
SCHEMA_FILE = os.path.join(SCENARIO_DIR, "scenario.schema.json")

STEP_KINDS = frozenset(
    {
        "text",
        "thinking",
        "tool",
        "usage",
        "sleep",
        "stderr",
        "noise",
        "malformed",
        "foreign",
        "oversize",
        "spawn_tree",
        "api_error",
        "crash",
        "hang",
        "compaction",
    }
)

#: Step kinds beyond the set every emulator renders: only an emulator whose
#: ``CliSpec.optional_steps`` names one plays a scenario that uses it.
OPTIONAL_STEP_KINDS = frozenset({"compaction"})


class ScenarioError(ValueError):
    """A scenario file that is not valid; names the file and the JSON path."""


class Step:
    """One step of a scenario: its kind and its own fields (validated against the schema)."""

    __slots__ = ("data", "kind")

    def __init__(self, kind: str, data: Mapping[str, Any] | None = None) -> None:
        self.kind = kind
        self.data: Mapping[str, Any] = {} if data is None else data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Step):
            return NotImplemented
        return (self.kind, self.data) == (other.kind, other.data)

    def __hash__(self) -> int:
        return hash((self.kind, self.data))

    def __repr__(self) -> str:
        return f"Step(kind={self.kind!r}, data={self.data!r})"

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    # Convenience accessors used by every emulator.
    @property
    def text(self) -> str:
        return str(self.data.get("text", ""))

    @property
    def chunks(self) -> list[str]:
        """The text split as the model streams it (``chunks`` or one piece)."""
        chunks = self.data.get("chunks")
        if isinstance(chunks, list) and chunks:
            return [str(c) for c in chunks]
        return [self.text] if self.text else []


class Scenario:
    """What the "model" does in one fake run, and how the run ends."""

    __slots__ = (
        "auth",
        "description",
        "exit_code",
        "ignore_stdin_close",
        "name",
        "old_version",
        "source",
        "stall_ms",
        "steps",
        "stop_reason",
    )

    def __init__(
        self,
        *,
        name: str,
        description: str,
        steps: tuple[Step, ...],
        stop_reason: str = "end_turn",
        exit_code: int = 0,
        stall_ms: int = 0,
        ignore_stdin_close: bool = False,
        old_version: bool = False,
        auth: str = "ok",
        source: str = "",
    ) -> None:
        self.name = name
        self.description = description
        self.steps = steps
        self.stop_reason = stop_reason
        self.exit_code = exit_code
        self.stall_ms = stall_ms
        self.ignore_stdin_close = ignore_stdin_close
        self.old_version = old_version
        self.auth = auth
        self.source = source

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in Scenario.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, source={self.source!r}, steps={self.steps!r})"

    @property
    def final_text(self) -> str:
        return "".join(s.text for s in self.steps if s.kind == "text")

    def tool_steps(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "tool"]

    def unrendered_kinds(self, rendered: frozenset[str]) -> list[str]:
        """The optional step kinds this scenario uses that are not in ``rendered`` (an
        emulator's ``CliSpec.optional_steps``), in order of first use."""
        kinds = (s.kind for s in self.steps if s.kind in OPTIONAL_STEP_KINDS - rendered)
        return list(dict.fromkeys(kinds))


def _schema() -> dict[str, Any]:
    with open(SCHEMA_FILE, encoding="utf-8") as handle:
        schema: dict[str, Any] = jsonio.loads(handle.read())
    return schema


def validate_scenario(raw: Any, *, source: str = "<scenario>") -> None:
    """Raise :class:`ScenarioError` naming the path of the first schema violation."""
    try:
        import jsonschema
    except ImportError:
        # A fake started with ``python -S`` (fake_clis/_shim.py): load site-packages now.
        import site

        site.main()
        import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(raw), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path
        )
        raise ScenarioError(f"{source}: {where}: {first.message}")


def parse_scenario(raw: Any, *, source: str = "<scenario>", validate: bool = True) -> Scenario:
    """Validate a decoded scenario object (unless ``validate`` is false) and build it."""
    if validate:
        validate_scenario(raw, source=source)
    steps = tuple(
        Step(kind=s["kind"], data={k: v for k, v in s.items() if k != "kind"}) for s in raw["steps"]
    )
    return Scenario(
        name=raw["name"],
        description=raw.get("description", ""),
        steps=steps,
        stop_reason=raw.get("stop_reason", "end_turn"),
        exit_code=raw.get("exit_code", 0),
        stall_ms=raw.get("stall_ms", 0),
        ignore_stdin_close=raw.get("ignore_stdin_close", False),
        old_version=raw.get("old_version", False),
        auth=raw.get("auth", "ok"),
        source=source,
    )


def load_scenario(name_or_path: str) -> Scenario:
    """Load a scenario by name (``happy``) or path (``./my.json``)."""
    if _suffix(name_or_path):
        # Only a scenario given by path (validated with jsonschema anyway) needs pathlib:
        # its messages keep pathlib's spelling of the path.
        from pathlib import Path

        path = str(Path(name_or_path))
    else:
        path = os.path.join(SCENARIO_DIR, f"{name_or_path}.json")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        known = ", ".join(list_scenarios())
        raise ScenarioError(
            f"{path}: cannot read scenario ({exc.strerror}); known: {known}"
        ) from exc
    try:
        raw = jsonio.loads(text)
    except jsonio.JSONDecodeError as exc:
        raise ScenarioError(f"{path}: line {exc.lineno}: not valid JSON: {exc.msg}") from exc
    # A bundled scenario is validated by the test suite (test_every_bundled_scenario_is_valid);
    # skipping the schema here spares every fake start importing jsonschema (~0.2 s of CPU,
    # most of a fake's start-up, paid hundreds of times by `harness conform`).
    bundled = os.path.dirname(os.path.realpath(path)) == SCENARIO_DIR
    return parse_scenario(raw, source=path, validate=not bundled)


def _suffix(path: str) -> str:
    """``Path(path).suffix``: the last component's extension, ``""`` for none."""
    name = os.path.basename(path.rstrip("/" + os.sep))
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def list_scenarios() -> list[str]:
    schema = os.path.basename(SCHEMA_FILE)
    names = os.listdir(SCENARIO_DIR)
    return sorted(n[: -len(".json")] for n in names if n.endswith(".json") and n != schema)
