"""The wheel ships the demo graph, and an installed kgsynth synthesises from it in any folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import DEMO, ROOT

from kgsynth.kg import demo_graph_path

TURTLE = sorted(p.name for p in DEMO.glob("*.ttl"))
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the repository's build inputs (top-level files and src/;
    no build/ or egg-info is written into the repository), offline with the venv's setuptools."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for path in ROOT.iterdir():
        if path.is_file():
            shutil.copy2(path, source / path.name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                    "-w", str(tmp / "dist"), str(source)], check=True, env=ENV, timeout=300)
    (found,) = (tmp / "dist").glob("kgsynth-*.whl")
    return found


def test_the_repository_demo_folder_is_the_packaged_graph():
    assert len(TURTLE) == 8
    assert demo_graph_path().is_dir() and DEMO.resolve() == demo_graph_path().resolve()


def test_the_wheel_holds_every_demo_graph_file(wheel):
    with zipfile.ZipFile(wheel) as z:
        shipped = {name.removeprefix("kgsynth/kg/demo/"): z.read(name)
                   for name in z.namelist() if name.startswith("kgsynth/kg/demo/")}
    assert sorted(shipped) == TURTLE
    assert all(shipped[name] == (DEMO / name).read_bytes() for name in TURTLE)


def test_synth_from_the_unpacked_wheel_runs_in_an_empty_folder(wheel, tmp_path):
    """``kgsynth synth --n 20`` with kgsynth imported from the unpacked wheel (the layout pip
    installs), run from an empty folder: the default graph is the packaged one, not data/."""
    site, work = tmp_path / "site", tmp_path / "work"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    work.mkdir()
    env = ENV | {"PYTHONPATH": str(site)}
    where = subprocess.run([sys.executable, "-c", "import kgsynth.kg as k; print(k.__file__); print(k.demo_graph_path())"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert where == [str(site / "kgsynth" / "kg" / "__init__.py"), str(site / "kgsynth" / "kg" / "demo")]
    run = subprocess.run([sys.executable, "-m", "kgsynth", "synth", "--n", "20", "--out", "out"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    manifest = json.loads((work / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert run.stderr.startswith(f"wrote {manifest['items']} items") and manifest["items"] >= 20
    assert manifest["config"]["graph"]["paths"] == []  # portable: no path of this machine in the config
    assert manifest["graph"]["description"] == "the kgsynth demo graph"  # not this machine's install path


@pytest.mark.slow
def test_the_wheel_installs_into_a_fresh_venv_and_synthesises(wheel, tmp_path):
    """pip installs the wheel with its dependencies from the package registry (about a minute)."""
    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / "bin"
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "--quiet", wheel], check=True, env=ENV, timeout=1200)
    run = subprocess.run([bin_dir / "kgsynth", "synth", "--n", "20", "--out", tmp_path / "out"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))["items"] >= 20
