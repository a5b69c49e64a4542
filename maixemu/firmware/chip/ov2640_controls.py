"""The OV2640 driver's gain and exposure controls as register round trips (MaixPy-v1 ``omv/ov2640.c``).

``sensor.set_auto_gain(False, gain_db=...)`` does not store a number: the driver converts it to the
GAIN register (a 4-bit "high gain" thermometer code and a 4-bit fraction), and ``get_gain_db()``
converts the register back, so what a script reads is what the chip holds — the nearest step, not
the value given. The same holds for the exposure (REG04[1:0], AEC, REG45[5:0] in lines of
``t_line`` pixel clocks) and the gain ceiling (COM9[7:5]).

Two firmware facts show through, on purpose:

* ``set_auto_exposure`` writes bits 10..15 of the exposure into REG04 (over its bits 0..1), while
  ``get_exposure_us`` reads them from REG45: a long manual exposure reads back short, as on the board;
* ``set_auto_whitebal`` ignores ``rgb_gain_db`` and ``get_rgb_gain_db`` returns (0.0, 0.0, 0.0)
  (the OV2640 functions leave the gains untouched).

The ``fast_expf``/``fast_log`` approximations of the firmware are computed exactly here (their
results differ in the last float digits at most). Register defaults are the driver's init table
(``ov2640_default``: REG04 = 0xA8, COM9 = 0x48, CLKRC = 0x00) and the datasheet's for registers
the table leaves alone (GAIN = 0x00, AEC = 0x33, REG45 = 0x00).
"""

from __future__ import annotations

import math

# sensor-bank registers (BANK_SEL = 1)
GAIN, REG04, COM7, CLKRC, COM8, COM9, AEC, REG45 = 0x00, 0x04, 0x12, 0x11, 0x13, 0x14, 0x10, 0x45
COM8_AGC_EN, COM8_AEC_EN = 0x04, 0x01
#: ``CONFIG_SENSOR_FREQ`` of the MaixPy builds (the sensor's XCLK)
XCLK_HZ = 24_000_000

DEFAULTS = {GAIN: 0x00, REG04: 0xA8, COM7: 0x40, CLKRC: 0x00, COM8: 0xE5, COM9: 0x48, AEC: 0x33, REG45: 0x00}


def default_registers() -> dict[int, int]:
    return dict(DEFAULTS)


def _uxga(frame_width: int) -> bool:
    return frame_width > 800


def set_auto_gain(regs: dict[int, int], enable: bool, gain_db: float, gain_db_ceiling: float) -> None:
    regs[COM8] = (regs[COM8] & ~COM8_AGC_EN & 0xFF) | (COM8_AGC_EN if enable else 0)
    if not enable and math.isfinite(gain_db):
        gain = max(min(math.exp(gain_db / 20.0 * math.log(10.0)), 32.0), 1.0)
        gain_temp = round(math.log2(max(gain / 2.0, 1.0)))
        gain_hi = 0xF >> (4 - gain_temp)
        gain_lo = min(round(((gain / (1 << gain_temp)) - 1.0) * 16.0), 15)
        regs[GAIN] = ((gain_hi << 4) | gain_lo) & 0xFF
    elif enable and math.isfinite(gain_db_ceiling):
        ceiling = max(min(math.exp(gain_db_ceiling / 20.0 * math.log(10.0)), 128.0), 2.0)
        regs[COM9] = (regs[COM9] & 0x1F) | (((math.ceil(math.log2(ceiling)) - 1) << 5) & 0xE0)


def get_gain_db(regs: dict[int, int]) -> float:
    gain = regs[GAIN]
    hi_gain = 1 << sum((gain >> bit) & 1 for bit in (7, 6, 5, 4))
    lo_gain = 1.0 + (gain & 0xF) / 16.0
    return 20.0 * (math.log(hi_gain * lo_gain) / math.log(10.0))


def _timing(regs: dict[int, int], frame_width: int) -> tuple[int, int, int]:
    """(t_line, t_pclk, pixel clocks per µs) as the driver derives them from COM7, CLKRC, IMAGE_MODE."""
    t_line = 1600 + 322 if _uxga(frame_width) else 800 + 390
    clkrc = 0x81 if _uxga(frame_width) else regs[CLKRC]
    pll_mult = 2 if clkrc & 0x80 else 1
    clk_rc = ((clkrc & 0x3F) + 1) * 2
    return t_line, 2, (XCLK_HZ // clk_rc) * pll_mult // 1_000_000


def set_auto_exposure(regs: dict[int, int], enable: bool, exposure_us: int, frame_width: int) -> None:
    regs[COM8] = (regs[COM8] & ~COM8_AEC_EN & 0xFF) | (COM8_AEC_EN if enable else 0)
    if enable or exposure_us < 0:
        return
    t_line, t_pclk, per_us = _timing(regs, frame_width)
    exposure = max(min(((exposure_us * per_us) // t_pclk) // t_line, 0xFFFF), 0)
    regs[REG04] = (regs[REG04] & 0xFC) | (exposure & 0x3)
    regs[AEC] = (exposure >> 2) & 0xFF
    regs[REG04] = (regs[REG04] & 0xC0) | ((exposure >> 10) & 0x3F)  # the driver's: REG04, not REG45


def get_exposure_us(regs: dict[int, int], frame_width: int) -> int:
    t_line, t_pclk, per_us = _timing(regs, frame_width)
    exposure = ((regs[REG45] & 0x3F) << 10) + ((regs[AEC] & 0xFF) << 2) + (regs[REG04] & 0x3)
    return (exposure * t_line * t_pclk) // per_us


def relative_gain(regs: dict[int, int]) -> float:
    """The analog gain the GAIN register applies, relative to 1x (for the picture)."""
    return 10 ** (get_gain_db(regs) / 20.0)


__all__ = ["DEFAULTS", "default_registers", "get_exposure_us", "get_gain_db", "set_auto_exposure", "set_auto_gain"]
