"""The shared table of secrets and look-alikes every redacting caller is judged against.

Every key is a made-up value in the documented shape of its provider (none is real).
"""

from __future__ import annotations

#: Env var, header and parameter names that hold a credential.
SECRET_NAMES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "DB_PASSWORD",
    "PGPASSWORD",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SENTRY_DSN",
    "NPM_CONFIG__AUTH",
    "AZURE_CLIENT_SECRET",
    "SSH_PASSPHRASE",
    "api_key",
)
#: Names that look close but hold nothing secret.
PLAIN_NAMES = (
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "LANG",
    "GIT_AUTHOR_NAME",
    "KEYBOARD_LAYOUT",
    "AUTHORITY_HINT",
)
#: A value with no secret shape, long enough to be searched for.
PLAIN_VALUE = "s3cr3t-value-0042"

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEowIBAAKCAQEA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"

#: ``(text, the secret part of it)``: what must disappear from any output.
SECRET_TEXTS = (
    ("sk-ant-api03-Zk4Jh8Lp2Qw6Er0Ty3Ui7Op1As5Df9Gh-Jk2Lz4Xc6Vb8NmAA", None),
    ("sk-proj-Q7x2LmN9pR4tV8wY1zA3bC5dE6fG", None),
    ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", None),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", None),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", None),
    ("AKIAIOSFODNN7EXAMPLE", None),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", None),
    (JWT, None),
    ("Authorization: Bearer abc.DEF-123_xyz==", "abc.DEF-123_xyz=="),
    (PEM, PEM_BODY),
    (PEM.replace("\n", "\\n"), PEM_BODY),  # inside a JSON string
    ("postgres://bob:hunter2pass@db.internal:5432/app", "hunter2pass"),
    ("https://deploy:p%40ss-w0rd@git.example.com/org/repo", "p%40ss-w0rd"),
)
#: Text that only looks like a secret: every caller keeps it as it is.
PLAIN_TEXTS = (
    "task-runner-configuration-file",
    "risk-assessment-framework-v2",
    "sk-short",
    "AKIAIOSFODNN7EXAMPL",
    "Bearer of bad news",
    "eyJhbGciOiJIUzI1NiJ9 is only a header",
    "-----BEGIN PUBLIC KEY-----",
    "https://bob@example.com/x",
    "http://localhost:8080/a:b@c",
    "git@github.com:org/repo.git",
    "mailto:someone@example.com",
)
