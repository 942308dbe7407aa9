"""Tests for harness/host/selection.py."""
