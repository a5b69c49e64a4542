"""Every KPU script of ../shared/scripts (SCRIPTS.md, "KPU / vision scripts"), run unchanged for 20 frames.

Each row maps the script's model as SCRIPTS.md says (a flash address, a .kfpkg, or a file copied
into the script's /sd), feeds the camera from ../shared/images, and checks what the script saw
through ``--kpu-log``: face boxes on the faces, VOC objects on the dog picture, feature-map shapes
for MNIST. Scripts whose model is not in ../shared must fail with the device's load error.

Boards mount cameras differently and scripts compensate with ``set_vflip``/``set_hmirror``; the
test feeds such scripts pictures flipped the same way, so what the script sees is upright.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image, ImageOps

from conftest import SHARED_DIR
from script_harness import run_maixpy_script

MODELS = SHARED_DIR / "models" / "v3"
FACE = MODELS / "face_detect_320x240.kmodel"
YOLO = MODELS / "yolo_20class.kmodel"
MNIST = MODELS / "mnist.kmodel"
MOBILENET = MODELS / "mobilenet_v1_0.75_1000class.kmodel"
LABELS = SHARED_DIR / "scripts" / "CorgiDude" / "models" / "MobilenetV1_1000" / "labels.txt"

#: Hand-marked centres of the faces in the 320x240 photos (x, y).
FACE_CENTRES = {"face_21.jpg": (150, 105), "face_23.jpg": (75, 125), "face_27.jpg": (120, 125)}
#: Hand-marked boxes of the objects in dog.bmp (x0, y0, x1, y1), VOC class ids.
DOG_OBJECTS = {1: (50, 60, 240, 180), 6: (190, 30, 310, 80), 11: (50, 95, 135, 225)}


@dataclass(frozen=True)
class KpuScript:
    models: dict[str, Path] = field(default_factory=dict)  # "0x300000" or a file name in /sd
    flash_image: Path | None = None
    flip: str = ""  # "v", "h" or "vh": how the script's board mounts its camera
    photos: tuple[str, ...] = ()
    check: str = ""  # "faces", "dog", "mnist_fmaps", "classifier", "fmap_layer"
    firmware: str = "full"
    missing_model: str = ""  # the flash address the script loads with no local model
    labels: bool = False


SCRIPTS: dict[str, KpuScript] = {
    "MaixPy-v1_scripts/machine_vision/yolov2_20class.py": KpuScript({"0x500000": YOLO}, flip="v", photos=("dog.bmp",), check="dog"),
    "MaixPy-v1_scripts/machine_vision/face_find/demo_find_face.py": KpuScript({"0x300000": FACE}, photos=tuple(FACE_CENTRES), check="faces"),
    "MaixPy-v1_scripts/machine_vision/fmap/fmap.py": KpuScript({"0x300000": MNIST}, photos=("face_21.jpg",), check="mnist_fmaps"),
    "MaixPy-v1_scripts/machine_vision/load_big_model/demo_load_big_model.py": KpuScript(
        flash_image=MODELS / "face_model_be_at_0x600000.kfpkg", flip="h", photos=tuple(FACE_CENTRES), check="faces"),
    # 2.6 MB of weights: more than the full firmware leaves (the device says ERR_NO_MEM), so the minimum build.
    "CorgiDude/04 - Image Classification/mobilenet_1000_class.py": KpuScript(
        {"0x200000": MOBILENET}, flip="v", photos=("dog.bmp",), check="classifier", firmware="minimum", labels=True),
    "CorgiDude/07 - YoLo Object Detection/yolo20class.py": KpuScript({"0x500000": YOLO}, flip="v", photos=("dog.bmp",), check="dog"),
    "CorgiDude/08 - Face Detection/find_face.py": KpuScript(
        flash_image=MODELS / "face_model_at_0x300000.kfpkg", flip="v", photos=tuple(FACE_CENTRES), check="faces"),
    "CorgiDude/13 - FaceMaskDetection/Main.py": KpuScript(missing_model="0x300000"),
    "CorgiDude/12 - Car License Plate Detection/main.py": KpuScript(missing_model="0x400000"),
    "purin_wo_motto_mimamoru_gijutsu/03_maixpy_example/014_kpu_camera_mnist.py": KpuScript({"mnist.kmodel": MNIST}, photos=("face_21.jpg",), check="classifier"),
    "purin_wo_motto_mimamoru_gijutsu/03_maixpy_example/015_kpu_camera_face_detect.py": KpuScript({"facedetect.kmodel": FACE}, photos=tuple(FACE_CENTRES), check="faces"),
    "purin_wo_motto_mimamoru_gijutsu/03_maixpy_example/016_kpu_camera_20class.py": KpuScript({"20class.kmodel": YOLO}, photos=("dog.bmp",), check="dog"),
    "purin_wo_motto_mimamoru_gijutsu/06_pudding_alert_v_app/001_kpu_fmap_view.py": KpuScript(
        {"mbnet751.kmodel": MOBILENET}, photos=("dog.bmp",), check="fmap_layer", firmware="minimum"),
    "MakerAndCoderDocumentation/AI_Camera/face_recognition.py": KpuScript({"0x300000": FACE}, photos=tuple(FACE_CENTRES), check="faces"),
    "MaixPy-TrashClassifier/trash_classifier.py": KpuScript(missing_model="0x500000"),
}


def _listed_kpu_scripts() -> list[str]:
    text = (SHARED_DIR / "scripts" / "SCRIPTS.md").read_text(encoding="utf-8")
    section = text.split("## KPU / vision scripts", 1)[1].split("## Basic camera", 1)[0]
    return [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]


def test_table_covers_every_kpu_script_in_scripts_md():
    if not (SHARED_DIR / "scripts" / "SCRIPTS.md").exists():
        pytest.skip("../shared/scripts is absent")
    assert sorted(_listed_kpu_scripts()) == sorted(SCRIPTS)


def _camera_folder(tmp: Path, photos: tuple[str, ...], flip: str) -> Path:
    """The photos as the board's sensor delivers them: pre-flipped so the script's own flip undoes it."""
    folder = tmp / "camera"
    folder.mkdir()
    for i, name in enumerate(photos):
        picture = Image.open(SHARED_DIR / "images" / name).convert("RGB")
        if "v" in flip:
            picture = ImageOps.flip(picture)
        if "h" in flip:
            picture = ImageOps.mirror(picture)
        picture.save(folder / f"{i:02d}_{Path(name).stem}.png")
    return folder


def _contains(rect, point) -> bool:
    x, y, w, h = rect
    return x <= point[0] <= x + w and y <= point[1] <= y + h


def _check(kind: str, calls: list[dict], photos: tuple[str, ...], stdout: str) -> None:
    assert calls, "the script made no KPU call"
    if kind == "faces":
        yolo = [c for c in calls if c["call"] == "kpu.run_yolo2"]
        # The folder source loops; frame k shows photos[k % len(photos)] (skip_frames may shift the start).
        best_shift_hits = 0
        for shift in range(len(photos)):
            hits = 0
            for k, call in enumerate(yolo):
                centre = FACE_CENTRES[photos[(k + shift) % len(photos)]]
                if any(_contains(b["rect"], centre) for b in call["boxes"]):
                    hits += 1
            best_shift_hits = max(best_shift_hits, hits)
        assert best_shift_hits >= 0.8 * len(yolo), (best_shift_hits, len(yolo), yolo[:4])
    elif kind == "dog":
        yolo = [c for c in calls if c["call"] == "kpu.run_yolo2"]
        found = {}
        for call in yolo:
            for b in call["boxes"]:
                found.setdefault(b["classid"], b["rect"])
        assert {1, 6} <= set(found), found  # bicycle and car, as the golden README says
        for classid, (x, y, w, h) in found.items():
            if classid in DOG_OBJECTS:  # the detection's centre lies on the hand-marked object
                x0, y0, x1, y1 = DOG_OBJECTS[classid]
                assert x0 <= x + w / 2 <= x1 and y0 <= y + h / 2 <= y1, (classid, (x, y, w, h))
    elif kind == "mnist_fmaps":
        shapes = {(c["fmap"]["w"], c["fmap"]["h"], c["fmap"]["ch"], c["fmap"]["typecode"]) for c in calls}
        assert {(14, 14, 16, "B"), (7, 7, 32, "B"), (4, 4, 10, "B"), (40, 1, 1, "f")} <= shapes, shapes
    elif kind == "classifier":
        assert all(c["fmap"]["typecode"] == "f" for c in calls)
    elif kind == "fmap_layer":
        # set_layers(task, 29): layer 28 of this MobileNet is a float layer of 768 values (w = bytes).
        assert all(c["fmap"] == {"w": 3072, "h": 1, "ch": 1, "typecode": "f", "size": 3072} for c in calls), calls[:2]


@pytest.mark.scripts
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_kpu_script_runs_20_frames(script: str, tmp_path: Path):
    path = SHARED_DIR / "scripts" / script
    if not path.exists():
        pytest.skip(f"{path} not found (../shared/scripts is absent)")
    row = SCRIPTS[script]
    sd = tmp_path / "sd"
    sd.mkdir()
    extra = ["--firmware", row.firmware, "--kpu-log", str(tmp_path / "kpu.jsonl")]
    for where, model in row.models.items():
        if where.startswith("0x"):
            extra += ["--flash", f"{where}={model}"]
        else:
            shutil.copy(model, sd / where)  # the script loads it from its working directory, /sd
    if row.flash_image is not None:
        extra += ["--flash-image", str(row.flash_image)]
    if row.labels:
        shutil.copy(LABELS, sd / "labels.txt")
    camera = _camera_folder(tmp_path, row.photos, row.flip) if row.photos else SHARED_DIR / "images"
    result = run_maixpy_script(path, tmp_path, camera=camera, frames=20, timeout=240, extra=extra)

    if row.missing_model:
        assert result.returncode == 1, result.stderr[-2000:]
        assert "[MAIXPY]kpu: load error:2002, ERR_KMODEL_VERSION: only support kmodel V3/V4 now" in result.stderr
        assert f"nothing is mapped at flash address {row.missing_model}" in result.stderr
        return
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    calls = [json.loads(line) for line in (tmp_path / "kpu.jsonl").read_text().splitlines()]
    _check(row.check, calls, row.photos, result.stdout)
