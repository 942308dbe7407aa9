"""Tests for harness/skills.py."""
