"""Where a pixel of the original image lands in the model's input, through the input's steps.

Every step of the input path (the camera's frame-size fit, ``cut``, ``resize``) is an axis-aligned
scale plus shift, so their composition is one ``x' = x * sx + tx`` per axis. Ground-truth boxes
stay in the original image's pixels and detections are mapped back there, so the report draws
both on the picture the user knows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Geometry:
    sx: float = 1.0
    sy: float = 1.0
    tx: float = 0.0
    ty: float = 0.0

    def then(self, sx: float, sy: float, tx: float, ty: float) -> "Geometry":
        """This mapping followed by ``x * sx + tx``."""
        return Geometry(self.sx * sx, self.sy * sy, self.tx * sx + tx, self.ty * sy + ty)

    def fit(self, src_w: int, src_h: int, width: int, height: int) -> "Geometry":
        """``sensor.fit_frame``: cover the frame keeping the aspect ratio, keep the middle."""
        if (src_w, src_h) == (width, height):
            return self
        scale = max(width / src_w, height / src_h)
        crop_w = min(src_w, max(1, round(width / scale)))
        crop_h = min(src_h, max(1, round(height / scale)))
        x0, y0 = (src_w - crop_w) // 2, (src_h - crop_h) // 2
        return self.then(1, 1, -x0, -y0).resize(crop_w, crop_h, width, height)

    def crop(self, x: int, y: int) -> "Geometry":
        return self.then(1, 1, -x, -y)

    def resize(self, old_w: int, old_h: int, new_w: int, new_h: int) -> "Geometry":
        return self.then(new_w / old_w, new_h / old_h, 0, 0)

    def to_source(self, x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
        """A rectangle in the model's input back in the original image's pixels."""
        return ((x - self.tx) / self.sx, (y - self.ty) / self.sy, w / self.sx, h / self.sy)
