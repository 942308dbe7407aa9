"""The pinned DeepSeek Harness profile bundle, shipped as package data.

Design: docs/design/dsh.md#harness.profile_bundle
"""

from __future__ import annotations

# Nothing is imported here, so ``python -m harness.profile_bundle.build_bundle`` runs the
# builder without the package having imported it first.
__all__: list[str] = []
