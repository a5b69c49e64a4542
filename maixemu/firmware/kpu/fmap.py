"""``kpu_fmap``: a view of a model's output memory, as ``kpu.forward`` returns it.

On the device the object points into the model's output buffer, so the next run overwrites what an
old fmap shows; scripts copy with ``fmap[:]``, which gives a flat tuple in the buffer's order
(channel-major, NCHW with N=1). Getters are methods (``fmap.w()``), as in the firmware.
"""

from __future__ import annotations

import numpy as np


class kpu_fmap:  # noqa: N801 - the firmware's type name
    """Feature map handle; ``data`` is a live numpy view (uint8 for 'B', float32 for 'f')."""

    def __init__(self, data: np.ndarray, *, size: int, index: int, w: int, h: int, ch: int, typecode: str):
        self._data = data
        self._size = int(size)
        self._index = int(index)
        self._w, self._h, self._ch = int(w), int(h), int(ch)
        self._typecode = typecode

    def size(self) -> int:
        return self._size

    def index(self) -> int:
        return self._index

    def w(self) -> int:
        return self._w

    def h(self) -> int:
        return self._h

    def ch(self) -> int:
        return self._ch

    def typecode(self) -> str:
        return self._typecode

    def _items(self) -> np.ndarray:
        count = self._size // 4 if self._typecode == "f" else self._size
        return self._data.reshape(-1)[:count]

    def __getitem__(self, key):
        items = self._items()
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise OSError("only slices with step=1 (aka None) are supported")
            return tuple(items[key].tolist())
        index = int(key)
        if index < 0:
            index += items.size
        if not 0 <= index < items.size:
            raise IndexError("index out of range")
        return items[index].item()

    def __setitem__(self, key, value) -> None:
        items = self._items()
        if isinstance(key, slice):
            if key.step not in (None, 1):
                raise OSError("only slices with step=1 (aka None) are supported")
            start, stop, _ = key.indices(items.size)
            if isinstance(value, (int, float)):
                items[start:stop] = value
                return
            values = list(value)
            if len(values) != max(stop - start, 0):
                raise OSError("cannot grow or shrink image")
            items[start:stop] = values
            return
        index = int(key)
        if index < 0:
            index += items.size
        if not 0 <= index < items.size:
            raise IndexError("index out of range")
        items[index] = value

    def __len__(self) -> int:
        raise TypeError("object of type 'kpu_fmap' has no len()")

    def __buffer__(self, flags):  # Python 3.12+: bytearray(fmap) / memoryview(fmap)
        return self._data.reshape(-1).view(np.uint8)[: self._size].data  # (the bytes' memoryview)

    def tobytes(self) -> bytes:
        return self._data.reshape(-1).view(np.uint8)[: self._size].tobytes()

    def __repr__(self) -> str:
        return (
            f'{{"fmap": "data"=0x{self._data.ctypes.data & 0xFFFFFFFF:08x}, "size"={self._size}, '
            f'"index": {self._index}, "w": {self._w}, "h": {self._h}, "ch": {self._ch}, "typecode": {self._typecode}}}'
        )
