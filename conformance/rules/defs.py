"""Rules for the registry, local profiles and the ACP / pi / dsh / plain definitions.

Covers ``harness/defs/registry.py``, ``harness/formats/def_check.py`` (DEF-FORMAT-001),
``harness/defs/local_profiles.py`` and
``harness/defs/{amr,devin,hermes,kimi,kiro,kilo,reasonix,trae_cli,vibe,pi,prime_agent,
deepseek_harness,aider,antigravity,atomcode,deepseek,grok_build,qwen}.py``.
Every rule is def-level (``formats=()``): it is checked on defs, their ``build_args`` and their
parsers, not on a stream.

Tests: ``tests/defs/test_registry.py``, ``tests/formats/test_def_check.py``,
``tests/defs/test_local_profiles.py``,
``tests/defs/test_argv_protocol_and_plain.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    # --- registry ---------------------------------------------------------------
    _rule(
        "DEF-REGISTRY-001",
        "The registry refuses two defs with the same id (DuplicateAgentError at build/import).",
        "seed 000 §1",
    ),
    _rule(
        "DEF-REGISTRY-002",
        "The built-in registry holds exactly the 28 shipped ids in shipped order, then gemini.",
        "ref §8.2",
    ),
    _rule(
        "DEF-REGISTRY-003",
        "Looking up an unknown agent id raises UnknownAgentError naming every known id.",
        "seed 000 §1",
    ),
    _rule(
        "DEF-ID-001",
        "A def's id matches ID_PATTERN and its name and bin are non-empty.",
        "ref §6",
    ),
    _rule(
        "DEF-BUDGET-001",
        "A def that delivers the prompt in argv declares a positive max_prompt_arg_bytes.",
        "seed 000 §12",
    ),
    _rule(
        "DEF-BUDGET-002",
        "A def that does not deliver the prompt in argv declares no prompt budget.",
        "ref §4",
    ),
    _rule(
        "DEF-FORMAT-001",
        "A def's stream_format names a known parser or session, and its event_parser a dialect "
        "that format accepts.",
        "seed 000 §1",
    ),
    _rule(
        "DEF-OPTIONS-001",
        "A def sets a format-only option group (acp, pi) only when one of its transports "
        "speaks that format; otherwise the registry and the def-file loader name the def and "
        "the option.",
        "seed 000 §1",
    ),
    _rule(
        "DEF-MODULE-001",
        "Each runtime module under harness/defs exports exactly one AgentDef, AGENT_DEF, and the "
        "registry holds it.",
        "seed 000 §1",
    ),
    # --- every def of this area ----------------------------------------------------
    _rule(
        "DEF-MODEL-001",
        "A model of None or 'default' omits the model flag, and every model list starts with "
        "the default option.",
        "ref §8.3",
    ),
    _rule(
        "DEF-PURE-002",
        "build_args of the protocol and plain defs is pure: equal inputs give equal argv, inputs "
        "are not mutated, and os.environ is not read.",
        "seed 002 §3.2",
    ),
    _rule(
        "DEF-HEADLESS-001",
        "A def's headless_flags are its non-interactive permission flags and appear as one "
        "contiguous run in its argv.",
        "seed 000 §10",
    ),
    _rule(
        "DEF-PROMPT-001",
        "A def whose prompt goes on stdin, in a file or in a protocol frame never puts the "
        "prompt text in argv.",
        "seed 002 §6.2",
    ),
    # --- ACP ----------------------------------------------------------------------
    _rule(
        "DEF-ACP-ARGV-001",
        "Each ACP runtime passes exactly its documented fixed argv (amr, devin, hermes, kimi, "
        "kiro, kilo, reasonix, trae-cli, vibe).",
        "ref §8.3",
    ),
    _rule(
        "DEF-ACP-TRANSPORT-001",
        "The ACP runtimes use stream format acp-json-rpc and protocol prompt delivery.",
        "seed 000 §3",
    ),
    _rule(
        "DEF-ACP-RESUME-001",
        "devin, kilo, kiro, trae-cli, vibe and amr resume through ACP session/load; hermes, kimi "
        "and reasonix have no native resume.",
        "ref §8.3",
    ),
    _rule(
        "DEF-ACP-MCP-001",
        "ACP runtimes merge external MCP servers into session/new except amr; reasonix sends MCP "
        "env as a map, kilo as an array; kimi withholds stdio servers from 0.37.0.",
        "seed 002 §8.1",
    ),
    _rule(
        "DEF-ACP-FIELDS-001",
        "ACP per-runtime data: kiro turn_end completes the prompt, trae-cli probes its version "
        "for 10 s, amr idles 30 min with VELA_DEFAULT_MODEL, kilo and amr refuse custom models.",
        "ref §8.3",
    ),
    _rule(
        "DEF-AMR-MODELS-001",
        "amr's model list parse reads vela's {source: remote, data: [{id}]} JSON and returns "
        "None for anything else.",
        "ref §8.3",
    ),
    _rule(
        "DEF-KILO-VERSION-001",
        "kilo's version policy parses a semver from the version line and accepts 7.4.23 and "
        "later stable releases only.",
        "ref §8.3",
    ),
    # --- pi-rpc ---------------------------------------------------------------------
    _rule(
        "DEF-PI-ARGV-001",
        "pi argv is --mode rpc [--model M] [--thinking R] [--skill D]... "
        "[--append-system-prompt D]... with absolute dirs only.",
        "seed 000 §5.10",
    ),
    _rule(
        "DEF-PI-MODELS-001",
        "pi --list-models table rows become provider/model options after default; the header is "
        "skipped and no row gives None.",
        "seed 000 §5.10",
    ),
    _rule(
        "DEF-PI-FIELDS-001",
        "pi resumes via its session dir .pi/sessions, probes its version for 15 s and offers the "
        "thinking levels off/minimal/low/medium/high/xhigh.",
        "seed 000 §5.10",
    ),
    _rule(
        "DEF-PRIME-ARGV-001",
        "prime-agent argv is --mode rpc [--cwd C] [--resume ID] [--provider P --model M | "
        "--model M] [--thinking R].",
        "ref §8.3",
    ),
    _rule(
        "DEF-PRIME-MODELS-001",
        "prime-agent 'model list' rows become provider/model options; its sessions live under "
        "~/.prime/agent/sessions.",
        "ref §2.7",
    ),
    # --- dsh ------------------------------------------------------------------------
    _rule(
        "DEF-DSH-ARGV-001",
        "deepseek-harness runs dsh --profile open-design --stdio with protocol delivery and "
        "profile-stdio resume.",
        "seed 001 §6",
    ),
    _rule(
        "DEF-DSH-VERSION-001",
        "deepseek-harness requires a parseable dsh version; a parseable untested one only warns.",
        "seed 001 §5",
    ),
    _rule(
        "DEF-DSH-PROBE-001",
        "The dsh probe parse accepts only the seed 001 §5 frame, returns plugin_version, and its "
        "errors name the failing field without echoing values.",
        "seed 001 §5",
    ),
    _rule(
        "DEF-DSH-MODELS-001",
        "The dsh --models parse maps each catalog entry to provider/id and rejects a malformed "
        "catalog with None.",
        "seed 001 §12",
    ),
    # --- plain ----------------------------------------------------------------------
    _rule(
        "DEF-AIDER-ARGV-001",
        "aider argv is its six fixed flags, [--model M], then --message <prompt>, with a "
        "30000-byte budget.",
        "ref §8.3",
    ),
    _rule(
        "DEF-ANTIGRAVITY-ARGV-001",
        "antigravity passes --log-file <path> before -p, reads the prompt from stdin via '-', "
        "and selects no model.",
        "seed 002 §4.4",
    ),
    _rule(
        "DEF-ATOMCODE-ARGV-001",
        "atomcode argv is --prompt-file <path> -y [--model M].",
        "ref §8.3",
    ),
    _rule(
        "DEF-DEEPSEEK-ARGV-001",
        "deepseek argv is exec --auto [--model M] <prompt> with the prompt last, a 30000-byte "
        "budget and DeepSeek's own too-large advice.",
        "seed 000 §5.11",
    ),
    _rule(
        "DEF-GROK-ARGV-001",
        "grok-build argv is --prompt-file <path> [--model M] [--effort R]; its model list keeps "
        "single-token lines only.",
        "seed 002 §6.2",
    ),
    _rule(
        "DEF-QWEN-ARGV-001",
        "qwen argv is --yolo [--model M] with the prompt on stdin.",
        "ref §8.3",
    ),
    _rule(
        "DEF-FILE-001",
        "A file-delivery def raises AgentDefError when RuntimeContext.prompt_file_path is "
        "missing instead of degrading.",
        "seed 002 §9",
    ),
    # --- local profiles -------------------------------------------------------------
    _rule(
        "PROFILE-VALID-001",
        "Each rejected profile entry gives exactly one LocalProfileError (file, index, field) "
        "and never hides built-ins or good profiles; a bad file gives one error.",
        "ref §6",
    ),
    _rule(
        "PROFILE-PATH-001",
        "The profiles file is the explicit path, else HARNESS_AGENT_PROFILES, else "
        "OD_AGENT_PROFILES_CONFIG (blank values ignored), else none.",
        "ref §6",
    ),
    _rule(
        "PROFILE-FORMAT-001",
        "A profiles file is a JSON array of profiles or an object with an 'agents' array.",
        "ref §6",
    ),
    _rule(
        "PROFILE-FIELDS-001",
        "A profile entry with a field outside the documented set is rejected, naming the field.",
        "ref §6",
    ),
    _rule(
        "PROFILE-ID-001",
        "A profile id is trimmed and must match ID_PATTERN.",
        "seed 002 §5.6",
    ),
    _rule(
        "PROFILE-ID-002",
        "A profile id may not equal a built-in id.",
        "seed 002 §5.6",
    ),
    _rule(
        "PROFILE-ID-003",
        "A later profile with an id an earlier accepted profile claimed is skipped with an error.",
        "ref §6",
    ),
    _rule(
        "PROFILE-BASE-001",
        "baseAgent defaults to claude and must name a built-in (profiles do not chain).",
        "ref §6",
    ),
    _rule(
        "PROFILE-BIN-001",
        "A profile's bin and name are non-empty strings; bin defaults to the base bin, name to "
        "the id.",
        "ref §6",
    ),
    _rule(
        "PROFILE-ARGS-001",
        "A profile's args (alias prefixArgs) are prepended to the base def's argv.",
        "seed 002 §5.6",
    ),
    _rule(
        "PROFILE-ENV-001",
        "Profile env keys are shell identifiers, values string/number/boolean stringified as in "
        "JavaScript, and the env replaces the base env.",
        "seed 002 §5.6",
    ),
    _rule(
        "PROFILE-NUL-001",
        "A profile entry with a NUL character in any key or string is rejected.",
        "seed 002 §5.6",
    ),
    _rule(
        "PROFILE-MODELS-001",
        "Profile models (alias fallbackModels) are sanitized ids or {id,label}, de-duplicated, "
        "after the default option.",
        "ref §6",
    ),
    _rule(
        "PROFILE-DEFAULTMODEL-001",
        "A profile's defaultModel is injected as the run model when the run's model is unset or "
        "'default'.",
        "ref §6",
    ),
    _rule(
        "PROFILE-PROBEARGS-001",
        "A profile's non-empty versionArgs and helpArgs replace the base def's probe args.",
        "ref §6",
    ),
    _rule(
        "PROFILE-AUTH-001",
        "A profile with prefix args drops the base def's auth probe; without them it keeps it.",
        "seed 002 §5.6",
    ),
    _rule(
        "DEF-TRANSPORT-001",
        "A run uses the transport named by the def's env switch, else its default; an unknown "
        "transport is a typed error naming the known ones.",
        "seed 000 §5.3",
    ),
    _rule(
        "DEF-DATA-001",
        "No engine module (streams, guards, protocols, launch, detect, run) names an agent id; "
        "differences are def fields.",
        "seed 000 §1",
    ),
)
