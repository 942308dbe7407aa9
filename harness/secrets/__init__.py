"""Secrets: finding them, and keeping them out of what the harness writes.

``detect`` is the one detector (names, shapes, spellings of known values); ``scrub`` cleans
what a recording stores; ``redact`` cleans the stderr tail and messages a report shows.
Import from the submodule that does the job; this package re-exports nothing.

Design: docs/design/secrets.md
"""
