"""Firmware tables rebuilt from formulas, checked against the firmware's own tables.

Digests are sha256 of the tables in MaixPy-v1 d8901fd (``omv/img/yuv_tab.c`` full ``yuv_table[196608]``
as int8 bytes; ``omv/img/rainbow_tab.c`` ``rainbow_table[256]`` as little-endian uint16), spot values
read off the C source.
"""

from __future__ import annotations

import hashlib

import numpy as np

from maixemu.firmware.image import _bitmap, _yuv

YUV_TABLE_SHA256 = "3934e95630e51d66299c5147b8ce1b1f04aef5bc5ffd9825ff64297293872a48"
RAINBOW_TABLE_SHA256 = "da5bae34831d32e7bc30b264b25e4d43baef4ee8055ec38879ff8630c512a15b"


def test_yuv_table_is_the_firmwares():
    table = _yuv.yuv_table()
    assert table.shape == (65536, 3) and table.dtype == np.int8
    assert hashlib.sha256(table.tobytes()).hexdigest() == YUV_TABLE_SHA256
    # yuv_tab.c entries 0, 0x00F8 (red), 0x1F00 (blue), 0xE007 (green), 0xFFFF
    assert table[0].tolist() == [-128, 0, 0]
    assert table[0x00F8].tolist() == [-52, -43, 127]
    assert table[0x1F00].tolist() == [-99, 127, -20]
    assert table[0xE007].tolist() == [21, -84, -106]
    assert table[0xFFFF].tolist() == [127, 0, 0]


def test_rainbow_table_is_the_firmwares():
    table = _bitmap.rainbow_table()
    assert table.shape == (256,) and table.dtype == np.uint16
    assert hashlib.sha256(table.astype("<u2").tobytes()).hexdigest() == RAINBOW_TABLE_SHA256
    assert [hex(int(table[i])) for i in (0, 18, 97, 128, 174, 255)] == [
        "0x3f06", "0xff07", "0xe007", "0xe067", "0xe0f7", "0x20f8"]
