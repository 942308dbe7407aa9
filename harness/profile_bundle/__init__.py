"""The pinned DeepSeek Harness profile bundle, shipped as package data.

Seed 001 §4: "each packaged OD build carries an exact packed tarball plus a SHA-256 manifest";
seed 000 §5.12 names the file ``open-design-dsh-runtime-0.1.0.tgz``. This package holds:

* ``open-design-dsh-runtime-0.1.0.tgz``: an ``npm pack`` style tarball of
  ``@open-design/dsh-runtime`` 0.1.0, a DeepSeek Harness plugin bundle (``package.json`` with
  ``dsh.bundle.patch``, ``cordis.patch.yml``, the ``open-design-runtime`` plugin ``index.js``,
  its pure frame logic ``protocol.js`` and a README);
* ``package/``: the plugin's sources, packed as they are (a source checkout only; the
  installed harness needs just the tarball);
* ``manifest.json``: ``{file, sha256, profile, package, version}`` for that tarball;
* ``build_bundle.py``: rebuilds both deterministically (``python -m
  harness.profile_bundle.build_bundle``; ``--check`` verifies the committed files).

``harness dsh setup`` (:mod:`harness.dsh_setup`) verifies the tarball against the manifest
before it hands the tarball to the user's own ``dsh plugin --profile open-design add``.
"""

from __future__ import annotations

# Nothing is imported here, so ``python -m harness.profile_bundle.build_bundle`` runs the
# builder without the package having imported it first.
__all__: list[str] = []
