"""Helpers the whole test suite shares.

* :mod:`tests.support.processes`: the per-test leak check and process helpers
  (is a pid alive, kill a tree, wait for bytes in a file).
* :mod:`tests.support.drive`: one driver that runs a two-way session against a live
  process, pumping its pipes as the runner does, for tests that inspect raw frames.
"""
