"""``python -m fake_clis AGENT [args...]``: run the fake standing in for AGENT."""

from __future__ import annotations

import sys

from fake_clis.base import main_for
from fake_clis.catalog import spec_for


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: python -m fake_clis AGENT [args...]\n")
        return 2
    try:
        spec = spec_for(args[0])
    except KeyError as exc:
        sys.stderr.write(f"{exc.args[0]}\n")
        return 2
    return main_for(spec, args[1:])


if __name__ == "__main__":
    sys.exit(main())
