"""User-defined local agent profiles: a built-in def re-skinned by a few lines of JSON.

Seed 002 §5.6 and ref §6 (upstream ``runtimes/local-profiles.ts``): a profile picks a base
built-in (default ``claude``), overrides its binary, name, env, model list and probe args, and
prepends its own arguments to the base argv. Everything else (stream format, parser, prompt
delivery, budget, capability probe, resume style, ...) is inherited from the base.

Where the file comes from (rule PROFILE-PATH-001): an explicit path, else the first non-blank of
``HARNESS_AGENT_PROFILES`` and upstream's ``OD_AGENT_PROFILES_CONFIG`` (ref §6). With neither,
there are no profiles: unlike upstream, the harness never reads a file under the real home.

Rules: CLIERR-PROFILES-001, PROFILE-ARGS-001, PROFILE-BASE-001, PROFILE-BIN-001,
PROFILE-DEFAULTMODEL-001, PROFILE-ENV-001, PROFILE-FORMAT-001, PROFILE-MODELS-001,
PROFILE-PROBEARGS-001.
Design: docs/design/defs.md#harness.defs.local_profiles
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    ID_PATTERN,
    AgentDef,
    BuildArgs,
    BuildOptions,
    ModelOption,
    RuntimeContext,
)
from harness.errors import BadInputError, LocalProfileError
from harness.inputs import check_json_depth, decode_utf8

__all__ = [
    "DEFAULT_BASE_AGENT",
    "KNOWN_FIELDS",
    "PROFILES_ENV_VARS",
    "create_local_agent_def",
    "parse_local_profiles",
    "profiles_path",
    "read_local_profiles",
    "sanitize_model_id",
]

#: Env vars naming the profiles file, in priority order (ref §6 for the upstream name).
PROFILES_ENV_VARS: tuple[str, ...] = ("HARNESS_AGENT_PROFILES", "OD_AGENT_PROFILES_CONFIG")

#: ref §6: ``baseAgent`` defaults to ``claude``.
DEFAULT_BASE_AGENT = "claude"

#: Every field a profile entry may carry (PROFILE-FIELDS-001).
KNOWN_FIELDS: frozenset[str] = frozenset(
    {
        "id",
        "name",
        "baseAgent",
        "bin",
        "args",
        "prefixArgs",
        "env",
        "models",
        "fallbackModels",
        "defaultModel",
        "versionArgs",
        "helpArgs",
    }
)

#: ref §6 / seed 002 §5.6: env keys must be shell identifiers.
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: ref §6 ``sanitizeCustomModel``: 1-200 chars of this shape after trimming.
_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")
_MODEL_ID_MAX = 200


class _EntryError(Exception):
    """Internal: the first problem of one entry (field, problem)."""

    def __init__(self, field: str | None, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


# --- where the file is --------------------------------------------------------


def profiles_path(
    env: Mapping[str, str], explicit: str | os.PathLike[str] | None = None
) -> str | None:
    """The profiles file to read, or ``None`` for "no profiles" (PROFILE-PATH-001).

    ``explicit`` wins; otherwise the first of :data:`PROFILES_ENV_VARS` whose trimmed value is
    non-empty (ref §6: ``OD_AGENT_PROFILES_CONFIG`` "trimmed, if non-empty").
    """
    if explicit is not None:
        return os.fspath(explicit)
    for key in PROFILES_ENV_VARS:
        value = env.get(key, "").strip()
        if value:
            return value
    return None


# --- reading --------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    # JSON has no NaN/Infinity; Python's json accepts them unless told otherwise.
    raise ValueError(f"{name} is not valid JSON")


def read_local_profiles(
    path: str | os.PathLike[str], base_defs: Sequence[AgentDef]
) -> tuple[list[AgentDef], list[LocalProfileError]]:
    """Read and validate one profiles file.

    An unreadable file or invalid JSON gives no defs and exactly one error (PROFILE-VALID-001).
    """
    where = os.fspath(path)
    try:
        with open(where, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        problem = f"cannot read the file: {exc.strerror or exc}"
        return [], [LocalProfileError(where, None, None, problem)]
    try:
        text = decode_utf8(data.removeprefix(codecs.BOM_UTF8), where)
        # json and _find_nul recurse once per level (CLIERR-JSON-DEPTH-001).
        check_json_depth(text, where)
    except BadInputError as exc:
        problem = f"{exc.problem} (line {exc.line} column {exc.column})"
        return [], [LocalProfileError(where, None, None, problem)]
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        return [], [LocalProfileError(where, None, None, f"invalid JSON: {exc}")]
    return parse_local_profiles(document, base_defs, path=where)


def parse_local_profiles(
    document: Any, base_defs: Sequence[AgentDef], *, path: str
) -> tuple[list[AgentDef], list[LocalProfileError]]:
    """Validate a parsed profiles document against ``base_defs`` (pure; no IO).

    Returns the accepted defs in file order and one error per rejected entry.
    """
    if isinstance(document, list):
        entries: list[Any] = document
    elif isinstance(document, dict) and "agents" in document:
        agents = document["agents"]
        if not isinstance(agents, list):
            return [], [LocalProfileError(path, None, "agents", "must be a JSON array")]
        entries = agents
    else:
        # ref §6: "a JSON array of profiles, or {"agents": [...]}; anything else" is rejected.
        problem = 'expected a JSON array of profiles or an object {"agents": [...]}'
        return [], [LocalProfileError(path, None, None, problem)]

    bases = {d.id: d for d in base_defs}
    claimed: dict[str, int] = {}
    defs: list[AgentDef] = []
    errors: list[LocalProfileError] = []
    for index, entry in enumerate(entries):
        try:
            defs.append(_create(entry, bases, claimed, index))
        except _EntryError as exc:
            errors.append(LocalProfileError(path, index, exc.field, exc.problem))
    return defs, errors


def create_local_agent_def(
    entry: Any, base_defs: Sequence[AgentDef], *, path: str = "<profile>", index: int = 0
) -> AgentDef:
    """One profile entry -> an :class:`AgentDef`; raises :class:`LocalProfileError`."""
    try:
        return _create(entry, {d.id: d for d in base_defs}, {}, index)
    except _EntryError as exc:
        raise LocalProfileError(path, index, exc.field, exc.problem) from None


# --- one entry --------------------------------------------------------------------


def _create(
    entry: Any, bases: Mapping[str, AgentDef], claimed: dict[str, int], index: int
) -> AgentDef:
    if not isinstance(entry, dict):
        raise _EntryError(None, "a profile must be a JSON object")
    # seed 002 §5.6 / ref §6 (``local-profiles.ts:66``): no string may contain NUL
    # (PROFILE-NUL-001).
    nul_at = _find_nul(entry, "")
    if nul_at is not None:
        raise _EntryError(nul_at, "contains a NUL character")
    unknown = sorted(key for key in entry if key not in KNOWN_FIELDS)
    if unknown:
        raise _EntryError(unknown[0], f"unknown field; known fields: {sorted(KNOWN_FIELDS)}")

    agent_id = _profile_id(entry, bases, claimed)
    base = _base_def(entry, bases)
    if "args" in entry and "prefixArgs" in entry:
        raise _EntryError("prefixArgs", "give either args or prefixArgs, not both")
    if "models" in entry and "fallbackModels" in entry:
        raise _EntryError("fallbackModels", "give either models or fallbackModels, not both")

    custom_bin = _optional_text(entry, "bin")
    name = _optional_text(entry, "name") or agent_id
    args_key = "prefixArgs" if "prefixArgs" in entry else "args"
    prefix = _string_list(entry, args_key) if args_key in entry else ()
    env = _env(entry["env"]) if "env" in entry else None
    models_key = "fallbackModels" if "fallbackModels" in entry else "models"
    models = _models(entry[models_key], models_key) if models_key in entry else ()
    default_model = _default_model(entry) if "defaultModel" in entry else None
    version_args = _string_list(entry, "versionArgs") if "versionArgs" in entry else ()
    help_args = _string_list(entry, "helpArgs") if "helpArgs" in entry else ()

    # The id is taken only once the whole entry is valid, so a rejected entry never hides a
    # later good one; the first *accepted* entry with an id wins (PROFILE-ID-003).
    claimed[agent_id] = index

    changes: dict[str, Any] = {
        "id": agent_id,
        "name": name,
        "build_args": _prefixed_build_args(prefix, default_model, base.build_args),
        "bin_env_key": None,
    }
    if custom_bin is not None:
        changes.update(
            bin=custom_bin, fallback_bins=(), app_bundle_paths=(), node_wrapper_native=None
        )
    if env is not None:
        changes["env"] = env  # ref §6: replaces the base env
    if models:
        changes["fallback_models"] = (DEFAULT_MODEL_OPTION, *models)
    if version_args:
        changes["version_args"] = version_args
    if help_args:
        changes["help_args"] = help_args
    if prefix:
        # seed 002 §5.6: "有 prefixArgs 时丢弃 base 的 authProbe" (PROFILE-AUTH-001).
        changes["auth_probe"] = None
    return dataclasses.replace(base, **changes)


def _profile_id(
    entry: Mapping[str, Any], bases: Mapping[str, AgentDef], claimed: Mapping[str, int]
) -> str:
    raw = entry.get("id")
    if not isinstance(raw, str):
        raise _EntryError("id", "must be a string")
    agent_id = raw.strip()
    if not ID_PATTERN.match(agent_id):
        raise _EntryError("id", f"must match {ID_PATTERN.pattern}")  # PROFILE-ID-001
    if agent_id in bases:
        raise _EntryError("id", "clashes with a built-in agent id")  # PROFILE-ID-002
    if agent_id in claimed:
        first = claimed[agent_id]
        problem = f"duplicates the id of agents[{first}]; the later entry is skipped"
        raise _EntryError("id", problem)  # PROFILE-ID-003
    return agent_id


def _base_def(entry: Mapping[str, Any], bases: Mapping[str, AgentDef]) -> AgentDef:
    raw = entry.get("baseAgent", DEFAULT_BASE_AGENT)
    if not isinstance(raw, str) or not raw.strip():
        raise _EntryError("baseAgent", "must be a non-empty string")
    base_id = raw.strip()
    base = bases.get(base_id)
    if base is None:
        known = ", ".join(bases)
        raise _EntryError("baseAgent", f"unknown base agent; built-in ids: {known}")
    return base


def _optional_text(entry: Mapping[str, Any], key: str) -> str | None:
    if key not in entry:
        return None
    raw = entry[key]
    if not isinstance(raw, str) or not raw.strip():
        raise _EntryError(key, "must be a non-empty string")
    return raw.strip()


def _string_list(entry: Mapping[str, Any], key: str) -> tuple[str, ...]:
    raw = entry[key]
    if not isinstance(raw, list):
        raise _EntryError(key, "must be a JSON array of strings")
    for position, item in enumerate(raw):
        if not isinstance(item, str) or item == "":
            raise _EntryError(f"{key}[{position}]", "must be a non-empty string")
    return tuple(raw)


def _js_string(value: bool | int | float) -> str:
    """``String(v)`` as JavaScript prints a JSON scalar (``true``, ``2``, ``1.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"  # JS prints -0 as "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)  # shortest round-trip digits, as JS
    mantissa, sep, exponent = text.partition("e")
    if sep:
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def _env(raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise _EntryError("env", "must be a JSON object")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not _ENV_KEY.match(key):
            raise _EntryError(f"env.{key}", f"key is not a shell identifier ({_ENV_KEY.pattern})")
        if isinstance(value, str):
            out[key] = value
        elif isinstance(value, (bool, int)) or (isinstance(value, float) and math.isfinite(value)):
            out[key] = _js_string(value)
        else:
            raise _EntryError(f"env.{key}", "value must be a string, number or boolean")
    return out


def sanitize_model_id(raw: Any) -> str | None:
    """ref §6 ``sanitizeCustomModel``: trimmed, 1-200 chars, ``[A-Za-z0-9][A-Za-z0-9._/:@-]*``."""
    if not isinstance(raw, str):
        return None
    model_id = raw.strip()
    if not model_id or len(model_id) > _MODEL_ID_MAX or not _MODEL_ID.match(model_id):
        return None
    return model_id


def _models(raw: Any, key: str) -> tuple[ModelOption, ...]:
    if not isinstance(raw, list):
        raise _EntryError(key, "must be a JSON array")
    out: list[ModelOption] = []
    seen = {DEFAULT_MODEL_OPTION.id}
    for position, item in enumerate(raw):
        where = f"{key}[{position}]"
        label: str | None = None
        if isinstance(item, dict):
            extra = sorted(k for k in item if k not in ("id", "label"))
            if extra:
                raise _EntryError(f"{where}.{extra[0]}", "unknown field; known fields: id, label")
            model_id = sanitize_model_id(item.get("id"))
            if model_id is None:
                raise _EntryError(f"{where}.id", f"must be a model id ({_MODEL_ID.pattern})")
            if "label" in item:
                raw_label = item["label"]
                if not isinstance(raw_label, str):
                    raise _EntryError(f"{where}.label", "must be a string")
                label = raw_label.strip() or None
        else:
            model_id = sanitize_model_id(item)
            if model_id is None:
                raise _EntryError(where, f"must be a model id ({_MODEL_ID.pattern}) or an object")
        if model_id in seen:
            continue  # a repeated id (or "default") adds nothing
        seen.add(model_id)
        out.append(ModelOption(model_id, label or model_id))
    return tuple(out)


def _default_model(entry: Mapping[str, Any]) -> str:
    model_id = sanitize_model_id(entry["defaultModel"])
    if model_id is None:
        raise _EntryError("defaultModel", f"must be a model id ({_MODEL_ID.pattern})")
    return model_id


def _find_nul(value: Any, where: str) -> str | None:
    """Path of the first string (key or value) holding ``\\0``, or ``None``."""
    if isinstance(value, str):
        if "\0" not in value:
            return None
        return where or "(value)"
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if "\0" in key:
                return path.replace("\0", "\\0")
            found = _find_nul(item, path)
            if found is not None:
                return found
    if isinstance(value, list):
        for position, item in enumerate(value):
            found = _find_nul(item, f"{where}[{position}]")
            if found is not None:
                return found
    return None


def _prefixed_build_args(
    prefix: tuple[str, ...], default_model: str | None, base_build: BuildArgs
) -> BuildArgs:
    """``[*prefix, *base.build_args(...)]`` with ``defaultModel`` injected (ref §6)."""

    def build_args(
        prompt: str,
        image_paths: Sequence[str],
        extra_allowed_dirs: Sequence[str],
        options: BuildOptions,
        context: RuntimeContext,
    ) -> list[str]:
        if default_model is not None and options.model in (None, "", DEFAULT_MODEL_OPTION.id):
            options = dataclasses.replace(options, model=default_model)
        return [*prefix, *base_build(prompt, image_paths, extra_allowed_dirs, options, context)]

    return build_args
