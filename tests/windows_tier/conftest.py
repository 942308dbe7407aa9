"""The Windows tier's session: one Wine prefix and server for every test (Wine starts slowly).

Skips, with the reason, when Wine or the programs built by
``scripts/windows-tier/install.sh`` are missing; on Windows it needs only the programs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.windows_tier.tier import WindowsTier, locate


@pytest.fixture(scope="session")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WindowsTier]:
    bin_dir, wine, why_not = locate()
    if bin_dir is None:
        pytest.skip(why_not)
    session = WindowsTier(tmp_path_factory.mktemp("windows-tier"), bin_dir, wine)
    try:
        session.start()
        yield session
    finally:
        session.close()
