"""Node wrapper -> vendored native binary (seed 002 §5.2), on fake and real filesystems.

Rules: LAUNCH-CODEX-NATIVE-001, LAUNCH-CODEX-NATIVE-002, LAUNCH-ENV-001.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.defs.types import AgentDef, NodeWrapperNative
from harness.host.launch import (
    NODE_WRAPPER_HEAD_BYTES,
    FakeFile,
    FakeFileSystem,
    RealFileSystem,
    find_native_binary,
    launch_env,
    looks_like_node_wrapper,
    native_target_triple,
    resolve_executable,
)
from tests.launch._support import child_pids, make_def, new_children, write_script

SPEC = NodeWrapperNative(package_prefix="@openai/codex-", bin_dir="codex", bin_name="codex")
NODE_WRAPPER = b"#!/usr/bin/env node\nimport('../dist/cli.js');\n"
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56


@pytest.fixture(autouse=True)
def _no_leftover_children() -> Iterator[None]:
    before = child_pids()
    yield
    assert new_children(before) == set(), "a test left a child process running"


def _codex() -> AgentDef:
    return make_def("codex", node_wrapper_native=SPEC)


TRIPLES = [
    ("darwin", "arm64", "aarch64-apple-darwin"),
    ("darwin", "x64", "x86_64-apple-darwin"),
    ("linux", "x64", "x86_64-unknown-linux-musl"),
    ("linux", "arm64", "aarch64-unknown-linux-musl"),
    ("win32", "x64", "x86_64-pc-windows-msvc"),
    ("win32", "arm64", "aarch64-pc-windows-msvc"),
]


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
@pytest.mark.parametrize(("platform", "arch", "triple"), TRIPLES)
def test_target_triples(platform: str, arch: str, triple: str) -> None:
    assert native_target_triple(platform, arch) == triple


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
def test_unknown_platform_or_arch_has_no_triple() -> None:
    assert native_target_triple("linux", "ia32") is None
    assert native_target_triple("freebsd", "x64") is None


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001", "LAUNCH-CODEX-NATIVE-002")
@pytest.mark.parametrize(("platform", "arch", "triple"), [t for t in TRIPLES if t[0] != "win32"])
def test_posix_npm_global_install_launches_the_nested_native_binary(
    platform: str, arch: str, triple: str
) -> None:
    wrapper = "/usr/local/lib/node_modules/@openai/codex/bin/codex.js"
    native = (
        "/usr/local/lib/node_modules/@openai/codex/node_modules/"
        f"@openai/codex-{platform}-{arch}/vendor/{triple}/codex/codex"
    )
    fs = FakeFileSystem(
        {wrapper: NODE_WRAPPER, native: ELF},
        links={"/usr/local/bin/codex": "../lib/node_modules/@openai/codex/bin/codex.js"},
    )
    res = resolve_executable(
        _codex(),
        platform=platform,
        env={"PATH": "/usr/local/bin"},
        fs=fs,
        home="/home/u",
        arch=arch,
    )
    assert res.selected_path == "/usr/local/bin/codex"
    assert res.launch_path == native
    assert res.native_path_dirs[0] == native.rsplit("/", 1)[0]
    assert all(size <= NODE_WRAPPER_HEAD_BYTES for _, size in fs.reads)


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
@pytest.mark.parametrize("arch", ["x64", "arm64"])
def test_windows_cmd_shim_launches_the_native_exe(arch: str) -> None:
    triple = native_target_triple("win32", arch)
    npm = "C:\\Users\\u\\AppData\\Roaming\\npm"
    shim = (
        b"@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\n"
        b'SETLOCAL\r\nCALL :find_dp0\r\nIF EXIST "%dp0%\\node.exe" (\r\n'
        b'  SET "_prog=%dp0%\\node.exe"\r\n'
        b') ELSE (\r\n  SET "_prog=node"\r\n)\r\n'
        b'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  '
        b'"%dp0%\\node_modules\\@openai\\codex\\bin\\codex.js" %*\r\n'
    )
    native = (
        f"{npm}\\node_modules\\@openai\\codex\\node_modules\\@openai\\codex-win32-{arch}"
        f"\\vendor\\{triple}\\codex\\codex.exe"
    )
    fs = FakeFileSystem(
        {f"{npm}\\codex.cmd": shim, native: b"MZ\x90\x00"},
        platform="win32",
    )
    res = resolve_executable(
        _codex(),
        platform="win32",
        env={"Path": npm, "PATHEXT": ".EXE;.CMD"},
        fs=fs,
        home="C:\\Users\\u",
        arch=arch,
    )
    assert (
        res.selected_path is not None and res.selected_path.lower() == f"{npm}\\codex.cmd".lower()
    )
    assert res.launch_path == native


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
def test_hoisted_native_package_is_found_walking_upward() -> None:
    wrapper = "/p/lib/node_modules/@openai/codex/bin/codex.js"
    native = (
        "/p/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex"
    )
    fs = FakeFileSystem({wrapper: NODE_WRAPPER, native: ELF}, links={"/p/bin/codex": wrapper})
    found = find_native_binary("/p/bin/codex", SPEC, platform="linux", arch="x64", fs=fs)
    assert found == native


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
def test_wrong_arch_package_is_not_used() -> None:
    wrapper = "/p/node_modules/@openai/codex/bin/codex.js"
    other = (
        "/p/node_modules/@openai/codex-linux-arm64/vendor/aarch64-unknown-linux-musl/codex/codex"
    )
    fs = FakeFileSystem({wrapper: NODE_WRAPPER, other: ELF})
    assert find_native_binary(wrapper, SPEC, platform="linux", arch="x64", fs=fs) is None


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
def test_wrapper_without_native_package_launches_itself() -> None:
    fs = FakeFileSystem({"/usr/bin/codex": NODE_WRAPPER})
    res = resolve_executable(
        _codex(),
        platform="linux",
        env={"PATH": "/usr/bin"},
        fs=fs,
        home="/home/u",
        arch="x64",
    )
    assert res.launch_path == res.selected_path == "/usr/bin/codex"
    assert res.native_path_dirs == ()


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
def test_a_def_without_node_wrapper_native_never_reads_the_file() -> None:
    fs = FakeFileSystem({"/usr/bin/codex": NODE_WRAPPER})
    res = resolve_executable(
        make_def("codex"), platform="linux", env={"PATH": "/usr/bin"}, fs=fs, home="/h", arch="x64"
    )
    assert res.launch_path == "/usr/bin/codex"
    assert fs.reads == []


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-002")
def test_a_huge_native_binary_is_read_at_most_64_kib() -> None:
    big = FakeFile(ELF, size=100 * 1024 * 1024)
    native = "/x/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex"
    fs = FakeFileSystem({"/Applications/Codex.app/Contents/Resources/codex": big, native: ELF})
    found = find_native_binary(
        "/Applications/Codex.app/Contents/Resources/codex",
        SPEC,
        platform="linux",
        arch="x64",
        fs=fs,
    )
    assert found is None  # a native binary is not a wrapper
    assert fs.reads, "the head must be sniffed"
    assert max(size for _, size in fs.reads) <= 64 * 1024


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-002")
def test_a_huge_wrapper_is_still_recognised_from_its_head() -> None:
    big = FakeFile(NODE_WRAPPER, size=100 * 1024 * 1024)
    native = "/p/node_modules/@openai/codex-darwin-arm64/vendor/aarch64-apple-darwin/codex/codex"
    fs = FakeFileSystem({"/p/bin/codex": big, native: ELF})
    found = find_native_binary("/p/bin/codex", SPEC, platform="darwin", arch="arm64", fs=fs)
    assert found == native
    assert [size for _, size in fs.reads] == [NODE_WRAPPER_HEAD_BYTES]


@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001")
@pytest.mark.parametrize(
    ("path", "head", "expected"),
    [
        ("/b/codex", b"#!/usr/bin/env node\n", True),
        ("/b/codex", b"#!/usr/bin/env -S node --no-warnings\n", True),
        ("/b/codex", b"#!/usr/local/bin/node\n", True),
        ("/b/codex", b"#!/usr/bin/env bun\nimport x\n", False),
        ("/b/codex", b"#!/usr/bin/env nodejs-like-not\n", False),
        (
            "/b/codex",
            b'#!/bin/sh\nexec node  "$basedir/node_modules/@openai/codex/bin/codex.js" "$@"\n',
            True,
        ),
        ("/b/codex", b'#!/bin/sh\nexec /opt/codex-native "$@"\n', False),
        ("/b/codex", ELF + b"node something.js", False),
        ("/b/codex.js", b"", True),
        ("/b/codex.mjs", b"", True),
        ("C:\\n\\codex.cmd", b'"%_prog%" "%dp0%\\node_modules\\x\\cli.js" %*\r\n', True),
        ("C:\\n\\codex.CMD", b'SET "_prog=node"\r\n', True),
        ("C:\\n\\codex.cmd", b"@echo off\r\nC:\\native\\codex.exe %*\r\n", False),
        ("C:\\n\\codex.cmd", b"@echo off\r\ntype config.json\r\n", False),
    ],
)
def test_looks_like_node_wrapper(path: str, head: bytes, expected: bool) -> None:
    platform = "win32" if path.startswith("C:") else "linux"
    assert looks_like_node_wrapper(path, head, platform) is expected


@pytest.mark.posix
@pytest.mark.rule("LAUNCH-CODEX-NATIVE-001", "LAUNCH-ENV-001")
def test_real_filesystem_symlinked_wrapper(tmp_path: Path) -> None:
    pkg = tmp_path / "lib" / "node_modules" / "@openai" / "codex"
    wrapper = pkg / "bin" / "codex.js"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text("#!/usr/bin/env node\n")
    native_dir = (
        pkg
        / "node_modules"
        / "@openai"
        / "codex-linux-x64"
        / "vendor"
        / "x86_64-unknown-linux-musl"
    )
    native = write_script(native_dir / "codex" / "codex", "echo native\n")
    (native_dir / "path").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(wrapper, bin_dir / "codex")
    defn = _codex()
    res = resolve_executable(
        defn,
        platform="linux",
        env={"PATH": str(bin_dir)},
        fs=RealFileSystem(),
        home=str(tmp_path / "home"),
        arch="x64",
    )
    assert res.selected_path == str(bin_dir / "codex")
    assert res.launch_path == str(native)
    env = launch_env(
        {"PATH": "/usr/bin"},
        res,
        platform="linux",
        interpreter_dir=None,
        home=str(tmp_path / "home"),
        defn=defn,
    )
    assert env["PATH"].split(":")[:4] == [
        str(bin_dir),
        str(native.parent),
        str(native_dir / "path"),
        "/usr/bin",
    ]
