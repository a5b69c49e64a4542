"""docs/ci.md's GitHub Actions job: the YAML parses, and its steps pass in a scratch project.

The scratch project is what the page asks a user to have: testing.md's face-count example (script,
tests, model, photos) and the workflow file at ``.github/workflows/device-tests.yml``. The job's
``run:`` steps are run as written with bash in a fresh virtual environment (what
``actions/setup-python`` gives), with the job's ``env``. Offline: pip's index is a folder holding
the maixemu wheel built from this checkout (``PIP_NO_INDEX`` + ``PIP_FIND_LINKS``), and the
dependencies (numpy, Pillow, OpenCV, tqdm, pytest) are borrowed from this environment (see
``tests/_venvs.py``), so ``pip install "$MAIXEMU" pytest`` installs the wheel and finds the rest
satisfied, as a warm pip cache would.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from _shared import REPO_ROOT, shared_path
from _venvs import fresh_venv, maixemu_wheel, run

yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow (it comes with the dev extras)")

DOC = REPO_ROOT / "docs" / "ci.md"
TESTING = REPO_ROOT / "docs" / "testing.md"


def _workflow_text() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    (workflow,) = [b for b in blocks if b.startswith("# .github/workflows/")]
    return workflow


def _job() -> dict:
    workflow = yaml.safe_load(_workflow_text())
    # YAML 1.1 reads the key `on` as True; GitHub reads it as "on"
    assert workflow.get("on", workflow.get(True)) == ["push", "pull_request"]
    (job,) = workflow["jobs"].values()
    return job


def test_the_workflow_parses_and_has_the_steps_a_job_needs():
    job = _job()
    assert job["runs-on"] == "ubuntu-latest"
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert uses[0].startswith("actions/checkout@") and uses[1].startswith("actions/setup-python@")
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert any("pip install" in r and "$MAIXEMU" in r for r in runs) and "pytest" in runs[-1]
    assert "MAIXEMU" in job["env"]


def test_the_steps_pass_in_a_scratch_project(tmp_path):
    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    images = shared_path("images")
    project = tmp_path / "project"
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "device-tests.yml").write_text(_workflow_text())
    for block in re.findall(r"```python\n(.*?)```", TESTING.read_text(encoding="utf-8"), flags=re.S):
        name = re.match(r"# (\w+\.py)", block)
        if name:
            (project / name.group(1)).write_text(block)
    shutil.copy(model, project / model.name)
    (project / "photos").mkdir()
    for picture in sorted(images.glob("face_2*.jpg")):
        shutil.copy(picture, project / "photos" / picture.name)

    wheel = maixemu_wheel(tmp_path / "build")
    venv_dir = tmp_path / "venv"
    fresh_venv(venv_dir, borrow=["numpy", "pillow", "opencv-python", "tqdm", "threadpoolctl", "screeninfo", "pytest"], with_pip=True)
    job = _job()
    env = dict(os.environ, **{k: str(v) for k, v in job["env"].items()},
               PATH=f"{venv_dir / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(venv_dir),
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheel.parent), PIP_DISABLE_PIP_VERSION_CHECK="1")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "PIP_CONFIG_FILE", "PYTHONPATH"):
        env.pop(name, None)
    env["PIP_CONFIG_FILE"] = os.devnull  # no extra index from this machine's pip.conf
    outputs = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        proc = run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=project, env=env)
        assert proc.returncode == 0, f"step {step.get('name')!r}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outputs.append(proc.stdout)
    where = run([str(venv_dir / "bin" / "python"), "-c", "import maixemu; print(maixemu.__file__)"], cwd=project)
    assert where.stdout.startswith(str(venv_dir)), where  # the job used the wheel it installed
    assert re.search(r"\b4 passed\b", outputs[-1]), outputs[-1][-2000:]
