"""The bundled demo model maixemu/data/edge_filters.kmodel: reproducible and doing what it says."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from maixemu.kmodel import load_kmodel
from maixemu.tools import make_sample_model

MODEL = Path(make_sample_model.__file__).resolve().parents[1] / "data" / "edge_filters.kmodel"


def test_regenerating_gives_identical_bytes():
    assert MODEL.read_bytes() == make_sample_model.build()
    assert make_sample_model.main(["--check"]) == 0


def test_shapes_and_types():
    model = load_kmodel(MODEL)
    assert model.input_chw == (3, 240, 320)
    assert model.outputs[0].shape == (4, 120, 160) and model.outputs[0].dtype == np.uint8
    assert [layer.kind for layer in model.layers] == ["K210_CONV"]
    assert model.layer_output_typecode(0) == "B"


def _luma_image(luma: np.ndarray) -> np.ndarray:
    return np.repeat(luma[None].astype(np.uint8), 3, axis=0)


def test_channels_mean_what_the_docstring_says():
    model = load_kmodel(MODEL)
    # flat grey: blur = grey level, Sobel = 128 (no gradient), lines = 0 (away from the border)
    flat = model.run(_luma_image(np.full((240, 320), 60)))[0]
    inner = (slice(2, -2), slice(2, -2))
    assert (flat[0][inner] == 60).all()
    assert (flat[1][inner] == 128).all() and (flat[2][inner] == 128).all()
    assert (flat[3][inner] == 0).all()
    # a vertical step dark→bright at x = 160: strong x-edge there, no y-edge
    step = np.zeros((240, 320))
    step[:, 160:] = 200
    out = model.run(_luma_image(step))[0]
    assert out[1][10:-10, 79:81].min() > 200  # Sobel x saturates bright at the step (pooled x = 80)
    assert (out[1][10:-10, 5:70] == 128).all()
    assert (out[2][10:-10, 5:-5] == 128).all()
    assert out[3][10:-10, 79:81].max() > 100  # the bright side of the step is a line feature
    # a horizontal step: y-edge, no x-edge
    hstep = np.zeros((240, 320))
    hstep[120:, :] = 200
    out = model.run(_luma_image(hstep))[0]
    assert out[2][59:61, 10:-10].min() > 200
    assert (out[1][5:-5, 10:-10] == 128).all()
