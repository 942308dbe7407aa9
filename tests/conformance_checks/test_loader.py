"""load_def_file: an adapter author's def file, validated as data first (DEFCHECK-LOAD-001),
then judged by the def-level checks like any built-in."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conformance.checks import evaluate_def
from conformance.checks.loader import DefFileError, load_def_file
from conformance.verdicts import Status
from harness.defs.registry import BUILTIN_DEFS, BUILTIN_REGISTRY

HEADER = "from harness.defs.types import AgentDef, PromptDelivery, ResumeStyle\n"
GOOD = """
def build_args(prompt, images, dirs, options, ctx):
    # What the claude fake (the fake that plays a claude-stream-json def) accepts.
    args = ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
    if options.model and options.model != "default":
        args += ["--model", options.model]
    if ctx.resume_session_id:
        args += ["--resume", ctx.resume_session_id]
    return args

AGENT_DEF = AgentDef(
    id="acme",
    name="Acme CLI",
    bin="acme",
    build_args=build_args,
    stream_format="claude-stream-json",
    resume_style=ResumeStyle.CAPTURE,
    headless_flags=("--dangerously-skip-permissions",),
)
"""


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def problems_of(path: Path, **kwargs: object) -> tuple[str, ...]:
    with pytest.raises(DefFileError) as info:
        load_def_file(path, **kwargs)  # type: ignore[arg-type]
    err = info.value
    assert err.code == "DEF_FILE_INVALID"
    assert err.rule == "DEFCHECK-LOAD-001"
    assert str(err).startswith("[DEFCHECK-LOAD-001] ")
    return err.problems


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_a_good_file_loads_and_passes_the_def_checks(tmp_path: Path) -> None:
    path = write(tmp_path, "acme.py", HEADER + GOOD)
    (defn,) = load_def_file(path)
    assert defn.id == "acme"
    findings = evaluate_def(defn, siblings=(*BUILTIN_DEFS, defn), source=str(path))
    bad = {
        r: f.reason for r, f in findings.items() if f.status not in (Status.PASS, Status.SKIPPED)
    }
    assert bad == {}


@pytest.mark.rule("DEFCHECK-LOAD-001", "ARGV-CAPS-001")
def test_a_broken_author_def_fails_with_a_repro_naming_the_file(tmp_path: Path) -> None:
    body = (
        GOOD.replace("return args\n", 'return args + ["--fast"]\n')
        + 'AGENT_DEF = AgentDef(**{**AGENT_DEF.__dict__, "capability_flags": {"--fast": "fast"}})\n'
    )
    path = write(tmp_path, "acme_fast.py", HEADER + body)
    (defn,) = load_def_file(path)
    finding = evaluate_def(defn, source=str(path), rule_ids=["ARGV-CAPS-001"])["ARGV-CAPS-001"]
    assert finding.status is Status.FAIL
    assert finding.evidence is not None
    assert finding.evidence.summary.startswith("ARGV-CAPS-001: def 'acme': --fast is passed")
    assert finding.evidence.repro_command == f"harness conform --def {path}"


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_agent_defs_lists_are_collected_once(tmp_path: Path) -> None:
    body = (
        HEADER
        + GOOD
        + textwrap.dedent(
            """
        import dataclasses
        OTHER = dataclasses.replace(AGENT_DEF, id="acme-pro", name="Acme Pro")
        AGENT_DEFS = [AGENT_DEF, OTHER]
        """
        )
    )
    defs = load_def_file(write(tmp_path, "two.py", body))
    assert [d.id for d in defs] == ["acme", "acme-pro"]


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_a_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.py", "x = 1\ndef oops(:\n    pass\n")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:2:")
    assert "syntax error" in problem


@pytest.mark.rule("DEFCHECK-LOAD-001")
@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("import os\n\nraise RuntimeError('boom')\n", ":3: importing the def file raised Runtime"),
        ("AGENT_DEF = undefined_name\n", ":1: importing the def file raised NameError"),
        ("import sys\nsys.exit(3)\n", ":2: importing the def file raised SystemExit: 3"),
        ("import no_such_module_for_harness\n", ":1: importing the def file raised ModuleNotFo"),
        (HEADER + "AGENT_DEF = AgentDef(id='x')\n", ":2: importing the def file raised TypeError"),
    ],
)
def test_an_import_error_names_the_file_and_line(tmp_path: Path, body: str, needle: str) -> None:
    path = write(tmp_path, "fails.py", body)
    (problem,) = problems_of(path)
    assert problem.startswith(str(path))
    assert needle in problem


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_field_errors_name_the_def_and_the_field(tmp_path: Path) -> None:
    body = HEADER + textwrap.dedent(
        """
        AGENT_DEF = AgentDef(
            id="acme",
            name="Acme",
            bin="acme",
            build_args=lambda *a: [],
            stream_format="foo",
            prompt_delivery="stdin",
            headless_flags=["--yes"],
            capability_flags={"--fast": ""},
            inactivity_timeout_ms=-5,
            supports_image_paths="yes",
        )
        """
    )
    path = write(tmp_path, "mydef.py", body)
    problems = problems_of(path)
    assert problems[0] == (
        f"{path}: AGENT_DEF.stream_format: unknown stream format 'foo'; known: acp-json-rpc, "
        "claude-stream-json, codex-app-server, copilot-stream-json, dsh-profile-jsonl, "
        "json-event-stream, pi-rpc, plain, qoder-stream-json"
    )
    joined = "\n".join(problems)
    for needle in (
        "AGENT_DEF.prompt_delivery: must be PromptDelivery.STDIN",
        "AGENT_DEF.headless_flags: must be a tuple of strings, got list",
        "AGENT_DEF.capability_flags['--fast']: must be a non-empty string",
        "AGENT_DEF.inactivity_timeout_ms: must be a positive integer (ms) or None, got -5",
        "AGENT_DEF.supports_image_paths: must be True or False, got 'yes'",
    ):
        assert needle in joined


@pytest.mark.rule("DEFCHECK-LOAD-001", "DEF-BUDGET-001", "DEF-FORMAT-001", "DEF-ID-001")
def test_registry_invariants_are_checked_per_def(tmp_path: Path) -> None:
    body = HEADER + textwrap.dedent(
        """
        A = AgentDef(id="a", name="A", bin="a", build_args=lambda *x: [],
                     stream_format="plain", prompt_delivery=PromptDelivery.ARGV)
        B = AgentDef(id="a", name="B", bin="b", build_args=lambda *x: [],
                     stream_format="json-event-stream", event_parser="nope")
        C = AgentDef(id="bad id", name="", bin="c", build_args=None, stream_format="plain",
                     max_prompt_arg_bytes=100)
        AGENT_DEFS = (A, B, C, 7)
        """
    )
    path = write(tmp_path, "many.py", body)
    (problem,) = problems_of(path)
    assert problem == f"{path}: AGENT_DEFS[3]: must be a harness.defs.types.AgentDef, got int"
    path = write(tmp_path, "many.py", body.replace("(A, B, C, 7)", "(A, B, C)"))
    joined = "\n".join(problems_of(path))
    for needle in (
        "AGENT_DEFS[0].max_prompt_arg_bytes: argv prompt delivery needs a positive integer",
        "AGENT_DEFS[1].event_parser: stream format 'json-event-stream' needs an event parser",
        "AGENT_DEFS[1].id: duplicate id 'a' (also AGENT_DEFS[0])",
        "AGENT_DEFS[2].id: 'bad id' does not match",
        "AGENT_DEFS[2].name: must be a non-empty string",
        "AGENT_DEFS[2].build_args: must be callable, got NoneType",
        "AGENT_DEFS[2].max_prompt_arg_bytes: only argv prompt delivery takes a budget",
    ):
        assert needle in joined


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_transports_are_validated(tmp_path: Path) -> None:
    body = (
        HEADER
        + GOOD
        + textwrap.dedent(
            """
        import dataclasses
        from harness.defs.types import Transport
        AGENT_DEF = dataclasses.replace(
            AGENT_DEF,
            alt_transports=(Transport("rpc", "grpc", lambda *a: []), Transport("rpc", "pi-rpc", 5)),
            default_transport="nope",
        )
        """
        )
    )
    joined = "\n".join(problems_of(write(tmp_path, "t.py", body)))
    for needle in (
        "AGENT_DEF.alt_transports[0].stream_format: unknown stream format 'grpc'",
        "AGENT_DEF.alt_transports[1].name: transport 'rpc' is declared twice",
        "AGENT_DEF.alt_transports[1].build_args: must be callable, got int",
        "AGENT_DEF.default_transport: 'nope' is not a transport of this def",
    ):
        assert needle in joined


@pytest.mark.rule("DEFCHECK-LOAD-001", "DEF-OPTIONS-001")
def test_format_options_are_checked_in_their_groups(tmp_path: Path) -> None:
    body = (
        HEADER
        + GOOD
        + textwrap.dedent(
            """
        import dataclasses
        from harness.defs.types import AcpOptions, PiOptions
        AGENT_DEF = dataclasses.replace(
            AGENT_DEF,
            acp=AcpOptions(turn_end_completes_prompt=True, stage_timeout_ms=-1),
            pi={"session_dir": ".pi"},
        )
        """
        )
    )
    joined = "\n".join(problems_of(write(tmp_path, "opts.py", body)))
    for needle in (
        "AGENT_DEF.acp.turn_end_completes_prompt: def 'acme' sets it, but it is read only by "
        "transports of format 'acp-json-rpc', and this def's transports speak "
        "'claude-stream-json'",
        "AGENT_DEF.acp.stage_timeout_ms: must be a positive integer (ms) or None, got -1",
        "AGENT_DEF.pi: must be a PiOptions (from harness.defs.types), got dict",
    ):
        assert needle in joined
    assert "AGENT_DEF.pi.session_dir" not in joined  # a wrong group is reported once


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_exports_must_exist_and_hold_agent_defs(tmp_path: Path) -> None:
    (problem,) = problems_of(write(tmp_path, "none.py", "X = 1\n"))
    assert "defines neither AGENT_DEF" in problem
    (problem,) = problems_of(write(tmp_path, "dict.py", "AGENT_DEFS = {'a': 1}\n"))
    assert "AGENT_DEFS: must be a list or tuple of AgentDef, got dict" in problem
    (problem,) = problems_of(write(tmp_path, "empty.py", "AGENT_DEFS = []\n"))
    assert "AGENT_DEFS is empty" in problem
    (problem,) = problems_of(write(tmp_path, "str.py", "AGENT_DEF = 'claude'\n"))
    assert "AGENT_DEF: must be a harness.defs.types.AgentDef, got str" in problem


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_paths_that_are_not_def_files(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path / "missing.py")
    assert problem == f"{tmp_path / 'missing.py'}: no such file"
    (problem,) = problems_of(write(tmp_path, "def.json", "{}"))
    assert "not a Python file" in problem
    nul = tmp_path / "nul.py"
    nul.write_bytes(b"x = 1\x00\n")
    (problem,) = problems_of(nul)
    assert problem.startswith(str(nul))
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"x = '\xff'\n")
    (problem,) = problems_of(latin)
    assert problem.startswith(str(latin))


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_reserved_ids_and_neighbour_imports(tmp_path: Path) -> None:
    write(tmp_path, "acme_helpers.py", "FLAGS = ('--yes',)\n")
    body = HEADER + "from acme_helpers import FLAGS\n"
    body += GOOD.replace('("--dangerously-skip-permissions",)', "FLAGS")
    path = write(tmp_path, "acme.py", body)
    assert [d.headless_flags for d in load_def_file(path)] == [("--yes",)]
    (problem,) = problems_of(path, reserved_ids=["acme", *BUILTIN_REGISTRY])
    assert problem == f"{path}: AGENT_DEF.id: 'acme' is already a built-in id"


@pytest.mark.rule("DEFCHECK-LOAD-001")
def test_a_format_slash_parser_spelling_is_told_to_use_event_parser(tmp_path: Path) -> None:
    body = HEADER + GOOD.replace(
        'stream_format="claude-stream-json"', 'stream_format="json-event-stream/codex"'
    )
    (problem,) = problems_of(write(tmp_path, "slash.py", body))
    assert problem == (
        f"{tmp_path / 'slash.py'}: AGENT_DEF.stream_format: unknown stream format "
        "'json-event-stream/codex': a parser is its own field; write "
        "stream_format='json-event-stream', event_parser='codex'"
    )
