"""MaixPy's ``modules`` drivers on a board with nothing wired to them (py_modules.c and its drivers)."""

from __future__ import annotations

import pytest

from maixemu.firmware import modules
from maixemu.firmware.fpioa_manager import fm


def test_onewire_bus_without_devices():
    bus = modules.onewire(fm.fpioa.GPIOHS1)
    assert bus.reset() is False
    assert bus.readbit() == 1 and bus.readbyte() == 0xFF and bus.readbuffer(3) == bytearray(b"\xff\xff\xff")
    assert bus.search(65) == []
    bus.skip()
    bus.writebyte(0x44)
    assert bytes(bus.written) == b"\xcc\x44"
    with pytest.raises(ValueError, match="gpio error"):
        modules.onewire(3)


def test_onewire_crc8_is_the_maxim_crc():
    rom = bytes([0x28, 0xFF, 0x4B, 0x22, 0x64, 0x16, 0x03])
    # a valid ROM or scratchpad ends with its CRC: the CRC over all of it is 0
    assert modules.onewire.crc8(rom + bytes([modules.onewire.crc8(rom)])) == 0
    assert modules.onewire.crc8(b"123456789") == 0xA1  # CRC-8/MAXIM check value


def test_ultrasonic_times_out_without_an_echo():
    with pytest.raises(ValueError, match="gpio error"):
        modules.ultrasonic(0)
    ranger = modules.ultrasonic(fm.fpioa.GPIOHS0)
    with pytest.raises(ValueError, match="gpio not register pin"):
        ranger.measure()
    fm.register(21, fm.fpioa.GPIOHS0)
    with pytest.raises(OSError, match="time out"):
        ranger.measure(unit=ranger.UNIT_CM, timeout=1000)


def test_ws2812_keeps_the_colours_it_displays():
    strip = modules.ws2812(8, 3)
    assert strip.ws_num() == 3
    assert strip.set_led(0, (255, 0, 10)) is True and strip.set_led(5, (1, 2, 3)) is False
    assert strip.colors[0] == (0, 0, 0)  # not sent yet
    assert strip.display() is True
    assert strip.colors == [(255, 0, 10), (0, 0, 0), (0, 0, 0)]
    with pytest.raises(ValueError, match="tuple size must be 3"):
        strip.set_led(1, (1, 2))
    with pytest.raises(ValueError, match="led pin error"):
        modules.ws2812(48, 1)


def test_thermal_cameras_fail_as_without_the_part():
    with pytest.raises(OSError):
        modules.htpa(0, scl_pin=7, sda_pin=6)
    with pytest.raises(ValueError, match="i2c device error"):
        modules.htpa(5)
    with pytest.raises(OSError):
        modules.amg88xx(0)
    with pytest.raises(NotImplementedError, match="ES8311"):
        modules.ES8311()
