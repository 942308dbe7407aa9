"""The argv grammar of each ACP agent's CLI.

Design: docs/design/fakes.md#fake_clis.acp.grammars
"""

from __future__ import annotations

from fake_clis import jsonio
from fake_clis.argv import Grammar
from fake_clis.base import FakeRun
from fake_clis.goflag import AnyFlag, go_flag_parse

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "VELA_MODELS",
    "devin_check",
    "devin_grammar",
    "hermes_grammar",
    "kilo_grammar",
    "kimi_grammar",
    "kiro_grammar",
    "reasonix_check",
    "reasonix_grammar",
    "trae_grammar",
    "usage_text",
    "vela_grammar",
    "vela_models_output",
    "vibe_grammar",
]


def _g(
    flags: Mapping[str, int],
    aliases: Mapping[str, str] | None = None,
    subcommands: Mapping[str, Grammar] | None = None,
    positionals: tuple[int, int] = (0, 0),
) -> Grammar:
    return Grammar(
        flags=dict(flags),
        aliases=dict(aliases or {}),
        subcommands=dict(subcommands or {}),
        positionals=positionals,
    )


_HELP = {"--help": 0}
_HELP_ALIAS = {"-h": "--help"}


def vela_grammar(old: bool) -> Grammar:
    run = _g({**_HELP, "--runtime": 1, "--model": 1, "--cwd": 1}, _HELP_ALIAS)
    agent = _g(_HELP, _HELP_ALIAS, {"run": run})
    listing = _g({**_HELP, "--format": 1}, _HELP_ALIAS)
    model = _g(_HELP, _HELP_ALIAS, {"list": listing})
    return _g(
        {**_HELP, "--version": 0},
        {**_HELP_ALIAS, "-V": "--version"},
        {"agent": agent, "model": model},
    )


_DEVIN_GLOBAL = {"--permission-mode": 1, "--respect-workspace-trust": 1, "--model": 1}


def devin_grammar(old: bool) -> Grammar:
    # commander: program options are recognised before and after the subcommand.
    acp = _g({**_HELP, **_DEVIN_GLOBAL}, _HELP_ALIAS)
    update = _g(_HELP, _HELP_ALIAS)
    return _g(
        {**_HELP, **_DEVIN_GLOBAL, "--version": 0},
        {**_HELP_ALIAS, "-v": "--version"},
        {"acp": acp, "update": update},
    )


def hermes_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, "--accept-hooks": 0, "--yolo": 0}, _HELP_ALIAS)
    return _g(
        {**_HELP, "--version": 0, "--accept-hooks": 0, "--yolo": 0},
        _HELP_ALIAS,
        {"acp": acp},
    )


def kimi_grammar(old: bool) -> Grammar:
    acp = _g(_HELP, _HELP_ALIAS)
    return _g(
        {
            **_HELP,
            "--version": 0,
            "--print": 0,
            "--output-format": 1,
            "--prompt": 1,
            "--model": 1,
            "--continue": 0,
            "--yolo": 0,
        },
        {**_HELP_ALIAS, "-V": "--version", "-p": "--prompt", "-m": "--model", "-C": "--continue"},
        {"acp": acp},
    )


def kiro_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, "--agent": 1, "--model": 1, "--trust-all-tools": 0}, _HELP_ALIAS)
    return _g(
        {**_HELP, "--version": 0, "--verbose": 0},
        {**_HELP_ALIAS, "-V": "--version", "-v": "--verbose"},
        {"acp": acp},
    )


_KILO_GLOBAL = {"--print-logs": 0, "--log-level": 1}


def kilo_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, **_KILO_GLOBAL, "--cwd": 1, "--port": 1, "--hostname": 1}, _HELP_ALIAS)
    run = _g(
        {**_HELP, **_KILO_GLOBAL, "--format": 1, "--model": 1, "--continue": 0, "--session": 1},
        {**_HELP_ALIAS, "-m": "--model", "-c": "--continue", "-s": "--session"},
        positionals=(0, -1),
    )
    return _g(
        {**_HELP, **_KILO_GLOBAL, "--version": 0},
        {**_HELP_ALIAS, "-v": "--version"},
        {"acp": acp, "run": run},
    )


#: reasonix ``acp`` flags (``internal/cli/acp.go``), parsed by :func:`go_flag_parse`.
_REASONIX_ACP_FLAGS = {
    "model": "string",
    "profile": "string",
    "planner": "string",
    "sandbox-network": "string",
    "sandbox-bash": "string",
    "workspace-only": "bool",
    "h": "bool",
    "help": "bool",
}


def reasonix_grammar(old: bool) -> Grammar:
    acp = Grammar(flags=AnyFlag(), positionals=(0, -1))
    return _g({**_HELP, "--version": 0}, {**_HELP_ALIAS, "-v": "--version"}, {"acp": acp})


def reasonix_check(run: FakeRun) -> tuple[str, int] | None:
    index = run.argv.index("acp") + 1 if "acp" in run.argv else len(run.argv)
    parsed = go_flag_parse(_REASONIX_ACP_FLAGS, run.argv[index:], "acp")
    if isinstance(parsed, tuple):
        return parsed
    if parsed.rest:
        return f"Error: unexpected arguments: {parsed.rest!r}", 2
    choices: dict[str, tuple[str, ...]] = {
        "planner": ("auto", "off"),
        "sandbox-bash": ("auto", "enforce"),
        "sandbox-network": ("auto", "on", "off"),
    }
    for name, allowed in choices.items():
        value = parsed.values.get(name)
        if value is not None and value.strip().lower() not in allowed:
            return f"Error: {name} must be {' or '.join(allowed)}", 2
    run.record["acp_flags"] = parsed.values
    return None


def devin_check(run: FakeRun) -> tuple[str, int] | None:
    value = run.parsed.value("--respect-workspace-trust")
    if value is not None and value not in ("true", "false"):
        return (
            f"error: option '--respect-workspace-trust <bool>' argument '{value}' is invalid. "
            "Allowed choices are true, false.",
            1,
        )
    return None


def trae_grammar(old: bool) -> Grammar:
    serve = _g({**_HELP, "--yolo": 0, "--model": 1}, _HELP_ALIAS)
    acp = _g(_HELP, _HELP_ALIAS, {"serve": serve})
    return _g({**_HELP, "--version": 0}, {**_HELP_ALIAS, "-v": "--version"}, {"acp": acp})


def vibe_grammar(old: bool) -> Grammar:
    return _g({**_HELP, "--version": 0}, _HELP_ALIAS)


def usage_text(prog: str, usage: str, options: Sequence[tuple[str, str]]) -> str:
    lines = [f"Usage: {prog} {usage}", "", "Options:"]
    lines += [f"  {flag:<34} {text}" for flag, text in options]
    return "\n".join(lines)


VELA_MODELS = (
    ("anthropic/claude-sonnet-4-5", "Claude Sonnet 4.5"),
    ("openai/gpt-5.1", "GPT-5.1"),
    ("opencode/big-pickle", "Big Pickle"),
)


def vela_models_output() -> str:
    data = [{"id": m, "name": n, "provider": m.split("/", 1)[0]} for m, n in VELA_MODELS]
    return jsonio.dumps({"source": "remote", "data": data}) + "\n"
