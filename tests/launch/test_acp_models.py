"""ACP model discovery (FIDELITY-ACP-MODELS-001; seed 002 §4.5 ``detectAcpModels``, ref §2.6).

An ACP agent lists no models on a subcommand; detection opens a session over stdin and
reads the model state its ``session/new`` result reports.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.shared import ACP_MODEL_DISCOVERY_INPUT, parse_acp_models
from harness.defs.types import ModelOption
from harness.host.launch import RealFileSystem
from harness.runtime.detect import DetectionResult, ProbeRunner, probe_agent
from harness.runtime.fakes_install import install_fakes
from harness.runtime.probe import ProbeResult, run_probe
from tests.support.env import inherited_env

pytestmark = pytest.mark.rule("FIDELITY-ACP-MODELS-001")


def _answer(result: object, *, banner: bool = True) -> str:
    lines = ["starting agent…"] if banner else []
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}))
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 2, "result": result}))
    return "\n".join(lines) + "\n"


def test_the_handshake_opens_a_session_as_a_detect_client() -> None:
    frames = [json.loads(line) for line in ACP_MODEL_DISCOVERY_INPUT.decode().splitlines()]
    assert [f["method"] for f in frames] == ["initialize", "session/new"]
    assert frames[0]["params"]["clientInfo"]["name"] == "open-design-detect"
    assert os.path.isabs(frames[1]["params"]["cwd"]) and frames[1]["params"]["mcpServers"] == []


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"sessionId": "s", "models": {"availableModels": [{"modelId": "m1", "name": "M 1"}]}},
            [ModelOption("m1", "M 1")],
        ),
        (
            {
                "sessionId": "s",
                "configOptions": [
                    {"id": "mode", "options": [{"value": "x", "name": "X"}]},
                    {"id": "Model", "options": [{"value": "k/a", "name": ""}]},
                ],
            },
            [ModelOption("k/a", "k/a")],
        ),
        ({"sessionId": "s"}, None),
        ({"sessionId": "s", "models": {"availableModels": [{"modelId": 3}]}}, None),
    ],
)
def test_the_session_new_result_gives_the_models(
    result: dict[str, object], expected: list[ModelOption] | None
) -> None:
    assert parse_acp_models(_answer(result)) == expected


def test_no_session_new_answer_is_no_models() -> None:
    assert parse_acp_models("") is None
    error = json.dumps({"jsonrpc": "2.0", "id": 2, "error": {"code": -32000, "message": "auth"}})
    assert parse_acp_models(error + "\n") is None


def _detect(agent: str, tmp_path: Path, runner: ProbeRunner) -> DetectionResult:
    bin_dir = tmp_path / "bin"
    install_fakes(bin_dir, BUILTIN_DEFS)
    env = inherited_env(("FAKE_CLI_",), tmp_path)
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    defn = get_agent_def(agent, BUILTIN_DEFS)
    return asyncio.run(
        probe_agent(
            defn,
            env=env,
            platform=sys.platform,
            home=str(tmp_path),
            fs=RealFileSystem(),
            runner=runner,
        )
    )


@pytest.mark.skipif(os.name == "nt", reason="the fake shims are POSIX scripts")
@pytest.mark.parametrize(
    ("agent", "model"), [("trae-cli", "doubao-seed-code"), ("kilo", "kilo/openai/gpt-5.1")]
)
def test_detection_lists_the_models_the_fake_agent_reports(
    agent: str, model: str, tmp_path: Path
) -> None:
    seen: list[bytes | None] = []

    async def runner(
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        timeout_s: float,
        max_output_bytes: int,
        cwd: str | None = None,
        stdin: bytes | None = None,
    ) -> ProbeResult:
        seen.append(stdin)
        return await run_probe(
            argv,
            env=env,
            timeout_s=timeout_s,
            max_output_bytes=max_output_bytes,
            cwd=cwd,
            stdin=stdin,
        )

    result = _detect(agent, tmp_path, runner)
    assert result.models_source == "live", result.diagnostics
    assert model in [m.id for m in result.models]
    assert ACP_MODEL_DISCOVERY_INPUT in seen
