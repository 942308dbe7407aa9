"""``harness conform``: plan (:mod:`.plan`), run (:mod:`.run`) and its parts.

:mod:`.plan` decides what each def is judged on; :mod:`.run` executes that plan, with
:mod:`.fake_runs` making the fake runs and :mod:`.progress` reporting per def.
Design: docs/design/conformance.md#conformance.conform
"""
