"""Start a fake CLI quickly: ``python -S <dir>/fake_clis/_shim.py MODULE AGENT [args...]``.

The shims ``harness fakes install`` writes run this file instead of ``python -m
fake_clis``. ``-S`` skips ``site`` (the editable-install finder and every ``.pth``
file), about half of a bare interpreter's start-up; MODULE (the emulator module
that holds AGENT's spec, e.g. ``fake_clis.claude_stream``) means only that emulator
is imported, not all nine; the fakes need nothing but the
standard library and this package, so the package's parent directory is put on
``sys.path`` by hand. ``harness conform`` starts a fake hundreds of times, so this
matters. The one optional third-party import (jsonschema, for a scenario given by
path) loads ``site`` on demand (:func:`fake_clis.scenario.validate_scenario`).
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# A script's own directory is sys.path[0]: a sibling module must never shadow a stdlib one.
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == _HERE:
    del sys.path[0]
sys.path.insert(0, os.path.dirname(_HERE))


def _run(args: list[str]) -> int:
    # sys.path points at this checkout only once the lines above have run
    from fake_clis.base import main_for
    from fake_clis.catalog import spec_for

    if len(args) < 2:
        sys.stderr.write("usage: _shim.py MODULE AGENT [args...]\n")
        return 2
    try:
        spec = spec_for(args[1], module=args[0])
    except KeyError as exc:
        sys.stderr.write(f"{exc.args[0]}\n")
        return 2
    return main_for(spec, args[2:])


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:]))
