"""Ground-truth boxes next to an image: Pascal VOC ``.xml`` or YOLO/darknet ``.txt`` files.

VOC gives pixel corners and class *names* (mapped through the labels); YOLO gives a class *index*
and a centre/size normalised to the image, so its boxes become pixels only once the image's size is
known (in the worker, which decodes the image anyway).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .errors import EvalError

#: An annotation file larger than this is not an annotation (refused instead of parsed).
MAX_ANNOTATION_BYTES = 4 << 20


@dataclass(frozen=True)
class Box:
    """One object: top-left corner and size (pixels, or fractions when ``normalized``), class id."""

    x: float
    y: float
    w: float
    h: float
    label: int
    difficult: bool = False
    normalized: bool = False

    def to_pixels(self, width: int, height: int) -> "Box":
        if not self.normalized:
            return self
        return Box(self.x * width, self.y * height, self.w * width, self.h * height, self.label, self.difficult)


def annotation_for(image: Path) -> Path | None:
    """The annotation file next to ``image`` (same stem; ``.xml`` preferred), if any."""
    for suffix in (".xml", ".txt"):
        candidate = image.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    return None


def _read_text(path: Path) -> str:
    if path.stat().st_size > MAX_ANNOTATION_BYTES:
        raise EvalError(f"{path}: {path.stat().st_size} bytes is too large for an annotation file")
    return path.read_text(encoding="utf-8-sig", errors="replace")


def voc_names(path: Path) -> list[str]:
    """The class names a VOC file uses (to check them against the labels before the run)."""
    return [obj.findtext("name", "").strip() for obj in _voc_objects(path)]


def _voc_objects(path: Path) -> list[ET.Element]:
    try:
        root = ET.fromstring(_read_text(path))
    except ET.ParseError as exc:
        raise EvalError(f"{path}: not a Pascal VOC annotation ({exc})") from None
    return root.findall("object")


def read_voc(path: Path, index: dict[str, int]) -> tuple[Box, ...]:
    """Boxes of a VOC file; ``bndbox`` corners are pixels (xmax/ymax exclusive here, as in most tools)."""
    boxes = []
    for obj in _voc_objects(path):
        name = obj.findtext("name", "").strip()
        bnd = obj.find("bndbox")
        if bnd is None:
            raise EvalError(f"{path}: object {name!r} has no <bndbox>")
        try:
            x1, y1, x2, y2 = (float(bnd.findtext(tag, "")) for tag in ("xmin", "ymin", "xmax", "ymax"))
        except ValueError:
            raise EvalError(f"{path}: object {name!r} has a <bndbox> without numeric xmin/ymin/xmax/ymax") from None
        if name not in index:
            raise EvalError(f"{path}: class {name!r} is not in the labels file; fix the name or --labels")
        difficult = obj.findtext("difficult", "0").strip() in ("1", "true")
        boxes.append(Box(x1, y1, max(x2 - x1, 0.0), max(y2 - y1, 0.0), index[name], difficult))
    return tuple(boxes)


def read_yolo(path: Path, classes: int) -> tuple[Box, ...]:
    """Boxes of a darknet file: ``class cx cy w h`` per line, coordinates as fractions of the image."""
    boxes = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 5:
            raise EvalError(f"{path}:{number}: expected 'class cx cy w h', got {line.strip()!r}")
        try:
            label = int(parts[0])
            cx, cy, w, h = (float(v) for v in parts[1:])
        except ValueError:
            raise EvalError(f"{path}:{number}: expected an integer class and four numbers, got {line.strip()!r}") from None
        if not 0 <= label < classes:
            raise EvalError(
                f"{path}:{number}: class {label} is not an output of the model (it has {classes} classes, 0..{classes - 1})"
            )
        boxes.append(Box(cx - w / 2, cy - h / 2, w, h, label, normalized=True))
    return tuple(boxes)
