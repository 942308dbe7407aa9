"""The ACP agents the fakes stand in for: each one's differences, and its entry point."""

from __future__ import annotations

from fake_clis.acp.agent import Agent
from fake_clis.acp.grammars import (
    VELA_MODELS,
    devin_check,
    devin_grammar,
    hermes_grammar,
    kilo_grammar,
    kimi_grammar,
    kiro_grammar,
    reasonix_check,
    reasonix_grammar,
    trae_grammar,
    usage_text,
    vela_grammar,
    vela_models_output,
    vibe_grammar,
)
from fake_clis.acp.server import AcpServer
from fake_clis.acp.wire import CONTINUE_CAPABILITY
from fake_clis.base import FakeRun

# A fake starts hundreds of times per conform: no dataclasses, typing, pathlib or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["AGENTS", "entry_point"]


AGENTS: tuple[Agent, ...] = (
    Agent(
        agent_id="amr",
        prog="vela",
        version="0.9.4",
        version_output="0.9.4",
        style="commander",
        grammar=vela_grammar,
        help_text=usage_text(
            "vela",
            "[options] [command]",
            [
                ("-V, --version", "output the version number"),
                ("agent run --runtime <name>", "run an agent runtime over ACP stdio"),
                ("model list --format <fmt>", "list models (json|text)"),
                ("-h, --help", "display help for command"),
            ],
        ),
        acp_command=("agent", "run"),
        info_name="vela",
        info_title="Vela (AMR)",
        auth_methods=({"id": "vela-login", "name": "Log in with Vela"},),
        model_channel="models",
        models=VELA_MODELS,
        session_prefix="ses_",
        default_model_env="VELA_DEFAULT_MODEL",
        # seed 000 "AMR compaction continuation (ACP extension v1)".
        capability_meta={CONTINUE_CAPABILITY: {"version": 1}},
        native_continue=True,
        models_args=("model", "list", "--format", "json"),
        models_output=vela_models_output(),
    ),
    Agent(
        agent_id="devin",
        prog="devin",
        version="2026.5.1-1",
        version_output="devin 2026.5.1-1",
        style="commander",
        grammar=devin_grammar,
        help_text=usage_text(
            "devin",
            "[options] [command]",
            [
                ("--permission-mode <mode>", "tool permission mode (default, dangerous)"),
                ("--respect-workspace-trust <bool>", "honour workspace trust prompts"),
                ("--model <model>", "model to use"),
                ("-v, --version", "output the version number"),
                ("acp", "run Devin as an Agent Client Protocol server"),
                ("update", "update Devin for Terminal"),
            ],
        ),
        acp_command=("acp",),
        info_name="devin",
        info_title="Devin for Terminal",
        auth_methods=({"id": "devin-login", "name": "Log in to Devin"},),
        model_channel="models",
        models=(("swe-1.5", "SWE-1.5"), ("claude-sonnet-4.5", "Claude Sonnet 4.5")),
        # seed 000 §5.4: "--permission-mode dangerous avoids headless approval prompts".
        auto_approve=lambda p: p.value("--permission-mode") == "dangerous",
        check_argv=devin_check,
    ),
    Agent(
        agent_id="hermes",
        prog="hermes",
        version="0.8.0",
        version_output="Hermes Agent v0.8.0",
        style="argparse",
        grammar=hermes_grammar,
        help_text=usage_text(
            "hermes",
            "[-h] [--version] [--accept-hooks] [--yolo] {acp} ...",
            [
                ("--accept-hooks", "auto-approve unseen shell hooks"),
                ("--yolo", "approve every tool call"),
                ("acp", "run Hermes as an ACP server"),
            ],
        ),
        acp_command=("acp",),
        info_name="hermes-agent",
        info_title="Hermes Agent",
        auth_methods=(),
        model_channel="models",
        models=(
            ("anthropic/claude-opus-4.5", "Claude Opus 4.5"),
            ("nous/hermes-4-405b", "Hermes 4"),
        ),
        auto_approve=lambda p: p.has("--yolo"),
        # Live differential against hermes-agent 0.19.0 (recordings/real/hermes/api_error
        # .jsonl): after its retries the error is an agent message and the turn ends.
        api_error_reply="API call failed after 3 retries: HTTP {status}: {message}",
        api_error_exit=0,
        # recordings/real/hermes/happy.jsonl: a write is a `tool_call` with no rawInput and
        # no update after it, asked for under its own id; the reply after a tool starts with
        # a blank line ("\n\nDone: ...").
        tool_style="hermes",
        text_separator="\n\n",
        permission_options=(
            ("allow_once", "Allow edit", "allow_once"),
            ("deny", "Deny", "reject_once"),
        ),
    ),
    Agent(
        agent_id="kimi",
        prog="kimi",
        version="0.36.2",
        version_output="kimi, version 0.36.2",
        style="argparse",
        grammar=kimi_grammar,
        help_text=usage_text(
            "kimi",
            "[OPTIONS] COMMAND [ARGS]...",
            [
                ("-V, --version", "show the version and exit"),
                ("--print", "run non-interactively"),
                ("--output-format [text|stream-json]", "print-mode output format"),
                ("-p, --prompt TEXT", "the prompt (print mode)"),
                ("-m, --model TEXT", "model to use"),
                ("-C, --continue", "continue the previous session"),
                ("--yolo", "approve every tool call"),
                ("acp", "run Kimi CLI as an ACP server"),
            ],
        ),
        acp_command=("acp",),
        info_name="Kimi CLI",
        info_title="Kimi CLI",
        auth_methods=({"id": "login", "name": "Login with Kimi account"},),
        model_channel="models",
        models=(("kimi-for-coding", "Kimi For Coding"), ("kimi-k2-turbo-preview", "Kimi K2 Turbo")),
        stdio_removed_in="0.37.0",
        auto_approve=lambda p: p.has("--yolo"),
        # Live differential against kimi-cli 1.51.0 (recordings/real/kimi/api_error.jsonl):
        # a failed model call ends the prompt with end_turn and no message at all.
        api_error_reply="",
        # Nor does it exit when its client closes stdin: every live run
        # (recordings/real/kimi/*.jsonl) ended by the host's SIGTERM.
        exits_at_eof=False,
        # recordings/real/kimi/happy.jsonl, shell.jsonl: tool calls carry no kind and no
        # rawInput; titles "WriteFile" / "Shell", then "WriteFile: <path>" / "Shell: <cmd>".
        tool_style="kimi",
        permission_options=(
            ("approve", "Approve once", "allow_once"),
            ("approve_for_session", "Approve for this session", "allow_always"),
            ("reject", "Reject", "reject_once"),
        ),
    ),
    Agent(
        agent_id="kiro",
        prog="kiro-cli",
        version="1.20.0",
        version_output="kiro-cli 1.20.0",
        style="clap",
        grammar=kiro_grammar,
        help_text=usage_text(
            "kiro-cli",
            "[OPTIONS] [COMMAND]",
            [
                ("-v, --verbose", "increase logging verbosity"),
                ("-V, --version", "print version"),
                ("acp", "run as an Agent Client Protocol server"),
                ("acp --agent <AGENT>", "agent profile to use"),
                ("acp --trust-all-tools", "allow every tool without asking"),
            ],
        ),
        acp_command=("acp",),
        info_name="kiro-cli",
        info_title="Kiro CLI",
        auth_methods=({"id": "kiro-login", "name": "Log in with Kiro"},),
        model_channel="models",
        models=(("auto", "Auto"), ("claude-sonnet-4.5", "Claude Sonnet 4.5")),
        turn_end_update=True,
        auto_approve=lambda p: p.has("--trust-all-tools"),
    ),
    Agent(
        agent_id="kilo",
        prog="kilo",
        version="7.7.7",
        version_output="7.7.7",
        style="yargs",
        grammar=kilo_grammar,
        help_text=usage_text(
            "kilo",
            "[command]",
            [
                ("kilo acp", "start ACP (Agent Client Protocol) server"),
                ("kilo run [message..]", "run kilo with a message"),
                ("--print-logs", "print logs to stderr"),
                ("--log-level", "log level"),
                ("-v, --version", "show version number"),
            ],
        ),
        acp_command=("acp",),
        info_name="Kilo",
        info_title="Kilo Code",
        auth_methods=({"id": "kilo-login", "name": "Log in to Kilo Gateway"},),
        model_channel="config",
        models=(
            ("kilo/anthropic/claude-sonnet-4.5", "Claude Sonnet 4.5"),
            ("kilo/openai/gpt-5.1", "GPT-5.1"),
            ("kilo/x-ai/grok-code-fast-1", "Grok Code Fast 1"),
        ),
        auto_approve=lambda p: True,
        mcp_http=True,
        session_prefix="ses_",
        # Live differential against kilo 7.7.7 (recordings/real/kilo/shell.jsonl): write's
        # rawInput is {filePath, content}; bash's is {command, cwd} with the cwd in
        # ``locations``; after a failed prompt it still exits 0 at EOF.
        write_path_key="filePath",
        shell_locations_cwd=True,
        api_error_exit=0,
    ),
    Agent(
        agent_id="reasonix",
        prog="reasonix",
        # recordings/real/reasonix/*.jsonl: npm reasonix 1.38.11 prints "reasonix v1.38.11"
        version="1.38.11",
        version_output="reasonix v1.38.11",
        style="commander",
        grammar=reasonix_grammar,
        help_text=usage_text(
            "reasonix",
            "acp [flags]",
            [
                ("-model string", "provider name (default: config default_model)"),
                ("-profile string", "runtime profile: economy | balanced | delivery"),
                ("-planner string", "planner policy: auto | off"),
                ("-sandbox-network string", "sandbox network policy: auto | on | off"),
                ("-sandbox-bash string", "bash sandbox policy: auto | enforce"),
                ("-workspace-only", "confine writes to the session cwd"),
            ],
        ),
        acp_command=("acp",),
        info_name="reasonix",
        info_title="DeepSeek Reasonix",
        auth_methods=(),
        models=(
            ("deepseek/deepseek-v4-flash", "deepseek/deepseek-v4-flash"),
            ("deepseek/deepseek-v4-pro", "deepseek/deepseek-v4-pro"),
        ),
        env_format="map",
        model_channel="both",
        check_argv=reasonix_check,
        # Live differential against reasonix 1.38.11 (recordings/real/reasonix/shell.jsonl):
        # bash's rawInput is only {command}.
        shell_input_cwd=False,
    ),
    Agent(
        agent_id="trae-cli",
        prog="traecli",
        version="0.9.3",
        version_output="traecli 0.9.3",
        style="commander",
        grammar=trae_grammar,
        help_text=usage_text(
            "traecli",
            "[options] [command]",
            [
                ("acp serve", "serve the Agent Client Protocol over stdio"),
                ("acp serve --yolo", "approve every tool call"),
                ("-v, --version", "output the version number"),
            ],
        ),
        acp_command=("acp", "serve"),
        info_name="traecli",
        info_title="Trae CLI",
        auth_methods=({"id": "trae-login", "name": "Log in to Trae"},),
        model_channel="models",
        models=(("doubao-seed-code", "Doubao Seed Code"), ("kimi-k2", "Kimi K2")),
        # seed 000 §5.9: "--yolo avoids headless approval prompts".
        auto_approve=lambda p: p.has("--yolo"),
    ),
    Agent(
        agent_id="vibe",
        prog="vibe-acp",
        version="3.0.2",
        version_output="vibe-acp 3.0.2",
        style="argparse",
        grammar=vibe_grammar,
        help_text=usage_text(
            "vibe-acp", "[-h] [--version]", [("--version", "show program's version number")]
        ),
        acp_command=(),
        info_name="@mistralai/mistral-vibe",
        info_title="Mistral Vibe",
        auth_methods=(),
        model_channel="models",
        models=(("devstral-2", "Devstral 2"), ("mistral-medium-3.1", "Mistral Medium 3.1")),
        # Live differential against vibe-acp 3.0.2 (recordings/real/vibe/happy.jsonl,
        # shell.jsonl): write_file's rawInput is {filePath (as the model gave it), content};
        # bash's is {command}, without a cwd; it never exits at stdin EOF (the host's
        # SIGTERM ends every run, a failed one too).
        write_path_key="filePath",
        write_path_as_given=True,
        shell_input_cwd=False,
        exits_at_eof=False,
    ),
)


def entry_point(agent: Agent) -> Callable[[FakeRun], int]:
    def main(run: FakeRun) -> int:
        command = run.parsed.command
        if agent.models_args is not None and command == agent.models_args[:2]:
            return _list_models(run, agent)
        if command != agent.acp_command:
            expected = " ".join((agent.prog, *agent.acp_command))
            run.err(
                f"{agent.prog}: this fake emulates only the ACP server mode ({expected}); "
                f"got {' '.join(run.argv) or '(no arguments)'}\n"
            )
            return 2
        if agent.check_argv is not None:
            problem = agent.check_argv(run)
            if problem is not None:
                run.err(problem[0] + "\n")
                return problem[1]
        return AcpServer(run, agent).serve()

    return main


def _list_models(run: FakeRun, agent: Agent) -> int:
    """``vela model list [--format json|text]`` (the def's probe is answered by CliSpec)."""
    fmt = run.parsed.value("--format", "text")
    if fmt == "json":
        run.out_raw(agent.models_output.encode("utf-8"))
    elif fmt == "text":
        for model, name in agent.models:
            run.out(f"{model}\t{name}")
    else:
        run.err(
            f"error: option '--format <fmt>' argument '{fmt}' is invalid. "
            "Allowed choices are json, text.\n"
        )
        return 1
    return 0
