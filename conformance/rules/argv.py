"""Argv rules for the structured-stream runtime definitions.

Covers ``harness/defs/{shared,claude,codebuddy,amp,codex,cursor_agent,opencode,
byok_opencode,mimo,copilot,qoder,gemini}.py``. Every rule here is def-level
(``formats=()``): it is checked on a def's ``build_args`` and fields, not on a
stream. Argv-shape rules are MANDATORY.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    # --- every def -------------------------------------------------------------
    _rule(
        "ARGV-PURE-001",
        "build_args is pure: equal inputs give equal argv, inputs are not mutated, and neither "
        "os.environ nor sys.platform is read (platform and env come from RuntimeContext).",
        "seed 002 §3.2",
    ),
    _rule(
        "ARGV-MODEL-001",
        "A model of None or 'default' omits the model flag, and every fallback model list "
        "starts with DEFAULT_MODEL_OPTION.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-CAPS-001",
        "When the help probe failed (capabilities == {}) no probe-gated optional flag is "
        "passed, except flags whose default is on unless the probe says they are missing.",
        "seed 002 §5.5",
    ),
    _rule(
        "ARGV-HEADLESS-001",
        "A first turn with default options, every capability found and a Linux context passes "
        "the def's headless_flags as one contiguous run.",
        "seed 000 §10",
    ),
    _rule(
        "ARGV-STDIN-001",
        "A def whose prompt is delivered on stdin never places the prompt text in argv.",
        "seed 002 §6.2",
    ),
    _rule(
        "ARGV-MODELS-001",
        "Line-separated model output is trimmed, de-duplicated, '#' comments dropped, "
        "DEFAULT_MODEL_OPTION prepended, and None is returned when no id remains.",
        "seed 002 §4.5",
    ),
    # --- claude family -----------------------------------------------------------
    _rule(
        "ARGV-CLAUDE-001",
        "claude puts --include-partial-messages only when the help probe found it.",
        "seed 002 §4.1",
    ),
    _rule(
        "ARGV-CLAUDE-002",
        "claude argv starts '-p --input-format stream-json --output-format stream-json "
        "--verbose' and ends '--permission-mode bypassPermissions', with --model M only for a "
        "non-default model.",
        "seed 000 §5.1",
    ),
    _rule(
        "ARGV-CLAUDE-003",
        "claude passes '--add-dir D...' (empty entries dropped) unless the help probe "
        "explicitly reported --add-dir missing.",
        "seed 002 §4.1",
    ),
    _rule(
        "ARGV-CLAUDE-004",
        "claude passes '--resume <id>' when a stored session id exists, otherwise "
        "'--session-id <new id>' when one was minted, never both.",
        "seed 002 §4.1",
    ),
    _rule(
        "ARGV-CLAUDE-005",
        "claude passes '--effort E' for a non-default reasoning only when the probe found "
        "--effort; an unknown effort or an explicitly missing --effort raises a typed error.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-CLAUDE-006",
        "The claude def reads the prompt as one stream-json line on stdin, resumes "
        "specify-style, injects MCP via .mcp.json, probes auth with 'auth status' and strips "
        "ANTHROPIC_API_KEY unless ANTHROPIC_BASE_URL is set.",
        "seed 000 §5.1",
    ),
    _rule(
        "ARGV-CODEBUDDY-001",
        "codebuddy argv is the claude stream-json prefix, gated --include-partial-messages, "
        "model, default-on --add-dir, then '--permission-mode bypassPermissions -y'.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-AMP-001",
        "amp argv is '-x --stream-json', plus --dangerously-allow-all unless permission_mode "
        "is 'restricted', plus '--mode M' only for a known Amp mode.",
        "ref §8.3",
    ),
    # --- codex -------------------------------------------------------------------
    _rule(
        "ARGV-CODEX-001",
        "codex create argv is 'exec --json --skip-git-repo-check' + sandbox + "
        "'-c default_permissions=\":workspace\"' [+ --disable plugins] [+ -C cwd] "
        "[+ --add-dir D]... [+ --model M] [+ reasoning] [+ service tier], prompt on stdin.",
        "seed 002 §4.2",
    ),
    _rule(
        "ARGV-CODEX-002",
        "codex resume argv is 'exec resume --json --skip-git-repo-check' with -c sandbox_mode "
        "mirroring the create policy, has no -C/--add-dir/--sandbox and ends with the thread id.",
        "seed 002 §4.2",
    ),
    _rule(
        "ARGV-CODEX-003",
        "codex uses danger-full-access (and no network override) on win32, under WSL "
        "(WSL_DISTRO_NAME non-blank) or with OD_CODEX_SANDBOX=danger-full-access, else "
        "workspace-write with network access.",
        "seed 000 §10",
    ),
    _rule(
        "ARGV-CODEX-004",
        "codex passes '--disable plugins' exactly when OD_CODEX_DISABLE_PLUGINS is '1'.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-CODEX-005",
        'codex reasoning is passed as -c model_reasoning_effort="E" clamped to the model '
        "family, and service tier as -c service_tier=\"T\"; 'default' omits both.",
        "seed 002 §4.5",
    ),
    _rule(
        "ARGV-CODEX-006",
        "codex 'debug models' output is parsed from JSON models[].slug/display_name, hidden "
        "models dropped, DEFAULT first; unparseable or empty output gives None.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-CODEX-007",
        "The codex def resumes capture-style, injects no MCP, probes auth with 'login status', "
        "strips OPENAI_API_KEY/CODEX_API_KEY unless OPENAI_BASE_URL, and declares the npm "
        "native-binary lookup and the darwin app-bundle paths.",
        "seed 000 §5.3",
    ),
    # --- cursor / opencode family --------------------------------------------------
    _rule(
        "ARGV-CURSOR-001",
        "cursor-agent argv is '--print --output-format stream-json --stream-partial-output "
        "--force' + --trust only when probed + [--workspace cwd] [--model M] [--resume id].",
        "seed 000 §5.5",
    ),
    _rule(
        "ARGV-CURSOR-002",
        "cursor-agent 'models' output parses one id per line (optionally 'id - label'); "
        "'No models available' or no ids gives None.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-OPENCODE-001",
        "OpenCode gets --dangerously-skip-permissions only when probed, else --auto only when "
        "probed, else no permission flag.",
        "seed 000 §10",
    ),
    _rule(
        "ARGV-OPENCODE-002",
        "opencode argv is 'run --format json' + permission bypass + [--dir cwd when probed] "
        "[-s session id] [-m M], prompt on stdin.",
        "seed 000 §5.6",
    ),
    _rule(
        "ARGV-OPENCODE-003",
        "opencode 'models --verbose' output yields each provider/model id once, skipping the "
        "JSON metadata blocks; plain one-id-per-line output also parses.",
        "ref §8.3",
    ),
    _rule(
        "ARGV-BYOK-001",
        "byok-opencode argv is 'run --format json' + permission bypass + [-m model] and shares "
        "the opencode parser and env-content MCP injection.",
        "seed 000 §5.2",
    ),
    _rule(
        "ARGV-MIMO-001",
        "mimo is a json-event-stream, OpenCode-compatible def ('run --format json [-m M]') "
        "with mimo-env-content MCP injection.",
        "seed 002 §8.1",
    ),
    # --- others -------------------------------------------------------------------
    _rule(
        "ARGV-COPILOT-001",
        "copilot argv is '--allow-all-tools --output-format json [--model M] [--add-dir D]...' "
        "and never contains -p; the prompt goes to stdin.",
        "seed 000 §5.7",
    ),
    _rule(
        "ARGV-QODER-001",
        "qoder argv is '-p --output-format stream-json --yolo [-w cwd] [--model M]' + "
        "'--add-dir D' for absolute dirs only + one '--attachment img' per image.",
        "seed 000 §5.8",
    ),
    _rule(
        "ARGV-GEMINI-001",
        "gemini argv is '--output-format stream-json --yolo [--model M]' with "
        "GEMINI_CLI_TRUST_WORKSPACE=true in the def env.",
        "ref §8.3",
    ),
)
