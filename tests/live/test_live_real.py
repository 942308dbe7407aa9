"""Real CLIs, offline (LIVE-DIFF-*, LIVE-LOOPBACK-001, LIVE-REQUESTS-001).

Each test skips with the reason when the pinned CLI is not installed under the live cache
(``harness live install claude codex pi``; ``$ADAPTER_HARNESS_CACHE`` or ``.cache/live``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.defs.registry import get_agent_def
from harness.live.conform import real_findings
from harness.live.install import default_cache_dir, installed_bin
from harness.live.recipes import recipe_for

pytestmark = [pytest.mark.live, pytest.mark.posix, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[2]


def _need(agent: str) -> None:
    recipe = recipe_for(agent)
    assert recipe is not None
    if installed_bin(recipe, default_cache_dir()) is None:
        pkg = recipe.package
        pytest.skip(
            f"{agent}: {pkg.key if pkg else ''} is not installed under "
            f"{default_cache_dir()} (harness live install {agent})"
        )


@pytest.mark.rule(
    "LIVE-DIFF-KINDS-001",
    "LIVE-DIFF-TEXT-001",
    "LIVE-DIFF-TOOLS-001",
    "LIVE-DIFF-RESULTS-001",
    "LIVE-DIFF-SESSION-001",
    "LIVE-DIFF-STATUS-001",
    "LIVE-REQUESTS-001",
)
@pytest.mark.parametrize(
    ("agent", "cases"),
    [
        ("claude", ["text", "shell", "api_error"]),
        ("codex", ["text", "happy", "cancel"]),
        ("pi", ["text", "shell"]),
    ],
)
def test_real_cli_matches_its_fake(agent: str, cases: list[str]) -> None:
    _need(agent)
    found = real_findings(get_agent_def(agent), scenarios=cases)
    bad = [(r, s, f.reason) for r, s, f in found if f.status.value != "pass"]
    assert found and not bad, bad


PROBE = r"""
import json, sys
from harness.defs.registry import get_agent_def
from harness.live.session import run_live
run = run_live(get_agent_def(sys.argv[1]), "text")
try:
    print(json.dumps({
        "outcome": run.result.status.value,
        "text": "".join(getattr(e, "delta", "") for e in run.events if e.type == "text_delta"),
        "hosts": sorted({r.headers.get("host", "") for r in run.requests}),
        "n": len(run.requests),
    }))
finally:
    run.dirs.cleanup()
"""


@pytest.mark.rule("LIVE-LOOPBACK-001")
def test_a_live_cli_runs_with_loopback_as_the_only_network() -> None:
    _need("claude")
    probe = (
        subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
        if os.path.exists("/usr/bin/unshare")
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip("unshare -rn (a user + network namespace) is not permitted here")
    # ip link set lo up: a new namespace's loopback starts down.
    script = f"ip link set lo up 2>/dev/null; exec {sys.executable} -c '{PROBE}' claude"
    proc = subprocess.run(
        ["unshare", "-rn", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["outcome"] == "succeeded" and out["text"] == "Hello from the fake model. PONG."
    assert out["n"] >= 1 and all(h.startswith("127.0.0.1:") for h in out["hosts"]), out


@pytest.mark.rule("RECORD-LADDER-001", "REPLAY-CANCEL-LADDER-001", "REPLAY-CANCEL-FRAMES-001")
@pytest.mark.parametrize(
    ("agent", "transport", "two_way"),
    [("pi", None, True), ("codex", "exec-json", False), ("codex", "app-server", True)],
)
def test_a_cancelled_real_run_is_recorded_with_its_ladder(
    tmp_path: Path, agent: str, transport: str | None, two_way: bool
) -> None:
    """The real CLI, cancelled while the scripted model holds its stream open (the recipe's
    ``cancel`` case): the recording keeps the ladder and replays as the cancel it was, the
    frames a two-way transport sent after the cancel included."""
    from harness.ladder import StepKind
    from harness.live.session import run_live
    from harness.recording.record import load_recording
    from harness.recording.replay import replay_recording

    _need(agent)
    path = tmp_path / f"{agent}-cancel.jsonl"
    run = run_live(get_agent_def(agent), "cancel", transport=transport, record=path)
    try:
        assert [t.result.status.value for t in run.turns] == ["cancelled"]
    finally:
        run.dirs.cleanup()
    recording = load_recording(path)
    kinds = [s.kind for s in recording.steps]
    assert kinds[0] is StepKind.CANCEL and kinds[-1] is StepKind.REAPED
    result = replay_recording(recording)
    verdicts = {f.rule: f.verdict for f in result.findings}
    if two_way:
        assert verdicts["REPLAY-CANCEL-FRAMES-001"] == "pass", result.findings
    assert "fail" not in verdicts.values(), result.findings
    assert result.status is not None and result.status.value == "cancelled"
