"""Packaging without Docker: the staged function code, the layer's stamp, and the guard when it is missing."""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Annotations, Match, Template
from infra_fixtures import REPO_ROOT

from functions.catalog import FUNCTIONS
from infra.bundling import (
    LAYER_REQUIREMENTS,
    LayerStatus,
    find_layer,
    layer_recipe,
    layer_requirements_text,
    pinned_requirements,
    stage_function_code,
)
from infra.constructs.functions import MISSING_LAYER_WARNING_ID, RUNTIME, DependencyLayer
from infra.lockfile import normalized


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def sources(tmp_path: Path) -> dict[str, Path]:
    write(tmp_path / "src" / "lib" / "__init__.py", "VALUE = 1\n")
    write(tmp_path / "src" / "lib" / "__pycache__" / "x.cpython-311.pyc", "bytecode")
    write(tmp_path / "src" / "fns" / "one" / "handler.py", "def lambda_handler(e, c): return 1\n")
    return {"agentmem": tmp_path / "src" / "lib", "functions": tmp_path / "src" / "fns"}


def test_staging_copies_each_package_under_its_import_name_without_caches(
    tmp_path: Path, sources: dict[str, Path]
) -> None:
    staged = stage_function_code(tmp_path / "stage", sources)

    files = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
    assert files == ["agentmem/__init__.py", "functions/one/handler.py"]


def test_staging_reuses_the_copy_of_the_same_content_and_makes_a_new_one_on_change(
    tmp_path: Path, sources: dict[str, Path]
) -> None:
    first = stage_function_code(tmp_path / "stage", sources)
    again = stage_function_code(tmp_path / "stage", sources)
    write(sources["agentmem"] / "__init__.py", "VALUE = 2\n")
    changed = stage_function_code(tmp_path / "stage", sources)

    assert again == first
    assert changed != first
    assert (changed / "agentmem" / "__init__.py").read_text() == "VALUE = 2\n"
    assert (first / "agentmem" / "__init__.py").read_text() == "VALUE = 1\n"


def test_the_real_code_asset_holds_every_catalog_handler_and_the_library(tmp_path: Path) -> None:
    staged = stage_function_code(tmp_path)

    assert (staged / "agentmem" / "__init__.py").is_file()
    assert (staged / "agentmem" / "adapters" / "aws" / "vector_mapping.py").is_file()
    for spec in FUNCTIONS:
        assert (staged / (spec.module.replace(".", "/") + ".py")).is_file(), spec.module


def stamp(tmp_path: Path, zip_bytes: bytes = b"zip", **changes: object) -> tuple[Path, Path]:
    zip_path = tmp_path / "layer.zip"
    zip_path.write_bytes(zip_bytes)
    content: dict[str, object] = {
        "recipe": layer_recipe(),
        "pinnedRequirements": pinned_requirements(),
        "sha256": "ab" * 32,
        "zipBytes": len(zip_bytes),
    }
    content.update(changes)
    stamp_path = write(tmp_path / "layer.stamp.json", json.dumps(content))
    return zip_path, stamp_path


def test_a_layer_matching_its_stamp_and_the_recipe_is_usable(tmp_path: Path) -> None:
    status = find_layer(*stamp(tmp_path))
    assert status.bundle is not None
    assert status.bundle.sha256 == "ab" * 32
    assert status.problem is None and status.drift is None


def test_no_layer_is_a_problem_that_says_how_to_build_it(tmp_path: Path) -> None:
    status = find_layer(tmp_path / "missing.zip", tmp_path / "missing.json")
    assert status.bundle is None
    assert "make bundle" in str(status.problem)


def test_a_layer_built_from_another_recipe_is_not_used(tmp_path: Path) -> None:
    other = {**layer_recipe(), "pythonVersion": "3.9"}
    status = find_layer(*stamp(tmp_path, recipe=other))
    assert status.bundle is None
    assert "another recipe" in str(status.problem)


def test_a_zip_that_does_not_match_its_stamp_is_not_used(tmp_path: Path) -> None:
    status = find_layer(*stamp(tmp_path, zipBytes=12345))
    assert status.bundle is None


def test_a_layer_pinning_other_versions_than_the_lock_is_flagged(tmp_path: Path) -> None:
    status = find_layer(*stamp(tmp_path, pinnedRequirements=["numpy==0.0.1"]))
    assert status.bundle is not None
    assert "numpy==0.0.1" in str(status.drift)


def test_the_layer_pins_every_package_it_holds_at_the_locks_version() -> None:
    locked = {p["name"]: p["version"] for p in tomllib.loads((REPO_ROOT / "uv.lock").read_text())["package"]}
    pins = dict(pin.split("==") for pin in pinned_requirements())

    assert {normalized(r.split("[")[0]) for r in LAYER_REQUIREMENTS} <= set(pins)
    assert pins == {name: locked[name] for name in pins}


def test_the_layer_requirements_file_is_the_locks_layer_part_with_arm64_wheels_only() -> None:
    text = (REPO_ROOT / "requirements-layer.txt").read_text()
    pinned = re.findall(r"^([a-z0-9-]+==\S+) \\$", text, flags=re.M)
    wheels = {p["name"]: p.get("wheels", []) for p in tomllib.loads((REPO_ROOT / "uv.lock").read_text())["package"]}

    assert layer_requirements_text() in text
    assert pinned == pinned_requirements()
    for pin in pinned:
        name = pin.split("==")[0]
        by_hash = {w["hash"]: w["url"].rsplit("/", 1)[1] for w in wheels[name]}
        hashes = re.findall(rf"^{re.escape(pin)} \\\n((?:    --hash=\S+(?: \\)?\n)+)", text, flags=re.M)[0]
        files = [by_hash[h] for h in re.findall(r"--hash=(\S+)", hashes)]
        assert files and all("aarch64" in f or "-none-any" in f for f in files), (pin, files)


def bundle_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle_lambda", REPO_ROOT / "scripts" / "bundle_lambda.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layer_zip_is_reproducible_and_puts_everything_under_python(tmp_path: Path) -> None:
    script = bundle_script()
    site = tmp_path / "site"
    write(site / "pkg" / "__init__.py", "X = 1\n")
    write(site / "pkg-1.0.dist-info" / "METADATA", "Name: pkg\n")
    write(site / "pkg" / "__pycache__" / "__init__.cpython-313.pyc", "bytecode")
    script.prune(site)
    script.write_zip(site, tmp_path / "a.zip")
    script.write_zip(site, tmp_path / "b.zip")

    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        assert sorted(archive.namelist()) == ["python/pkg-1.0.dist-info/METADATA", "python/pkg/__init__.py"]


def stack_with_guard(*, require: bool) -> tuple[cdk.Stack, lambda_.Function]:
    app = cdk.App()
    stack = cdk.Stack(app, "Guarded")
    guard = DependencyLayer(stack, "Dependencies", status=LayerStatus(None, "the layer is not built"), require=require)
    function = lambda_.Function(
        stack, "Fn", runtime=RUNTIME, handler="index.handler", code=lambda_.Code.from_inline("def handler(e, c): pass")
    )
    guard.attach(function)
    return stack, function


def test_without_a_layer_the_functions_warn_and_cloudformation_refuses_the_deploy() -> None:
    stack, _ = stack_with_guard(require=False)
    template = Template.from_stack(stack).to_json()

    parameter = template["Parameters"]["DependencyLayerMissing"]
    [assertion] = template["Rules"]["RequireDependencyLayer"]["Assertions"]
    # The parameter can only ever hold "missing", and the rule requires it not to.
    assert parameter["AllowedValues"] == [parameter["Default"]] == ["missing"]
    assert assertion["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "DependencyLayerMissing"}, "missing"]}]}
    assert "not built" in assertion["AssertDescription"]
    [function] = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    assert "Layers" not in function["Properties"]
    Annotations.from_stack(stack).has_warning("/Guarded/Fn", Match.string_like_regexp("the layer is not built"))
    assert MISSING_LAYER_WARNING_ID.startswith("agentmem:")


def test_require_bundle_makes_a_missing_layer_an_error() -> None:
    stack, _ = stack_with_guard(require=True)
    Annotations.from_stack(stack).has_error("/Guarded/Dependencies", Match.string_like_regexp("requireBundle"))
