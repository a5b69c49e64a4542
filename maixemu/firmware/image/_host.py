"""The base the image mixins are type-checked against, plain ``object`` at run time (so
``image.Image``'s method order is what its class statement says).

For mypy it is the image itself (``_core.ImageBase``) plus the methods one mixin calls on another,
each declared here as the mixin named beside it defines it: mypy checks every mixin's ``self.width()``
or ``self._mutable()`` against these, and each real definition against its declaration here, so
the two cannot drift apart unnoticed."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from ._core import ImageBase

    class ImageHost(ImageBase):
        def _mutable(self) -> None: ...  # BinaryMixin

        def _difference_with(self, other_pix: np.ndarray, mask) -> None: ...  # MathOpsMixin

        def _new_kind(self, fmt: int, pix: np.ndarray, copy: bool): ...  # BitmapMixin

        def _color(self, rest, kwargs, index: int = 0): ...  # DrawMixin

        def _thin_lines(self, x0, y0, x1, y1, colors) -> None: ...  # DrawMixin

        def _draw_text(self, x, y, text, data: bytes, c, scale, x_spacing, y_spacing, mono) -> None: ...  # DrawMixin

        def binary(self, thresholds, *args, **kwargs): ...  # BinaryMixin

        def erode(self, size, *args, **kwargs): ...  # BinaryMixin

        def morph(self, size, kernel, *args, **kwargs): ...  # FilterMixin

        def to_grayscale(self, *args, **kwargs): ...  # BasicMixin

        def to_rgb565(self, *args, **kwargs): ...  # BasicMixin

else:
    ImageHost = object

__all__ = ["ImageHost"]
