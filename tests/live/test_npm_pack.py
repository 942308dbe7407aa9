"""A recipe file entry may unpack an npm-pack tarball shipped with the harness
(``npm_pack``): the DeepSeek Harness recipe lays out its open-design profile that way.

Rule: LIVE-ISOLATION-001 (every file of the live world comes from the recipe, inside HOME).
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from harness.live.home import make_dirs, placeholder_values, unpack_npm_pack, write_home_files
from harness.live.recipes import RecipeError, load_recipe, recipe_for
from harness.profile_bundle import build_bundle

_BUNDLE = f"harness.profile_bundle/{build_bundle.TARBALL_NAME}"


@pytest.mark.rule("LIVE-ISOLATION-001")
def test_the_dsh_recipe_lays_out_the_pinned_bundle_as_a_profile(tmp_path: Path) -> None:
    recipe = recipe_for("deepseek-harness")
    assert recipe is not None and recipe.skip_reason is None
    dirs = make_dirs(tmp_path)
    values = placeholder_values(recipe, dirs, base_url="http://127.0.0.1:4567", port=4567)
    write_home_files(recipe, dirs, values)
    profile = dirs.home / ".dsh" / "profiles" / "open-design"
    manifest = json.loads((profile / "package.json").read_text("utf-8"))
    assert manifest["dsh"]["profile"]["bundles"][-1] == build_bundle.PACKAGE
    installed = profile / "node_modules" / "@open-design" / "dsh-runtime"
    expected = {
        name.removeprefix("package/"): data for name, data in build_bundle.package_files().items()
    }
    assert {p.name: p.read_bytes() for p in installed.iterdir()} == expected


def _tarball(names: list[str]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as archive:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 1
            archive.addfile(info, io.BytesIO(b"x"))
    return raw.getvalue()


@pytest.mark.rule("LIVE-ISOLATION-001")
@pytest.mark.parametrize("member", ["package/../../escape", "/abs", "other/file", "package"])
def test_a_member_outside_package_is_refused(
    member: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "packdata"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "bad.tgz").write_bytes(_tarball([member]))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"files\[0\]\.npm_pack: 'packdata/bad\.tgz' holds"):
        unpack_npm_pack("packdata/bad.tgz", tmp_path / "out", where="r.json: files[0]")
    assert not (tmp_path / "escape").exists() and not (tmp_path / "out").exists()


@pytest.mark.rule("LIVE-ISOLATION-001")
def test_an_unknown_resource_names_the_entry(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"w: files\[2\]\.npm_pack: cannot read"):
        unpack_npm_pack("harness.profile_bundle/nope.tgz", tmp_path, where="w: files[2]")


@pytest.mark.rule("LIVE-RECIPE-001")
def test_the_schema_accepts_npm_pack_and_refuses_a_bad_resource(tmp_path: Path) -> None:
    recipe = recipe_for("deepseek-harness")
    assert recipe is not None
    assert [f.npm_pack for f in recipe.files if f.npm_pack] == [_BUNDLE]
    raw = json.loads(
        (Path(__file__).parents[2] / "harness/live/recipes/deepseek-harness.json").read_text(
            "utf-8"
        )
    )
    raw["agent"] = "y"
    raw["files"][-1]["npm_pack"] = "../escape.tgz"
    path = tmp_path / "y.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(RecipeError, match="npm_pack"):
        load_recipe(path)
