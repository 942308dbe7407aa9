#!/usr/bin/env bash
# The Windows tier: Wine (Debian's wine + wine64) and the helper programs it runs, built
# with Debian's mingw-w64 cross compiler. Idempotent: packages already installed are not
# fetched again, and the programs are rebuilt only when their source is newer.
#
#   bash scripts/windows-tier/install.sh            # install the packages, build the programs
#   bash scripts/windows-tier/install.sh --build    # only build (e.g. on Windows, with gcc)
#
# The programs land in scripts/windows-tier/bin/ (not committed); the tests in
# tests/windows_tier/ look for them there, or in $HARNESS_WINDOWS_TIER_BIN. Each test session
# makes its own Wine prefix, so nothing here touches ~/.wine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${HARNESS_WINDOWS_TIER_BIN:-$here/bin}"

packages=(wine wine64 gcc-mingw-w64-x86-64-win32 mingw-w64-x86-64-dev)

install_packages() {
  local missing=()
  for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "windows-tier: apt-get is needed to install ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

build() {
  mkdir -p "$out"
  local cc
  if command -v x86_64-w64-mingw32-gcc-win32 >/dev/null 2>&1; then
    cc=x86_64-w64-mingw32-gcc-win32
  elif command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1; then
    cc=x86_64-w64-mingw32-gcc
  else
    cc=gcc # on Windows: the MinGW-w64 gcc that builds native programs
  fi
  local prog
  for prog in argvdump launch; do
    if [ ! -f "$out/$prog.exe" ] || [ "$here/$prog.c" -nt "$out/$prog.exe" ]; then
      "$cc" -municode -O2 -Wall -Wextra -Werror -o "$out/$prog.exe" "$here/$prog.c" -lshell32
    fi
  done
}

case "${1:-}" in
  --build) build ;;
  "") install_packages; build ;;
  *) echo "usage: $0 [--build]" >&2; exit 2 ;;
esac
