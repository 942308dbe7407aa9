"""Local agent profiles: every rule of ref §6 / seed 002 §5.6, one test each (or more).

Rules: PROFILE-VALID-001, PROFILE-PATH-001, PROFILE-FORMAT-001, PROFILE-FIELDS-001,
PROFILE-ID-001, PROFILE-ID-002, PROFILE-ID-003, PROFILE-BASE-001, PROFILE-BIN-001,
PROFILE-ARGS-001, PROFILE-ENV-001, PROFILE-NUL-001, PROFILE-MODELS-001, PROFILE-DEFAULTMODEL-001,
PROFILE-PROBEARGS-001, PROFILE-AUTH-001.

Most tests use two synthetic base defs so they do not depend on any real runtime's argv; the
two ports of upstream tests (ref §6) use the real built-ins through ``load_agent_defs``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.defs.local_profiles import (
    KNOWN_FIELDS,
    create_local_agent_def,
    parse_local_profiles,
    profiles_path,
    read_local_profiles,
)
from harness.defs.registry import BUILTIN_DEFS, load_agent_defs
from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    AuthProbe,
    BuildOptions,
    ModelOption,
    PromptDelivery,
    RuntimeContext,
)
from harness.errors import LocalProfileError

PATH = "/cfg/agents.local.json"


def _base_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    args = ["--base-run"]
    if options.model and options.model != "default":
        args += ["--model", options.model]
    return args


CLAUDE_LIKE = AgentDef(
    id="claude",
    name="Claude-like",
    bin="claude-like",
    fallback_bins=("claude-fork",),
    bin_env_key="CLAUDE_BIN",
    build_args=_base_args,
    stream_format="claude-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    env={"BASE_ONLY": "1"},
    auth_probe=AuthProbe(("auth", "status")),
    fallback_models=(DEFAULT_MODEL_OPTION, ModelOption("base-model", "Base model")),
    version_args=("--version",),
    help_args=("-p", "--help"),
    capability_flags={"--add-dir": "addDir"},
)
OTHER = AgentDef(
    id="other",
    name="Other",
    bin="other-cli",
    build_args=lambda p, i, d, o, c: ["other"],
    stream_format="plain",
)
BASES = (CLAUDE_LIKE, OTHER)


def parse(document: Any) -> tuple[list[AgentDef], list[LocalProfileError]]:
    return parse_local_profiles(document, BASES, path=PATH)


def one_def(entry: dict[str, Any]) -> AgentDef:
    defs, errors = parse([entry])
    assert errors == []
    assert len(defs) == 1
    return defs[0]


def one_error(entry: Any, *, index: int = 0) -> LocalProfileError:
    defs, errors = parse([entry])
    assert defs == []
    assert len(errors) == 1
    error = errors[0]
    assert (error.path, error.index) == (PATH, index)
    assert error.rule == "PROFILE-VALID-001"
    return error


def run(defn: AgentDef, model: str | None = None) -> list[str]:
    return defn.build_args("", [], [], BuildOptions(model=model), RuntimeContext())


def write(tmp_path: Path, document: Any) -> Path:
    target = tmp_path / "agents.local.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


# --- ports of the upstream tests (ref §6) ----------------------------------------------

ZCODE = {
    "id": "zcode",
    "name": "ZCode",
    "baseAgent": "claude",
    "bin": "zcode",
    "args": ["run"],
    "defaultModel": "zyb-claude",
    "models": [{"id": "zyb-claude", "label": "zyb-claude"}, {"id": "zyb-gpt", "label": "zyb-gpt"}],
    "env": {"ZCODE_ROUTE": "design", "RETRIES": 2},
}


@pytest.mark.rule("PROFILE-ARGS-001", "PROFILE-DEFAULTMODEL-001", "PROFILE-ENV-001")
def test_port_zcode_inherits_claude_and_pins_the_default_model(tmp_path: Path) -> None:
    target = write(tmp_path, {"agents": [ZCODE]})
    defs, errors = load_agent_defs(env={"OD_AGENT_PROFILES_CONFIG": str(target)})
    assert errors == []
    assert defs[: len(BUILTIN_DEFS)] == BUILTIN_DEFS
    [zcode] = defs[len(BUILTIN_DEFS) :]
    claude = next(d for d in BUILTIN_DEFS if d.id == "claude")
    assert (zcode.id, zcode.name, zcode.bin) == ("zcode", "ZCode", "zcode")
    assert zcode.prompt_delivery is claude.prompt_delivery is PromptDelivery.STDIN
    assert zcode.stream_format == "claude-stream-json"
    assert [m.id for m in zcode.fallback_models] == ["default", "zyb-claude", "zyb-gpt"]
    assert dict(zcode.env) == {"ZCODE_ROUTE": "design", "RETRIES": "2"}
    args = zcode.build_args("", [], [], BuildOptions(), RuntimeContext())
    assert args[:2] == ["run", "-p"]
    assert any(args[i : i + 2] == ["--model", "zyb-claude"] for i in range(len(args) - 1))


@pytest.mark.rule("PROFILE-VALID-001", "PROFILE-ENV-001")
def test_port_zcode_upstream_file_with_a_bad_env_key_is_reported(tmp_path: Path) -> None:
    """Upstream drops ``BAD-NAME`` silently; here the entry is rejected with one error."""
    upstream = {**ZCODE, "env": {**ZCODE["env"], "BAD-NAME": "ignored"}}  # type: ignore[dict-item]
    target = write(tmp_path, {"agents": [upstream]})
    defs, errors = load_agent_defs(profile_path=target, env={})
    assert defs == BUILTIN_DEFS
    [error] = errors
    assert (error.path, error.index, error.field) == (str(target), 0, "env.BAD-NAME")


@pytest.mark.rule("PROFILE-VALID-001", "PROFILE-ID-001", "PROFILE-ID-002", "PROFILE-BASE-001")
def test_port_invalid_profiles_are_reported_and_good_ones_kept(tmp_path: Path) -> None:
    target = write(
        tmp_path,
        [
            {"id": "claude", "bin": "duplicate"},
            {"id": "bad id with spaces"},
            {"id": "unknown-base", "baseAgent": "does-not-exist"},
            {"id": "ok-wrapper", "bin": "ok-wrapper"},
        ],
    )
    defs, errors = load_agent_defs(env={"HARNESS_AGENT_PROFILES": str(target)})
    profiles = defs[len(BUILTIN_DEFS) :]
    assert [d.id for d in profiles] == ["ok-wrapper"]
    assert profiles[0].bin == "ok-wrapper"
    assert [(e.index, e.field) for e in errors] == [(0, "id"), (1, "id"), (2, "baseAgent")]
    assert all(e.path == str(target) for e in errors)


# --- file, path, format --------------------------------------------------------------------


@pytest.mark.rule("PROFILE-PATH-001")
def test_profiles_path_priority() -> None:
    env = {"HARNESS_AGENT_PROFILES": "/a.json", "OD_AGENT_PROFILES_CONFIG": "/b.json"}
    assert profiles_path(env, "/explicit.json") == "/explicit.json"
    assert profiles_path(env, Path("/explicit.json")) == "/explicit.json"
    assert profiles_path(env) == "/a.json"
    assert (
        profiles_path({"HARNESS_AGENT_PROFILES": "  ", "OD_AGENT_PROFILES_CONFIG": " /b "}) == "/b"
    )
    assert profiles_path({"OD_AGENT_PROFILES_CONFIG": ""}) is None
    assert profiles_path({}) is None
    assert load_agent_defs(env={}) == (BUILTIN_DEFS, [])


@pytest.mark.rule("PROFILE-VALID-001")
def test_unreadable_file_gives_one_error_and_keeps_builtins(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    defs, errors = load_agent_defs(profile_path=missing, env={})
    assert defs == BUILTIN_DEFS
    [error] = errors
    assert (error.path, error.index, error.field) == (str(missing), None, None)
    assert "cannot read" in error.message


@pytest.mark.rule("PROFILE-VALID-001")
@pytest.mark.parametrize("text", ["{not json", '[{"id": "a", "env": {"X": NaN}}]', ""])
def test_invalid_json_gives_one_error(tmp_path: Path, text: str) -> None:
    target = tmp_path / "agents.local.json"
    target.write_text(text, encoding="utf-8")
    defs, errors = read_local_profiles(target, BASES)
    assert defs == []
    [error] = errors
    assert error.index is None
    assert "invalid JSON" in error.message


@pytest.mark.rule("PROFILE-FORMAT-001")
def test_array_and_agents_object_are_both_accepted() -> None:
    entry = {"id": "wrap", "bin": "wrap"}
    assert [d.id for d in parse([entry])[0]] == ["wrap"]
    assert [d.id for d in parse({"agents": [entry]})[0]] == ["wrap"]
    assert parse([]) == ([], [])


@pytest.mark.rule("PROFILE-FORMAT-001")
@pytest.mark.parametrize(
    ("document", "field"),
    [({"agents": {"id": "x"}}, "agents"), ({"profiles": []}, None), (42, None), ("x", None)],
)
def test_other_top_level_shapes_give_one_error(document: Any, field: str | None) -> None:
    defs, errors = parse(document)
    assert defs == []
    [error] = errors
    assert (error.index, error.field) == (None, field)


@pytest.mark.rule("PROFILE-VALID-001")
def test_a_non_object_entry_is_reported() -> None:
    defs, errors = parse(["zcode", {"id": "good", "bin": "good"}, ["x"]])
    assert [d.id for d in defs] == ["good"]
    assert [(e.index, e.field) for e in errors] == [(0, None), (2, None)]


# --- fields ---------------------------------------------------------------------------------


@pytest.mark.rule("PROFILE-FIELDS-001")
@pytest.mark.parametrize("field", ["streamFormat", "promptViaStdin", "defaultmodel", "description"])
def test_unknown_fields_are_rejected(field: str) -> None:
    error = one_error({"id": "wrap", field: "x"})
    assert error.field == field
    assert "unknown field" in error.message
    assert {"id", "args", "prefixArgs", "models", "fallbackModels"} <= KNOWN_FIELDS


@pytest.mark.rule("PROFILE-ID-001")
@pytest.mark.parametrize("bad", ["", "  ", "has space", "-dash", "x" * 81, "ünï", 7, None])
def test_id_must_match_the_pattern(bad: Any) -> None:
    entry = {"bin": "x"} if bad is None else {"id": bad, "bin": "x"}
    assert one_error(entry).field == "id"


@pytest.mark.rule("PROFILE-ID-001")
def test_id_is_trimmed() -> None:
    assert one_def({"id": "  zed.v2  "}).id == "zed.v2"


@pytest.mark.rule("PROFILE-ID-002")
@pytest.mark.parametrize("builtin", ["claude", "other", " other "])
def test_id_may_not_clash_with_a_builtin(builtin: str) -> None:
    error = one_error({"id": builtin})
    assert error.field == "id"
    assert "built-in" in error.message


@pytest.mark.rule("PROFILE-ID-003")
def test_later_duplicate_is_skipped_with_an_error() -> None:
    defs, errors = parse([{"id": "wrap", "bin": "first"}, {"id": "wrap", "bin": "second"}])
    assert [(d.id, d.bin) for d in defs] == [("wrap", "first")]
    [error] = errors
    assert (error.index, error.field) == (1, "id")
    assert "agents[0]" in error.message


@pytest.mark.rule("PROFILE-ID-003")
def test_a_rejected_entry_does_not_claim_its_id() -> None:
    defs, errors = parse([{"id": "wrap", "bin": ""}, {"id": "wrap", "bin": "second"}])
    assert [(d.id, d.bin) for d in defs] == [("wrap", "second")]
    assert [(e.index, e.field) for e in errors] == [(0, "bin")]


@pytest.mark.rule("PROFILE-BASE-001")
def test_base_agent_defaults_to_claude_and_can_be_any_builtin() -> None:
    default_base = one_def({"id": "wrap"})
    assert default_base.stream_format == "claude-stream-json"
    assert run(default_base) == ["--base-run"]
    other = one_def({"id": "wrap2", "baseAgent": " other "})
    assert other.stream_format == "plain"
    assert run(other) == ["other"]


@pytest.mark.rule("PROFILE-BASE-001")
def test_base_agent_must_be_a_builtin_and_profiles_do_not_chain() -> None:
    error = one_error({"id": "wrap", "baseAgent": "does-not-exist"})
    assert error.field == "baseAgent"
    assert "claude, other" in error.message
    defs, errors = parse([{"id": "first"}, {"id": "second", "baseAgent": "first"}])
    assert [d.id for d in defs] == ["first"]
    assert [(e.index, e.field) for e in errors] == [(1, "baseAgent")]
    assert one_error({"id": "wrap", "baseAgent": 3}).field == "baseAgent"


@pytest.mark.rule("PROFILE-BIN-001")
def test_bin_and_name_defaults_and_overrides() -> None:
    inherited = one_def({"id": "wrap"})
    assert (inherited.bin, inherited.name) == ("claude-like", "wrap")
    assert inherited.fallback_bins == ("claude-fork",)
    assert inherited.bin_env_key is None
    custom = one_def({"id": "wrap", "bin": " /opt/zcode/bin/zcode ", "name": " Z Code "})
    assert (custom.bin, custom.name) == ("/opt/zcode/bin/zcode", "Z Code")
    assert custom.fallback_bins == ()
    assert custom.bin_env_key is None


@pytest.mark.rule("PROFILE-BIN-001")
@pytest.mark.parametrize(("field", "value"), [("bin", ""), ("bin", 5), ("name", " "), ("name", [])])
def test_bin_and_name_must_be_non_empty_strings(field: str, value: Any) -> None:
    assert one_error({"id": "wrap", field: value}).field == field


@pytest.mark.rule("PROFILE-ARGS-001")
def test_args_are_prepended_to_the_base_argv() -> None:
    assert run(one_def({"id": "wrap", "args": ["run", "--fast"]})) == [
        "run",
        "--fast",
        "--base-run",
    ]
    assert run(one_def({"id": "wrap", "prefixArgs": ["x"]})) == ["x", "--base-run"]
    assert run(one_def({"id": "wrap", "args": []})) == ["--base-run"]


@pytest.mark.rule("PROFILE-ARGS-001")
@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"args": "run"}, "args"),
        ({"args": ["run", ""]}, "args[1]"),
        ({"args": ["run", 3]}, "args[1]"),
        ({"args": ["a"], "prefixArgs": ["b"]}, "prefixArgs"),
    ],
)
def test_bad_args_are_rejected(entry: dict[str, Any], field: str) -> None:
    assert one_error({"id": "wrap", **entry}).field == field


@pytest.mark.rule("PROFILE-ENV-001")
def test_env_values_are_stringified_like_javascript_and_replace_the_base_env() -> None:
    defn = one_def(
        {
            "id": "wrap",
            "env": {
                "S": "text",
                "I": 2,
                "F": 1.5,
                "WHOLE": 2.0,
                "T": True,
                "N": False,
                "BIG": 1e21,
                "_X1": "",
            },
        }
    )
    assert dict(defn.env) == {
        "S": "text",
        "I": "2",
        "F": "1.5",
        "WHOLE": "2",
        "T": "true",
        "N": "false",
        "BIG": "1e+21",
        "_X1": "",
    }
    assert dict(one_def({"id": "wrap"}).env) == {"BASE_ONLY": "1"}
    assert dict(one_def({"id": "wrap", "env": {}}).env) == {}


@pytest.mark.rule("PROFILE-ENV-001")
@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({"BAD-NAME": "x"}, "env.BAD-NAME"),
        ({"1ABC": "x"}, "env.1ABC"),
        ({"A B": "x"}, "env.A B"),
        ({"OK": None}, "env.OK"),
        ({"OK": {"nested": 1}}, "env.OK"),
        ({"OK": ["x"]}, "env.OK"),
        (["A=1"], "env"),
    ],
)
def test_bad_env_is_rejected(env: Any, field: str) -> None:
    assert one_error({"id": "wrap", "env": env}).field == field


@pytest.mark.rule("PROFILE-NUL-001")
@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"bin": "zc\0ode"}, "bin"),
        ({"name": "Z\0"}, "name"),
        ({"args": ["ok", "r\0un"]}, "args[1]"),
        ({"env": {"ROUTE": "de\0sign"}}, "env.ROUTE"),
        ({"env": {"RO\0UTE": "design"}}, "env.RO\\0UTE"),
        ({"models": [{"id": "m", "label": "L\0"}]}, "models[0].label"),
        ({"id": "wr\0ap"}, "id"),
    ],
)
def test_nul_anywhere_is_rejected(entry: dict[str, Any], field: str) -> None:
    error = one_error({"id": "wrap", **entry})
    assert error.field == field
    assert "NUL" in error.message


@pytest.mark.rule("PROFILE-MODELS-001")
def test_models_are_sanitized_deduplicated_and_follow_default() -> None:
    defn = one_def(
        {
            "id": "wrap",
            "models": [
                " zyb-claude ",
                {"id": "zyb-fast", "label": " Fast "},
                {"id": "openai/gpt-5:high"},
                "zyb-claude",
                "default",
                {"id": "blank-label", "label": "  "},
            ],
        }
    )
    assert defn.fallback_models == (
        DEFAULT_MODEL_OPTION,
        ModelOption("zyb-claude", "zyb-claude"),
        ModelOption("zyb-fast", "Fast"),
        ModelOption("openai/gpt-5:high", "openai/gpt-5:high"),
        ModelOption("blank-label", "blank-label"),
    )
    alias = one_def({"id": "wrap", "fallbackModels": ["a1"]})
    assert [m.id for m in alias.fallback_models] == ["default", "a1"]
    assert one_def({"id": "wrap", "models": []}).fallback_models == CLAUDE_LIKE.fallback_models
    assert one_def({"id": "wrap"}).fallback_models == CLAUDE_LIKE.fallback_models


@pytest.mark.rule("PROFILE-MODELS-001")
@pytest.mark.parametrize(
    ("models", "field"),
    [
        ("zyb", "models"),
        (["-bad"], "models[0]"),
        (["has space"], "models[0]"),
        (["x" * 201], "models[0]"),
        ([7], "models[0]"),
        ([{"label": "no id"}], "models[0].id"),
        ([{"id": "m", "label": 3}], "models[0].label"),
        ([{"id": "m", "extra": 1}], "models[0].extra"),
    ],
)
def test_bad_models_are_rejected(models: Any, field: str) -> None:
    assert one_error({"id": "wrap", "models": models}).field == field
    both = one_error({"id": "wrap", "models": ["a"], "fallbackModels": ["b"]})
    assert both.field == "fallbackModels"


@pytest.mark.rule("PROFILE-DEFAULTMODEL-001")
def test_default_model_is_injected_only_when_the_run_has_none() -> None:
    defn = one_def({"id": "wrap", "defaultModel": " zyb-claude "})
    assert run(defn) == ["--base-run", "--model", "zyb-claude"]
    assert run(defn, "default") == ["--base-run", "--model", "zyb-claude"]
    assert run(defn, "picked") == ["--base-run", "--model", "picked"]
    assert run(one_def({"id": "plain-wrap"})) == ["--base-run"]


@pytest.mark.rule("PROFILE-DEFAULTMODEL-001")
@pytest.mark.parametrize("bad", ["", "bad model", 5, None])
def test_bad_default_model_is_rejected(bad: Any) -> None:
    assert one_error({"id": "wrap", "defaultModel": bad}).field == "defaultModel"


@pytest.mark.rule("PROFILE-PROBEARGS-001")
def test_version_and_help_args_replace_the_base_ones() -> None:
    defn = one_def({"id": "wrap", "versionArgs": ["version"], "helpArgs": ["help", "run"]})
    assert defn.version_args == ("version",)
    assert defn.help_args == ("help", "run")
    assert dict(defn.capability_flags) == {"--add-dir": "addDir"}
    kept = one_def({"id": "wrap", "versionArgs": [], "helpArgs": []})
    assert (kept.version_args, kept.help_args) == (("--version",), ("-p", "--help"))
    assert one_error({"id": "wrap", "versionArgs": ["-v", ""]}).field == "versionArgs[1]"
    assert one_error({"id": "wrap", "helpArgs": "--help"}).field == "helpArgs"


@pytest.mark.rule("PROFILE-AUTH-001")
def test_prefix_args_drop_the_base_auth_probe() -> None:
    assert one_def({"id": "wrap", "args": ["run"]}).auth_probe is None
    assert one_def({"id": "wrap", "prefixArgs": ["run"]}).auth_probe is None
    assert one_def({"id": "wrap"}).auth_probe == AuthProbe(("auth", "status"))
    assert one_def({"id": "wrap", "args": []}).auth_probe == AuthProbe(("auth", "status"))


@pytest.mark.rule("PROFILE-VALID-001")
def test_one_error_per_entry_and_good_entries_survive() -> None:
    defs, errors = parse(
        [
            {"id": "a", "bin": "", "name": "", "env": {"BAD-KEY": None}},
            {"id": "b"},
            {"id": "c", "streamFormat": "x", "args": [1]},
        ]
    )
    assert [d.id for d in defs] == ["b"]
    assert [e.index for e in errors] == [0, 2]
    assert str(errors[0]).startswith("[PROFILE-VALID-001] /cfg/agents.local.json: agents[0].")


@pytest.mark.rule("PROFILE-VALID-001")
def test_create_local_agent_def_raises_a_typed_error() -> None:
    with pytest.raises(LocalProfileError) as info:
        create_local_agent_def({"id": "bad id"}, BASES, path=PATH, index=4)
    assert (info.value.path, info.value.index, info.value.field) == (PATH, 4, "id")
    assert create_local_agent_def({"id": "ok"}, BASES).id == "ok"
