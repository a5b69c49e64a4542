"""Gain/exposure/white-balance controls as the OV2640 driver converts them (MaixPy-v1 ``omv/ov2640.c``,
``py_sensor.c``): register round trips, lenient keywords, the driver's own quirks."""

from __future__ import annotations

import math

import pytest

from maixemu.firmware.chip import ov2640_controls as ov
from maixemu.firmware import sensor


@pytest.fixture
def camera():
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)


@pytest.mark.parametrize("gain_db, register", [(0.0, 0x00), (6.0, 0x0F), (12.0, 0x1F), (18.0, 0x3F),
                                               (24.0, 0x7F), (40.0, 0xFF), (-5.0, 0x00)])
def test_manual_gain_lands_in_the_gain_register_and_reads_back_its_step(camera, gain_db, register):
    sensor.set_auto_gain(False, gain_db=gain_db)
    regs = sensor._st().registers
    assert regs[ov.GAIN] == register
    hi = 1 << bin(register >> 4).count("1")
    assert sensor.get_gain_db() == pytest.approx(20 * math.log10(hi * (1 + (register & 0xF) / 16)))
    assert regs[ov.COM8] & ov.COM8_AGC_EN == 0
    sensor.set_auto_gain(True, gain_db_ceiling=24.0)
    assert regs[ov.COM8] & ov.COM8_AGC_EN and regs[ov.COM9] >> 5 == 3  # ceil(log2(15.85)) - 1
    assert regs[ov.GAIN] == register  # AGC on: the manual gain is not touched


def test_unknown_keywords_are_ignored_as_the_firmware_does(camera):
    assert sensor.set_auto_gain(False, value=100) is None
    assert sensor.set_auto_exposure(False, value=100, exposure_us=20000) is None
    assert sensor.set_auto_whitebal(False, value=1) is None
    assert sensor.set_auto_gain(0, 12.0) is None and sensor.get_gain_db() == pytest.approx(11.7649, abs=1e-3)
    with pytest.raises(TypeError):
        sensor.set_auto_gain()


def test_exposure_round_trip_keeps_the_drivers_register_mix_up(camera):
    sensor.set_auto_exposure(False, exposure_us=10000)
    # 10000 us -> 50 lines; bits 0..1 are overwritten by bits 10..15 (REG04), REG45 never written
    assert sensor.get_exposure_us() == 48 * 1190 * 2 // 12
    sensor.set_auto_exposure(False, 100000)
    assert sensor.get_exposure_us() == (504 & ~3) * 1190 * 2 // 12
    sensor.set_auto_exposure(False, exposure_us=2_000_000)  # 10084 lines: bits 10..15 land in REG04[1:0]
    lines = 10084
    assert sensor.get_exposure_us() == ((((lines >> 2) & 0xFF) << 2) + ((lines >> 10) & 3)) * 1190 * 2 // 12
    sensor.reset()
    assert sensor.get_exposure_us() == (0x33 << 2) * 1190 * 2 // 12  # the power-on registers


def test_white_balance_gains_are_ignored_by_the_ov2640(camera):
    sensor.set_auto_whitebal(False, rgb_gain_db=(1.0, 2.0, 3.0))
    assert sensor.get_rgb_gain_db() == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        sensor.set_auto_whitebal(False, rgb_gain_db=(1.0, 2.0))


def test_controls_fail_without_a_camera():
    with pytest.raises(ValueError, match="^Sensor control failed!$"):
        sensor.get_gain_db()
