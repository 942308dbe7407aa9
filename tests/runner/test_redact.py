"""RUN-STDERR-REDACT-001: prompts and secrets never reach a stderr tail or a reported argv."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.runner import run_agent
from harness.secrets.redact import (
    DEFAULT_TAIL_BYTES,
    MIN_PROMPT_FRAGMENT,
    PROMPT_MARK,
    SECRET_MARK,
    Redactor,
    StderrTail,
)
from tests.runner.conftest import FakeWorld

PROMPT = (
    "Design a landing page for the Zephyr-42 project. Use the palette teal/amber, and "
    "mention the launch date of 12 March in the hero."
)


@pytest.mark.rule("RUN-STDERR-REDACT-001")
@pytest.mark.parametrize(
    "secret",
    [
        "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx",
        "sk-proj-0123456789abcdefABCDEF",
        "ghp_0123456789abcdefghijABCDEFGHIJ",
        "github_pat_11ABCDEFG0123456789_abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-abcdefABCDEF",
        "AIzaSyA-0123456789abcdefghijklmnopqrstu",
    ],
)
def test_key_shaped_tokens_are_redacted(secret: str) -> None:
    out = Redactor().redact(f"error: auth failed with key={secret} (retrying)")
    assert secret not in out
    assert SECRET_MARK in out
    assert out.startswith("error: auth failed with key=")


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_bearer_keeps_the_scheme_and_hides_the_token() -> None:
    out = Redactor().redact("request header: Authorization: Bearer abc.DEF-123_xyz==")
    assert out == f"request header: Authorization: Bearer {SECRET_MARK}"


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_words_that_merely_contain_sk_are_kept() -> None:
    text = "task-runner finished; disk-usage ok; ask-me-anything-please-now"
    assert Redactor().redact(text) == text


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_values_of_secret_named_env_vars_are_redacted() -> None:
    env = {
        "MY_SERVICE_TOKEN": "tok-9f8e7d6c5b4a",
        "DB_PASSWORD": "hunter2hunter2",
        "HOME": "/home/someone",
        "API_KEY": "short",  # below the minimum length: not treated as a secret
    }
    out = Redactor(env=env).redact("using tok-9f8e7d6c5b4a and hunter2hunter2 in /home/someone")
    assert "tok-9f8e7d6c5b4a" not in out and "hunter2hunter2" not in out
    assert "/home/someone" in out


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_the_whole_prompt_and_any_long_fragment_are_redacted() -> None:
    redactor = Redactor(PROMPT)
    assert PROMPT not in redactor.redact(f"prompt was: {PROMPT}")
    # A CLI that echoes a truncated, shifted piece of the prompt.
    fragment = PROMPT[17:70]
    out = redactor.redact(f"[debug] received '{fragment}…'")
    assert fragment not in out
    assert out == f"[debug] received '{PROMPT_MARK}…'"
    # Unrelated text of the same length stays.
    other = "The quick brown fox jumps over the lazy dog again and again."
    assert redactor.redact(other) == other


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_a_short_prompt_is_redacted_where_it_occurs_whole() -> None:
    assert Redactor("say PONG").redact("echo: say PONG!") == f"echo: {PROMPT_MARK}!"


@pytest.mark.rule("RUN-STDERR-REDACT-001")
@settings(max_examples=200, deadline=None)
@given(
    prompt=st.text(min_size=MIN_PROMPT_FRAGMENT, max_size=300),
    start=st.integers(min_value=0, max_value=300),
    prefix=st.text(max_size=40),
    suffix=st.text(max_size=40),
)
def test_no_prompt_fragment_of_the_guaranteed_length_survives(
    prompt: str, start: int, prefix: str, suffix: str
) -> None:
    start %= len(prompt) - MIN_PROMPT_FRAGMENT + 1
    fragment = prompt[start : start + MIN_PROMPT_FRAGMENT]
    assume(fragment.strip())  # a run of whitespace is not the prompt's content
    out = Redactor(prompt).redact(prefix + fragment + suffix)
    assert fragment not in out


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_tail_is_bounded_and_keeps_the_end() -> None:
    tail = StderrTail(Redactor(), limit=1024)
    for i in range(5000):
        tail.feed(f"line {i:05d}\n".encode())
    text = tail.text()
    assert len(text.encode()) <= 1024
    assert text.endswith("line 04999\n")
    assert text.startswith("line ")  # cut at a line start
    assert tail.total_bytes == 5000 * 11


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_a_secret_cut_by_the_tail_boundary_does_not_leak_its_rest() -> None:
    secret = "sk-" + "A" * 40
    tail = StderrTail(Redactor(), limit=64)
    tail.feed(("x" * 100 + secret + " rest of line\n").encode())
    text = tail.text()
    assert "AAAAAAAAAA" not in text
    assert text.endswith(" rest of line\n")


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_tail_splits_utf8_and_lines_across_chunks() -> None:
    tail = StderrTail(Redactor(PROMPT))
    data = f"héllo\nprompt: {PROMPT}\nbye".encode()
    for i in range(len(data)):
        tail.feed(data[i : i + 1])
    assert tail.text() == f"héllo\nprompt: {PROMPT_MARK}\nbye"


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_a_run_redacts_prompt_and_secrets_in_its_stderr_tail(world: FakeWorld) -> None:
    secret = "sk-ant-api03-" + "Q" * 32
    env_secret = "very-secret-value-123"
    scenario = world.scenario_file(
        "leaky",
        [
            {"kind": "stderr", "text": f"debug: prompt={PROMPT}\n"},
            {"kind": "stderr", "text": f"debug: key {secret} token {env_secret}\n"},
            {"kind": "text", "text": "ok"},
        ],
    )
    request = world.request(
        "qwen", scenario, prompt=PROMPT, env_extra={"SERVICE_ACCESS_TOKEN": env_secret}
    )
    result = run_agent(request)
    assert result.succeeded, result.error
    tail = result.stderr_tail
    assert "debug: prompt=" in tail and "debug: key" in tail
    for leaked in (PROMPT, PROMPT[:40], secret, env_secret):
        assert leaked not in tail
    assert tail.count(PROMPT_MARK) == 1 and tail.count(SECRET_MARK) == 2
    assert result.stderr_bytes > len(tail) - 20


@pytest.mark.rule("RUN-STDERR-REDACT-001")
def test_argv_in_the_result_hides_an_argv_prompt(world: FakeWorld, tmp_path: Path) -> None:
    result = run_agent(world.request("aider", "text", prompt=PROMPT))
    assert result.succeeded, result.error
    joined = " ".join(result.argv)
    assert PROMPT not in joined and PROMPT_MARK in joined
    assert "--message" in result.argv
    assert DEFAULT_TAIL_BYTES == 64 * 1024
