"""The peer column of ``image_bench``: the same job done by the C library a PC user would reach for.

A :class:`Peer` belongs to a bench case by the case's name without its format (``"gaussian(1)"``
for ``"gaussian(1) [rgb565]"``); :data:`PEERS` maps those names to peers. A peer receives the very
frame the case works on as OpenCV holds it (BGR ``uint8`` for an RGB565 image, its pixels expanded
as the LCD shows them, ``uint8`` for a grayscale one) and the bench's fixtures, and returns the
argument-free call to time; ``image_bench`` times it interleaved with the case, in CPU time.

Peers do the job a user would do with the library, not the firmware's arithmetic: a blur is
``cv2.GaussianBlur``, a QR code is ``cv2.QRCodeDetector``. For finders, ``count`` gives the number
of findings of the peer's result, shown next to ours so a reader sees both found the same things
(or why the times differ). Cases without an equivalent have no peer. Another library joins with
one entry here, as AprilTag 3 does for ``find_apriltags`` (``apriltag_peer``): a ``Peer`` whose
``prepare`` imports it and raises :class:`PeerUnavailable` when it is not installed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

Frame = np.ndarray
Call = Callable[[], Any]


class PeerUnavailable(Exception):
    """The peer's library is not installed here; the bench shows the case without its peer."""


@dataclass(frozen=True)
class Peer:
    """``prepare(frame, fx, fmt)`` builds what the job needs once (a detector, a kernel) and returns
    the call to time; ``what`` names the library calls (shown under the table); ``count(result)``
    is the number of findings, for finders."""

    what: str
    prepare: Callable[[Frame, Any, str], Call]
    count: Callable[[Any], int] | None = None


def _cv2():
    import cv2

    return cv2


def _is_rgb(frame: Frame) -> bool:
    return frame.ndim == 3


# --------------------------------------------------------------------------------------- finders
def lab_bounds(th: tuple[int, ...]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """A firmware LAB threshold (L 0..100, A/B -128..127) in OpenCV's 8-bit Lab (L*255/100, A+128,
    B+128), for ``cv2.inRange``."""
    l0, l1, a0, a1, b0, b1 = th
    return (round(l0 * 2.55), a0 + 128, b0 + 128), (round(l1 * 2.55), a1 + 128, b1 + 128)


def _threshold_masks(frame: Frame, thresholds) -> list[np.ndarray]:
    cv2 = _cv2()
    if _is_rgb(frame):
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        return [cv2.inRange(lab, *lab_bounds(th)) for th in thresholds]
    return [cv2.inRange(frame, th[0], th[1]) for th in thresholds]


def _blobs(frame: Frame, fx, fmt: str) -> Call:
    """Lab + inRange + findContours, each outer boundary's bounding box and moments, filtered as the
    case filters (pixels >= 50 and box area >= 50). ``RETR_CCOMP`` keeps the regions inside another
    region's hole, which the firmware finds too."""
    cv2 = _cv2()
    thresholds = fx.blob_thresholds[fmt]

    def run():
        found = []
        for mask in _threshold_masks(frame, thresholds):
            contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
            for c, (_, _, _, parent) in zip(contours, hierarchy[0] if contours else ()):
                if parent >= 0:
                    continue  # a hole's boundary (outer boundaries, nested ones too, have no parent)
                x, y, w, h = cv2.boundingRect(c)
                m = cv2.moments(c)
                if w * h >= 50 and m["m00"] >= 50:
                    found.append((x, y, w, h, m["m10"] / m["m00"], m["m01"] / m["m00"]))
        return found

    return run


def _qrcodes(frame: Frame, fx, fmt: str) -> Call:
    detector = _cv2().QRCodeDetector()
    return lambda: detector.detectAndDecode(frame)[0]


def _lines(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    gray = frame if not _is_rgb(frame) else None

    def run():
        g = gray if gray is not None else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        lines = cv2.HoughLines(cv2.Canny(g, 50, 150), 1, np.pi / 180, 100)
        return [] if lines is None else list(lines)

    return run


def _circles(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()

    def run():
        g = frame if not _is_rgb(frame) else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        found = cv2.HoughCircles(g, cv2.HOUGH_GRADIENT, 1, 20, param1=150, param2=40, minRadius=2, maxRadius=120)
        return [] if found is None else list(found[0])

    return run


def _segments(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    lsd = cv2.createLineSegmentDetector()

    def run():
        g = frame if not _is_rgb(frame) else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        lines = lsd.detect(g)[0]
        return [] if lines is None else list(lines)

    return run


def _rects(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()

    def run():
        g = frame if not _is_rgb(frame) else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        contours, _ = cv2.findContours(cv2.Canny(g, 50, 150), cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        quads = []
        for c in contours:
            p = cv2.approxPolyDP(c, 0.03 * cv2.arcLength(c, True), True)
            if len(p) == 4 and cv2.isContourConvex(p) and cv2.contourArea(p) > 100:
                quads.append(p)
        return quads

    return run


def _barcodes(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    if not hasattr(cv2, "barcode"):
        raise PeerUnavailable("this OpenCV has no barcode module")
    detector = cv2.barcode.BarcodeDetector()

    def run():
        ok, decoded, _, _ = detector.detectAndDecodeMulti(frame)
        return [d for d in decoded if d] if ok else []

    return run


def _template(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    t = frame[80:110, 120:160].copy()

    def run():
        r = cv2.matchTemplate(frame, t, cv2.TM_CCOEFF_NORMED)
        return [cv2.minMaxLoc(r)[3]]

    return run


def _faces(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    cascade = cv2.CascadeClassifier(os.path.join(cv2.data.haarcascades, "haarcascade_frontalface_default.xml"))
    return lambda: list(cascade.detectMultiScale(frame, scaleFactor=1.25, minNeighbors=3))


def _orb(frame: Frame, fx, fmt: str) -> Call:
    orb = _cv2().ORB_create(nfeatures=50)
    return lambda: list(orb.detectAndCompute(frame, None)[0])


def _displacement(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    other = fx.peer_frames["shifted", fmt]

    def gray64(f):
        g = f if not _is_rgb(f) else cv2.cvtColor(f, cv2.COLOR_BGR2GRAY)
        return g[80:144, 100:164].astype(np.float32)

    return lambda: cv2.phaseCorrelate(gray64(frame), gray64(other))


def _regression(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()

    def run():
        mask = _threshold_masks(frame, fx.thresholds[fmt])[0]
        points = cv2.findNonZero(mask)
        return None if points is None else cv2.fitLine(points, cv2.DIST_L2, 0, 0.01, 0.01)

    return run


# --------------------------------------------------------------------------------------- filters
def _cv(name: str, *args) -> Callable[[Frame, Any, str], Call]:
    """A peer that is one OpenCV call on the frame: ``cv2.<name>(frame, *args)``."""
    return lambda frame, fx, fmt: (lambda: getattr(_cv2(), name)(frame, *args))


def _morph(op_name: str) -> Callable[[Frame, Any, str], Call]:
    def prepare(frame, fx, fmt):
        cv2 = _cv2()
        kernel = np.ones((3, 3), np.uint8)
        op = getattr(cv2, op_name)
        return lambda: cv2.morphologyEx(frame, op, kernel)

    return prepare


def _histeq(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    if not _is_rgb(frame):
        return lambda: cv2.equalizeHist(frame)

    def run():
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        lab[:, :, 0] = cv2.equalizeHist(lab[:, :, 0])
        return cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)

    return run


def _clahe(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    clahe = cv2.createCLAHE(clipLimit=3.0, tileGridSize=(8, 8))
    if not _is_rgb(frame):
        return lambda: clahe.apply(frame)

    def run():
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        lab[:, :, 0] = clahe.apply(lab[:, :, 0])
        return cv2.cvtColor(lab, cv2.COLOR_Lab2BGR)

    return run


def _lens(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    h, w = frame.shape[:2]
    camera = np.array([[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], np.float64)
    maps = cv2.initUndistortRectifyMap(camera, np.array([-0.3, 0.1, 0, 0]), None, camera, (w, h), cv2.CV_16SC2)
    return lambda: cv2.remap(frame, maps[0], maps[1], cv2.INTER_NEAREST)


def _rotation(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    h, w = frame.shape[:2]
    m = np.vstack([cv2.getRotationMatrix2D((w / 2, h / 2), 30, 0.9), [0, 0, 1]])
    return lambda: cv2.warpPerspective(frame, m, (w, h), flags=cv2.INTER_NEAREST)


def _polar(log: bool) -> Callable[[Frame, Any, str], Call]:
    def prepare(frame, fx, fmt):
        cv2 = _cv2()
        h, w = frame.shape[:2]
        flags = cv2.WARP_POLAR_LOG if log else cv2.WARP_POLAR_LINEAR
        return lambda: cv2.warpPolar(frame, (w, h), (w / 2, h / 2), min(w, h) / 2, flags)

    return prepare


def _flood(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    h, w = frame.shape[:2]
    d = (26, 26, 26) if _is_rgb(frame) else 26
    f = (13, 13, 13) if _is_rgb(frame) else 13

    def run():
        img = frame.copy()
        mask = np.zeros((h + 2, w + 2), np.uint8)
        return cv2.floodFill(img, mask, (160, 120), (255, 255, 255) if _is_rgb(frame) else 255, d, f)

    return run


def _resize(w: int, h: int) -> Callable[[Frame, Any, str], Call]:
    return lambda frame, fx, fmt: (lambda: _cv2().resize(frame, (w, h), interpolation=_cv2().INTER_NEAREST))


def _pooled(frame: Frame, fx, fmt: str) -> Call:
    h, w = frame.shape[:2]
    return lambda: _cv2().resize(frame, (w // 2, h // 2), interpolation=_cv2().INTER_AREA)


def _to_gray(frame: Frame, fx, fmt: str) -> Call:
    if not _is_rgb(frame):
        raise PeerUnavailable("already grayscale")
    return lambda: _cv2().cvtColor(frame, _cv2().COLOR_BGR2GRAY)


def _histogram(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    if not _is_rgb(frame):
        return lambda: cv2.calcHist([frame], [0], None, [256], [0, 256])

    def run():
        lab = cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        return [cv2.calcHist([lab], [c], None, [256], [0, 256]) for c in range(3)]

    return run


def _statistics(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()

    def run():
        f = frame if not _is_rgb(frame) else cv2.cvtColor(frame, cv2.COLOR_BGR2Lab)
        return cv2.meanStdDev(f), [cv2.minMaxLoc(p) for p in cv2.split(f)]

    return run


def _binary(frame: Frame, fx, fmt: str) -> Call:
    return lambda: _threshold_masks(frame, fx.thresholds[fmt])


def _pixel_op(fn_name: str) -> Callable[[Frame, Any, str], Call]:
    def prepare(frame, fx, fmt):
        cv2 = _cv2()
        other = fx.peer_frames["shifted", fmt]
        fn = getattr(cv2, fn_name)
        return lambda: fn(frame, other)

    return prepare


def _add_colour(frame: Frame, fx, fmt: str) -> Call:
    colour = (20, 20, 20, 0) if _is_rgb(frame) else 20  # the case's add((20, 20, 20)) / add(20)
    return lambda: _cv2().add(frame, colour)


def _hog(frame: Frame, fx, fmt: str) -> Call:
    """hog.c's layout: 8x8 cells, 2x2-cell blocks side by side (stride one block), 9 bins."""
    cv2 = _cv2()
    h, w = frame.shape[:2]
    descriptor = cv2.HOGDescriptor((w // 16 * 16, h // 16 * 16), (16, 16), (16, 16), (8, 8), 9)
    window = np.ascontiguousarray(frame[:h // 16 * 16, :w // 16 * 16])
    return lambda: descriptor.compute(window)


def _blend(frame: Frame, fx, fmt: str) -> Call:
    other = fx.peer_frames["shifted", fmt]
    return lambda: _cv2().addWeighted(frame, 0.5, other, 0.5, 0)


def _gamma(frame: Frame, fx, fmt: str) -> Call:
    table = np.clip(((np.arange(256) / 255.0) ** 0.5 * 1.2 + 0.1) * 255, 0, 255).astype(np.uint8)
    return lambda: _cv2().LUT(frame, table)


def _warp_affine(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    src = np.array([(0, 0), (319, 0), (0, 239)], np.float32)
    m = cv2.getAffineTransform(src, np.array([(10, 5), (300, 20), (15, 230)], np.float32))
    h, w = frame.shape[:2]
    return lambda: cv2.warpAffine(frame, m, (w, h))


# --------------------------------------------------------------------------------------- codecs
def _jpeg(quality: int) -> Callable[[Frame, Any, str], Call]:
    return lambda frame, fx, fmt: (lambda: _cv2().imencode(".jpg", frame, [_cv2().IMWRITE_JPEG_QUALITY, quality]))


def _decode_jpeg(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])[1]
    flag = cv2.IMREAD_COLOR if _is_rgb(frame) else cv2.IMREAD_GRAYSCALE
    return lambda: cv2.imdecode(data, flag)


def _read_file(name: str) -> Callable[[Frame, Any, str], Call]:
    """``cv2.imread`` of the shared photo the case loads (``image.Image("/sd/<name>")``)."""

    def prepare(frame, fx, fmt):
        from .image_bench import SHARED_DIR

        path = SHARED_DIR / "images" / name
        if not path.is_file():
            raise PeerUnavailable(f"{path} is absent")
        return lambda: _cv2().imread(str(path), _cv2().IMREAD_COLOR)

    return prepare


def _save(ext: str) -> Callable[[Frame, Any, str], Call]:
    def prepare(frame, fx, fmt):
        path = os.path.join(tempfile.gettempdir(), f"maixemu-image-bench-peer{os.getpid()}{ext}")
        return lambda: _cv2().imwrite(path, frame)

    return prepare


# --------------------------------------------------------------------------------------- drawing
def _draw(fn: Callable[[Frame], Any]) -> Callable[[Frame, Any, str], Call]:
    def prepare(frame, fx, fmt):
        canvas = frame.copy()
        return lambda: fn(canvas)

    return prepare


def _colour(frame: Frame):
    return (0, 0, 255) if _is_rgb(frame) else 255


PEERS: dict[str, Peer] = {
    "find_blobs(thr)": Peer("cvtColor(Lab) + inRange + findContours + boundingRect/moments", _blobs, len),
    "find_blobs + draw": Peer("the same, then rectangle + drawMarker per blob",
                              lambda f, fx, fmt: _blobs_and_draw(f, fx, fmt), len),
    "find_qrcodes()": Peer("QRCodeDetector.detectAndDecode", _qrcodes, lambda r: int(bool(r))),
    "find_qrcodes(code)": Peer("QRCodeDetector.detectAndDecode", _qrcodes, lambda r: int(bool(r))),
    "find_lines()": Peer("Canny + HoughLines", _lines, len),
    "find_circles()": Peer("HoughCircles(HOUGH_GRADIENT)", _circles, len),
    "find_line_segments()": Peer("LineSegmentDetector.detect", _segments, len),
    "find_rects()": Peer("Canny + findContours + approxPolyDP (convex quads)", _rects, len),
    "find_barcodes()": Peer("barcode.BarcodeDetector.detectAndDecodeMulti", _barcodes, len),
    "find_template(40x30, SEARCH_EX)": Peer("matchTemplate(TM_CCOEFF_NORMED) + minMaxLoc", _template),
    "find_features(frontalface)": Peer("CascadeClassifier(frontalface_default).detectMultiScale", _faces, len),
    "find_keypoints(max 50)": Peer("ORB_create(50).detectAndCompute", _orb, len),
    "find_displacement(64x64)": Peer("phaseCorrelate (float32 64x64)", _displacement),
    "find_edges(canny)": Peer("Canny", _cv("Canny", 50, 80)),
    "get_regression(thr)": Peer("inRange + findNonZero + fitLine", _regression),
    "get_histogram()": Peer("calcHist (Lab planes on RGB565)", _histogram),
    "get_statistics()": Peer("meanStdDev + minMaxLoc (Lab planes on RGB565)", _statistics),
    "binary(thr)": Peer("inRange (Lab on RGB565)", _binary),
    "gaussian(1)": Peer("GaussianBlur 3x3", _cv("GaussianBlur", (3, 3), 0)),
    "gaussian(2)": Peer("GaussianBlur 5x5", _cv("GaussianBlur", (5, 5), 0)),
    "mean(1)": Peer("blur 3x3", _cv("blur", (3, 3))),
    "mean(2)": Peer("blur 5x5", _cv("blur", (5, 5))),
    "median(1)": Peer("medianBlur 3", _cv("medianBlur", 3)),
    "median(2)": Peer("medianBlur 5", _cv("medianBlur", 5)),
    "bilateral(1)": Peer("bilateralFilter d=3", _cv("bilateralFilter", 3, 30, 30)),
    "bilateral(2)": Peer("bilateralFilter d=5", _cv("bilateralFilter", 5, 30, 30)),
    "laplacian(1)": Peer("Laplacian ksize 3", _cv("Laplacian", -1, None, 3)),
    "erode(1)": Peer("morphologyEx(ERODE) 3x3", _morph("MORPH_ERODE")),
    "dilate(1)": Peer("morphologyEx(DILATE) 3x3", _morph("MORPH_DILATE")),
    "open(1)": Peer("morphologyEx(OPEN) 3x3", _morph("MORPH_OPEN")),
    "close(1)": Peer("morphologyEx(CLOSE) 3x3", _morph("MORPH_CLOSE")),
    "top_hat(1)": Peer("morphologyEx(TOPHAT) 3x3", _morph("MORPH_TOPHAT")),
    "black_hat(1)": Peer("morphologyEx(BLACKHAT) 3x3", _morph("MORPH_BLACKHAT")),
    "histeq()": Peer("equalizeHist (L of Lab on RGB565)", _histeq),
    "histeq(adaptive)": Peer("CLAHE clip 3 (L of Lab on RGB565)", _clahe),
    "lens_corr(1.8)": Peer("remap (maps built once)", _lens),
    "rotation_corr(z=30)": Peer("warpPerspective", _rotation),
    "linpolar()": Peer("warpPolar(LINEAR)", _polar(False)),
    "logpolar()": Peer("warpPolar(LOG)", _polar(True)),
    "flood_fill(160, 120)": Peer("floodFill (floating range)", _flood),
    "resize(160, 120)": Peer("resize(INTER_NEAREST)", _resize(160, 120)),
    "resize(224, 224)": Peer("resize(INTER_NEAREST)", _resize(224, 224)),
    "mean_pooled(2, 2)": Peer("resize(INTER_AREA) to half", _pooled),
    "to_grayscale(copy)": Peer("cvtColor(BGR2GRAY)", _to_gray),
    "add(other)": Peer("add", _pixel_op("add")),
    "sub(other)": Peer("subtract", _pixel_op("subtract")),
    "mul(other)": Peer("multiply", _pixel_op("multiply")),
    "div(other)": Peer("divide", _pixel_op("divide")),
    "min(other)": Peer("min", _pixel_op("min")),
    "max(other)": Peer("max", _pixel_op("max")),
    "difference(other)": Peer("absdiff", _pixel_op("absdiff")),
    "b_and(other)": Peer("bitwise_and", _pixel_op("bitwise_and")),
    "b_or(other)": Peer("bitwise_or", _pixel_op("bitwise_or")),
    "b_xor(other)": Peer("bitwise_xor", _pixel_op("bitwise_xor")),
    "blend(other)": Peer("addWeighted", _blend),
    "invert()": Peer("bitwise_not", _cv("bitwise_not")),
    "negate()": Peer("bitwise_not", _cv("bitwise_not")),
    "add(color)": Peer("add (a scalar)", _add_colour),
    "find_hog()": Peer("HOGDescriptor.compute (8x8 cells, 16x16 blocks at stride 16, 9 bins; no picture)", _hog),
    "gamma_corr(0.5, 1.2, 0.1)": Peer("LUT", _gamma),
    "image.warp_affine_ai": Peer("warpAffine", _warp_affine),
    "compressed(90)": Peer("imencode(.jpg, 90)", _jpeg(90)),
    "compressed(50)": Peer("imencode(.jpg, 50)", _jpeg(50)),
    "image.Image(jpeg bytes) 320x240": Peer("imdecode", _decode_jpeg),
    "image.Image(coco.jpg) 640x424": Peer("imread of the same file", _read_file("coco_436511.jpg")),
    "image.Image(face_20.jpg) 320x240": Peer("imread of the same file", _read_file("face_20.jpg")),
    "save(.bmp)": Peer("imwrite(.bmp)", _save(".bmp")),
    "save(.jpg)": Peer("imwrite(.jpg)", _save(".jpg")),
    "draw_line": Peer("line", _draw(lambda c: _cv2().line(c, (10, 20), (300, 200), _colour(c), 2))),
    "draw_rectangle": Peer("rectangle", _draw(lambda c: _cv2().rectangle(c, (40, 30), (159, 119), _colour(c), 2))),
    "draw_rectangle(fill)": Peer("rectangle(filled)", _draw(lambda c: _cv2().rectangle(c, (40, 30), (159, 119), _colour(c), -1))),
    "draw_circle": Peer("circle", _draw(lambda c: _cv2().circle(c, (160, 120), 60, _colour(c), 2))),
    "draw_circle(fill)": Peer("circle(filled)", _draw(lambda c: _cv2().circle(c, (160, 120), 60, _colour(c), -1))),
    "draw_ellipse": Peer("ellipse", _draw(lambda c: _cv2().ellipse(c, (160, 120), (80, 40), 30, 0, 360, _colour(c), 2))),
    "draw_cross": Peer("drawMarker(CROSS)", _draw(lambda c: _cv2().drawMarker(c, (160, 120), _colour(c), 0, 21))),
    "draw_arrow": Peer("arrowedLine", _draw(lambda c: _cv2().arrowedLine(c, (20, 20), (200, 150), _colour(c), 2))),
    "draw_string(20 chars)": Peer("putText", _draw(lambda c: _cv2().putText(c, "Hello maixemu 12345!", (10, 30),
                                                                           0, 0.8, _colour(c), 1))),
}


def _blobs_and_draw(frame: Frame, fx, fmt: str) -> Call:
    cv2 = _cv2()
    find = _blobs(frame, fx, fmt)
    canvas = frame.copy()
    colour = _colour(frame)

    def run():
        found = find()
        for x, y, w, h, cx, cy in found:
            cv2.rectangle(canvas, (x, y), (x + w - 1, y + h - 1), colour, 1)
            cv2.drawMarker(canvas, (int(cx), int(cy)), colour, 0, 11)
        return found

    return run


def _apriltag3(frame: Frame, fx, fmt: str) -> Call:
    """AprilTag 3 (``apriltag_peer``: pupil-apriltags, set up as the firmware's detector) on the case's roi."""
    from .apriltag_peer import prepare
    from .image_bench import APRILTAG_ROI

    try:
        return prepare(APRILTAG_ROI)(frame, fx, fmt)
    except ImportError as exc:
        raise PeerUnavailable(str(exc)) from None


PEERS["find_apriltags(tags)"] = Peer("AprilTag 3 (pupil-apriltags): tag36h11, no decimation or blur, refined edges, "
                                     "one thread, same roi", _apriltag3, len)
PEERS["find_apriltags()"] = PEERS["find_apriltags(tags)"]


def peer_of(case_name: str) -> Peer | None:
    """The peer of a bench case (``"gaussian(1) [gray]"`` -> the ``"gaussian(1)"`` peer), if any."""
    return PEERS.get(case_name.rsplit(" [", 1)[0])
