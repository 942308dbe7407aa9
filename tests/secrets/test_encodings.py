"""SECRET-ENCODED-001: a known secret is redacted in every spelling a CLI is likely to print,
by every caller that knows it (the recording scrubber, streamed or whole, and the runner's
redactor)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from harness.secrets.detect import MIN_SECRET_VALUE
from harness.secrets.redact import SECRET_MARK, Redactor
from harness.secrets.scrub import REDACTED, Scrubber, StreamScrubber

ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "json": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "json ascii": lambda s: json.dumps(s)[1:-1],
    "json ascii upper hex": lambda s: re.sub(
        r"\\u[0-9a-f]{4}", lambda m: m.group().upper().replace("\\U", "\\u"), json.dumps(s)[1:-1]
    ),
    "json slash": lambda s: json.dumps(s)[1:-1].replace("/", "\\/"),
    "json twice": lambda s: json.dumps(json.dumps(s)[1:-1])[1:-1],
    "percent": lambda s: quote(s.encode("utf-8", "surrogatepass"), safe=""),
    "percent path": lambda s: quote(s.encode("utf-8", "surrogatepass")),
    "form": lambda s: quote_plus(s.encode("utf-8", "surrogatepass")),
    "base64": lambda s: base64.b64encode(s.encode("utf-8", "surrogatepass")).decode(),
    "base64 url": lambda s: base64.urlsafe_b64encode(s.encode("utf-8", "surrogatepass")).decode(),
}


def _scrub(secret: str, text: str) -> str:
    return Scrubber(env={"API_TOKEN": secret}).scrub_text(text).replace(REDACTED, "\x00")


def _stream(secret: str, text: str) -> str:
    # One byte at a time: the worst cut for a multi-byte spelling.
    stream = StreamScrubber(Scrubber(secrets=[secret]))
    data = text.encode("utf-8", "surrogateescape")
    out = [chunk for key, byte in enumerate(data) for _, chunk in stream.push(key, bytes([byte]))]
    out += [chunk for _, chunk in stream.flush()]
    return b"".join(out).decode("utf-8", "surrogateescape").replace(REDACTED, "\x00")


def _redact(secret: str, text: str) -> str:
    return Redactor(secrets=[secret]).redact(text).replace(SECRET_MARK, "\x00")


CALLERS: dict[str, Callable[[str, str], str]] = {
    "scrub": _scrub,
    "scrub stream": _stream,
    "redact": _redact,
}

#: Secrets: any text without NUL (the mark's stand-in), surrogates or surrounding spaces.
_SECRETS = (
    st.text(
        st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
        min_size=MIN_SECRET_VALUE,
        max_size=40,
    )
    .map(str.strip)
    .filter(lambda s: len(s.encode()) >= MIN_SECRET_VALUE)
)


@pytest.mark.rule("SECRET-ENCODED-001")
@pytest.mark.parametrize("caller", sorted(CALLERS))
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@settings(max_examples=60, deadline=None)
@given(secret=_SECRETS, before=st.text(max_size=12), after=st.text(max_size=12))
@example(secret="pässwörd-ünïcode", before='{"k":"', after='"}')
@example(secret='a/b c+d%e"f\\g', before="?q=", after="&x=1")
def test_no_spelling_of_a_known_secret_survives(
    caller: str, encoding: str, secret: str, before: str, after: str
) -> None:
    spelled = ENCODINGS[encoding](secret)
    assume("\x00" not in before + after)
    shown = CALLERS[caller](secret, before + spelled + after)
    assert spelled not in shown


@pytest.mark.rule("SECRET-ENCODED-001")
def test_a_non_ascii_secret_printed_by_json_dumps_is_redacted() -> None:
    secret = "mot-de-passe-été-ß"
    line = json.dumps({"env": {"DB_PASSWORD": secret}})  # ensure_ascii: \u00e9 ...
    assert "\\u00e9" in line
    escaped = json.dumps(secret)[1:-1]
    assert Redactor(secrets=[secret]).redact(line) == line.replace(escaped, SECRET_MARK)
    assert Scrubber(secrets=[secret]).scrub_text(line) == json.dumps(
        {"env": {"DB_PASSWORD": REDACTED}}
    )
