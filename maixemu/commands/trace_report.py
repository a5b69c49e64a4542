"""Per-layer feature-map pictures of one model run: the engine behind ``maixemu trace``.

Each layer's output becomes one PNG: a grid with one tile per channel, tiles separated by a
1-pixel line of :data:`SEPARATOR` (a colour no gray tile pixel can have, so the grid can be read
back). Why two rules for values:

* uint8 maps are drawn **raw** (value v → gray v), exactly as ``kpu.fmap(fm, ch)`` shows them on
  the device — a map that looks dark in the report looks dark on the LCD too.
* float maps have no display range of their own; they are min-max scaled over the whole layer
  (one scale for all tiles, so channels stay comparable) and the index says so with the range.

Maps smaller than :data:`MIN_TILE` pixels are enlarged by an integer factor (nearest neighbour, so
each value stays one flat block); the index lists the factor. Outputs that are not (C, H, W) maps
(vectors, V3 CPU layers' flat buffers) are one tile with the values wrapped into rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Colour of the lines between tiles (blue: gray tiles have R == G == B, so never this).
SEPARATOR = (0, 0, 160)
#: Tiles are enlarged until their longer side reaches at least this many pixels.
MIN_TILE = 32


@dataclass(frozen=True)
class Grid:
    """How a layer output was laid out in its PNG."""

    tiles: int
    tile_h: int  # map height (before zoom)
    tile_w: int
    cols: int
    rows: int
    zoom: int
    layout: str  # "CHW maps" or "flat, wrapped"
    scaled: bool  # float values min-max scaled to 0..255
    vmin: float
    vmax: float


def as_maps(output: np.ndarray) -> tuple[np.ndarray, str]:
    """(C, H, W) view of a layer output: leading batch dims of 1 dropped, others wrapped flat."""
    arr = np.asarray(output)
    while arr.ndim > 3 and arr.shape[0] == 1:
        arr = arr[0]
    if arr.ndim == 3 and arr.size:
        return arr, "CHW maps"
    flat = arr.reshape(-1)
    width = max(1, math.ceil(math.sqrt(flat.size)))
    height = max(1, math.ceil(flat.size / width))
    padded = np.zeros(width * height, dtype=flat.dtype)
    padded[: flat.size] = flat
    return padded.reshape(1, height, width), "flat, wrapped"


def to_gray(maps: np.ndarray) -> tuple[np.ndarray, bool, float, float]:
    """uint8 gray values of the maps: uint8 unchanged, anything else min-max scaled over the layer."""
    if maps.size == 0:
        return np.zeros(maps.shape, np.uint8), False, 0.0, 0.0
    vmin, vmax = float(maps.min()), float(maps.max())
    if maps.dtype == np.uint8:
        return maps, False, vmin, vmax
    values = maps.astype(np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        values = np.where(finite, values, vmin if np.isfinite(vmin) else 0.0)
        vmin, vmax = float(values.min()), float(values.max())
    span = vmax - vmin
    if span <= 0:
        return np.zeros(maps.shape, np.uint8), True, vmin, vmax
    gray = np.rint((values - vmin) * (255.0 / span))
    return np.clip(gray, 0, 255).astype(np.uint8), True, vmin, vmax


def feature_grid(output: np.ndarray, zoom: int | None = None) -> tuple[np.ndarray, Grid]:
    """An (H, W, 3) uint8 picture of ``output`` with one tile per channel, and how it was laid out."""
    maps, layout = as_maps(output)
    gray, scaled, vmin, vmax = to_gray(maps)
    count, h, w = gray.shape
    if zoom is None:
        zoom = max(1, math.ceil(MIN_TILE / max(h, w)))
    cols = max(1, math.ceil(math.sqrt(count)))
    rows = max(1, math.ceil(count / cols))
    th, tw = h * zoom, w * zoom
    tiles = np.repeat(np.repeat(gray, zoom, axis=1), zoom, axis=2) if zoom > 1 else gray
    # Place all tiles at once: pad the channel count to rows*cols, then interleave grid and tile axes.
    padded = np.zeros((rows * cols, th + 1, tw + 1, 3), np.uint8)
    padded[...] = SEPARATOR
    padded[:count, :th, :tw, :] = tiles[..., None]
    picture = padded.reshape(rows, cols, th + 1, tw + 1, 3).transpose(0, 2, 1, 3, 4)
    picture = picture.reshape(rows * (th + 1), cols * (tw + 1), 3)[:-1, :-1]
    return np.ascontiguousarray(picture), Grid(count, h, w, cols, rows, zoom, layout, scaled, vmin, vmax)


@dataclass(frozen=True)
class LayerReport:
    index: int
    kind: str
    unit: str
    shape: tuple[int, ...]
    dtype: str
    png: str
    grid: Grid


def _save_png(picture: np.ndarray, path: Path) -> None:
    from PIL import Image

    Image.fromarray(picture, "RGB").save(path)


def write_trace(model, x: np.ndarray, out_dir: Path, *, limit: int | None = None,
                zoom: int | None = None, on_layer: Callable[[], object] | None = None) -> list[LayerReport]:
    """Run ``model.trace(x)`` and write ``layer_NNN_<kind>.png`` per layer into ``out_dir``;
    ``on_layer`` is called after each layer (the command's progress bar)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    reports: list[LayerReport] = []
    for step in model.trace(x, limit=limit):
        picture, grid = feature_grid(step.output, zoom)
        name = f"layer_{step.index:03d}_{step.kind.lower()}.png"
        _save_png(picture, out_dir / name)
        reports.append(LayerReport(step.index, step.kind, "KPU" if step.on_kpu else "CPU",
                                   tuple(int(v) for v in np.shape(step.output)), np.dtype(step.output.dtype).name,
                                   name, grid))
        if on_layer is not None:
            on_layer()
    return reports


def write_input(x: np.ndarray, out_dir: Path) -> str | None:
    """The model input as a picture (``input.png``) when it is a uint8 image; returns the file name."""
    maps, layout = as_maps(x)
    if maps.dtype != np.uint8 or layout != "CHW maps" or maps.shape[0] not in (1, 3):
        return None
    picture = np.repeat(maps, 3, axis=0) if maps.shape[0] == 1 else maps
    _save_png(np.ascontiguousarray(picture.transpose(1, 2, 0)), out_dir / "input.png")
    return "input.png"


def _range(grid: Grid, dtype: str) -> str:
    if dtype in ("uint8",):
        return f"{grid.vmin:.0f} .. {grid.vmax:.0f}"
    return f"{grid.vmin:.6g} .. {grid.vmax:.6g}"


def format_index(reports: list[LayerReport], *, model_name: str, input_desc: str, input_png: str | None) -> str:
    """``index.md``: one table row per layer (kind, unit, shape, dtype, range, how it is shown, PNG)."""
    lines = [
        f"# Feature maps of {model_name}",
        "",
        f"Input: {input_desc}" + (f" — ![input]({input_png})" if input_png else ""),
        "",
        "One tile per channel, row by row, separated by blue lines. **uint8 maps are shown raw** "
        "(value v = gray v, as `kpu.fmap` shows them); **float maps are min-max scaled** over the "
        "whole layer to 0..255 (marked *scaled* with the range). Small maps are enlarged by the zoom "
        "factor (nearest neighbour).",
        "",
        "| # | kind | unit | shape | dtype | value range | shown as | tiles | PNG |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        g = r.grid
        shown = f"scaled {g.vmin:.6g}..{g.vmax:.6g} → 0..255" if g.scaled else "raw"
        tiles = f"{g.tiles} × {g.tile_h}x{g.tile_w}" + (f" (zoom {g.zoom})" if g.zoom > 1 else "")
        if g.layout != "CHW maps":
            tiles += f", {g.layout}"
        shape = "x".join(str(v) for v in r.shape)
        lines.append(f"| {r.index} | {r.kind} | {r.unit} | {shape} | {r.dtype} | {_range(g, r.dtype)} | {shown} "
                     f"| {tiles} | [{r.png}]({r.png}) |")
    return "\n".join(lines) + "\n"
