"""Runtime I/O beside the runner: probing, detecting and installing on the user's machine.

``probe`` runs one probe command (it spawns, with a timeout), ``detect`` asks each CLI
whether it is installed, its version and what it supports, ``fakes_install`` puts the fake
CLIs under the real binaries' names and ``dsh_setup`` installs the pinned profile through
the user's own dsh. Import from the submodule; this package re-exports nothing.
"""
