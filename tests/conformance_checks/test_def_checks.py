"""Def-level checks: every built-in def passes, and each deliberately broken def fails
with evidence that names the rule.

Rules: DEF-REGISTRY-001, DEF-ID-001, DEF-BUDGET-001, DEF-BUDGET-002, DEF-FORMAT-001,
DEF-FILE-001, DEF-PROMPT-001, ARGV-PURE-001, ARGV-CAPS-001, ARGV-HEADLESS-001,
DEFCHECK-PURE-001, DEFCHECK-TOTAL-001, DEFCHECK-RESUME-001, DEFCHECK-PROMPT-001,
DEFCHECK-PROMPTFILE-001.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.checks import Finding, all_checks, evaluate_def
from conformance.checks.adapter_layer import observe_adapter_layer
from conformance.checks.defs import NEW_ID, PROMPT, RESUME_ID
from conformance.verdicts import Status
from harness.defs.registry import BUILTIN_DEFS, BUILTIN_REGISTRY
from harness.defs.shared import UnsupportedOptionError
from harness.defs.types import (
    AgentDef,
    BuildArgs,
    BuildOptions,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
    Transport,
)

DEF_RULES = sorted(all_checks("def"))
CLAUDE = BUILTIN_REGISTRY["claude"]
OPENCODE = BUILTIN_REGISTRY["opencode"]
GROK = BUILTIN_REGISTRY["grok-build"]
AIDER = BUILTIN_REGISTRY["aider"]
KIMI = BUILTIN_REGISTRY["kimi"]
PI = BUILTIN_REGISTRY["pi"]
PRIME = BUILTIN_REGISTRY["prime-agent"]
CODEX = BUILTIN_REGISTRY["codex"]

Argv = list[str]
Inputs = tuple[str, Sequence[str], Sequence[str], BuildOptions, RuntimeContext]


def wrap(base: AgentDef, change: Callable[[Argv, Inputs], Argv], **fields: object) -> AgentDef:
    """``base`` whose argv is ``change(base argv, inputs)``."""

    def build_args(
        prompt: str,
        images: Sequence[str],
        dirs: Sequence[str],
        options: BuildOptions,
        ctx: RuntimeContext,
    ) -> Argv:
        inputs = (prompt, images, dirs, options, ctx)
        return change(base.build_args(prompt, images, dirs, options, ctx), inputs)

    return dataclasses.replace(base, build_args=build_args, **fields)  # type: ignore[arg-type]


def with_args(base: AgentDef, build_args: BuildArgs, **fields: object) -> AgentDef:
    return dataclasses.replace(base, build_args=build_args, **fields)  # type: ignore[arg-type]


def judge(defn: AgentDef, rule: str, **kwargs: object) -> Finding:
    return evaluate_def(defn, rule_ids=[rule], **kwargs)[rule]  # type: ignore[arg-type]


def assert_fails(finding: Finding, rule: str, *needles: str) -> None:
    assert finding.status is Status.FAIL, finding.reason
    evidence = finding.evidence
    assert evidence is not None
    assert evidence.summary.startswith(f"{rule}: "), evidence.summary
    assert evidence.repro_command.startswith("harness conform ")
    text = "\n".join((evidence.summary, evidence.expected, evidence.actual))
    for needle in needles:
        assert needle in text, f"{needle!r} not in evidence:\n{text}"


# --------------------------------------------------------------------------- built-ins


@pytest.fixture(scope="module")
def builtin_findings() -> dict[str, dict[str, Finding]]:
    # The adapter-layer runs of every def first, concurrently (they wait on fakes), as
    # harness conform makes them; the checks then judge them one def at a time.
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(observe_adapter_layer, BUILTIN_DEFS))
    return {d.id: evaluate_def(d, siblings=BUILTIN_DEFS) for d in BUILTIN_DEFS}


@pytest.mark.rule(*DEF_RULES)
@pytest.mark.parametrize("agent_id", [d.id for d in BUILTIN_DEFS])
def test_every_builtin_def_passes(
    agent_id: str, builtin_findings: dict[str, dict[str, Finding]]
) -> None:
    findings = builtin_findings[agent_id]
    assert sorted(findings) == DEF_RULES
    for rule, finding in findings.items():
        assert finding.status in (Status.PASS, Status.SKIPPED), f"{rule}: {finding.reason}"
        if finding.status is Status.SKIPPED:
            assert finding.reason.startswith("not applicable: ")
    defn = BUILTIN_REGISTRY[agent_id]
    # The always-applicable rules really ran.
    for rule in ("ARGV-PURE-001", "DEFCHECK-PURE-001", "DEFCHECK-TOTAL-001", "DEF-FORMAT-001"):
        assert findings[rule].status is Status.PASS, rule
    argv_delivery = defn.prompt_delivery is PromptDelivery.ARGV
    assert (findings["DEF-BUDGET-001"].status is Status.PASS) == argv_delivery
    assert (findings["DEFCHECK-PROMPT-001"].status is Status.PASS) == argv_delivery
    file_delivery = defn.prompt_delivery is PromptDelivery.FILE
    assert (findings["DEFCHECK-PROMPTFILE-001"].status is Status.PASS) == file_delivery
    assert (findings["DEF-FILE-001"].status is Status.PASS) == file_delivery
    assert (findings["ARGV-CAPS-001"].status is Status.PASS) == bool(defn.capability_flags)
    assert (findings["ARGV-HEADLESS-001"].status is Status.PASS) == bool(defn.headless_flags)


@pytest.mark.rule("ARGV-CAPS-001")
def test_capability_report_names_default_on_gated_and_probe_only_flags() -> None:
    reason = judge(CLAUDE, "ARGV-CAPS-001").reason
    assert "--add-dir default-on" in reason
    assert "--include-partial-messages gated" in reason
    assert "--effort gated" in reason  # needs a reasoning choice, which the check makes
    assert "--agents probe-only" in reason


# --------------------------------------------------------------------------- data rules


@pytest.mark.rule("DEF-REGISTRY-001")
def test_duplicate_ids_in_a_set_fail() -> None:
    twin = dataclasses.replace(CLAUDE, name="My Claude wrapper", bin="my-claude")
    assert judge(CLAUDE, "DEF-REGISTRY-001", siblings=BUILTIN_DEFS).status is Status.PASS
    assert judge(CLAUDE, "DEF-REGISTRY-001").status is Status.PASS
    finding = judge(twin, "DEF-REGISTRY-001", siblings=(*BUILTIN_DEFS, twin))
    assert_fails(finding, "DEF-REGISTRY-001", "'claude'", "'Claude Code'", "my-claude")
    twice = judge(CLAUDE, "DEF-REGISTRY-001", siblings=(CLAUDE, CLAUDE))
    assert_fails(twice, "DEF-REGISTRY-001", "itself")


@pytest.mark.rule("DEF-ID-001")
@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"id": "my agent"}, "id 'my agent' does not match"),
        ({"id": "-leading-dash"}, "does not match"),
        ({"name": "  "}, "name '  ' is not a non-empty string"),
        ({"bin": ""}, "bin '' is not a non-empty string"),
    ],
)
def test_bad_ids_and_names_fail(fields: dict[str, str], needle: str) -> None:
    finding = judge(dataclasses.replace(CLAUDE, **fields), "DEF-ID-001")  # type: ignore[arg-type]
    assert_fails(finding, "DEF-ID-001", needle)


def _argv_prompt(
    prompt: str, images: Sequence[str], dirs: Sequence[str], o: BuildOptions, c: RuntimeContext
) -> Argv:
    return ["exec", prompt]


@pytest.mark.rule("DEF-BUDGET-001")
def test_argv_delivery_without_a_budget_fails() -> None:
    no_budget = with_args(CLAUDE, _argv_prompt, prompt_delivery=PromptDelivery.ARGV)
    assert_fails(judge(no_budget, "DEF-BUDGET-001"), "DEF-BUDGET-001", "max_prompt_arg_bytes=None")
    as_bool = dataclasses.replace(no_budget, max_prompt_arg_bytes=True)
    assert_fails(judge(as_bool, "DEF-BUDGET-001"), "DEF-BUDGET-001", "max_prompt_arg_bytes=True")
    budgeted = dataclasses.replace(no_budget, max_prompt_arg_bytes=30_000)
    assert judge(budgeted, "DEF-BUDGET-001").status is Status.PASS
    # An alt transport with argv delivery needs the budget too.
    alt = Transport("argv", "plain", _argv_prompt, prompt_delivery=PromptDelivery.ARGV)
    hidden = dataclasses.replace(CLAUDE, alt_transports=(alt,))
    assert_fails(judge(hidden, "DEF-BUDGET-001"), "DEF-BUDGET-001", "['argv']")


@pytest.mark.rule("DEF-BUDGET-002")
def test_a_budget_without_argv_delivery_fails() -> None:
    finding = judge(dataclasses.replace(CLAUDE, max_prompt_arg_bytes=30_000), "DEF-BUDGET-002")
    assert_fails(finding, "DEF-BUDGET-002", "stdin-delivery def declares a prompt budget")
    assert judge(AIDER, "DEF-BUDGET-002").status is Status.SKIPPED


@pytest.mark.rule("DEF-FORMAT-001")
def test_unknown_formats_and_dialects_fail() -> None:
    foo = dataclasses.replace(CLAUDE, stream_format="foo")
    assert_fails(judge(foo, "DEF-FORMAT-001"), "DEF-FORMAT-001", "unknown stream format 'foo'")
    dialect = dataclasses.replace(OPENCODE, event_parser="nope")
    assert_fails(judge(dialect, "DEF-FORMAT-001"), "DEF-FORMAT-001", "'nope'")
    alt = Transport("rpc", "grpc-stream", _argv_prompt)
    bad_alt = dataclasses.replace(CLAUDE, alt_transports=(alt,))
    assert_fails(judge(bad_alt, "DEF-FORMAT-001"), "DEF-FORMAT-001", "(transport 'rpc')")


# --------------------------------------------------------------------------- purity


@pytest.mark.rule("ARGV-PURE-001")
def test_reading_os_environ_fails() -> None:
    def reads_home(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, "--home", os.environ.get("HOME", "")]

    finding = judge(wrap(CLAUDE, reads_home), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "os.environ['HOME']", "RuntimeContext")


@pytest.mark.rule("ARGV-PURE-001")
def test_reading_sys_platform_fails() -> None:
    def by_platform(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, "--shell", "cmd" if sys.platform == "win32" else "sh"]

    finding = judge(wrap(CLAUDE, by_platform), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "depends on sys.platform")
    assert sys.platform != "win32" or os.name == "nt"  # the flip was undone


@pytest.mark.rule("ARGV-PURE-001")
def test_non_deterministic_argv_fails() -> None:
    counter = itertools.count()

    def numbered(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, f"--run={next(counter)}"]

    finding = judge(wrap(CLAUDE, numbered), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "equal inputs gave different results", "--run=")


@pytest.mark.rule("ARGV-PURE-001")
def test_mutating_the_inputs_fails() -> None:
    def appends(argv: Argv, inputs: Inputs) -> Argv:
        dirs = inputs[2]
        if isinstance(dirs, list):
            dirs.append("/smuggled")
        return argv

    finding = judge(wrap(CLAUDE, appends), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "mutated its inputs", "/smuggled")


@pytest.mark.rule("ARGV-PURE-001")
def test_returning_a_shared_list_fails() -> None:
    shared = ["--print"]

    def same_list(*_: object) -> Argv:
        return shared

    finding = judge(with_args(CLAUDE, same_list), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "same list object")


@pytest.mark.rule("ARGV-PURE-001")
def test_hypothesis_finds_what_the_documented_grid_misses() -> None:
    # The grid always passes one extra dir; only arbitrary inputs reach this branch.
    def env_when_no_dirs(argv: Argv, inputs: Inputs) -> Argv:
        if not inputs[2]:
            return [*argv, os.environ.get("USER", "someone")]
        return argv

    finding = judge(wrap(CLAUDE, env_when_no_dirs), "ARGV-PURE-001")
    assert_fails(finding, "ARGV-PURE-001", "os.environ['USER']", "dirs=[]")


@pytest.mark.rule("DEFCHECK-PURE-001")
def test_writing_a_file_in_the_cwd_fails() -> None:
    def writes(argv: Argv, inputs: Inputs) -> Argv:
        cwd = inputs[4].cwd
        if cwd and os.path.isdir(cwd):
            Path(cwd, ".mycli.json").write_text("{}", encoding="utf-8")
        return argv

    finding = judge(wrap(CLAUDE, writes), "DEFCHECK-PURE-001")
    assert_fails(finding, "DEFCHECK-PURE-001", ".mycli.json", "for writing")


@pytest.mark.rule("DEFCHECK-PURE-001")
def test_writing_anywhere_else_fails(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"

    def writes(argv: Argv, inputs: Inputs) -> Argv:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("model\n")
        return argv

    finding = judge(wrap(CLAUDE, writes), "DEFCHECK-PURE-001")
    assert_fails(finding, "DEFCHECK-PURE-001", "settings.json")


@pytest.mark.rule("DEFCHECK-PURE-001")
def test_changing_the_environment_fails() -> None:
    name = "HARNESS_DEFCHECK_TEST_VAR"

    def sets_env(argv: Argv, inputs: Inputs) -> Argv:
        os.environ[name] = "1"
        return argv

    try:
        finding = judge(wrap(CLAUDE, sets_env), "DEFCHECK-PURE-001")
    finally:
        os.environ.pop(name, None)
    assert_fails(finding, "DEFCHECK-PURE-001", "environment change", name)


@pytest.mark.rule("DEFCHECK-PURE-001")
def test_starting_a_process_fails() -> None:
    def spawns(argv: Argv, inputs: Inputs) -> Argv:
        subprocess.run([sys.executable, "-c", "pass"], check=False)
        return argv

    finding = judge(wrap(CLAUDE, spawns), "DEFCHECK-PURE-001")
    assert_fails(finding, "DEFCHECK-PURE-001", "subprocess.Popen", "process start")


@pytest.mark.rule("DEFCHECK-PURE-001")
def test_opening_a_connection_fails() -> None:
    def connects(argv: Argv, inputs: Inputs) -> Argv:
        with socket.socket() as sock:
            sock.settimeout(0.2)
            with contextlib.suppress(OSError):
                sock.connect(("127.0.0.1", 9))
        return argv

    finding = judge(wrap(CLAUDE, connects), "DEFCHECK-PURE-001")
    assert_fails(finding, "DEFCHECK-PURE-001", "socket.connect", "network")


# --------------------------------------------------------------------------- totality


@pytest.mark.rule("DEFCHECK-TOTAL-001")
def test_an_untyped_exception_for_a_documented_option_fails() -> None:
    flags = {"sonnet": ["--model", "sonnet"], "opus": ["--model", "opus"]}

    def lookup(argv: Argv, inputs: Inputs) -> Argv:
        model = inputs[3].model
        return [*argv, *flags[model]] if model else argv  # KeyError for 'haiku'/'default'

    finding = judge(wrap(CLAUDE, lookup), "DEFCHECK-TOTAL-001")
    assert_fails(finding, "DEFCHECK-TOTAL-001", "KeyError", "every capability was found")


@pytest.mark.rule("DEFCHECK-TOTAL-001")
def test_only_typed_errors_when_a_capability_is_missing() -> None:
    def typed(argv: Argv, inputs: Inputs) -> Argv:
        if inputs[3].capabilities.get("effort") is False and inputs[3].reasoning:
            raise UnsupportedOptionError("claude", "reasoning", "x", "no --effort")
        return argv

    assert judge(wrap(CLAUDE, typed), "DEFCHECK-TOTAL-001").status is Status.PASS

    def untyped(argv: Argv, inputs: Inputs) -> Argv:
        if not inputs[3].capabilities:
            raise ValueError("no capabilities")
        return argv

    finding = judge(wrap(CLAUDE, untyped), "DEFCHECK-TOTAL-001")
    assert_fails(finding, "DEFCHECK-TOTAL-001", "untyped exception", "ValueError")


@pytest.mark.rule("DEFCHECK-TOTAL-001")
def test_non_string_argv_fails() -> None:
    def with_path(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, Path("/x")]  # type: ignore[list-item]

    finding = judge(wrap(CLAUDE, with_path), "DEFCHECK-TOTAL-001")
    assert_fails(finding, "DEFCHECK-TOTAL-001", "did not return a list of strings")


# --------------------------------------------------------------------------- capability gates


@pytest.mark.rule("ARGV-CAPS-001")
def test_a_capability_flag_always_present_fails() -> None:
    def always(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, "--include-partial-messages"]

    finding = judge(wrap(CLAUDE, always), "ARGV-CAPS-001")
    assert_fails(
        finding, "ARGV-CAPS-001", "--include-partial-messages is passed", "partialMessages: False"
    )


@pytest.mark.rule("ARGV-CAPS-001")
def test_a_default_on_flag_must_still_honour_an_explicit_missing() -> None:
    def ignores_denial(argv: Argv, inputs: Inputs) -> Argv:
        dirs = [d for d in inputs[2] if d]
        if dirs and "--add-dir" not in argv:
            return [*argv, "--add-dir", *dirs]
        return argv

    finding = judge(wrap(CLAUDE, ignores_denial), "ARGV-CAPS-001")
    assert_fails(finding, "ARGV-CAPS-001", "--add-dir is passed", "addDir")


@pytest.mark.rule("ARGV-CAPS-001")
def test_gated_flags_in_key_value_form_are_recognized() -> None:
    def key_value(argv: Argv, inputs: Inputs) -> Argv:
        return [*argv, "--trust=yes"]

    cursor = BUILTIN_REGISTRY["cursor-agent"]
    assert_fails(judge(wrap(cursor, key_value), "ARGV-CAPS-001"), "ARGV-CAPS-001", "--trust")
    assert judge(KIMI, "ARGV-CAPS-001").status is Status.SKIPPED


# --------------------------------------------------------------------------- sessions


@pytest.mark.rule("DEFCHECK-RESUME-001")
def test_capture_style_without_the_resume_id_fails() -> None:
    def drops(argv: Argv, inputs: Inputs) -> Argv:
        return [a for a in argv if a not in ("-s", RESUME_ID)]

    finding = judge(wrap(OPENCODE, drops), "DEFCHECK-RESUME-001")
    assert_fails(finding, "DEFCHECK-RESUME-001", "resume id missing", "capture resume")


@pytest.mark.rule("DEFCHECK-RESUME-001")
def test_specify_style_must_not_pass_both_ids() -> None:
    def both(argv: Argv, inputs: Inputs) -> Argv:
        ctx = inputs[4]
        if ctx.new_session_id and "--session-id" not in argv:
            return [*argv, "--session-id", ctx.new_session_id]
        return argv

    finding = judge(wrap(CLAUDE, both), "DEFCHECK-RESUME-001")
    assert_fails(finding, "DEFCHECK-RESUME-001", "minted id present", NEW_ID)


@pytest.mark.rule("DEFCHECK-RESUME-001")
def test_capture_style_must_not_pass_a_minted_id() -> None:
    def minted(argv: Argv, inputs: Inputs) -> Argv:
        new = inputs[4].new_session_id
        return [*argv, "--session", new] if new else argv

    finding = judge(wrap(OPENCODE, minted), "DEFCHECK-RESUME-001")
    assert_fails(finding, "DEFCHECK-RESUME-001", "minted id present")


@pytest.mark.rule("DEFCHECK-RESUME-001")
def test_protocol_resume_keeps_the_id_out_of_argv() -> None:
    def leaks(argv: Argv, inputs: Inputs) -> Argv:
        rid = inputs[4].resume_session_id
        return [*argv, "--resume", rid] if rid else argv

    acp = dataclasses.replace(KIMI, resume_style=ResumeStyle.ACP_LOAD)
    finding = judge(wrap(acp, leaks), "DEFCHECK-RESUME-001")
    assert_fails(finding, "DEFCHECK-RESUME-001", "acp-load resume", "resume id present")
    # pi resumes through its session file, prime-agent through --resume (ref §8.1).
    assert judge(PI, "DEFCHECK-RESUME-001").status is Status.PASS
    assert judge(PRIME, "DEFCHECK-RESUME-001").status is Status.PASS
    silent_prime = wrap(
        PRIME, lambda argv, _: [a for a in argv if a not in ("--resume", RESUME_ID)]
    )
    assert_fails(
        judge(silent_prime, "DEFCHECK-RESUME-001"), "DEFCHECK-RESUME-001", "pi-session resume"
    )


@pytest.mark.rule("DEFCHECK-RESUME-001")
def test_codex_app_server_transport_resumes_in_frames() -> None:
    assert judge(CODEX, "DEFCHECK-RESUME-001").status is Status.PASS

    def app_server_with_id(*args: object) -> Argv:
        ctx = args[4]
        assert isinstance(ctx, RuntimeContext)
        return ["app-server", *([ctx.resume_session_id] if ctx.resume_session_id else [])]

    alt = dataclasses.replace(CODEX.alt_transports[0], build_args=app_server_with_id)
    finding = judge(dataclasses.replace(CODEX, alt_transports=(alt,)), "DEFCHECK-RESUME-001")
    assert_fails(finding, "DEFCHECK-RESUME-001", "(transport 'app-server')", "resume id present")


# --------------------------------------------------------------------------- posture and prompt


@pytest.mark.rule("ARGV-HEADLESS-001")
def test_missing_or_split_headless_flags_fail() -> None:
    dropped = wrap(CLAUDE, lambda argv, _: argv[:-1])
    assert_fails(judge(dropped, "ARGV-HEADLESS-001"), "ARGV-HEADLESS-001", "bypassPermissions")
    split = wrap(CLAUDE, lambda argv, _: [argv[-2], "--verbose", *argv[:-2], argv[-1]])
    assert_fails(judge(split, "ARGV-HEADLESS-001"), "ARGV-HEADLESS-001", "contiguous")
    assert judge(KIMI, "ARGV-HEADLESS-001").status is Status.SKIPPED


@pytest.mark.rule("DEF-PROMPT-001")
def test_a_stdin_def_with_the_prompt_in_argv_fails() -> None:
    finding = judge(wrap(CLAUDE, lambda argv, inputs: [*argv, inputs[0]]), "DEF-PROMPT-001")
    assert_fails(finding, "DEF-PROMPT-001", "stdin-delivery def puts the prompt in argv")
    protocol = judge(wrap(KIMI, lambda argv, inputs: [*argv, "--", inputs[0]]), "DEF-PROMPT-001")
    assert_fails(protocol, "DEF-PROMPT-001", "protocol-delivery")
    assert judge(AIDER, "DEF-PROMPT-001").status is Status.SKIPPED


@pytest.mark.rule("DEFCHECK-PROMPT-001")
def test_argv_delivery_must_pass_the_prompt_whole() -> None:
    assert judge(AIDER, "DEFCHECK-PROMPT-001").status is Status.PASS

    def split_lines(argv: Argv, inputs: Inputs) -> Argv:
        prompt = inputs[0]
        return [a for a in argv if a != prompt] + prompt.split("\n")

    finding = judge(wrap(AIDER, split_lines), "DEFCHECK-PROMPT-001")
    assert_fails(finding, "DEFCHECK-PROMPT-001", "one whole element")
    assert PROMPT.count("\n") >= 2  # the sentinel prompt really has lines to split


@pytest.mark.rule("DEFCHECK-PROMPTFILE-001")
def test_file_delivery_must_pass_the_prompt_file_path() -> None:
    def ignores_path(*_: object) -> Argv:
        return ["--prompt-file", "/tmp/prompt.md"]

    finding = judge(with_args(GROK, ignores_path), "DEFCHECK-PROMPTFILE-001")
    assert_fails(finding, "DEFCHECK-PROMPTFILE-001", "prompt file path", "/conform/tmp/prompt.md")


@pytest.mark.rule("DEF-FILE-001")
def test_file_delivery_without_a_path_must_raise() -> None:
    def degrades(
        prompt: str, images: Sequence[str], dirs: Sequence[str], o: BuildOptions, c: RuntimeContext
    ) -> Argv:
        return ["--prompt-file", c.prompt_file_path] if c.prompt_file_path else ["-p", "-"]

    finding = judge(with_args(GROK, degrades), "DEF-FILE-001")
    assert_fails(finding, "DEF-FILE-001", "AgentDefError", "['-p', '-']")
