"""pmu.axp192 (the M5StickV frozen module) and the AXP192/AXP173 register model behind machine.I2C."""

from __future__ import annotations

import pytest

from maixemu.firmware.chip import axp
from maixemu.firmware import board, machine, pmu
from maixemu.firmware.mp import registry


def test_getters_read_the_documented_constants():
    chip = pmu.axp192()
    assert chip.getVbatVoltage() == pytest.approx(4099.7)  # 3727 * 1.1 mV
    assert chip.getUSBVoltage() == pytest.approx(4999.7)
    assert chip.getUSBInputCurrent() == 120.0
    assert chip.getTemperature() == pytest.approx(42.0)
    assert chip.getBatteryChargeCurrent() == 0.0 and chip.getBatteryDischargeCurrent() == 0.0
    assert chip.getKeyStatus() == -1
    axp.chips().by_pins[(28, 29)].set_adc(battery_voltage=3600, discharge_current=85.5)
    assert chip.getVbatVoltage() == pytest.approx(3600, abs=1.1)
    assert chip.getBatteryDischargeCurrent() == 85.5
    with pytest.raises(TypeError):  # the firmware subtracts a bound method
        chip.getCoulombCounterData()


def test_setters_reach_the_registers_and_check_ranges():
    chip = pmu.axp192()
    model = axp.chips().by_pins[(28, 29)]
    chip.setScreenBrightness(9)
    assert model.backlight == 9 and model.registers[0x91] == 0x90
    chip.setK210Vcore(0.9)
    assert model.registers[0x23] == 8
    with pytest.raises(pmu.OutOfRange, match="from 0 to 15"):
        chip.setScreenBrightness(16)
    with pytest.raises(pmu.OutOfRange, match="invaild for K210"):
        chip.setK210Vcore(1.2)
    chip.enableADCs(True)
    assert model.registers[0x82] == 0xFF


def test_power_key_and_sleep_mode():
    chip = pmu.axp192()
    model = axp.chips().by_pins[(28, 29)]
    model.press_power_key()
    assert chip.getKeyStatus() == 1
    model.registers[0x46] = 0
    model.press_power_key(long=True)
    assert chip.getKeyStatus() == 2
    with pytest.raises(axp.BoardPoweredOff) as info:
        chip.setEnterSleepMode()
    assert isinstance(info.value, registry.ScriptReset)  # a clean end of the run
    assert "switched the board's power off" in str(info.value) and not model.powered


def test_watch_resets_on_a_short_press():
    chip = pmu.axp192()
    model = axp.chips().by_pins[(28, 29)]
    chip._watch(None)  # released since boot: armed
    model.press_power_key()
    with pytest.raises(registry.ScriptReset):
        chip._watch(None)
    assert model.registers[0x46] == 0  # the callback clears the IRQ


def test_boards_without_the_chip():
    board.use_profile("bit")
    with pytest.raises(pmu.NotFoundError):
        pmu.axp192()
    board.use_profile("amigo")
    bus = machine.I2C(machine.I2C.I2C3, freq=100000, scl=24, sda=27)
    assert bus.scan() == [0x34]
    bus.writeto_mem(0x34, 0x27, 0x20)  # what the Amigo's _boot.py writes
    assert bus.readfrom_mem(0x34, 0x27, 1) == b"\x20"
    assert bus.readfrom_mem(0x34, 0x03, 1) == b"\x01"  # AXP173
    assert machine.I2C(0, scl=28, sda=29).scan() == []


def test_register_pointer_and_irq_clear():
    chip = axp.PowerChip()
    chip.write(bytes([0x78]))
    assert chip.read(2) == bytes([3727 >> 4, 3727 & 0xF])
    chip.write(bytes([0x46, 0x03]))  # IRQ status: writing 1s clears
    chip.press_power_key()
    chip.write(bytes([0x46, 0x02]))
    assert chip.registers[0x46] == 0


def test_sleep_mode_ends_a_script_cleanly(maixpy):
    result = maixpy.run(code="from pmu import axp192\npmu = axp192()\nprint(pmu.getVbatVoltage())\n"
                             "pmu.setEnterSleepMode()\nprint('never')\n")
    assert result.exit_code == 0 and "4099.7" in result.stdout and "never" not in result.stdout
    assert "power off" in result.stderr
