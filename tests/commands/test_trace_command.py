"""``maixemu trace``: one PNG grid per layer (a tile per channel), raw uint8, scaled floats, an index."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from PIL import Image

from _shared import shared_path
from maixemu.cli import main
from maixemu.kmodel import load_kmodel
from maixemu.commands.trace_report import feature_grid


def _grid_cells(picture: np.ndarray) -> tuple[list[int], list[int]]:
    """Widths of the tile columns and heights of the tile rows, read from the separator lines.

    A separator line is a full column/row with no gray pixel (R == G == B) in it.
    """
    gray = (picture[..., 0] == picture[..., 1]) & (picture[..., 1] == picture[..., 2])
    sep_cols = ~gray.any(axis=0)
    sep_rows = ~gray.any(axis=1)

    def runs(sep: np.ndarray) -> list[int]:
        sizes, n = [], 0
        for is_sep in sep:
            if is_sep:
                if n:
                    sizes.append(n)
                n = 0
            else:
                n += 1
        return sizes + ([n] if n else [])

    return runs(sep_cols), runs(sep_rows)


@pytest.fixture(scope="module")
def face_trace(tmp_path_factory):
    model_path = shared_path("models", "v3", "face_detect_320x240.kmodel")
    picture = shared_path("images", "face_21.jpg")
    out = tmp_path_factory.mktemp("trace")
    assert main(["trace", str(model_path), "--input", str(picture), "--out", str(out)]) == 0
    return load_kmodel(model_path), picture, out


def test_one_grid_per_layer_with_a_tile_per_channel(face_trace):
    model, _, out = face_trace
    pngs = sorted(out.glob("layer_*.png"))
    assert len(pngs) == len(model.layers) == 24
    for layer, png in zip(model.layers, pngs):
        assert png.name.startswith(f"layer_{layer.index:03d}_")
        picture = np.asarray(Image.open(png).convert("RGB"))
        shape = layer.output_shapes[0]
        widths, heights = _grid_cells(picture)
        if len(shape) == 3:
            c, h, w = shape
            cols = math.ceil(math.sqrt(c))
            rows = math.ceil(c / cols)
            zoom = widths[0] // w
            assert zoom >= 1 and widths == [w * zoom] * cols and heights == [h * zoom] * rows, (png.name, widths, heights)
            assert max(h, w) * zoom >= 32  # small maps are enlarged
        else:  # the DEQUANTIZE layer: 9000 floats, one tile
            assert len(widths) == 1 and len(heights) == 1
            assert widths[0] * heights[0] >= int(np.prod(shape))


def test_uint8_maps_are_raw_values(face_trace):
    model, picture, out = face_trace
    from maixemu.commands.forward import image_to_input

    x = image_to_input(picture, tuple(model.inputs[0].shape))
    steps = {s.index: s.output for s in model.trace(x, limit=3)}
    first = np.asarray(Image.open(out / "layer_000_k210_conv.png").convert("RGB"))
    # tile 0 at the top left, tile 1 right of it after the 1-pixel separator (120x160 maps, zoom 1)
    assert np.array_equal(first[:120, :160, 0], steps[0][0])
    assert np.array_equal(first[:120, 161:321, 1], steps[0][1])
    third = np.asarray(Image.open(out / "layer_002_k210_conv.png").convert("RGB"))
    assert np.array_equal(third[:60, :80, 2], steps[2][0])


def test_index_lists_every_layer_and_marks_the_float_layer_scaled(face_trace):
    model, _, out = face_trace
    index = (out / "index.md").read_text()
    rows = [line for line in index.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 24
    assert all("| raw |" in row and "| uint8 |" in row for row in rows[:23])
    last = rows[23]
    assert "DEQUANTIZE" in last and "float32" in last and "scaled" in last and "| raw |" not in last
    assert "layer_023_dequantize.png" in last and "16x120x160" in rows[0]
    assert (out / "input.png").exists()


def test_float_maps_are_scaled_over_the_whole_layer():
    maps = np.array([[[-2.0, 0.0]], [[1.0, 2.0]]], dtype=np.float32)  # 2 channels of 1x2
    picture, grid = feature_grid(maps, zoom=1)
    assert grid.scaled and (grid.vmin, grid.vmax) == (-2.0, 2.0)
    assert picture.shape == (1, 2 * 2 + 1, 3)
    assert picture[0, 0, 0] == 0 and picture[0, 1, 0] == 128  # -2 → 0, 0 → 127.5 → 128
    assert tuple(picture[0, 2]) == (0, 0, 160)  # separator
    assert picture[0, 3, 0] == 191 and picture[0, 4, 0] == 255  # 1 → 191.25, 2 → 255


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    model_path = shared_path("models", "v3", "face_detect_320x240.kmodel")
    assert main(["trace", str(model_path), "--input", str(tmp_path / "missing.jpg"), "--out", str(tmp_path / "o")]) == 2
    assert "cannot read the input" in capsys.readouterr().err
