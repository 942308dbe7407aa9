"""Tests for harness/selection.py."""
