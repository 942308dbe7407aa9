"""Live mode: real coding-agent CLIs, offline, against the scripted model server.

* :mod:`.recipes` — live recipes as data (``recipes/<agent>.json``, schema
  ``harness/schemas/live-recipe-v1.schema.json``): package + pinned version, env and
  config files under a temporary HOME, extra argv, telemetry switches, transports,
  scenarios, or an explicit ``skip`` for a CLI that cannot run offline.
* :mod:`.install` — ``harness live install``: npm ``--prefix`` / a venv per PyPI package,
  into a cache dir, idempotent.
* :mod:`.home` — the temporary HOME, TMPDIR and work dir of one live run.
* :mod:`.session` — :func:`~harness.live.session.run_live`: model server + temp HOME +
  the normal runner with the def's own ``build_args``.
* :mod:`.differential` — the same scenario on the real CLI and on the fake, compared
  rule by rule (LIVE-DIFF-*).
* :mod:`.conform` — :func:`~harness.live.conform.real_findings` for ``harness conform --real``.

No module here compares anything to an agent id: a recipe is looked up by the def's id
as data (design §Principles 2).
"""

from __future__ import annotations
