"""The base the image mixins are type-checked against: the image itself (``_core.ImageBase``) for
mypy, plain ``object`` at run time, so a mixin's ``self.width()`` or ``self._pix`` is checked
against the class that provides it while ``image.Image``'s method order stays what it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._core import ImageBase as ImageHost
else:
    ImageHost = object

__all__ = ["ImageHost"]
