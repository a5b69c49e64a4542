"""K210 clock arithmetic the audio path depends on: what PLL2 really runs at, and the I2S clock dividers.

MaixPy boots with ``sysctl_pll_set_freq(SYSCTL_PLL2, 45158400)`` but a PLL fed by the 26 MHz crystal
cannot hit every frequency: the SDK searches NR/NF/OD and settles on ``26 MHz * NF / NR / OD``
(45 066 666 Hz here, the ``Pll2:freq`` boot logs show). ``I2S.set_sample_rate`` then picks an
integer divider, so the rate a script asks for is not the rate it gets: 16000 Hz becomes 16 003 Hz,
22050 Hz 22 005 Hz, 44100 Hz 44 010 Hz. :func:`pll_frequency` follows the SDK's search
(``sysctl_pll_source_set_freq``: same constants, same acceptance rules); :func:`i2s_sample_rate`
the driver's ``i2s_set_sample_rate`` and the firmware's division by the word-select cycles.
"""

from __future__ import annotations

import math
from functools import lru_cache

CRYSTAL_HZ = 26_000_000
PLL2_BOOT_REQUEST_HZ = 45_158_400  # FREQ_PLL2_DEFAULT in mpconfigboard.h
I2S_DEFAULT_THRESHOLD = 7  # i2s_init() sets the divider threshold to 7


@lru_cache(maxsize=64)
def pll_frequency(request_hz: int, fin: int = CRYSTAL_HZ) -> int:
    """The frequency the SDK's PLL search lands on for ``request_hz`` (0 if it finds no setting)."""
    found = _pll_search(float(fin), float(request_hz))
    if found is None:
        return 0
    nr, nf, od = found
    return int(fin / nr * nf / od)


def _pll_search(fin: float, fout: float) -> tuple[int, int, int] | None:
    vco_min, vco_max, ref_min, ref_max = 3.5e8, 1.75e9, 1.36719e7, 1.75e9
    nr_max, nf_max, no_max, nb_max = 16, 64, 16, 64
    val = fout / fin
    terr = 0.5 / (nf_max // 2)
    merr = abs(terr)
    best: tuple[int, int, int, float] | None = None  # (no, nrx, nfx, err)
    first_found = True
    for nfi in range(int(val), nf_max):
        nr = round(nfi / val)  # rint(): round half to even, as Python's round
        if nr < 1 or fin / nr > ref_max:
            continue
        nrx, nf, nfx = nr, nfi, nfi
        err = 1 - (nfx / nr) / val
        if not (abs(err) < merr * (1 + 1e-6) or abs(err) < 1e-16):
            continue
        top = math.floor(vco_max / fout)
        no = min(top, no_max)
        while no > 1:
            if nr // no >= 1 and nr % no == 0:
                break
            no -= 1
        if nr % no != 0:
            continue
        nor = min(min(top, no_max) // no, nf_max // nf)
        noe = math.ceil(vco_min / fout)
        if ((no * nor) < (top >> 1) or (no * nor) < noe) and (no * nor) < (nf_max // nf):
            no = min(nf_max // nf, no_max, top)
            nfx *= no
            nf *= no
            if no > 1 and not first_found:
                continue
        else:
            nrx //= no
            nfx *= nor
            nf *= nor
            no *= nor
            if no > no_max or (nor > 1 and not first_found):
                continue
        if max(nfx, 1) > nb_max:
            continue
        fvco = fin / nrx * nfx
        if not vco_min <= fvco <= vco_max or nf < 1 or fin / nrx < ref_min or nrx > nr_max:
            continue
        if not (abs(err) < merr * (1 - 1e-6) or no > (best[0] if best else 0)):
            continue
        if not first_found and best is not None and nrx > best[1]:
            continue
        best = (no, nrx, nfx, err)
        first_found = False
        merr = abs(err)
    if best is None or abs(best[3]) >= terr * (1 - 1e-6):
        return None
    no, nrx, nfx, _ = best
    return nrx, nfx, no


def i2s_threshold(pll2_hz: int, sample_rate: int, word_select_cycles: int) -> int:
    """The divider ``i2s_set_sample_rate`` programs (``word_select_cycles``: 0/1/2 = 16/24/32 SCLK)."""
    word_bits = (word_select_cycles + 2) * 8
    return max(0, round(pll2_hz / (sample_rate * 2.0 * word_bits * 2.0) - 1))


def i2s_clock(pll2_hz: int, threshold: int) -> int:
    """The I2S block clock for a divider threshold (``sysctl_clock_get_freq(SYSCTL_CLOCK_I2Sn)``)."""
    return pll2_hz // ((threshold + 1) * 2)


def i2s_sample_rate(clock_hz: int, word_select_cycles: int) -> int:
    """Frames per second at an I2S clock: the firmware divides by 32/48/64 for 16/24/32 SCLK cycles."""
    return clock_hz // {0: 32, 1: 48, 2: 64}.get(word_select_cycles, 64)
