"""SECRET-ONE-001: shapes the detector knows that some callers used to miss (PEM private keys,
JWTs in the runner's redactor), including a PEM block cut across stream chunks."""

from __future__ import annotations

import pytest

from harness.secrets.redact import SECRET_MARK, Redactor
from harness.secrets.scrub import REDACTED, Scrubber, StreamScrubber
from tests.secrets.cases import JWT, PEM, PEM_BODY

_AFTER_BEGIN = len("-----BEGIN RSA PRIVATE KEY-----\n")


@pytest.mark.rule("SECRET-ONE-001")
def test_a_jwt_in_stderr_is_redacted() -> None:
    assert Redactor().redact(f"token={JWT};") == f"token={SECRET_MARK};"


@pytest.mark.rule("SECRET-ONE-001")
def test_a_pem_private_key_is_redacted_whole() -> None:
    assert Scrubber().scrub_text(f"key:\n{PEM}\nnext") == f"key:\n{REDACTED}\nnext"


@pytest.mark.rule("SECRET-ONE-001")
def test_a_pem_key_cut_off_before_its_end_line_loses_its_material() -> None:
    cut = "-----BEGIN PRIVATE KEY-----\\n" + PEM_BODY + "\\n" + PEM_BODY[::-1]
    out = Redactor().redact(f'{{"key":"{cut}"}}')
    assert out == f'{{"key":"{SECRET_MARK}"}}'


@pytest.mark.rule("SECRET-ONE-001")
@pytest.mark.parametrize(
    "cut", [10, 40, _AFTER_BEGIN + 5, _AFTER_BEGIN + len(PEM_BODY) + 1, len(PEM) - 3]
)
def test_a_pem_block_split_across_chunks_never_reaches_the_recording(cut: int) -> None:
    data = f"before\n{PEM}\nafter\n".encode()
    at = len(b"before\n") + cut
    stream = StreamScrubber(Scrubber())
    out = [*stream.push(0, data[:at]), *stream.push(1, data[at:]), *stream.flush()]
    joined = b"".join(chunk for _, chunk in sorted(out)).decode()
    assert PEM_BODY not in joined
    assert joined == f"before\n{REDACTED}\nafter\n"
