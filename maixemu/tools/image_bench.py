"""Benchmark every ``image.Image`` method on a 320x240 RGB565 and grayscale frame: ms per call.

``python -m maixemu.tools.image_bench`` prints one row per case (method, typical arguments, format):
the median CPU ms per call (process CPU time, so a loaded machine's waiting is not counted), the
ratio to a same-run 256x256 float64 numpy matmul (``x matmul``: how many matmuls the call costs,
which stays comparable across machines), then the peer and the K210:

* ``peer ms`` / ``x peer``: the same job done by the C library a PC user would reach for (OpenCV:
  ``image_peers``), on the same frame, timed interleaved with the case (call for call, both on one
  thread); ``x peer`` is ours over the peer's. ``found`` gives the number of findings of both
  (``ours/peer``) for finders.
* ``K210 ms``: the device's own time where the firmware documents one or users measured one
  (``image_k210``, each with its source; ``≥`` when only part of the call was timed).

``--filter gauss`` keeps the cases whose name contains a word; ``--json FILE`` writes the rows,
``--markdown FILE`` the table with its sources (``docs/image-speed.md`` is made this way).

The frame is ``../shared/images/dog.bmp`` (a 320x240 photo) when the shared folder is there, else a
deterministic synthetic scene (gradients, shapes, a checkerboard and noise), so finders see edges
and blobs; the ``qrcode`` scene is the same frame with a QR code (made by OpenCV's encoder) on it,
the ``apriltag`` scene with three tag36h11 markers (``apriltag_peer.tag_scene``).
Methods that change the image run on a fresh copy each call (the copy is not timed).
``tests/firmware/test_image_bench.py`` runs the same cases under pytest-benchmark and checks that
every method of the firmware's table has a case.
"""

from __future__ import annotations

import argparse
import os
import contextlib
import io
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

SHARED_DIR = Path(__file__).resolve().parents[2].parent / "shared"
PHOTO = SHARED_DIR / "images" / "dog.bmp"
JPEG_QVGA = SHARED_DIR / "images" / "face_20.jpg"
JPEG_LARGE = SHARED_DIR / "images" / "coco_436511.jpg"

RGB, GRAY = "rgb565", "gray"
APRILTAG_ROI = (0, 0, 240, 240)  # the firmware takes at most 64K pixels: a QVGA frame's AprilTag roi


@dataclass(frozen=True)
class Case:
    """One timed call: ``run(img, fx)`` on the frame of ``fmt`` (``fx``: :class:`Fixtures`).

    ``methods`` are the ``Image`` methods (or ``image.`` module functions, prefixed ``image.``)
    the case exercises; ``mutates`` makes every call start from a fresh copy of the frame;
    ``scene`` names the frame (:attr:`Fixtures.scenes`).
    """

    name: str
    fmt: str
    run: Callable
    methods: tuple[str, ...]
    mutates: bool = False
    scene: str = "photo"


class Fixtures:
    """The frames and the objects the cases pass as arguments, built once."""

    def __init__(self, photo: Path | None = None):
        from ..firmware import image

        self.image = image
        path = photo if photo is not None else (PHOTO if PHOTO.is_file() else None)
        if path is not None:
            self.source = str(path)
            rgb = _read_rgb(path)
        else:
            self.source = "synthetic scene"
            rgb = synthetic_scene(320, 240)
        self.frames = {RGB: _snapshot(image, rgb, image.RGB565), GRAY: _snapshot(image, rgb, image.GRAYSCALE)}
        from .apriltag_peer import tag_scene

        self.scenes = {"photo": self.frames}
        for scene, scene_rgb in (("qrcode", qrcode_scene(rgb)), ("apriltag", tag_scene(rgb))):
            self.scenes[scene] = {RGB: _snapshot(image, scene_rgb, image.RGB565),
                                  GRAY: _snapshot(image, scene_rgb, image.GRAYSCALE)}
        self.ai_dst = {f: _snapshot(image, rgb, self.frames[f]._fmt) for f in (RGB, GRAY)}
        shifted = np.roll(rgb, (3, 5), axis=(0, 1))
        self.others = {RGB: image.Image._from_rgb888(shifted),
                       GRAY: image.Image._from_rgb888(shifted, image.GRAYSCALE)}
        self.templates = {f: self.frames[f].copy(roi=(120, 80, 40, 30)) for f in (RGB, GRAY)}
        self.small = {f: self.frames[f].copy(roi=(0, 0, 64, 48)) for f in (RGB, GRAY)}
        self.jpegs = {f: self.frames[f].compressed(quality=90) for f in (RGB, GRAY)}
        self.jpeg_bytes = {f: bytes(self.jpegs[f].to_bytes()) for f in (RGB, GRAY)}
        self.glyph = bytes(range(32))
        gray = self.frames[GRAY]
        self.thresholds = {RGB: [(30, 100, 15, 127, 15, 127)], GRAY: [(128, 255)]}
        # the red bicycle and the yellow wall of the photo; dark and bright regions on gray
        self.blob_thresholds = {RGB: [(20, 100, 15, 127, -20, 127), (50, 100, -30, 10, 30, 127)],
                                GRAY: [(0, 60), (200, 255)]}
        self.peer_frames = {(scene, fmt): opencv_frame(img) for scene, by_fmt in self.scenes.items()
                            for fmt, img in by_fmt.items()}
        self.peer_frames.update({("shifted", fmt): opencv_frame(self.others[fmt]) for fmt in (RGB, GRAY)})
        self.lbp = {GRAY: gray.find_lbp((0, 0, 320, 240))}
        self.keypoints = gray.find_keypoints(max_keypoints=50)
        self.affine = image.get_affine_transform([(0, 0), (319, 0), (0, 239)], [(10, 5), (300, 20), (15, 230)])
        self._haar = None

    def haar(self):
        if self._haar is None:
            self._haar = self.image.HaarCascade("frontalface", stages=25)
        return self._haar

    def fresh(self, fmt: str):
        return self.frames[fmt].copy()


def _snapshot(image, rgb: np.ndarray, fmt: int):
    """An image filled as ``sensor.snapshot()`` fills one: pixels and the AI buffer."""
    img = image.Image._from_rgb888(rgb, fmt)
    img._load_frame(rgb, fmt)
    return img


def _read_rgb(path: Path) -> np.ndarray:
    import cv2

    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        raise OSError(f"cannot read {path}")
    if bgr.shape[:2] != (240, 320):
        bgr = cv2.resize(bgr, (320, 240), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(bgr[:, :, ::-1])


def opencv_frame(img) -> np.ndarray:
    """The image's pixels as OpenCV holds a frame: BGR uint8 (RGB565 expanded as the LCD shows it)
    or gray uint8; a copy, so peers never touch the bench's frames."""
    from ..firmware import pixformat
    from ..firmware.image import _color

    if img._fmt == pixformat.GRAYSCALE:
        return img._pix.copy()
    return np.ascontiguousarray(_color.rgb565_to_888(img._pix)[:, :, ::-1])


def qrcode_scene(rgb: np.ndarray, payload: str = "maixemu image bench") -> np.ndarray:
    """``rgb`` with a QR code (OpenCV's encoder, 3 pixels a module, its own quiet zone) pasted at
    (180, 60): a frame on which ``find_qrcodes`` and its peer have something to decode."""
    import cv2

    code = cv2.QRCodeEncoder.create().encode(payload)
    code = cv2.resize(code, None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST)
    out = rgb.copy()
    h, w = code.shape
    out[60:60 + h, 180:180 + w] = code[:, :, None]
    return out


def synthetic_scene(w: int, h: int) -> np.ndarray:
    """A deterministic (H, W, 3) uint8 scene with gradients, edges, blobs and texture."""
    yy, xx = np.mgrid[0:h, 0:w]
    rgb = np.stack([xx * 255 // (w - 1), yy * 255 // (h - 1), (xx + yy) * 255 // (w + h - 2)], -1).astype(np.int32)
    rgb[40:100, 30:110] = (220, 30, 30)
    rgb[130:200, 200:290] = (30, 200, 40)
    circle = (xx - 230) ** 2 + (yy - 60) ** 2 < 35 ** 2
    rgb[circle] = (30, 40, 210)
    board = ((xx // 8 + yy // 8) % 2 == 0) & (xx < 120) & (yy > 140)
    rgb[board] = 240
    rgb[(xx > 140) & (xx < 180)] //= 2
    rgb += np.random.default_rng(0).integers(-12, 13, rgb.shape)
    return np.clip(rgb, 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------------------------- cases
def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(name, run, methods=None, formats=(RGB, GRAY), mutates=False, scene="photo"):
        methods = tuple(methods or (name.split("(")[0],))
        for fmt in formats:
            cases.append(Case(f"{name} [{fmt}]", fmt, run, methods, mutates, scene))

    def mut(name, run, methods=None, formats=(RGB, GRAY)):
        add(name, run, methods, formats, mutates=True)

    # -- trivial accessors and conversions
    add("width()", lambda i, fx: i.width())
    add("height()", lambda i, fx: i.height())
    add("format()", lambda i, fx: i.format())
    add("size()", lambda i, fx: i.size())
    add("get_pixel(100, 100)", lambda i, fx: i.get_pixel(100, 100))
    mut("set_pixel(100, 100, c)", lambda i, fx: i.set_pixel(100, 100, (255, 0, 0)))
    add("to_bytes()", lambda i, fx: i.to_bytes())
    add("copy()", lambda i, fx: i.copy())
    add("copy(roi)", lambda i, fx: i.copy(roi=(40, 30, 160, 120)), ["copy"])
    mut("crop(roi)", lambda i, fx: i.crop(roi=(40, 30, 160, 120)), ["crop"])
    add("crop(roi, copy)", lambda i, fx: i.crop(roi=(40, 30, 160, 120), copy=True), ["crop"])
    add("cut(40, 30, 160, 120)", lambda i, fx: i.cut(40, 30, 160, 120))
    add("resize(160, 120)", lambda i, fx: i.resize(160, 120))
    add("resize(224, 224)", lambda i, fx: i.resize(224, 224), ["resize"])
    mut("to_grayscale()", lambda i, fx: i.to_grayscale())
    add("to_grayscale(copy)", lambda i, fx: i.to_grayscale(copy=True), ["to_grayscale"])
    mut("to_rgb565()", lambda i, fx: i.to_rgb565(), formats=[RGB])
    add("to_rgb565(copy)", lambda i, fx: i.to_rgb565(copy=True), ["to_rgb565"])
    add("to_rainbow(copy)", lambda i, fx: i.to_rainbow(copy=True), ["to_rainbow"])
    mut("to_bitmap()", lambda i, fx: i.to_bitmap())
    add("to_bitmap(copy)", lambda i, fx: i.to_bitmap(copy=True), ["to_bitmap"])
    mut("clear()", lambda i, fx: i.clear())
    mut("pix_to_ai()", lambda i, fx: i.pix_to_ai())
    mut("ai_to_pix()", lambda i, fx: i.ai_to_pix())
    mut("conv3(edge)", lambda i, fx: i.conv3([-1, -1, -1, -1, 8, -1, -1, -1, -1]), ["conv3"], [RGB])
    add("mean_pooled(2, 2)", lambda i, fx: i.mean_pooled(2, 2))
    add("midpoint_pooled(2, 2)", lambda i, fx: i.midpoint_pooled(2, 2))
    mut("mean_pool(2, 2)", lambda i, fx: i.mean_pool(2, 2))
    mut("midpoint_pool(2, 2)", lambda i, fx: i.midpoint_pool(2, 2))
    add("dump_roi(8x4)", lambda i, fx: _quiet(i.dump_roi, 0, 0, 8, 4), ["dump_roi"])

    # -- pixel maths with another image
    for op in ("add", "sub", "mul", "div", "min", "max", "difference", "blend", "b_and", "b_nand", "b_or",
               "b_nor", "b_xor", "b_xnor", "replace"):
        mut(f"{op}(other)", lambda i, fx, op=op: getattr(i, op)(fx.others[i_fmt(i)]), [op])
    mut("add(color)", lambda i, fx: i.add((20, 20, 20) if i_fmt(i) == RGB else 20), ["add"])
    mut("invert()", lambda i, fx: i.invert())
    mut("negate()", lambda i, fx: i.negate())
    mut("gamma_corr(0.5, 1.2, 0.1)", lambda i, fx: i.gamma_corr(gamma=0.5, contrast=1.2, brightness=0.1), ["gamma_corr"])
    mut("binary(thr)", lambda i, fx: i.binary(fx.thresholds[i_fmt(i)]), ["binary"])
    mut("binary(thr, invert)", lambda i, fx: i.binary(fx.thresholds[i_fmt(i)], invert=True), ["binary"])
    mut("stretch(0, 255)", lambda i, fx: i.stretch(0, 255), ["stretch"], [GRAY])
    mut("strech_char(1)", lambda i, fx: i.strech_char(1), ["strech_char"], [GRAY])
    mut("chrominvar()", lambda i, fx: i.chrominvar(), formats=[RGB])
    mut("illuminvar()", lambda i, fx: i.illuminvar(), formats=[RGB])
    mut("remove_shadows(other)", lambda i, fx: i.remove_shadows(fx.others[RGB]), ["remove_shadows"], [RGB])

    # -- filters and morphology
    for size in (1, 2):
        mut(f"gaussian({size})", lambda i, fx, s=size: i.gaussian(s), ["gaussian"])
        mut(f"mean({size})", lambda i, fx, s=size: i.mean(s), ["mean"])
        mut(f"median({size})", lambda i, fx, s=size: i.median(s), ["median"])
        mut(f"mode({size})", lambda i, fx, s=size: i.mode(s), ["mode"])
        mut(f"midpoint({size})", lambda i, fx, s=size: i.midpoint(s), ["midpoint"])
        mut(f"bilateral({size})", lambda i, fx, s=size: i.bilateral(s), ["bilateral"])
    mut("gaussian(1, unsharp)", lambda i, fx: i.gaussian(1, unsharp=True), ["gaussian"])
    mut("laplacian(1)", lambda i, fx: i.laplacian(1), ["laplacian"])
    mut("laplacian(1, sharpen)", lambda i, fx: i.laplacian(1, sharpen=True), ["laplacian"])
    mut("morph(1, edge)", lambda i, fx: i.morph(1, [-1, -1, -1, -1, 8, -1, -1, -1, -1]), ["morph"])
    for op in ("erode", "dilate", "open", "close", "top_hat", "black_hat"):
        mut(f"{op}(1)", lambda i, fx, op=op: getattr(i, op)(1), [op])
    mut("histeq()", lambda i, fx: i.histeq(), ["histeq"])
    mut("histeq(adaptive)", lambda i, fx: i.histeq(adaptive=True, clip_limit=3), ["histeq"])
    mut("lens_corr(1.8)", lambda i, fx: i.lens_corr(1.8), ["lens_corr"])
    mut("rotation_corr(z=30)", lambda i, fx: i.rotation_corr(x_rotation=10, z_rotation=30, zoom=0.9), ["rotation_corr"])
    mut("linpolar()", lambda i, fx: i.linpolar(), ["linpolar"])
    mut("logpolar()", lambda i, fx: i.logpolar(), ["logpolar"])
    mut("flood_fill(160, 120)", lambda i, fx: i.flood_fill(160, 120, seed_threshold=0.1, floating_threshold=0.05), ["flood_fill"])
    mut("cartoon()", lambda i, fx: i.cartoon(seed_threshold=0.1, floating_threshold=0.05), ["cartoon"])
    mut("find_domain(20)", lambda i, fx: i.find_domain(20), ["find_domain"], [GRAY])
    mut("find_hog()", lambda i, fx: i.find_hog(), ["find_hog"], [GRAY])

    # -- statistics
    add("get_histogram()", lambda i, fx: i.get_histogram())
    add("get_histogram().get_threshold()", lambda i, fx: i.get_histogram().get_threshold(), ["get_histogram"])
    add("get_statistics()", lambda i, fx: i.get_statistics())
    add("get_statistics(thresholds)", lambda i, fx: i.get_statistics(thresholds=fx.thresholds[i_fmt(i)]), ["get_statistics"])
    add("get_similarity(other)", lambda i, fx: i.get_similarity(fx.others[i_fmt(i)]), ["get_similarity"])

    # -- drawing
    mut("draw_line", lambda i, fx: i.draw_line(10, 20, 300, 200, color=(255, 0, 0), thickness=2), ["draw_line"])
    mut("draw_rectangle", lambda i, fx: i.draw_rectangle(40, 30, 120, 90, color=(255, 0, 0), thickness=2), ["draw_rectangle"])
    mut("draw_rectangle(fill)", lambda i, fx: i.draw_rectangle(40, 30, 120, 90, color=(0, 255, 0), fill=True), ["draw_rectangle"])
    mut("draw_circle", lambda i, fx: i.draw_circle(160, 120, 60, color=(0, 0, 255), thickness=2), ["draw_circle"])
    mut("draw_circle(fill)", lambda i, fx: i.draw_circle(160, 120, 60, color=(0, 0, 255), fill=True), ["draw_circle"])
    mut("draw_ellipse", lambda i, fx: i.draw_ellipse(160, 120, 80, 40, 30, color=(255, 255, 0), thickness=2), ["draw_ellipse"])
    mut("draw_cross", lambda i, fx: i.draw_cross(160, 120, color=(255, 0, 255), size=10), ["draw_cross"])
    mut("draw_arrow", lambda i, fx: i.draw_arrow(20, 20, 200, 150, color=(0, 255, 255), thickness=2), ["draw_arrow"])
    mut("draw_string(20 chars)", lambda i, fx: i.draw_string(10, 10, "Hello maixemu 12345!", color=(255, 255, 255), scale=2), ["draw_string"])
    mut("draw_string(UTF-8 font)", _draw_utf8, ["draw_string", "image.font_load"])
    mut("draw_font(16x16)", lambda i, fx: i.draw_font(10, 10, 16, 16, fx.glyph, scale=2), ["draw_font"])
    mut("draw_image(64x48)", lambda i, fx: i.draw_image(fx.small[i_fmt(i)], 50, 40), ["draw_image"])
    mut("draw_image(64x48, scale 2, alpha)", lambda i, fx: i.draw_image(fx.small[i_fmt(i)], 50, 40, x_scale=2.0, y_scale=2.0, alpha=128), ["draw_image"])

    # -- finders
    add("find_blobs(thr)", lambda i, fx: i.find_blobs(fx.blob_thresholds[i_fmt(i)], pixels_threshold=50, area_threshold=50), ["find_blobs"])
    add("find_blobs(thr, merge)", lambda i, fx: i.find_blobs(fx.blob_thresholds[i_fmt(i)], pixels_threshold=50, area_threshold=50, merge=True), ["find_blobs"])
    mut("find_blobs + draw", _blobs_and_draw, ["find_blobs", "draw_rectangle", "draw_cross"])
    add("get_regression(thr)", lambda i, fx: i.get_regression(fx.thresholds[i_fmt(i)]), ["get_regression"])
    add("get_regression(thr, robust)", lambda i, fx: i.get_regression(fx.thresholds[i_fmt(i)], robust=True, x_stride=4, y_stride=4), ["get_regression"])
    add("find_lines()", lambda i, fx: i.find_lines(threshold=1000), ["find_lines"])
    add("find_circles()", lambda i, fx: i.find_circles(threshold=3000), ["find_circles"])
    add("find_line_segments()", lambda i, fx: i.find_line_segments(merge_distance=5), ["find_line_segments"])
    add("find_rects()", lambda i, fx: i.find_rects(threshold=10000), ["find_rects"])
    add("find_qrcodes()", lambda i, fx: i.find_qrcodes(), ["find_qrcodes"])
    add("find_qrcodes(code)", lambda i, fx: i.find_qrcodes(), ["find_qrcodes"], scene="qrcode")
    add("find_apriltags()", lambda i, fx: i.find_apriltags(roi=(0, 0, 240, 240)), ["find_apriltags"])
    add("find_apriltags(tags)", lambda i, fx: i.find_apriltags(roi=APRILTAG_ROI), ["find_apriltags"], scene="apriltag")
    add("find_barcodes()", lambda i, fx: i.find_barcodes(), ["find_barcodes"])
    add("find_template(40x30, SEARCH_EX)", lambda i, fx: i.find_template(fx.templates[GRAY], 0.7, step=4, search=fx.image.SEARCH_EX), ["find_template"], [GRAY])
    add("find_template(40x30, SEARCH_DS)", lambda i, fx: i.find_template(fx.templates[GRAY], 0.7, search=fx.image.SEARCH_DS), ["find_template"], [GRAY])
    add("find_features(frontalface)", lambda i, fx: i.find_features(fx.haar(), threshold=0.75, scale_factor=1.25), ["find_features"], [GRAY])
    add("find_eye(roi)", lambda i, fx: i.find_eye((100, 60, 120, 100)), ["find_eye"], [GRAY])
    add("find_lbp(roi)", lambda i, fx: i.find_lbp((0, 0, 320, 240)), ["find_lbp"], [GRAY])
    add("image.match_descriptor(lbp)", lambda i, fx: fx.image.match_descriptor(fx.lbp[GRAY], fx.lbp[GRAY]), ["image.match_descriptor"], [GRAY])
    add("find_keypoints(max 50)", lambda i, fx: i.find_keypoints(max_keypoints=50), ["find_keypoints"])
    mut("draw_keypoints(50)", lambda i, fx: i.draw_keypoints(fx.keypoints, color=(255, 0, 0)), ["draw_keypoints"])
    add("image.match_descriptor(orb)", lambda i, fx: fx.image.match_descriptor(fx.keypoints, fx.keypoints),
        ["image.match_descriptor"], [GRAY])
    add("find_displacement(64x64)", lambda i, fx: i.find_displacement(fx.others[i_fmt(i)], roi=(100, 80, 64, 64),
                                                                      template_roi=(100, 80, 64, 64)), ["find_displacement"])
    add("find_displacement(64x64, logpolar)", lambda i, fx: i.find_displacement(
        fx.others[i_fmt(i)], roi=(100, 80, 64, 64), template_roi=(100, 80, 64, 64), logpolar=True), ["find_displacement"])
    add("selective_search()", lambda i, fx: i.selective_search(), ["selective_search"])
    add("find_datamatrices()", lambda i, fx: i.find_datamatrices(), ["find_datamatrices"])
    mut("find_edges(canny)", lambda i, fx: i.find_edges(fx.image.EDGE_CANNY, threshold=(50, 80)), ["find_edges"], [GRAY])
    mut("find_edges(simple)", lambda i, fx: i.find_edges(fx.image.EDGE_SIMPLE, threshold=(50, 80)), ["find_edges"], [GRAY])

    # -- codecs and files
    add("compressed(90)", lambda i, fx: i.compressed(quality=90), ["compressed"])
    add("compressed(50)", lambda i, fx: i.compressed(quality=50), ["compressed"])
    mut("compress(90)", lambda i, fx: i.compress(quality=90), ["compress"])
    add("compressed_for_ide(90)", lambda i, fx: i.compressed_for_ide(quality=90), ["compressed_for_ide"])
    mut("compress_for_ide(90)", lambda i, fx: i.compress_for_ide(quality=90), ["compress_for_ide"])
    add("image.Image(jpeg bytes) 320x240", lambda i, fx: fx.image.Image(fx.jpeg_bytes[i_fmt(i)], from_bytes=True), ["image.Image"])
    if JPEG_QVGA.is_file():
        add("image.Image(face_20.jpg) 320x240", lambda i, fx: fx.image.Image("/sd/" + JPEG_QVGA.name), ["image.Image"], [RGB])
    if JPEG_LARGE.is_file():
        add("image.Image(coco.jpg) 640x424", lambda i, fx: fx.image.Image("/sd/" + JPEG_LARGE.name), ["image.Image"], [RGB])
    if PHOTO.is_file():
        add("image.Image(dog.bmp) 320x240", lambda i, fx: fx.image.Image("/sd/" + PHOTO.name), ["image.Image"], [RGB])
    add("save(.bmp)", lambda i, fx: i.save("/sd/_bench.bmp"), ["save"])
    add("save(.jpg)", lambda i, fx: i.save("/sd/_bench.jpg", quality=90), ["save"])
    add("image.get_affine_transform", lambda i, fx: fx.image.get_affine_transform([(0, 0), (319, 0), (0, 239)], [(10, 5), (300, 20), (15, 230)]),
        ["image.get_affine_transform"], [RGB])
    add("image.warp_affine_ai", lambda i, fx: fx.image.warp_affine_ai(i, fx.ai_dst[i_fmt(i)], fx.affine), ["image.warp_affine_ai"])
    add("image.rgb_to_lab etc.", lambda i, fx: (fx.image.rgb_to_lab((10, 200, 30)), fx.image.lab_to_rgb((50, 20, -30)),
                                              fx.image.rgb_to_grayscale((10, 200, 30)), fx.image.grayscale_to_rgb(77)),
        ["image.rgb_to_lab", "image.lab_to_rgb", "image.rgb_to_grayscale", "image.grayscale_to_rgb"], [RGB])
    return cases


def _blobs_and_draw(img, fx):
    """A tracking loop's frame: the blobs, a rectangle and a cross on each."""
    blobs = img.find_blobs(fx.blob_thresholds[i_fmt(img)], pixels_threshold=50, area_threshold=50)
    for b in blobs:
        img.draw_rectangle(b.rect())
        img.draw_cross(b.cx(), b.cy())
    return blobs


def _draw_utf8(img, fx):
    image = fx.image
    image.font_load(image.UTF8, 16, 16, 0xA00000)
    try:
        return img.draw_string(10, 10, "你好 maixemu 世界", color=(255, 255, 255), scale=1)
    finally:
        image.font_free()


def _quiet(fn, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args, **kwargs)


def i_fmt(img) -> str:
    from ..firmware import pixformat

    return GRAY if img._fmt == pixformat.GRAYSCALE else RGB


CASES: list[Case] = _cases()


# ----------------------------------------------------------------------------------------- running
@contextlib.contextmanager
def bench_board():
    """The current board's storage in a temporary folder (mounted as /sd and /flash) holding copies of
    the shared photos, for ``save`` and ``image.Image(path)``; the previous storage is back afterwards."""
    import tempfile

    from ..firmware import state
    from ..host import storage

    board = state.current()
    previous = board._storage  # None (a lazily made default) stays None
    with tempfile.TemporaryDirectory(prefix="maixemu-image-bench-") as tmp:
        for photo in (PHOTO, JPEG_QVGA, JPEG_LARGE):  # image.Image(path) reads device paths
            if photo.is_file():
                shutil.copyfile(photo, Path(tmp) / photo.name)
        board.storage = storage.Storage(tmp, tmp)
        try:
            yield
        finally:
            board._storage = previous  # (None: the lazily made default again)


def prepare(case: Case, fx: Fixtures):
    """The argument-free callable that times one call, and the setup to run before each one."""
    base = fx.scenes[case.scene][case.fmt]
    state = {"img": base}

    generation = (base._buf.fmt, base._buf.pix_gen)

    def setup():
        if case.mutates:
            state["img"] = clone(base)
        elif (base._buf.fmt, base._buf.pix_gen) != generation:
            raise RuntimeError(f"bench case {case.name!r} changes its frame: mark it as mutating")

    def call():
        return case.run(state["img"], fx)

    return setup, call


def clone(img):
    """A new image with its own copy of ``img``'s whole memory: pixels, AI buffer (shared with the
    pixels as in a grayscale snapshot), format."""
    from ..firmware.image._core import _Buffer

    b = img._buf
    pix = b.pix.copy()
    ai = pix[np.newaxis] if b.ai_shared else (None if b.ai is None else b.ai.copy())
    new = _Buffer(b.fmt, pix, ai, b.dims)
    new.ai_shared, new.pix_gen, new.ai_gen = b.ai_shared, b.pix_gen, b.ai_gen
    out = object.__new__(type(img))  # (image classes define no __new__ of their own)
    out._buf = new
    return out


@dataclass
class Timing:
    """Median CPU seconds of one call of a case and, when it has one, of its peer (timed in turn
    with it), and the findings of the last call of each (None where a result is not a list)."""

    seconds: float
    peer_seconds: float | None = None
    found: int | None = None
    peer_found: int | None = None


def time_case(case: Case, fx: Fixtures, *, min_runs: int = 3, max_runs: int = 50, budget_s: float = 0.4,
              peer=None) -> Timing:
    """Median CPU seconds of one call (after one untimed warm-up call, which also compiles kernels);
    with ``peer`` (an ``image_peers.Peer``), the peer's call on the same frame runs after each of
    ours, so both see the same machine load."""
    setup, call = prepare(case, fx)
    peer_call = None if peer is None else peer.prepare(fx.peer_frames[case.scene, case.fmt], fx, case.fmt)
    setup()
    result = call()
    peer_result = None if peer_call is None else peer_call()
    times: list[float] = []
    peer_times: list[float] = []
    spent = 0.0
    while len(times) < max_runs and (len(times) < min_runs or spent < budget_s):
        setup()
        start = time.process_time()
        result = call()
        elapsed = time.process_time() - start
        times.append(elapsed)
        spent += elapsed
        if peer_call is not None:
            start = time.process_time()
            peer_result = peer_call()
            peer_times.append(time.process_time() - start)
    setup()  # raises if a case marked as not mutating changed its frame
    timing = Timing(float(np.median(times)))
    if peer_call is not None:
        timing.peer_seconds = float(np.median(peer_times))
        if peer.count is not None:
            timing.peer_found = peer.count(peer_result)
            timing.found = findings(result)
    return timing


def findings(result) -> int | None:
    """How many things a finder's result holds: a list's length, a keypoints object's, 0 for None."""
    if result is None:
        return 0
    try:
        return len(result)
    except TypeError:
        return None


def matmul_seconds(n: int = 256, runs: int = 15) -> float:
    """Median seconds of a float64 ``n x n`` matmul (BLAS at one thread): the machine's yardstick."""
    from ..kmodel.kpu.blas import blas_threads

    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    with blas_threads(1):
        a @ b
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            a @ b
            times.append(time.perf_counter() - start)
    return float(np.median(times))


@dataclass
class Row:
    name: str
    ms: float
    ratio: float
    error: str = ""
    peer_ms: float | None = None
    found: str = ""
    k210: str = ""


def run_cases(cases: list[Case], fx: Fixtures, *, budget_s: float = 0.4, progress=None,
              peers: bool = True) -> tuple[list[Row], float]:
    """Time ``cases`` (and their peers, OpenCV on one thread as our code runs); the matmul yardstick
    is measured before and after and averaged."""
    from .image_k210 import k210_time
    from .image_peers import PeerUnavailable, peer_of

    before = matmul_seconds()
    rows: list[Row] = []
    with _opencv_threads(1):
        for case in cases:
            if progress:
                progress(case.name)
            peer = peer_of(case.name) if peers else None
            k210 = k210_time(case.name, case.fmt)
            try:
                try:
                    timing = time_case(case, fx, budget_s=budget_s, peer=peer)
                except PeerUnavailable:
                    timing = time_case(case, fx, budget_s=budget_s)
            except Exception as exc:  # a case that cannot run here is reported, the others go on
                rows.append(Row(case.name, math.nan, math.nan, f"{type(exc).__name__}: {exc}"))
                continue
            found = "" if timing.peer_found is None else f"{timing.found}/{timing.peer_found}"
            peer_ms = None if timing.peer_seconds is None else timing.peer_seconds * 1e3
            rows.append(Row(case.name, timing.seconds * 1e3, 0.0, peer_ms=peer_ms, found=found,
                            k210="" if k210 is None else k210.label()))
    reference = (before + matmul_seconds()) / 2
    for row in rows:
        if not row.error:
            row.ratio = row.ms * 1e-3 / reference
    return rows, reference


@contextlib.contextmanager
def _opencv_threads(n: int):
    """OpenCV's worker threads set to ``n`` (both sides of a comparison on one thread), then back."""
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(n)
    try:
        yield
    finally:
        cv2.setNumThreads(before)


def _x_peer(r: Row) -> str:
    if r.peer_ms is None or not r.peer_ms > 0:
        return "-"
    return f"{r.ms / r.peer_ms:.2f}"


def format_rows(rows: list[Row], reference_s: float, slowest: int = 10) -> str:
    width = max(len(r.name) for r in rows)
    lines = [f"{'case'.ljust(width)}  {'ms/call':>9}  {'x matmul':>9}  {'peer ms':>9}  {'x peer':>7}  "
             f"{'found':>7}  {'K210 ms':>8}"]
    for r in rows:
        if r.error:
            lines.append(f"{r.name.ljust(width)}  {'-':>9}  {'-':>9}  {'-':>9}  {'-':>7}  {'':>7}  {'':>8}  {r.error}")
        else:
            peer = "-" if r.peer_ms is None else f"{r.peer_ms:9.3f}"
            lines.append(f"{r.name.ljust(width)}  {r.ms:9.3f}  {r.ratio:9.2f}  {peer:>9}  {_x_peer(r):>7}  "
                         f"{r.found:>7}  {r.k210:>8}")
    timed = sorted((r for r in rows if not r.error), key=lambda r: -r.ms)
    lines.append("")
    lines.append(f"yardstick: 256x256 float64 numpy matmul (1 BLAS thread) = {reference_s * 1e3:.3f} ms")
    lines.append(f"slowest {min(slowest, len(timed))}:")
    lines += [f"  {r.ms:9.2f} ms  {r.ratio:8.1f}x  {r.name}" for r in timed[:slowest]]
    return "\n".join(lines)


def format_markdown(rows: list[Row], reference_s: float, frame: str) -> str:
    """The table as Markdown, with the peers' library calls and the K210 times' sources under it."""
    from .image_k210 import K210_TIMES
    from .image_peers import PEERS

    out = [f"| case | ms | x matmul | peer ms | x peer | found | K210 ms |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r.error:
            out.append(f"| `{r.name}` | - | - | - | - | | | ")
            continue
        peer = "" if r.peer_ms is None else f"{r.peer_ms:.3f}"
        x_peer = "" if r.peer_ms is None else _x_peer(r)
        out.append(f"| `{r.name}` | {r.ms:.3f} | {r.ratio:.2f} | {peer} | {x_peer} | {r.found} | {r.k210} |")
    out += ["", f"Frame: {_frame_label(frame)}. {machine()}. Yardstick: a 256x256 float64 numpy matmul on one "
            f"BLAS thread = {reference_s * 1e3:.3f} ms.", "", "Peers (OpenCV calls on the same frame):", ""]
    out += [f"* `{name}`: {peer.what}" for name, peer in PEERS.items()]
    out += ["", "K210 times and their sources:", ""]
    out += [f"* `{name}`{'' if t.fmt is None else f' [{t.fmt}]'}: {'at least ' if t.at_least else ''}{t.ms:g} ms"
            f"{f' at {t.frame}' if t.frame else ''}, {t.what}. Source: {t.source}." for name, t in K210_TIMES.items()]
    return "\n".join(out) + "\n"


def _frame_label(frame: str) -> str:
    """The frame's path as the docs show it (``../shared/...`` rather than this machine's path)."""
    try:
        return "../shared/" + Path(frame).resolve().relative_to(SHARED_DIR.resolve()).as_posix()
    except ValueError:
        return frame


def machine() -> str:
    """The CPU, its core count and vector extensions, and the libraries' versions, in one line."""
    import os
    import platform

    import cv2

    model = platform.processor() or platform.machine()
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("", platform.machine(), platform.processor()):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    simd = [f for f in ("avx2", "avx512f", "avx512_vnni", "neon", "asimd") if f in flags]
    try:
        import numba

        nb = f", numba {numba.__version__}"
    except ImportError:
        nb = ", no numba"
    return (f"Machine: {model}, {os.cpu_count()} cores ({' '.join(simd) or 'no AVX2'}); numpy {np.__version__}, "
            f"OpenCV {cv2.__version__}{nb}")


TABLE_BEGIN, TABLE_END = "<!-- image_bench table: begin -->", "<!-- image_bench table: end -->"


def write_markdown(path: Path, table: str) -> None:
    """Write ``table`` to ``path``; a file that holds the two ``TABLE_BEGIN``/``TABLE_END`` markers
    (``docs/image-speed.md``) keeps its text around them and gets the table between them."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if TABLE_BEGIN in text and TABLE_END in text:
        head, rest = text.split(TABLE_BEGIN, 1)
        tail = rest.split(TABLE_END, 1)[1]
        text = f"{head}{TABLE_BEGIN}\n{table}{TABLE_END}{tail}"
    else:
        text = table
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maixemu.tools.image_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--filter", action="append", default=[], metavar="WORD", help="only cases whose name contains WORD (repeatable)")
    parser.add_argument("--photo", type=Path, help="the frame to use (default ../shared/images/dog.bmp, else a synthetic scene)")
    parser.add_argument("--budget", type=float, default=0.4, help="seconds of timed calls per case (at least 3 calls; default 0.4)")
    parser.add_argument("--slowest", type=int, default=10, help="how many slowest cases to list (default 10)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown, with the peers and sources "
                        "(between the table markers of a file that has them, e.g. docs/image-speed.md)")
    parser.add_argument("--no-peers", action="store_true", help="time our calls only (no OpenCV peer column)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    # The table times the compiled kernels, the state a run reaches once they are in memory (the
    # default background mode would time the numpy forms of a short run's first calls instead);
    # MAIXEMU_KERNELS=background times those.
    os.environ.setdefault("MAIXEMU_KERNELS", "wait")
    cases = [c for c in CASES if all(w in c.name for w in args.filter)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    with bench_board():
        fx = Fixtures(args.photo)
        print(f"frame: {fx.source}, {len(cases)} cases", file=sys.stderr)
        rows, reference = run_cases(cases, fx, budget_s=args.budget, peers=not args.no_peers)
    print(format_rows(rows, reference, args.slowest))
    if args.markdown:
        write_markdown(args.markdown, format_markdown(rows, reference, fx.source))
    if args.json:
        args.json.write_text(json.dumps({"matmul_ms": reference * 1e3, "frame": fx.source,
                                         "rows": [r.__dict__ for r in rows]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
