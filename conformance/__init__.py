"""The conformance suite: rule catalog, verdicts and reports."""
