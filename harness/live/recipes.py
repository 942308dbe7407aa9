"""Live recipes: how to run one real CLI offline, as data.

Rules: LIVE-SKIP-001.
Design: docs/design/live.md#harness.live.recipes
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]

from fake_clis.scenario import SCENARIO_DIR
from harness.defs.types import AgentDef, BuildOptions, ResumeStyle
from harness.errors import HarnessError
from harness.schemas import load_schema

__all__ = [
    "DEFAULT_FAKE_KEY",
    "DEFAULT_TIMEOUT_S",
    "PLACEHOLDERS",
    "PROVIDERS",
    "RECIPE_DIR",
    "RECIPE_FORMAT",
    "SCHEMA_NAME",
    "ArgvSpec",
    "FileSpec",
    "PackageSpec",
    "Recipe",
    "RecipeError",
    "ScenarioCase",
    "TransportSpec",
    "VolatileText",
    "check_recipe_against_def",
    "fill",
    "fill_json",
    "load_recipe",
    "load_recipes",
    "parse_recipe",
    "placeholders_in",
    "recipe_for",
]

RECIPE_DIR = Path(__file__).resolve().parent / "recipes"
SCHEMA_NAME = "live-recipe-v1.schema.json"
RECIPE_FORMAT = "live-recipe-v1"
#: the placeholders env values, file contents and argv may use.
PLACEHOLDERS = ("base_url", "port", "home", "fake_key", "model", "cwd", "tmp")
PROVIDERS = ("anthropic", "openai-responses", "openai-chat", "gemini")
DEFAULT_FAKE_KEY = "sk-live-fake-key"
DEFAULT_TIMEOUT_S = 120.0
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


class RecipeError(HarnessError, ValueError):
    """A live recipe that is not valid: ``path`` and ``field`` say where (LIVE-RECIPE-001)."""

    code = "LIVE_RECIPE_INVALID"

    def __init__(self, path: str, field_: str, problem: str) -> None:
        super().__init__(f"{path}: {field_}: {problem}", rule="LIVE-RECIPE-001")
        self.path = path
        self.field = field_
        self.problem = problem


@dataclass(frozen=True)
class VolatileText:
    """A part of the assistant text that varies run to run (``pattern`` -> ``as_text``)."""

    pattern: re.Pattern[str]
    as_text: str
    why: str

    def apply(self, text: str) -> str:
        return self.pattern.sub(lambda _m: self.as_text, text)


@dataclass(frozen=True)
class PackageSpec:
    manager: str
    name: str
    version: str
    bin: str
    bin_path: str | None = None
    #: pypi only: the minimum Python (``"3.12"``) the venv needs.
    python: str | None = None
    #: pypi only: the Python versions (``"3.13"``) the CLI is known to run on; when given,
    #: the venv is built with one of them or the install is refused.
    pythons: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """``<name>@<version>``: the cache sub-directory of this install."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class FileSpec:
    #: Relative to the temporary HOME (POSIX separators).
    path: str
    #: Text with placeholders; for a ``json`` file, the serialized template.
    content: str | None = None
    json_value: Any = None
    is_json: bool = False
    mode: int | None = None
    #: ``<python package>/<file>.tgz``: an npm-pack tarball shipped with the harness, unpacked
    #: under ``path`` (a directory) instead of writing a file.
    npm_pack: str | None = None


@dataclass(frozen=True)
class ArgvSpec:
    prepend: tuple[str, ...] = ()
    append: tuple[str, ...] = ()


@dataclass(frozen=True)
class TransportSpec:
    name: str
    argv: ArgvSpec = ArgvSpec()
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScenarioCase:
    """One live case: a scenario file, one turn or a resumed second turn."""

    id: str
    scenario: str
    turns: int = 1
    #: ``()`` = every transport of the recipe.
    transports: tuple[str, ...] = ()
    timeout_s: float | None = None
    #: The user cancels the turn this long after its first text (a cancel case).
    cancel_after_ms: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Recipe:
    agent: str
    path: str
    description: str = ""
    source: str = ""
    skip_reason: str | None = None
    package: PackageSpec | None = None
    #: Other pinned executables the live tests use beside the CLI (installed with it).
    tools: tuple[PackageSpec, ...] = ()
    provider: str | None = None
    model: str | None = None
    fake_key: str = DEFAULT_FAKE_KEY
    options: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    files: tuple[FileSpec, ...] = ()
    argv: ArgvSpec = ArgvSpec()
    telemetry_env: Mapping[str, str] = field(default_factory=dict)
    telemetry_args: tuple[str, ...] = ()
    isolate_tmpdir: bool = True
    isolate_pwd: bool = True
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: ``()`` = the def's own transport only.
    transports: tuple[TransportSpec, ...] = ()
    scenarios: tuple[ScenarioCase, ...] = ()
    #: Text the CLI varies by itself, replaced on both sides before text is compared.
    volatile_text: tuple[VolatileText, ...] = ()

    @property
    def skipped(self) -> bool:
        return self.skip_reason is not None

    def build_options(self) -> BuildOptions:
        """The BuildOptions for the def's ``build_args``: ``options`` (model defaults to
        the recipe's ``model``)."""
        model = self.options.get("model", self.model)
        return BuildOptions(
            model=model,
            reasoning=self.options.get("reasoning"),
            permission_mode=self.options.get("permission_mode"),
        )

    def transport_names(self, defn: AgentDef) -> tuple[str, ...]:
        """The transports to run: the recipe's list, or the def's own transport."""
        if self.transports:
            return tuple(t.name for t in self.transports)
        return (defn.transport_name,)

    def transport(self, name: str) -> TransportSpec:
        for spec in self.transports:
            if spec.name == name:
                return spec
        return TransportSpec(name)

    def cases_for(self, transport: str) -> tuple[ScenarioCase, ...]:
        return tuple(c for c in self.scenarios if not c.transports or transport in c.transports)

    def case(self, case_id: str) -> ScenarioCase | None:
        for c in self.scenarios:
            if c.id == case_id:
                return c
        return None


# -- placeholders ------------------------------------------------------------------------
def placeholders_in(text: str) -> list[str]:
    """Every ``{name}`` placeholder in ``text`` (known or not), in order."""
    return [m.group(1) for m in _PLACEHOLDER.finditer(text)]


def fill(text: str, values: Mapping[str, str], *, where: str = "<value>") -> str:
    """Replace each ``{name}`` by ``values[name]``; an unknown name raises KeyError naming
    ``where``. Other braces are left alone."""

    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            raise KeyError(f"{where}: unknown placeholder {{{name}}}")
        return values[name]

    return _PLACEHOLDER.sub(repl, text)


def fill_json(value: Any, values: Mapping[str, str], *, where: str = "<json>") -> Any:
    """``value`` with placeholders filled in every string leaf (keys too)."""
    if isinstance(value, str):
        return fill(value, values, where=where)
    if isinstance(value, list):
        return [fill_json(v, values, where=f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {
            fill(str(k), values, where=where): fill_json(v, values, where=f"{where}.{k}")
            for k, v in value.items()
        }
    return value


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{where}[{i}]")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield f"{where}.{k}", str(k)
            yield from _strings(v, f"{where}.{k}")


# -- parsing -------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(SCHEMA_NAME))


def _json_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "$"


def _argv(raw: Any) -> ArgvSpec:
    if not isinstance(raw, Mapping):
        return ArgvSpec()
    return ArgvSpec(tuple(raw.get("prepend", ())), tuple(raw.get("append", ())))


def _scenario_dir() -> Path:
    return Path(SCENARIO_DIR)


def parse_recipe(raw: Any, *, path: str = "<recipe>", expect_agent: str | None = None) -> Recipe:
    """Validate a decoded recipe; raise :class:`RecipeError` naming ``path`` and the field.

    ``expect_agent`` (the file name stem) must equal ``agent`` when given.
    """
    _check_schema(raw, path)
    assert isinstance(raw, dict)
    agent = str(raw["agent"])
    if expect_agent is not None and agent != expect_agent:
        raise RecipeError(path, "agent", f"is {agent!r} but the file is named {expect_agent!r}")
    _check_placeholders(raw, path)
    # Checked in this order, so the first problem reported stays the same.
    files = _files(raw.get("files", ()), path)
    transports = _transports(raw.get("transports", ()), path)
    cases = _cases(raw.get("scenarios", ()), transports, path)
    volatile = _volatile(raw.get("volatile_text", ()), path)
    package = _package(raw.get("package"), path)
    tools = tuple(tool for t in raw.get("tools", ()) if (tool := _package(t, path)) is not None)
    telemetry = raw.get("telemetry", {})
    isolation = raw.get("isolation", {})
    return Recipe(
        agent=agent,
        path=path,
        description=str(raw.get("description", "")),
        source=str(raw.get("source", "")),
        skip_reason=str(raw["skip"]["reason"]) if "skip" in raw else None,
        package=package,
        tools=tools,
        provider=raw.get("provider"),
        model=raw.get("model"),
        fake_key=str(raw.get("fake_key", DEFAULT_FAKE_KEY)),
        options=dict(raw.get("options", {})),
        env=dict(raw.get("env", {})),
        files=files,
        argv=_argv(raw.get("argv")),
        telemetry_env=dict(telemetry.get("env", {})),
        telemetry_args=tuple(telemetry.get("args", ())),
        isolate_tmpdir=bool(isolation.get("tmpdir", True)),
        isolate_pwd=bool(isolation.get("pwd", True)),
        timeout_s=float(raw.get("timeout_s", DEFAULT_TIMEOUT_S)),
        transports=transports,
        scenarios=cases,
        volatile_text=volatile,
    )


def _check_schema(raw: Any, path: str) -> None:
    """The recipe schema, reported at the deepest error of the first failing path."""
    errors = sorted(_validator().iter_errors(raw), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    first = max(
        (e for e in errors if list(e.absolute_path) == list(errors[0].absolute_path)),
        key=lambda e: len(list(e.absolute_path)),
    )
    best = jsonschema.exceptions.best_match([first]) if first.context else first
    raise RecipeError(path, _json_path(best.absolute_path), best.message)


def _check_placeholders(raw: Mapping[str, Any], path: str) -> None:
    """Env values, files, argv, telemetry and transports use only the known placeholders."""
    fields = ("env", "files", "argv", "telemetry", "transports")
    for where, text in _strings({k: raw[k] for k in fields if k in raw}, ""):
        for name in placeholders_in(text):
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                raise RecipeError(
                    path, where.lstrip("."), f"unknown placeholder {{{name}}} (known: {known})"
                )


def _files(raw: Any, path: str) -> tuple[FileSpec, ...]:
    """Files to write under HOME: relative paths without ``..``, each listed once."""
    files: list[FileSpec] = []
    seen: set[str] = set()
    for i, f in enumerate(raw):
        norm = _home_relative(str(f["path"]), path, f"files[{i}].path")
        if norm in seen:
            raise RecipeError(path, f"files[{i}].path", f"{f['path']!r} is listed twice")
        seen.add(norm)
        files.append(_file(norm, f))
    return tuple(files)


def _home_relative(rel: str, path: str, where: str) -> str:
    """``rel`` as a POSIX path relative to HOME, or a :class:`RecipeError` at ``where``."""
    pure = PurePosixPath(rel.replace("\\", "/"))
    if pure.is_absolute() or rel.startswith(("~", "/")) or re.match(r"^[A-Za-z]:", rel):
        raise RecipeError(path, where, f"{rel!r} must be relative to HOME")
    if ".." in pure.parts:
        raise RecipeError(path, where, f"{rel!r} must not contain '..'")
    return pure.as_posix()


def _file(norm: str, f: Mapping[str, Any]) -> FileSpec:
    mode = int(str(f["mode"]), 8) if "mode" in f else None
    if "npm_pack" in f:
        return FileSpec(norm, None, None, False, mode, npm_pack=str(f["npm_pack"]))
    if "json" in f:
        return FileSpec(norm, None, f["json"], True, mode)
    return FileSpec(norm, str(f["content"]), None, False, mode)


def _transports(raw: Any, path: str) -> tuple[TransportSpec, ...]:
    """The recipe's transports (a name, or a name with argv and env), each listed once."""
    transports: list[TransportSpec] = []
    for i, t in enumerate(raw):
        spec = (
            TransportSpec(t)
            if isinstance(t, str)
            else TransportSpec(str(t["name"]), _argv(t.get("argv")), dict(t.get("env", {})))
        )
        if any(s.name == spec.name for s in transports):
            raise RecipeError(path, f"transports[{i}]", f"transport {spec.name!r} listed twice")
        transports.append(spec)
    return tuple(transports)


def _case(s: Any) -> ScenarioCase:
    """One ``scenarios`` entry: a scenario name, or an object with its options."""
    if isinstance(s, str):
        return ScenarioCase(id=s, scenario=s)
    turns = int(s.get("turns", 1))
    name = str(s["scenario"])
    return ScenarioCase(
        id=str(s.get("id", name if turns == 1 else f"{name}-resume")),
        scenario=name,
        turns=turns,
        transports=tuple(s.get("transports", ())),
        timeout_s=float(s["timeout_s"]) if "timeout_s" in s else None,
        cancel_after_ms=int(s["cancel_after_ms"]) if "cancel_after_ms" in s else None,
        note=str(s.get("note", "")),
    )


def _cases(raw: Any, transports: tuple[TransportSpec, ...], path: str) -> tuple[ScenarioCase, ...]:
    """The cases: known scenario files, unique ids, transports the recipe lists."""
    cases: list[ScenarioCase] = []
    known_scenarios = {p.stem for p in _scenario_dir().glob("*.json")}
    transport_names = {t.name for t in transports}
    for i, s in enumerate(raw):
        case = _case(s)
        if case.scenario not in known_scenarios:
            raise RecipeError(
                path,
                f"scenarios[{i}]",
                f"no scenario file {case.scenario!r} in {_scenario_dir()}",
            )
        if any(c.id == case.id for c in cases):
            raise RecipeError(path, f"scenarios[{i}]", f"case id {case.id!r} listed twice")
        for name in case.transports:
            if transports and name not in transport_names:
                raise RecipeError(
                    path,
                    f"scenarios[{i}].transports",
                    f"{name!r} is not one of the recipe's transports {sorted(transport_names)}",
                )
        cases.append(case)
    return tuple(cases)


def _volatile(raw: Any, path: str) -> tuple[VolatileText, ...]:
    """``volatile_text`` entries, each pattern a valid regular expression."""
    volatile: list[VolatileText] = []
    for i, v in enumerate(raw):
        try:
            compiled = re.compile(str(v["pattern"]))
        except re.error as exc:
            raise RecipeError(
                path, f"volatile_text[{i}].pattern", f"not a regular expression: {exc}"
            ) from exc
        volatile.append(VolatileText(compiled, str(v["as"]), str(v["why"])))
    return tuple(volatile)


def _package(package: Any, path: str) -> PackageSpec | None:
    """The package that installs the CLI, if the recipe names one."""
    if not package:
        return None
    _check_pythons(package, path)
    return PackageSpec(
        manager=str(package["manager"]),
        name=str(package["name"]),
        version=str(package["version"]),
        bin=str(package["bin"]),
        bin_path=package.get("bin_path"),
        python=package.get("python"),
        pythons=tuple(package.get("pythons", ())),
    )


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _check_pythons(package: Mapping[str, Any], path: str) -> None:
    """``package.python`` / ``package.pythons`` name interpreters for a venv: PyPI only, and
    every listed version at least the minimum."""
    for key in ("python", "pythons"):
        if key in package and package["manager"] != "pypi":
            raise RecipeError(
                path,
                f"package.{key}",
                f"names a Python for a venv, but the package is installed with "
                f"{package['manager']}, not pypi",
            )
    minimum = package.get("python")
    for i, version in enumerate(package.get("pythons", ())):
        if minimum is not None and _minor(version) < _minor(minimum):
            raise RecipeError(
                path,
                f"package.pythons[{i}]",
                f"{version} is below the package's minimum Python {minimum}",
            )


def load_recipe(path: str | os.PathLike[str]) -> Recipe:
    """Read and validate one recipe file (its stem must equal its ``agent``)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecipeError(str(p), "$", f"cannot read ({exc.strerror})") from exc
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecipeError(
            str(p), "$", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    return parse_recipe(raw, path=str(p), expect_agent=p.stem)


def load_recipes(recipe_dir: str | os.PathLike[str] | None = None) -> dict[str, Recipe]:
    """Every ``*.json`` recipe in ``recipe_dir`` (default :data:`RECIPE_DIR`), by agent id."""
    directory = Path(recipe_dir) if recipe_dir is not None else RECIPE_DIR
    out: dict[str, Recipe] = {}
    for p in sorted(directory.glob("*.json")):
        recipe = load_recipe(p)
        out[recipe.agent] = recipe
    return out


def recipe_for(agent_id: str, recipe_dir: str | os.PathLike[str] | None = None) -> Recipe | None:
    """The recipe for a def id (``<dir>/<id>.json``), or ``None`` when there is none."""
    directory = Path(recipe_dir) if recipe_dir is not None else RECIPE_DIR
    p = directory / f"{agent_id}.json"
    if not p.is_file():
        return None
    return load_recipe(p)


def check_recipe_against_def(recipe: Recipe, defn: AgentDef) -> None:
    """Raise :class:`RecipeError` when the recipe asks for what the def does not have:
    an unknown transport, or a two-turn (resume) case for a def without resume."""
    if recipe.agent != defn.id:
        raise RecipeError(recipe.path, "agent", f"is {recipe.agent!r}, the def is {defn.id!r}")
    own = {defn.transport_name} | {t.name for t in defn.alt_transports}
    for i, spec in enumerate(recipe.transports):
        if spec.name not in own:
            raise RecipeError(
                recipe.path,
                f"transports[{i}]",
                f"{spec.name!r} is not a transport of def {defn.id!r} ({sorted(own)})",
            )
    for i, case in enumerate(recipe.scenarios):
        if case.turns > 1 and defn.resume_style == ResumeStyle.NONE:
            raise RecipeError(
                recipe.path,
                f"scenarios[{i}].turns",
                f"def {defn.id!r} has resume_style none; a resumed turn cannot run",
            )
        for name in case.transports:
            if name not in own:
                raise RecipeError(
                    recipe.path,
                    f"scenarios[{i}].transports",
                    f"{name!r} is not a transport of def {defn.id!r}",
                )


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.live.recipes [DIR]``: validate every recipe, print one line each."""
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0]) if args else RECIPE_DIR
    status = 0
    for p in sorted(directory.glob("*.json")):
        try:
            recipe = load_recipe(p)
        except RecipeError as exc:
            print(f"FAIL {exc}")
            status = 1
            continue
        what = (
            f"skip: {recipe.skip_reason}"
            if recipe.skip_reason
            else (f"{recipe.package.manager} {recipe.package.key}" if recipe.package else "")
        )
        print(f"ok   {recipe.agent}: {what}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
