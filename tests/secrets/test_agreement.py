"""SECRET-ONE-001: every place that redacts asks one detector and agrees with the others on
one table of secret names, secret-shaped text and look-alikes (``tests/secrets/cases.py``).

SECRET-URL-001: a credential URL's password is gone everywhere; its host stays.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.fakes import clean_fake_env, holds_secret
from harness.defs.registry import get_agent_def
from harness.mcp.servers import McpServerConfig, McpTransport
from harness.modelserver.log import redacted
from harness.secrets.redact import SECRET_MARK, Redactor
from harness.secrets.scrub import REDACTED, Scrubber
from tests.secrets.cases import (
    PLAIN_NAMES,
    PLAIN_TEXTS,
    PLAIN_VALUE,
    SECRET_NAMES,
    SECRET_TEXTS,
)

# -- names: does the caller treat a variable called ``name`` as a secret? -------------------------


def _scrubber_header(name: str) -> bool:
    return Scrubber().scrub_env({name: PLAIN_VALUE})[name] == REDACTED


def _scrubber_data(name: str) -> bool:
    return PLAIN_VALUE not in Scrubber(env={name: PLAIN_VALUE}).scrub_text(f"x {PLAIN_VALUE} y")


def _redactor(name: str) -> bool:
    return PLAIN_VALUE not in Redactor(env={name: PLAIN_VALUE}).redact(f"x {PLAIN_VALUE} y")


def _fakes(name: str) -> bool:
    env = clean_fake_env(
        {name: PLAIN_VALUE}, get_agent_def("claude"), Path("/fake/bin"), Path("/fake/home")
    )
    return name not in env


def _log_header(name: str) -> bool:
    record = redacted(t=0.0, method="GET", path="/", query="", headers={name: PLAIN_VALUE})
    return record.headers[name.lower()] == SECRET_MARK


def _log_query(name: str) -> bool:
    record = redacted(t=0.0, method="GET", path="/", query=f"{name}={PLAIN_VALUE}", headers={})
    return PLAIN_VALUE not in record.query


NAME_CALLERS: dict[str, Callable[[str], bool]] = {
    "scrub header": _scrubber_header,
    "scrub data": _scrubber_data,
    "redact": _redactor,
    "fakes env": _fakes,
    "modelserver header": _log_header,
    "modelserver query": _log_query,
}


@pytest.mark.rule("SECRET-ONE-001")
@pytest.mark.parametrize("caller", sorted(NAME_CALLERS))
@pytest.mark.parametrize(
    ("name", "secret"),
    [*((n, True) for n in SECRET_NAMES), *((n, False) for n in PLAIN_NAMES)],
)
def test_every_caller_agrees_on_secret_names(caller: str, name: str, secret: bool) -> None:
    assert NAME_CALLERS[caller](name) is secret


# -- text: what the caller shows of ``text`` ------------------------------------------------------


def _fakes_text(text: str) -> str:
    # A fake is handed a variable or not: a variable holding secret-shaped text is dropped.
    return "" if holds_secret("NOTE", text) else text


def _log_text(text: str) -> str:
    model = redacted(t=0.0, method="POST", path="/", query="", headers={}, model=text).model
    assert isinstance(model, str)
    return model


TEXT_CALLERS: dict[str, Callable[[str], str]] = {
    "scrub": Scrubber().scrub_text,
    "redact": Redactor().redact,
    "fakes env": _fakes_text,
    "modelserver log": _log_text,
}


@pytest.mark.rule("SECRET-ONE-001")
@pytest.mark.parametrize("caller", sorted(TEXT_CALLERS))
@pytest.mark.parametrize(("text", "part"), SECRET_TEXTS)
def test_every_caller_hides_secret_shaped_text(caller: str, text: str, part: str | None) -> None:
    shown = TEXT_CALLERS[caller](f"seen: {text} (end)")
    assert (part or text) not in shown


@pytest.mark.rule("SECRET-ONE-001")
@pytest.mark.parametrize("caller", sorted(TEXT_CALLERS))
@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_every_caller_keeps_look_alikes(caller: str, text: str) -> None:
    assert TEXT_CALLERS[caller](text) == text


# -- credential URLs, MCP included ----------------------------------------------------------------

URLS = [
    ("postgres://bob:hunter2pass@db.internal:5432/app", "hunter2pass", "db.internal"),
    ("https://deploy:p%40ss-w0rd@git.example.com/org/repo", "p%40ss-w0rd", "git.example.com"),
    ("https://mcp:tok3n-Value-99@mcp.example.org/sse", "tok3n-Value-99", "mcp.example.org"),
]


def _mcp(url: str) -> str:
    return repr(McpServerConfig(id="remote", transport=McpTransport.HTTP, url=url))


URL_CALLERS: dict[str, Callable[[str], str]] = {**TEXT_CALLERS, "mcp": _mcp}


@pytest.mark.rule("SECRET-URL-001")
@pytest.mark.rule("SECRET-ONE-001")
@pytest.mark.parametrize("caller", sorted(URL_CALLERS))
@pytest.mark.parametrize(("url", "password", "host"), URLS)
def test_a_url_password_is_hidden_and_its_host_kept(
    caller: str, url: str, password: str, host: str
) -> None:
    shown = URL_CALLERS[caller](url)
    assert password not in shown
    if caller != "fakes env":
        assert host in shown


@pytest.mark.rule("SECRET-URL-001")
def test_the_url_user_and_scheme_stay_around_the_mark() -> None:
    url = "postgres://bob:hunter2pass@db.internal:5432/app"
    assert Scrubber().scrub_text(url) == f"postgres://bob:{REDACTED}@db.internal:5432/app"
    assert Redactor().redact(url) == f"postgres://bob:{SECRET_MARK}@db.internal:5432/app"


@pytest.mark.rule("SECRET-URL-001")
def test_a_url_password_from_the_env_is_redacted_alone_and_decoded() -> None:
    # DATABASE_URL is not a secret name; the password it holds is a secret all the same.
    env = {"DATABASE_URL": "postgres://bob:p%40ss-w0rd-42@db/app"}
    out = Redactor(env=env).redact("retrying with p@ss-w0rd-42 and p%40ss-w0rd-42")
    assert out == f"retrying with {SECRET_MARK} and {SECRET_MARK}"
    assert "p@ss-w0rd-42" not in Scrubber(env=env).scrub_text("login p@ss-w0rd-42 failed")
