"""Works as installed: a wheel built from this tree, installed into a fresh virtualenv outside the
checkout, scores the example offline with the default judge it ships, and ``bench build`` finds
its data only where it is told.

Fast and offline: the wheel is built with the setuptools already installed (no build isolation),
installed with ``--no-deps``, and the new environment reaches the dependencies through a
``.pth`` line naming this environment's site-packages (its ``.pth`` files, such as the editable
install's finder, are not read from there, so the wheel's copy of the package is the one imported).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from conflictscore_local.bench import default_data_dir

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "out", "work", "__pycache__", "*.egg-info", ".pytest_cache", "*.partial"
)


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """(the fresh environment, a working folder outside the checkout, the environment variables to run in)."""
    pytest.importorskip("setuptools")
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    shutil.copytree(REPO, src, symlinks=True, ignore=SKIP)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONFLICTSCORE_", "PYTHON", "PIP_"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip = [sys.executable, "-m", "pip"]
    built = run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(root / "dist"), str(src)], root, env)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = (root / "dist").glob("conflictscore_local-*.whl")
    venv = root / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], root, env)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], root, env).stdout.strip()
    )
    (purelib / "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = run([*pip, "--python", str(python), "install", "--no-deps", str(wheel)], root, env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    work = root / "work"
    work.mkdir()
    shutil.copy(REPO / "examples" / "items.jsonl", work / "items.jsonl")
    return venv, work, env


def test_the_wheel_ships_the_default_judge_and_the_manifests(installed: tuple[Path, Path, dict[str, str]]) -> None:
    venv, work, env = installed
    where = run([str(venv / "bin" / "python"), "-c", "import conflictscore_local as c; print(c.__file__)"], work, env)
    package = Path(where.stdout.strip()).parent
    assert package.is_relative_to(venv), where.stdout + where.stderr
    shipped = package / "models" / "data"
    assert not shipped.is_symlink() and sorted(p.name for p in shipped.glob("*.toml")) == sorted(
        p.name for p in (REPO / "models").glob("*.toml")
    )
    for f in (REPO / "models" / "default-judge").iterdir():
        if f.is_file():
            assert (
                hashlib.sha256((shipped / "default-judge" / f.name).read_bytes()).digest()
                == hashlib.sha256(f.read_bytes()).digest()
            ), f.name
    check = run([str(venv / "bin" / "conflictscore"), "models", "verify", "default-judge"], work, env)
    assert check.returncode == 0 and f"default-judge: OK (7 files checked) {shipped / 'default-judge'}" in check.stdout


def test_the_installed_command_scores_the_example_with_the_default_judge(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    venv, work, env = installed
    r = run(
        [
            str(venv / "bin" / "conflictscore"),
            "score",
            "items.jsonl",
            "-o",
            "scored.jsonl",
            "--summary",
            "summary.json",
            "--cache",
            "judgments.sqlite",
            "-q",
        ],
        work,
        env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads((work / "summary.json").read_text())
    judge = summary["config"]["backends"]["judge"]["resolved"]
    assert Path(judge["model_path"]).is_relative_to(venv)
    assert judge["model_path"].endswith("conflictscore_local/models/data/default-judge")
    assert (judge["model_manifest"], judge["model_source"]) == ("default-judge", "bundled:default-judge")
    assert summary["n_items"] == 3 and summary["pairs"]["unscored"] == 0
    assert summary["pairs"]["judged"] + summary["pairs"]["pruned"] == summary["pairs"]["total"] > 0
    rows = [json.loads(line) for line in (work / "scored.jsonl").read_text().splitlines()]
    assert [row["id"] for row in rows] == [
        json.loads(line)["id"] for line in (REPO / "examples" / "items.jsonl").read_text().splitlines()
    ]


def test_bench_build_outside_a_checkout_needs_a_data_folder(installed: tuple[Path, Path, dict[str, str]]) -> None:
    venv, work, env = installed
    cmd = [str(venv / "bin" / "conflictscore"), "bench", "build", "--source", "macnoise", "-q", "-o", "bench.jsonl"]
    r = run(cmd, work, env)
    assert r.returncode == 2 and r.stderr.strip() == (
        "conflictscore bench: error: no data folder: conflictscore-local is installed, not run from a checkout, so "
        "there is no default; pass --data-dir DIR or set CONFLICTSCORE_DATA to the folder of the public data sets"
    )
    data = default_data_dir()  # this checkout's: $CONFLICTSCORE_DATA or ../shared/data
    if not (data / "macnoise").is_dir():
        pytest.skip(f"shared data not found at {data}")
    r = run(cmd, work, {**env, "CONFLICTSCORE_DATA": str(data)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert len((work / "bench.jsonl").read_text().splitlines()) > 0


def test_verify_checks_the_shipped_judge_against_the_install_record(
    installed: tuple[Path, Path, dict[str, str]],
) -> None:
    venv, work, env = installed
    verify = [str(venv / "bin" / "conflictscore"), "models", "verify", "default-judge", "--json"]
    ok = json.loads(run(verify, work, env).stdout)
    assert ok["ok"] and ok["notes"] == ["checked against the sha256 pip recorded when it installed conflictscore-local"]
    weights = Path(ok["path"]) / "model.packed.safetensors"
    original = weights.read_bytes()
    try:
        weights.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        r = run(verify, work, env)
        (Path(ok["path"]) / "extra.bin").write_bytes(b"x")
        (problem,) = json.loads(r.stdout)["problems"]  # was: OK, only config.json and a weight file were looked for
        assert r.returncode == 4 and problem.startswith("model.packed.safetensors: sha256 ")
        assert problem.endswith("differs from the one recorded at install (the file changed)")
        assert (
            json.loads(run(verify, work, env).stdout)["problems"][-1]
            == "unexpected file extra.bin (not installed with the package)"
        )
    finally:
        weights.write_bytes(original)
        (Path(ok["path"]) / "extra.bin").unlink(missing_ok=True)
    assert run(verify, work, env).returncode == 0
