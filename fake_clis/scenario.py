"""Scenario files: what the "model" does in one fake run, independent of wire format.

A scenario is JSON (``fake_clis/scenarios/<name>.json``, schema
``scenario.schema.json`` beside them). ``steps`` run in order; each emulator
renders every step in its own CLI's frame shapes. Faults are steps too, so a
scenario can say "stream some text, then crash mid-line".

Design: docs/design/fakes.md#fake_clis.scenario
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_clis import jsonio

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

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
SCHEMA_FILE = SCENARIO_DIR / "scenario.schema.json"

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


@dataclass(frozen=True)
class Step:
    kind: str
    #: The step's own fields (validated against the schema).
    data: Mapping[str, Any] = field(default_factory=dict)

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


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    steps: tuple[Step, ...]
    stop_reason: str = "end_turn"
    exit_code: int = 0
    stall_ms: int = 0
    ignore_stdin_close: bool = False
    old_version: bool = False
    auth: str = "ok"
    source: str = ""

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
    schema: dict[str, Any] = jsonio.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
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
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.json"
    try:
        text = path.read_text(encoding="utf-8")
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
    bundled = path.resolve().parent == SCENARIO_DIR.resolve()
    return parse_scenario(raw, source=str(path), validate=not bundled)


def list_scenarios() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.json") if p.name != SCHEMA_FILE.name)
