"""Loading an adapter author's own def file: ``harness conform --def mydef.py``.

Design: docs/design/conformance.md#conformance.checks.loader
"""

from __future__ import annotations

import contextlib
import enum
import hashlib
import importlib.util
import os
import re
import sys
import traceback
import types
from collections.abc import Iterable, Mapping
from pathlib import Path

from harness.defs.format_options import FORMAT_OPTION_FIELDS, misplaced_options
from harness.defs.types import (
    ID_PATTERN,
    AcpEnvFormat,
    AgentDef,
    AuthProbe,
    CompatibilityProbe,
    EnvStripRule,
    EnvValueRule,
    ListModels,
    McpInjection,
    ModelOption,
    NodeWrapperNative,
    PromptDelivery,
    PromptInputFormat,
    ResumeStyle,
    Transport,
    VersionPolicy,
)
from harness.errors import HarnessError
from harness.formats.def_check import event_parser_problem, stream_format_problem

__all__ = ["DefFileError", "load_def_file", "validate_def_data"]

_RULE = "DEFCHECK-LOAD-001"

_STR_TUPLES = (
    "fallback_bins",
    "version_args",
    "app_bundle_paths",
    "bundled_paths",
    "headless_flags",
)
_OPTIONAL_STRS = (
    "bin_env_key",
    "prompt_too_large_hint",
    "default_model_env_var",
    "acp.stdio_mcp_removed_in_version",
    "acp.model_unavailable_error_code",
    "acp.native_continue_runtime",
    "pi.session_dir",
    "transport_env_var",
    "docs_url",
    "install_url",
)
_BOOLS = (
    "supports_image_paths",
    "supports_custom_model",
    "acp.turn_end_completes_prompt",
    "pi.resume_via_process_args",
)
_TIMEOUTS = (
    "version_probe_timeout_ms",
    "help_probe_timeout_ms",
    "acp.stage_timeout_ms",
    "inactivity_timeout_ms",
    "first_output_timeout_ms",
)
_ENUMS: dict[str, type[enum.Enum]] = {
    "prompt_delivery": PromptDelivery,
    "prompt_input_format": PromptInputFormat,
    "resume_style": ResumeStyle,
    "external_mcp_injection": McpInjection,
    "acp.mcp_env_format": AcpEnvFormat,
}
_OPTIONAL_OBJECTS: dict[str, type] = {
    "node_wrapper_native": NodeWrapperNative,
    "auth_probe": AuthProbe,
    "list_models": ListModels,
    "version_policy": VersionPolicy,
    "compatibility_probe": CompatibilityProbe,
}
_OBJECT_TUPLES: dict[str, type] = {
    "strip_env": EnvStripRule,
    "env_value_rules": EnvValueRule,
    "fallback_models": ModelOption,
    "reasoning_options": ModelOption,
}


def _values(defn: AgentDef, names: Iterable[str]) -> Iterable[tuple[str, object]]:
    """``(name, value)`` per field name; ``acp.stage_timeout_ms`` reaches into a group.

    A field of a group that is not the right type is skipped: that is reported once, as
    the group's own problem.
    """
    for name in names:
        group, dot, option = name.partition(".")
        value = getattr(defn, group)
        if dot:
            if not isinstance(value, FORMAT_OPTION_FIELDS[group]):
                continue
            value = getattr(value, option)
        yield name, value


class DefFileError(HarnessError):
    """A def file that cannot be loaded; ``problems`` has one line per thing wrong."""

    code = "DEF_FILE_INVALID"

    def __init__(self, path: str, problems: Iterable[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems), rule=_RULE)


def _type_name(value: object) -> str:
    return type(value).__name__


def _check_enum(where: str, value: object, enum_type: type[enum.Enum]) -> str | None:
    if isinstance(value, enum_type):
        return None
    members = ", ".join(f"{enum_type.__name__}.{m.name}" for m in enum_type)
    for member in enum_type:
        if value == member.value and not isinstance(value, enum.Enum):
            return (
                f"{where}: must be {enum_type.__name__}.{member.name} "
                f"(from harness.defs.types), not the plain value {value!r}"
            )
    return f"{where}: unknown value {value!r}; known: {members}"


def _check_format(where: str, stream_format: object, event_parser: object) -> list[str]:
    """The def format check (DEF-FORMAT-001, :mod:`harness.formats.def_check`) as problems."""
    unknown = stream_format_problem(stream_format)
    if unknown is not None or not isinstance(stream_format, str):
        return [f"{where}.stream_format: {unknown}"]
    if event_parser is not None and not isinstance(event_parser, str):
        return [f"{where}.event_parser: must be a string or None, got {_type_name(event_parser)}"]
    try:
        problem = event_parser_problem(stream_format, event_parser)
    except Exception as exc:  # the engine's parser module for this format did not import
        return [
            f"{where}.stream_format: the engine's parser for {stream_format!r} did not load "
            f"({type(exc).__name__}: {exc}), so event_parser cannot be checked"
        ]
    return [] if problem is None else [f"{where}.event_parser: {problem}"]


def _check_str_tuple(where: str, value: object, *, optional: bool = False) -> str | None:
    if optional and value is None:
        return None
    if not isinstance(value, tuple):
        return f"{where}: must be a tuple of strings, got {_type_name(value)}"
    for i, item in enumerate(value):
        if not isinstance(item, str):
            return f"{where}[{i}]: must be a string, got {_type_name(item)}"
    return None


def _check_str_map(where: str, value: object, *, non_empty: bool = False) -> str | None:
    if not isinstance(value, Mapping):
        return f"{where}: must be a mapping of strings to strings, got {_type_name(value)}"
    for key, item in value.items():
        if not isinstance(key, str) or (non_empty and not key):
            return f"{where}: key {key!r} must be a non-empty string"
        if not isinstance(item, str) or (non_empty and not item):
            return f"{where}[{key!r}]: must be a non-empty string, got {item!r}"
    return None


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _check_transports(where: str, defn: AgentDef) -> list[str]:
    problems: list[str] = []
    name = defn.transport_name
    if not isinstance(name, str) or not name:
        problems.append(f"{where}.transport_name: must be a non-empty string, got {name!r}")
    alts = defn.alt_transports
    if not isinstance(alts, tuple):
        return [*problems, f"{where}.alt_transports: must be a tuple, got {_type_name(alts)}"]
    names = [name]
    for i, alt in enumerate(alts):
        at = f"{where}.alt_transports[{i}]"
        if not isinstance(alt, Transport):
            problems.append(f"{at}: must be a Transport, got {_type_name(alt)}")
            continue
        if not isinstance(alt.name, str) or not alt.name:
            problems.append(f"{at}.name: must be a non-empty string, got {alt.name!r}")
        elif alt.name in names:
            problems.append(f"{at}.name: transport {alt.name!r} is declared twice")
        names.append(alt.name)
        problems += _check_format(at, alt.stream_format, alt.event_parser)
        if not callable(alt.build_args):
            problems.append(f"{at}.build_args: must be callable, got {_type_name(alt.build_args)}")
        bad = _check_enum(f"{at}.prompt_delivery", alt.prompt_delivery, PromptDelivery)
        if bad:
            problems.append(bad)
    default = defn.default_transport
    if default is not None and default not in names:
        problems.append(
            f"{where}.default_transport: {default!r} is not a transport of this def; "
            f"known: {', '.join(str(n) for n in names)}"
        )
    return problems


def validate_def_data(defn: AgentDef, where: str) -> list[str]:
    """Every field problem of ``defn``, each as ``"<where>.<field>: <problem>"``."""
    problems = _identity_problems(defn, where)
    # streams (seed 000 §1; DEF-FORMAT-001)
    problems += _check_format(where, defn.stream_format, defn.event_parser)
    problems += _option_group_problems(defn, where)
    problems += _present(
        _check_enum(f"{where}.{n}", v, _ENUMS[n]) for n, v in _values(defn, _ENUMS)
    )
    problems += _budget_problems(defn, where)
    problems += _plain_field_problems(defn, where)
    problems += _object_field_problems(defn, where)
    problems += _check_transports(where, defn)
    return problems


def _present(problems: Iterable[str | None]) -> list[str]:
    return [p for p in problems if p]


def _identity_problems(defn: AgentDef, where: str) -> list[str]:
    """id, name, bin and build_args (ref §6 id pattern; DEF-ID-001)."""
    problems = []
    if not isinstance(defn.id, str) or not ID_PATTERN.match(defn.id):
        problems.append(f"{where}.id: {defn.id!r} does not match {ID_PATTERN.pattern}")
    for name in ("name", "bin"):
        value = getattr(defn, name)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{where}.{name}: must be a non-empty string, got {value!r}")
    if not callable(defn.build_args):
        problems.append(f"{where}.build_args: must be callable, got {_type_name(defn.build_args)}")
    return problems


def _option_group_problems(defn: AgentDef, where: str) -> list[str]:
    """Each format-only option group is its own type, and set only where a transport of
    the def reads it (DEF-OPTIONS-001)."""
    problems = [
        f"{where}.{name}: must be a {group_type.__name__} (from harness.defs.types), "
        f"got {_type_name(getattr(defn, name))}"
        for name, group_type in FORMAT_OPTION_FIELDS.items()
        if not isinstance(getattr(defn, name), group_type)
    ]
    problems += [
        f"{where}.{field}: def {defn.id!r} sets it, but it is {problem}"
        for field, problem in misplaced_options(defn)
    ]
    return problems


def _budget_problems(defn: AgentDef, where: str) -> list[str]:
    """A budget exactly when a transport delivers the prompt in argv (seed 000 §12;
    DEF-BUDGET-001 / DEF-BUDGET-002)."""
    budget = defn.max_prompt_arg_bytes
    argv_delivery = defn.prompt_delivery is PromptDelivery.ARGV or any(
        isinstance(t, Transport) and t.prompt_delivery is PromptDelivery.ARGV
        for t in (defn.alt_transports if isinstance(defn.alt_transports, tuple) else ())
    )
    if argv_delivery and not _positive_int(budget):
        return [
            f"{where}.max_prompt_arg_bytes: argv prompt delivery needs a positive integer "
            f"budget, got {budget!r}"
        ]
    if not argv_delivery and budget is not None:
        return [
            f"{where}.max_prompt_arg_bytes: only argv prompt delivery takes a budget, got "
            f"{budget!r}"
        ]
    return []


def _plain_field_problems(defn: AgentDef, where: str) -> list[str]:
    """String tuples, optional strings, booleans, timeouts and string maps."""
    problems = _present(_check_str_tuple(f"{where}.{n}", getattr(defn, n)) for n in _STR_TUPLES)
    problems += _present([_check_str_tuple(f"{where}.help_args", defn.help_args, optional=True)])
    for name, value in _values(defn, _OPTIONAL_STRS):
        if value is not None and not isinstance(value, str):
            problems.append(f"{where}.{name}: must be a string or None, got {_type_name(value)}")
    for name, value in _values(defn, _BOOLS):
        if not isinstance(value, bool):
            problems.append(f"{where}.{name}: must be True or False, got {value!r}")
    for name, value in _values(defn, _TIMEOUTS):
        if value is not None and not _positive_int(value):
            problems.append(
                f"{where}.{name}: must be a positive integer (ms) or None, got {value!r}"
            )
    problems += _present(
        [
            _check_str_map(f"{where}.env", defn.env),
            _check_str_map(f"{where}.capability_flags", defn.capability_flags, non_empty=True),
        ]
    )
    return problems


def _object_field_problems(defn: AgentDef, where: str) -> list[str]:
    """Optional objects, tuples of objects, and a non-empty ``fallback_models``."""
    problems = []
    for name, cls in _OPTIONAL_OBJECTS.items():
        value = getattr(defn, name)
        if value is not None and not isinstance(value, cls):
            problems.append(
                f"{where}.{name}: must be a {cls.__name__} or None, got {_type_name(value)}"
            )
    for name, cls in _OBJECT_TUPLES.items():
        value = getattr(defn, name)
        if not isinstance(value, tuple):
            problems.append(
                f"{where}.{name}: must be a tuple of {cls.__name__}, got {_type_name(value)}"
            )
            continue
        problems += [
            f"{where}.{name}[{i}]: must be a {cls.__name__}, got {_type_name(item)}"
            for i, item in enumerate(value)
            if not isinstance(item, cls)
        ]
    if isinstance(defn.fallback_models, tuple) and not defn.fallback_models:
        problems.append(f"{where}.fallback_models: must list at least the default option")
    return problems


def _module_name(path: Path) -> str:
    digest = hashlib.sha1(str(path).encode("utf-8")).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem) or "def"
    return f"_harness_def_file_{stem}_{digest}"


def _error_line(exc: BaseException, filename: str) -> int | None:
    line: int | None = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == filename:
            line = frame.lineno
    return line


def _import(path: Path, shown: str) -> types.ModuleType:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problem = f"{shown}: cannot read the def file: {exc.strerror or exc}"
        raise DefFileError(shown, [problem]) from None
    try:
        source = importlib.util.decode_source(raw)
        code = compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{shown}:{exc.lineno}" + (f":{exc.offset}" if exc.offset else "")
        raise DefFileError(shown, [f"{where}: syntax error: {exc.msg}"]) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DefFileError(shown, [f"{shown}: not valid Python source: {exc}"]) from None
    name = _module_name(path)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    directory = str(path.parent)
    sys.modules[name] = module
    sys.path.insert(0, directory)
    try:
        exec(code, module.__dict__)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        line = _error_line(exc, str(path))
        where = f"{shown}:{line}" if line is not None else shown
        raise DefFileError(
            shown, [f"{where}: importing the def file raised {type(exc).__name__}: {exc}"]
        ) from None
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(directory)
    return module


def _collect(module: types.ModuleType, shown: str) -> list[tuple[str, AgentDef]]:
    found: list[tuple[str, AgentDef]] = []
    problems: list[str] = []
    has_one = hasattr(module, "AGENT_DEF")
    has_many = hasattr(module, "AGENT_DEFS")
    if not has_one and not has_many:
        raise DefFileError(
            shown, [f"{shown}: defines neither AGENT_DEF (one AgentDef) nor AGENT_DEFS (a list)"]
        )
    if has_many:
        many = module.AGENT_DEFS
        if not isinstance(many, (list, tuple)):
            problems.append(
                f"{shown}: AGENT_DEFS: must be a list or tuple of AgentDef, got {_type_name(many)}"
            )
        else:
            for i, item in enumerate(many):
                if isinstance(item, AgentDef):
                    found.append((f"AGENT_DEFS[{i}]", item))
                else:
                    problems.append(
                        f"{shown}: AGENT_DEFS[{i}]: must be a harness.defs.types.AgentDef, got "
                        f"{_type_name(item)}"
                    )
    if has_one:
        one = module.AGENT_DEF
        if not isinstance(one, AgentDef):
            problems.append(
                f"{shown}: AGENT_DEF: must be a harness.defs.types.AgentDef, got {_type_name(one)}"
            )
        elif not any(d is one for _, d in found):
            found.insert(0, ("AGENT_DEF", one))
    if problems:
        raise DefFileError(shown, problems)
    if not found:
        raise DefFileError(shown, [f"{shown}: AGENT_DEFS is empty"])
    return found


def load_def_file(
    path: str | os.PathLike[str], *, reserved_ids: Iterable[str] = ()
) -> list[AgentDef]:
    """The defs of an adapter author's ``.py`` file, validated as data first.

    ``reserved_ids`` (e.g. the built-in ids) may not be reused. Raises
    :class:`DefFileError` listing every problem; never any other exception for a broken
    file (DEFCHECK-LOAD-001).
    """
    shown = os.fspath(path)
    file = Path(shown)
    if file.suffix != ".py":
        raise DefFileError(shown, [f"{shown}: not a Python file (expected a .py path)"])
    if not file.is_file():
        raise DefFileError(shown, [f"{shown}: no such file"])
    module = _import(file.resolve(), shown)
    found = _collect(module, shown)
    problems: list[str] = []
    seen: dict[str, str] = {}
    reserved = set(reserved_ids)
    for where, defn in found:
        try:
            problems += [f"{shown}: {p}" for p in validate_def_data(defn, where)]
        except Exception as exc:  # a value so odd that inspecting it raised
            problems.append(f"{shown}: {where}: cannot be validated: {type(exc).__name__}: {exc}")
            continue
        if isinstance(defn.id, str):
            if defn.id in seen:
                problems.append(
                    f"{shown}: {where}.id: duplicate id {defn.id!r} (also {seen[defn.id]})"
                )
            elif defn.id in reserved:
                problems.append(f"{shown}: {where}.id: {defn.id!r} is already a built-in id")
            seen.setdefault(defn.id, where)
    if problems:
        raise DefFileError(shown, problems)
    return [d for _, d in found]
