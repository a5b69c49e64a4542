"""Argument helpers mirroring the firmware's ``py_helper_*`` functions (same errors, same defaults)."""

from __future__ import annotations

from ..mp.mp_args import fixed_items as fixed_array  # noqa: F401 - mp_obj_get_array_fixed_n
from ..mp.mp_args import float_arg as to_float  # noqa: F401 - mp_obj_get_float
from ..mp.mp_args import int_arg as to_int  # noqa: F401 - mp_obj_get_int


def consume(args: tuple, n: int) -> tuple[list[int], tuple]:
    """``py_helper_consume_array``: ``n`` ints given as one tuple/list or as ``n`` positionals.

    Returns (the ints, the remaining positional arguments).
    """
    if args and isinstance(args[0], (tuple, list)):
        return [to_int(v) for v in fixed_array(args[0], n)], args[1:]
    if len(args) < n:
        raise OSError("Not enough positional arguments!")
    return [to_int(v) for v in args[:n]], args[n:]


def pick(rest: tuple, index: int, kwargs: dict, name: str, default):
    """A keyword argument, else the ``index``-th remaining positional, else ``default``."""
    if name in kwargs:
        return kwargs.pop(name)
    if len(rest) > index:
        return rest[index]
    return default


def roi(img_w: int, img_h: int, value) -> tuple[int, int, int, int]:
    """``py_helper_keyword_rectangle_roi``: (x, y, w, h) clipped to the image.

    ``None`` means the whole image; w/h < 1 -> ``OSError("Invalid ROI dimensions!")``; no overlap ->
    ``OSError("ROI does not overlap on the image!")``.
    """
    if value is None:
        return 0, 0, img_w, img_h
    x, y, w, h = (to_int(v) for v in fixed_array(value, 4))
    if w < 1 or h < 1:
        raise OSError("Invalid ROI dimensions!")
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, img_w), min(y + h, img_h)
    if x1 <= x0 or y1 <= y0:
        raise OSError("ROI does not overlap on the image!")
    return x0, y0, x1 - x0, y1 - y0

