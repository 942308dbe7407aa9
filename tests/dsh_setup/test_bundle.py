"""The embedded profile bundle: a real, pinned, reproducible npm-pack tarball.

Rule: DSHSETUP-BUNDLE-001 (seed 001 §4 "an exact packed tarball plus a SHA-256 manifest";
seed 000 §5.12 names the file ``open-design-dsh-runtime-0.1.0.tgz``). Also DSHSETUP-VERIFY-001
for the loader that pairs the tarball with its manifest.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from importlib import resources
from pathlib import Path

import pytest

from harness.defs.deepseek_harness import PROFILE as DEF_PROFILE
from harness.profile_bundle import build_bundle
from harness.runtime.dsh_setup import (
    PACKAGE,
    BundleManifest,
    DshSetupError,
    SetupFailure,
    embedded_bundle,
    load_bundle,
    read_manifest,
)

BUNDLE_DIR = Path(str(resources.files("harness.profile_bundle")))
TARBALL = BUNDLE_DIR / "open-design-dsh-runtime-0.1.0.tgz"


@pytest.mark.rule("DSHSETUP-BUNDLE-001")
def test_manifest_pins_the_committed_tarball() -> None:
    manifest = json.loads((BUNDLE_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert set(manifest) == {"file", "sha256", "profile", "package", "version"}
    assert manifest["file"] == "open-design-dsh-runtime-0.1.0.tgz"
    assert manifest["profile"] == "open-design" == DEF_PROFILE
    assert manifest["package"] == "@open-design/dsh-runtime" == PACKAGE
    assert manifest["version"] == "0.1.0"
    assert manifest["sha256"] == hashlib.sha256(TARBALL.read_bytes()).hexdigest()
    assert read_manifest() == BundleManifest(**manifest)


@pytest.mark.rule("DSHSETUP-BUNDLE-001")
def test_the_tarball_is_an_npm_pack_tarball() -> None:
    data = TARBALL.read_bytes()
    assert data[:2] == b"\x1f\x8b", "gzip"
    assert int.from_bytes(data[4:8], "little") == 0, "gzip mtime 0"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        members = archive.getmembers()
        names = [m.name for m in members]
        handle = archive.extractfile("package/package.json")
        assert handle is not None
        package = json.loads(handle.read())
        entry = archive.extractfile("package/" + package["main"])
        assert entry is not None and b"probeFrame" in entry.read()
    assert names == sorted(names)
    assert all(n.startswith("package/") for n in names)
    assert "package/README.md" in names
    assert all(m.isfile() and m.mode == 0o644 and m.uid == m.gid == 0 for m in members)
    # npm pack's fixed entry time: 1985-10-26T08:15:00Z.
    assert {m.mtime for m in members} == {499_162_500}
    assert package["name"] == "@open-design/dsh-runtime"
    assert package["version"] == "0.1.0"


@pytest.mark.rule("DSHSETUP-BUNDLE-001")
def test_the_builder_is_deterministic_and_matches_the_committed_bundle(tmp_path: Path) -> None:
    assert build_bundle.build_tarball() == build_bundle.build_tarball()
    tarball, manifest = build_bundle.write_bundle(tmp_path)
    assert tarball.name == TARBALL.name
    # Same entries as the committed file (zlib builds may differ in compressed bytes).
    assert build_bundle.tar_members(tarball.read_bytes()) == build_bundle.tar_members(
        TARBALL.read_bytes()
    )
    assert gzip.decompress(tarball.read_bytes()) == gzip.decompress(TARBALL.read_bytes())
    written = json.loads(manifest.read_text(encoding="utf-8"))
    assert written == build_bundle.manifest_for(tarball.read_bytes())
    assert build_bundle.check_bundle(BUNDLE_DIR) == []
    assert build_bundle.main(["--check"]) == 0


@pytest.mark.rule("DSHSETUP-BUNDLE-001")
def test_the_check_catches_a_changed_bundle(tmp_path: Path) -> None:
    build_bundle.write_bundle(tmp_path)
    assert build_bundle.check_bundle(tmp_path) == []
    # Repack with one file changed: entries differ and the manifest no longer matches.
    files = build_bundle.package_files()
    files["package/index.js"] += b"// changed\n"
    (tmp_path / build_bundle.TARBALL_NAME).write_bytes(build_bundle.build_tarball(files))
    problems = build_bundle.check_bundle(tmp_path)
    assert any("entries differ" in p for p in problems)
    assert any("does not match" in p for p in problems)
    assert build_bundle.main(["--check", "--dest", str(tmp_path)]) == 1


@pytest.mark.rule("DSHSETUP-VERIFY-001")
def test_loading_hashes_the_bytes_on_disk(tmp_path: Path) -> None:
    with embedded_bundle() as bundle:
        assert bundle.sha256 == bundle.manifest.sha256
        assert Path(bundle.path).read_bytes() == TARBALL.read_bytes()
    copy = tmp_path / TARBALL.name
    shutil.copyfile(TARBALL, copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    flipped = load_bundle(copy, read_manifest())
    assert flipped.sha256 != flipped.manifest.sha256
    assert flipped.sha256 == hashlib.sha256(bytes(data)).hexdigest()


@pytest.mark.rule("DSHSETUP-VERIFY-001")
def test_an_unreadable_tarball_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(DshSetupError) as caught:
        load_bundle(tmp_path / "absent.tgz", read_manifest())
    assert caught.value.failure is SetupFailure.BUNDLE_INVALID
    assert caught.value.code == "DSH_SETUP_BUNDLE_INVALID"
