"""``pmu``: the M5StickV firmware's frozen module for its AXP192 power chip (``from pmu import axp192``).

The same calls, registers, conversions and errors as ``projects/maixpy_m5stickv/builtin_py/pmu.py``,
talking to the chip through ``machine.I2C`` at address 52 (0x34) — so on the PC they reach the chip
model of :mod:`~maixemu.firmware.axp` (what the getters return is documented there). The
firmware's own slips are kept, because a script meets them on the board too:
``getCoulombCounterData()`` raises ``TypeError`` (it subtracts a method instead of calling it),
the charge/discharge currents combine their registers with ``<< 5`` and the others with ``<< 4``.
``enablePMICSleepMode(True)`` polls the power key every 500 ms on ``machine.Timer`` 2: a short
press resets the board, a long one switches it off.
"""

from __future__ import annotations

from typing import Any

from . import machine

__all__ = ["axp192", "PMUError", "NotFoundError", "OutOfRange"]

AXP192_ADDRESS = 52


class PMUError(Exception):
    pass


class NotFoundError(PMUError):
    pass


class OutOfRange(PMUError):
    pass


class _PowerKeyWatch:
    """The firmware keeps the I2C device and the "released since boot" flag in module globals for
    its timer callback; here they live in one object per ``axp192``."""

    def __init__(self, i2c: Any):
        self.i2c = i2c
        self.pressed_before = -1

    def __call__(self, timer: Any) -> None:
        self.i2c.writeto(AXP192_ADDRESS, bytes([0x46]))
        status = self.i2c.readfrom(AXP192_ADDRESS, 1)[0]
        self.i2c.writeto_mem(AXP192_ADDRESS, 0x46, 0xFF, mem_size=8)  # clear the IRQ
        if self.pressed_before == -1 and (status & 0x02 or status & 0x01):
            return  # wait for the key to be released after a restart
        if self.pressed_before == -1:
            self.pressed_before = 0
        if status & 0x01:
            self.i2c.writeto_mem(AXP192_ADDRESS, 0x31, 0x0F, mem_size=8)  # sleep mode
            self.i2c.writeto_mem(AXP192_ADDRESS, 0x91, 0x00, mem_size=8)  # GPIO0/LDO0 off
            self.i2c.writeto_mem(AXP192_ADDRESS, 0x12, 0x00, mem_size=8)  # every other output off
        if status & 0x02:
            machine.reset()


class axp192:  # noqa: N801 - the firmware's name
    """The AXP192 of an M5StickV (I2C0, scl=28, sda=29, 400 kHz unless ``i2cDev`` is given)."""

    def __init__(self, i2cDev: Any = None):  # noqa: N803 - the firmware's name
        if i2cDev is None:
            try:
                self.i2cDev = machine.I2C(machine.I2C.I2C0, freq=400000, scl=28, sda=29)
            except Exception:
                raise PMUError("Unable to init I2C0 as Master") from None
        else:
            self.i2cDev = i2cDev
        self.axp192Addr = AXP192_ADDRESS
        self._watch = _PowerKeyWatch(self.i2cDev)
        if self.axp192Addr not in self.i2cDev.scan():
            raise NotFoundError

    def __writeReg(self, regAddr: int, value: int) -> None:  # noqa: N802, N803
        self.i2cDev.writeto_mem(self.axp192Addr, regAddr, value, mem_size=8)

    def __readReg(self, regAddr: int) -> int:  # noqa: N802, N803
        self.i2cDev.writeto(self.axp192Addr, bytes([regAddr]))
        return self.i2cDev.readfrom(self.axp192Addr, 1)[0]

    def enableADCs(self, enable: bool) -> None:  # noqa: N802
        self.__writeReg(0x82, 0xFF if enable == True else 0x00)  # noqa: E712 - the firmware compares

    def enableCoulombCounter(self, enable: bool) -> None:  # noqa: N802
        self.__writeReg(0xB8, 0x80 if enable == True else 0x00)  # noqa: E712

    def stopCoulombCounter(self) -> None:  # noqa: N802
        self.__writeReg(0xB8, 0xC0)

    def clearCoulombCounter(self) -> None:  # noqa: N802
        self.__writeReg(0xB8, 0xA0)

    def __word(self, first: int) -> int:
        return ((self.__readReg(first) << 24) + (self.__readReg(first + 1) << 16)
                + (self.__readReg(first + 2) << 8) + self.__readReg(first + 3))

    def __getCoulombChargeData(self) -> int:  # noqa: N802
        return self.__word(0xB0)

    def __getCoulombDischargeData(self) -> int:  # noqa: N802
        return self.__word(0xB4)

    def getCoulombCounterData(self) -> float:  # noqa: N802
        # The firmware subtracts the method itself (no call): TypeError on the board as here.
        return 65536 * 0.5 * (self.__getCoulombChargeData() - self.__getCoulombDischargeData) / 3600.0 / 25.0  # type: ignore[operator]  # the firmware's bug, kept

    def __twelve(self, first: int, shift: int = 4) -> int:
        return (self.__readReg(first) << shift) + self.__readReg(first + 1)

    def getVbatVoltage(self) -> float:  # noqa: N802
        return self.__twelve(0x78) * 1.1  # AXP192-DS PG26 1.1mV/div

    def getUSBVoltage(self) -> float:  # noqa: N802
        return self.__twelve(0x56) * 1.7

    def getUSBInputCurrent(self) -> float:  # noqa: N802
        return self.__twelve(0x58) * 0.625

    def getConnextVoltage(self) -> float:  # noqa: N802
        return self.__twelve(0x5A) * 1.7

    def getConnextInputCurrent(self) -> float:  # noqa: N802
        return self.__twelve(0x5C) * 0.625

    def getBatteryChargeCurrent(self) -> float:  # noqa: N802
        return self.__twelve(0x7A, 5) * 0.5

    def getBatteryDischargeCurrent(self) -> float:  # noqa: N802
        return self.__twelve(0x7C, 5) * 0.5

    def getBatteryInstantWatts(self) -> float:  # noqa: N802
        raw = (self.__readReg(0x70) << 16) + (self.__readReg(0x71) << 8) + self.__readReg(0x72)
        return raw * 1.1 * 0.5 / 1000

    def getTemperature(self) -> float:  # noqa: N802
        return (self.__twelve(0x5E) * 0.1) - 144.7

    def setK210Vcore(self, vol: float) -> None:  # noqa: N802
        if vol > 1.05 or vol < 0.8:
            raise OutOfRange("Voltage is invaild for K210")
        self.__writeReg(0x23, int((vol - 0.7) * 1000 / 25))

    def setScreenBrightness(self, brightness: int) -> None:  # noqa: N802
        if brightness > 15 or brightness < 0:
            raise OutOfRange("Range for brightness is from 0 to 15")
        self.__writeReg(0x91, (int(brightness) & 0x0F) << 4)

    def getKeyStatus(self) -> int:  # noqa: N802 - -1: no press, 1: short press, 2: long press
        status = self.__readReg(0x46)
        if status & 0x02:
            return 1
        if status & 0x01:
            return 2
        return -1

    def setEnterSleepMode(self) -> None:  # noqa: N802
        self.__writeReg(0x31, 0x0F)  # enable sleep mode
        self.__writeReg(0x91, 0x00)  # GPIO0/LDO0 off
        self.__writeReg(0x12, 0x00)  # every other output off: the board goes dark

    def enablePMICSleepMode(self, enable: bool) -> None:  # noqa: N802
        if enable == True:  # noqa: E712
            self.__writeReg(0x36, 0x27)  # no PEK overtime shutdown
            self.__writeReg(0x46, 0xFF)  # clear the interrupts
            self.butChkTimer = machine.Timer(machine.Timer.TIMER2, machine.Timer.CHANNEL0,
                                             mode=machine.Timer.MODE_PERIODIC, period=500, callback=self._watch)
        else:
            self.__writeReg(0x36, 0x6C)  # back to the default
            try:
                self.butChkTimer.stop()
                del self.butChkTimer
            except Exception:
                pass
