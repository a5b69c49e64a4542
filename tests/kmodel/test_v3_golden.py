"""V3 models against the golden reference vectors in ../shared/golden (bit-exact).

Every uint8 output must be byte-identical and every float32 output bitwise identical: the KPU
path is integer-exact and the CPU float layers follow the reference's float32 operation order
(including libm's table-driven ``expf``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from _shared import SHARED_DIR, shared_path
from conftest import engine_key
from maixemu.kmodel import load_kmodel


BYTE_SWAPPED_FACE = ("models/v3/face_detect_320x240_be.kmodel", "models/v3/face_model_be_at_0x600000.kfpkg")


def _v3_cases():
    manifest = SHARED_DIR / "golden" / "MANIFEST.json"
    if not manifest.exists():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="../shared/golden not found"))]
    entries = json.loads(manifest.read_text())["models"]
    cases = []
    for entry in entries:
        if entry["kmodel_version"] != 3:
            continue
        for case in entry["cases"]:
            cases.append(pytest.param(entry, case, id=f"{entry['golden_dir'].split('/')[-1]}-{case['file'].split('/')[-1][:-4]}"))
            if entry["model"].endswith("face_detect_320x240.kmodel"):
                # the byte-swapped (kpu.load_flash) forms of the same model must give the same bytes
                for swapped in BYTE_SWAPPED_FACE:
                    alias = dict(entry, model=swapped)
                    cases.append(pytest.param(alias, case, id=f"{swapped.split('/')[-1]}-{case['file'].split('/')[-1][:-4]}"))
    return cases


_MODELS: dict[tuple[str, str], object] = {}
#: the golden cases run on the numpy path and on the compiled path with each product kind
GOLDEN_ENGINES = pytest.mark.kpu_engines("numpy", "fast-u8s8", "fast-u8u8", "fast-f32", "fast-f64")


def _model(rel: str):
    key = (rel, engine_key())
    if key not in _MODELS:
        _MODELS[key] = load_kmodel(shared_path(*rel.split("/")))
    return _MODELS[key]


@pytest.mark.golden
@GOLDEN_ENGINES
@pytest.mark.parametrize("entry,case", _v3_cases())
def test_v3_golden_case(entry, case, kpu_engine):
    golden = shared_path("golden")
    model = _model(entry["model"])
    data = np.load(golden / case["file"])
    outs = model.run(data["input"])
    assert len(outs) == len(entry["outputs"])
    for i, (out, spec) in enumerate(zip(outs, entry["outputs"])):
        ref = data[f"output_{i}"]
        assert out.dtype == np.dtype(spec["dtype"])
        assert tuple(out.shape) == tuple(spec["shape"])
        if out.tobytes() != ref.tobytes():
            diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
            pytest.fail(f"output {i}: {int((out != ref).sum())} of {out.size} elements differ, max |diff| {diff.max():.3g}")


@pytest.mark.golden
@GOLDEN_ENGINES
def test_v3_golden_per_layer_face(kpu_engine):
    """Layer by layer on one face image: every KPU feature map byte-identical."""
    golden = shared_path("golden", "v3", "face_detect_320x240", "layers_case_face_21.npz")
    dump = np.load(golden)
    index = json.loads(str(dump["index_json"]))
    model = _model("models/v3/face_detect_320x240.kmodel")
    case = np.load(shared_path("golden", "v3", "face_detect_320x240", "case_face_21.npz"))
    steps = list(model.trace(case["input"]))
    keys = sorted(k for k in dump.files if k.startswith("layer_"))
    assert len(keys) == len(steps) == 24
    for key, step in zip(keys, steps):
        ref = dump[key]
        assert int(key.split("_")[1]) == step.index
        assert step.output.dtype == ref.dtype, key
        assert step.output.shape == ref.shape, key
        assert step.output.tobytes() == ref.tobytes(), f"{key}: {int((step.output != ref).sum())} elements differ"
    assert index  # the dump describes its arrays


@GOLDEN_ENGINES
def test_byte_swapped_and_kfpkg_load_the_same_model(kpu_engine):
    plain = load_kmodel(shared_path("models", "v3", "face_detect_320x240.kmodel"))
    swapped = load_kmodel(shared_path("models", "v3", "face_detect_320x240_be.kmodel"))
    zipped_be = load_kmodel(shared_path("models", "v3", "face_model_be_at_0x600000.kfpkg"))
    x = np.random.default_rng(5).integers(0, 256, size=(3, 240, 320), dtype=np.uint8)
    ref = plain.run(x)[0]
    assert swapped.run(x)[0].tobytes() == ref.tobytes()
    assert zipped_be.run(x)[0].tobytes() == ref.tobytes()
    assert any("swapped" in n for n in swapped.notes)
