"""The worked example of docs/testing.md runs as written, in a fresh pytest process.

A fresh process also checks what a user relies on: the plugin is found through its ``pytest11``
entry point, with no conftest and no configuration.
"""

from __future__ import annotations

import re
import subprocess
import sys

from _shared import REPO_ROOT, shared_path

DOC = REPO_ROOT / "docs" / "testing.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_worked_example_passes(tmp_path):
    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    images = shared_path("images")
    blocks = _python_blocks()
    script = [b for b in blocks if b.startswith("# face_count.py")]
    tests = [b for b in blocks if not b.startswith("# face_count.py")]
    assert len(script) == 1 and len(tests) == 2
    (tmp_path / "face_count.py").write_text(script[0])
    (tmp_path / "test_face_count.py").write_text("\n\n".join(tests))
    (tmp_path / "face_detect_320x240.kmodel").symlink_to(model)
    photos = tmp_path / "photos"
    photos.mkdir()
    for picture in sorted(images.glob("face_2*.jpg")):
        (photos / picture.name).symlink_to(picture)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "4 passed" in proc.stdout, proc.stdout[-1000:]
