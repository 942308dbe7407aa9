"""Secret redaction and path placeholders (``harness/secrets/scrub.py``).

Rules: RECORD-SECRET-ENV-001, RECORD-SECRET-SHAPE-001, RECORD-SECRET-LITERAL-001,
RECORD-PATHS-001. Every key below is a made-up value in the documented shape of its
provider (none is real).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.recording.record import (
    RecordingHeader,
    RecordingWriter,
    parse_recording,
    restore_paths,
)
from harness.secrets.scrub import (
    MIN_SECRET_LITERAL,
    REDACTED,
    Scrubber,
    StreamScrubber,
    is_secret_name,
    restore_bytes,
    restore_text,
)
from tests.helpers import split_at

# Made-up keys in each documented shape.
OPENAI_KEY = "sk-proj-Q7x2LmN9pR4tV8wY1zA3bC5dE6fG"
ANTHROPIC_KEY = "sk-ant-api03-Zk4Jh8Lp2Qw6Er0Ty3Ui7Op1As5Df9Gh-Jk2Lz4Xc6Vb8NmAA"
GITHUB_PAT_CLASSIC = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
GITHUB_OAUTH = "gho_Xy12Ab34Cd56Ef78Gh90Ij12Kl34Mn56Op78"
GITHUB_FINE = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SLACK_BOT = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_USER = "xoxp-123456789012-123456789012-123456789012-abcdef0123456789"
GOOGLE_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
BEARER_TOKEN = "mF_9.B5f-4.1JqM"

SHAPES = [
    pytest.param(OPENAI_KEY, id="openai"),
    pytest.param(ANTHROPIC_KEY, id="anthropic"),
    pytest.param(GITHUB_PAT_CLASSIC, id="ghp"),
    pytest.param(GITHUB_OAUTH, id="gho"),
    pytest.param(GITHUB_FINE, id="github_pat"),
    pytest.param(AWS_KEY_ID, id="aws"),
    pytest.param(SLACK_BOT, id="xoxb"),
    pytest.param(SLACK_USER, id="xoxp"),
    pytest.param(GOOGLE_KEY, id="google"),
    pytest.param(JWT, id="jwt"),
]


# -- env names (RECORD-SECRET-ENV-001) -----------------------------------------------------------


@pytest.mark.rule("RECORD-SECRET-ENV-001")
@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "openai_api_key",
        "DEEPSEEK_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "PGPASSWORD",
        "MYSQL_PWD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPM_CONFIG__AUTH",
        "HTTP_AUTHORIZATION",
        "SIGNING_KEY",
        "MY_SECRET",
        "GPG_PASSPHRASE",
    ],
)
def test_credential_names_are_secret(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.rule("RECORD-SECRET-ENV-001")
@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "PWD", "OLDPWD", "GIT_AUTHOR_NAME", "LANG", "TERM", "SHELL", "USER"]
)
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.rule("RECORD-SECRET-ENV-001")
def test_scrub_env_keeps_names_and_redacts_secret_values() -> None:
    scrubber = Scrubber(paths={"home": "/home/alice", "cwd": "/home/alice/site"})
    env = {
        "ANTHROPIC_API_KEY": "plain-value-123",
        "GH_TOKEN": "x",
        "EMPTY_TOKEN": "",
        "HOME": "/home/alice",
        "PWD": "/home/alice/site",
        "OPENAI_BASE_URL": f"https://proxy.invalid/v1?key={OPENAI_KEY}",
        "LANG": "C.UTF-8",
    }
    assert scrubber.scrub_env(env) == {
        "ANTHROPIC_API_KEY": REDACTED,
        "GH_TOKEN": REDACTED,
        "EMPTY_TOKEN": "",
        "HOME": "{home}",
        "PWD": "{cwd}",
        "OPENAI_BASE_URL": f"https://proxy.invalid/v1?key={REDACTED}",
        "LANG": "C.UTF-8",
    }


# -- key shapes (RECORD-SECRET-SHAPE-001) -------------------------------------------------------


@pytest.mark.rule("RECORD-SECRET-SHAPE-001")
@pytest.mark.parametrize("key", SHAPES)
@pytest.mark.parametrize(
    "template",
    ["{}", "key={} rest", '{{"api_key":"{}"}}', "a\n{}\nb", "({})", "'{}'"],
)
def test_each_key_shape_is_redacted(key: str, template: str) -> None:
    text = template.format(key)
    scrubbed = Scrubber().scrub_text(text)
    assert key not in scrubbed
    assert scrubbed == template.format(REDACTED)


@pytest.mark.rule("RECORD-SECRET-SHAPE-001")
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization: Bearer {BEARER_TOKEN}", f"Authorization: Bearer {REDACTED}"),
        (f"authorization: bearer   {BEARER_TOKEN}\n", f"authorization: bearer   {REDACTED}\n"),
        (f'"Authorization":"Bearer {JWT}"', f'"Authorization":"Bearer {REDACTED}"'),
    ],
)
def test_bearer_keeps_its_scheme_word(text: str, expected: str) -> None:
    assert Scrubber().scrub_text(text) == expected


@pytest.mark.rule("RECORD-SECRET-SHAPE-001")
@pytest.mark.parametrize(
    "text",
    [
        "task-runner-configuration-file",  # "sk-" inside a word
        "risk-assessment-framework-v2",
        "sk-short",  # too short to be a key
        "AKIAIOSFODNN7EXAMPL",  # 15 characters after AKIA
        "AKIAIOSFODNN7EXAMPLEX",  # one too many: another kind of token
        "Bearer of bad news",  # "of" is shorter than a token
        "ghp_short",
        "eyJhbGciOiJIUzI1NiJ9 is only a header",
    ],
)
def test_look_alikes_are_kept(text: str) -> None:
    assert Scrubber().scrub_text(text) == text


# -- literal secret values (RECORD-SECRET-LITERAL-001) ------------------------------------------


@pytest.mark.rule("RECORD-SECRET-LITERAL-001")
def test_secret_env_values_are_redacted_in_data_in_both_spellings() -> None:
    password = 'correct "horse" battery'
    scrubber = Scrubber(env={"DB_PASSWORD": password, "NOT_SECRET": "correct horse"})
    as_json = json.dumps({"pw": password})
    assert scrubber.scrub_text(f"pw={password};") == f"pw={REDACTED};"
    assert scrubber.scrub_text(as_json) == json.dumps({"pw": REDACTED})


@pytest.mark.rule("RECORD-SECRET-LITERAL-001")
def test_short_secret_values_are_not_searched_in_data() -> None:
    # A value this short would erase ordinary words; the header still redacts it.
    short = "dev"
    assert len(short) < MIN_SECRET_LITERAL
    scrubber = Scrubber(env={"API_KEY": short})
    assert scrubber.scrub_text("dev server") == "dev server"
    assert scrubber.scrub_env({"API_KEY": short}) == {"API_KEY": REDACTED}


def _stream(scrubber: Scrubber, chunks: list[bytes], max_hold: int = 16 * 1024) -> list[bytes]:
    stream = StreamScrubber(scrubber, max_hold=max_hold)
    out: dict[int, bytes] = {}
    for key, chunk in enumerate(chunks):
        out.update(stream.push(key, chunk))
    out.update(stream.flush())
    assert sorted(out) == list(range(len(chunks))), "every chunk is released exactly once"
    return [out[k] for k in range(len(chunks))]


_PIECES = [*"abcXYZ019 _-./:={}!\"'\n\t", "é", "☃", "cwd", "home"]
#: Text with nothing secret in it.
_PLAIN = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)
#: Text that may also hold the beginnings of key shapes.
_TEXT = st.lists(st.sampled_from([*_PIECES, "sk-", "Bearer"]), max_size=30).map("".join)
_LITERAL_SECRET = "s3cr3t value/with spaces+symbols!"


@pytest.mark.rule("RECORD-SECRET-LITERAL-001", "RECORD-SECRET-SHAPE-001")
@settings(max_examples=200)
@given(
    before=_TEXT,
    after=_TEXT,
    secret=st.sampled_from(
        [_LITERAL_SECRET, OPENAI_KEY, ANTHROPIC_KEY, GITHUB_FINE, AWS_KEY_ID, SLACK_BOT, JWT]
    ),
    separator=st.sampled_from([" ", "\n", '"', "=", ":", "\t"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=6),
    cut_in_secret=st.integers(min_value=1, max_value=200),
)
@example(before="", after="", secret=_LITERAL_SECRET, separator=" ", cuts=[], cut_in_secret=1)
def test_a_secret_split_across_chunks_never_reaches_the_recording(
    *, before: str, after: str, secret: str, separator: str, cuts: list[int], cut_in_secret: int
) -> None:
    # A key shape is recognised at a token boundary; a literal value anywhere.
    text = f"{before}{separator}{secret}{separator}{after}"
    data = text.encode()
    start = data.index(secret.encode(), len(before.encode()))
    # Always one cut inside the secret, plus arbitrary others.
    inner = start + 1 + cut_in_secret % (len(secret) - 1)
    chunks = split_at(data, [*cuts, inner])
    header = RecordingHeader(
        agent="a",
        stream_format="plain",
        event_parser=None,
        transport="default",
        argv=("cli", secret),
        prompt_delivery="stdin",
        platform="linux",
        cli_version=None,
        env={"SERVICE_PASSWORD": _LITERAL_SECRET, "HOME": "/h"},
    )
    writer = RecordingWriter(header, cwd="/w")
    written = writer.header_line()
    for index, chunk in enumerate(chunks):
        written += writer.chunk("stdout", chunk, index)
    written += writer.exit(0, None, len(chunks))
    assert secret not in written
    recording = parse_recording(written.encode(), "mem")
    stream = recording.stream("stdout")
    assert secret.encode() not in stream
    assert REDACTED.encode() in stream
    # Boundaries kept: one line per chunk given, even one that held only the secret's tail.
    assert len(recording.chunks) == len([c for c in chunks if c])


@pytest.mark.rule("RECORD-SECRET-LITERAL-001", "RECORD-SECRET-SHAPE-001", "RECORD-PATHS-001")
@settings(max_examples=200)
@given(
    parts=st.lists(
        st.one_of(
            _TEXT,
            st.sampled_from(
                [
                    _LITERAL_SECRET,
                    f" {OPENAI_KEY} ",
                    f"Bearer {BEARER_TOKEN}",
                    "/home/alice/site/index.html",
                    "/home/alice",
                    "/home/alicex",
                    "{cwd}",
                    "{!home}",
                    "{tmp:json}",
                    "/tmp/x",
                ]
            ),
        ),
        max_size=8,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=10),
)
def test_streaming_equals_scrubbing_the_whole_stream(parts: list[str], cuts: list[int]) -> None:
    """However the stream is cut, the scrubbed bytes are those of the whole stream."""
    scrubber = Scrubber(
        env={"SERVICE_PASSWORD": _LITERAL_SECRET},
        paths={"cwd": "/home/alice/site", "home": "/home/alice", "tmp": "/tmp"},
    )
    data = "".join(parts).encode()
    chunks = split_at(data, cuts)
    assert b"".join(_stream(scrubber, chunks)) == scrubber.scrub_bytes(data)


@pytest.mark.rule("RECORD-SECRET-SHAPE-001")
def test_chunk_boundaries_stay_where_they_were() -> None:
    scrubber = Scrubber()
    chunks = [b"first line\nkey=sk-proj-", b"Q7x2LmN9pR4tV8wY1zA3 end\n", b"last"]
    assert _stream(scrubber, chunks) == [
        b"first line\nkey=" + REDACTED.encode(),
        b" end\n",
        b"last",
    ]


@pytest.mark.rule("RECORD-SECRET-SHAPE-001")
def test_a_held_token_run_is_bounded() -> None:
    # A token run longer than max_hold (e.g. base64 data) is released, not held forever.
    stream = StreamScrubber(Scrubber(), max_hold=32)
    released = stream.push(0, b"A" * 40)
    assert released == []  # the whole chunk is one token run: nothing safe yet
    released = stream.push(1, b"B" * 40)
    assert released == [(0, b"A" * 40)]
    assert stream.pending_bytes == 40


# -- path placeholders (RECORD-PATHS-001) -------------------------------------------------------


@pytest.mark.rule("RECORD-PATHS-001")
def test_paths_become_placeholders_longest_first_at_name_boundaries() -> None:
    scrubber = Scrubber(paths={"cwd": "/home/alice/site/", "home": "/home/alice", "tmp": "/tmp"})
    text = "cd /home/alice/site && ls /home/alice /home/alicex /tmp/x /tmpfoo"
    assert scrubber.scrub_text(text) == "cd {cwd} && ls {home} /home/alicex {tmp}/x /tmpfoo"


@pytest.mark.rule("RECORD-PATHS-001")
def test_windows_paths_have_a_json_spelling() -> None:
    cwd = "C:\\Users\\bob\\proj"
    scrubber = Scrubber(paths={"cwd": cwd})
    line = json.dumps({"cwd": cwd, "file": cwd + "\\a.txt"})
    scrubbed = scrubber.scrub_text(f"{cwd} {line}")
    assert scrubbed == '{cwd} {"cwd": "{cwd:json}", "file": "{cwd:json}\\\\a.txt"}'
    other = "D:\\w"
    restored = restore_text(scrubbed, {"cwd": other, "home": "/h", "tmp": "/t"})
    assert restored == f"{other} " + json.dumps({"cwd": other, "file": other + "\\a.txt"})


@pytest.mark.rule("RECORD-PATHS-001")
def test_roots_are_never_placeholders() -> None:
    scrubber = Scrubber(paths={"home": "/", "tmp": "C:\\", "cwd": ""})
    assert scrubber.scrub_text("/usr/bin C:\\x") == "/usr/bin C:\\x"


@pytest.mark.rule("RECORD-PATHS-001")
def test_literal_placeholder_text_is_escaped_and_restored() -> None:
    scrubber = Scrubber(paths={"cwd": "/w"})
    text = "f'{cwd}/x' {!home} {{tmp}} /w/y {cwd:json}"
    scrubbed = scrubber.scrub_text(text)
    assert scrubbed == "f'{!cwd}/x' {!!home} {{!tmp}} {cwd}/y {!cwd:json}"
    values = {"cwd": "/w", "home": "/h", "tmp": "/t"}
    assert restore_text(scrubbed, values) == text
    assert restore_bytes(scrubbed.encode(), values) == text.encode()


@pytest.mark.rule("RECORD-PATHS-001")
def test_restoring_needs_every_value() -> None:
    with pytest.raises(ValueError, match="tmp"):
        restore_text("{cwd}", {"cwd": "/w", "home": "/h"})


@pytest.mark.rule("RECORD-PATHS-001")
def test_unknown_placeholder_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholder"):
        Scrubber(paths={"desktop": "/d"})


@pytest.mark.rule("RECORD-PATHS-001")
@settings(max_examples=200)
@given(
    parts=st.lists(
        st.one_of(
            _PLAIN,
            st.sampled_from(
                ["/home/al", "/home/al/p", "/tmp", "{", "}", "!", "{!", "cwd}", ":json}", "{{"]
            ),
        ),
        max_size=12,
    )
)
@example(parts=["{", "/home/al", "}"])
@example(parts=["{!", "/tmp", "cwd}"])
def test_placeholders_round_trip_losslessly(parts: list[str]) -> None:
    text = "".join(parts)
    paths = {"cwd": "/home/al/p", "home": "/home/al", "tmp": "/tmp"}
    scrubbed = Scrubber(paths=paths).scrub_text(text)
    assert restore_text(scrubbed, paths) == text


@pytest.mark.rule("RECORD-PATHS-001")
def test_restore_paths_puts_other_directories_back() -> None:
    header = RecordingHeader(
        agent="a",
        stream_format="plain",
        event_parser=None,
        transport="default",
        argv=("/home/al/bin/cli", "--cwd", "/home/al/p"),
        prompt_delivery="stdin",
        platform="linux",
        cli_version=None,
        env={"HOME": "/home/al", "TMPDIR": "/tmp/"},
    )
    writer = RecordingWriter(header, cwd="/home/al/p", home="/home/al", tmp="/tmp")
    text = writer.chunk("stdout", b"wrote /home/al/p/a.html via /tmp/x\n", 1)
    text += writer.exit(0, None, 2)
    recording = parse_recording(text.encode(), "mem")
    assert recording.header.argv == ("{home}/bin/cli", "--cwd", "{cwd}")
    moved = restore_paths(recording, cwd="/srv/w", home="/srv", tmp="/var/tmp")
    assert moved.header.argv == ("/srv/bin/cli", "--cwd", "/srv/w")
    assert moved.header.env == {"HOME": "/srv", "TMPDIR": "/var/tmp/"}
    assert moved.stream("stdout") == b"wrote /srv/w/a.html via /var/tmp/x\n"
    with pytest.raises(ValueError, match="already restored"):
        restore_paths(moved, cwd="/a", home="/b", tmp="/c")
