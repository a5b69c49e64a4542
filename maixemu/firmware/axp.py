"""The X-Powers AXP192 / AXP173 power chips of the M5StickV, Maix Amigo and Maix Cube, on the I2C bus.

Scripts talk to these chips only through ``machine.I2C`` at address 0x34 — the M5StickV
firmware's frozen ``pmu.axp192`` class, the Amigo's ``_boot.py`` (``writeto_mem(0x34, 0x27, 0x20)``),
MaixUI's ``pmu_axp173.py`` — so the chip is modelled where they meet it: a register file that
answers on the pins the board wires it to (:data:`WIRING`; the default board answers on all of
them, as it answers every board's pin names). Reads and writes follow the chip: a one-byte write
sets the register pointer, reads and longer writes auto-increment it, IRQ status registers clear
on writing 1s.

What a PC cannot know is a constant, documented here and settable with :meth:`PowerChip.set_adc`:
the board runs from USB (ACIN 5.0 V, 120 mA), the battery is full and idle (4.10 V, no charge or
discharge current), the die is at 42.0 °C; ADC registers hold these in the datasheet's 12/13/24-bit
layouts (``getVbatVoltage()`` reads 4099.7 mV). Writes with an effect on the board are honoured:
REG 0x32 bit 7 or clearing DCDC1 in REG 0x12 switch the board off — the run ends cleanly, as
``setEnterSleepMode()`` would leave a dark M5StickV — and REG 0x91 (GPIO0/LDO0, the M5StickV
backlight) is kept as :attr:`PowerChip.backlight`. :meth:`PowerChip.press_power_key` sets the PEK
short/long press flags (REG 0x46) a script polls with ``getKeyStatus()``.
"""

from __future__ import annotations

from .i2c_chip import RegisterFile, for_profile
from .registry import ScriptReset

ADDRESS = 0x34

#: Board profile -> [(chip, scl pin, sda pin)].
WIRING: dict[str, list[tuple[str, int, int]]] = {
    "m5stickv": [("AXP192", 28, 29)],
    "amigo": [("AXP173", 24, 27)],
    "cube": [("AXP173", 30, 31)],
    "default": [("AXP192", 28, 29), ("AXP173", 24, 27), ("AXP173", 30, 31)],
}

#: ADC quantities: name -> (first register, bits, unit per LSB, offset, constant value).
ADC = {
    "acin_voltage": (0x56, 12, 1.7, 0.0, 5000.0),        # mV
    "acin_current": (0x58, 12, 0.625, 0.0, 120.0),       # mA
    "vbus_voltage": (0x5A, 12, 1.7, 0.0, 0.0),           # mV
    "vbus_current": (0x5C, 12, 0.375, 0.0, 0.0),         # mA
    "temperature": (0x5E, 12, 0.1, -144.7, 42.0),        # degC
    "battery_power": (0x70, 24, 0.55e-3, 0.0, 0.0),      # mW (1.1 mV * 0.5 mA / 1000)
    "battery_voltage": (0x78, 12, 1.1, 0.0, 4100.0),     # mV
    "charge_current": (0x7A, 13, 0.5, 0.0, 0.0),         # mA
    "discharge_current": (0x7C, 13, 0.5, 0.0, 0.0),      # mA
    "aps_voltage": (0x7E, 12, 1.4, 0.0, 4900.0),         # mV
}

#: Power-on register values that differ from 0 (datasheet defaults and the USB-powered state).
_POWER_ON = {
    0x00: 0x34,  # VBUS/ACIN present and usable
    0x01: 0x20,  # battery present, not charging
    0x12: 0x4D,  # DCDC1, DCDC3, LDO2, LDO3 on (DCDC2 off)
    0x23: 0x16,  # DCDC2 0.7 V + 25 mV * 22 = 1.25 V
    0x36: 0x5D,  # PEK timing
    0x82: 0x83,  # battery voltage/current and ACIN ADCs enabled
    0x90: 0x07,
    0x91: 0xA0,  # GPIO0 LDO 2.8 V (the M5StickV's backlight at level 10)
}


class BoardPoweredOff(ScriptReset):
    """The power chip switched the board off: the run ends cleanly (exit 0)."""

    def __init__(self, reason: str):
        BaseException.__init__(self, f"{reason} switched the board's power off")
        self.reason = reason


class PowerChip(RegisterFile):
    """An AXP192 or AXP173 register file at I2C address 0x34."""

    def __init__(self, model: str = "AXP192"):
        super().__init__()
        self.model = model
        for register, value in _POWER_ON.items():
            self.registers[register] = value
        self.registers[0x03] = 0x03 if model == "AXP192" else 0x01  # IC type
        self.powered = True
        for name, (_reg, _bits, _unit, _offset, reading) in ADC.items():
            self.set_adc(**{name: reading})

    # -- PC side ---------------------------------------------------------------------------------
    def set_adc(self, **values: float) -> None:
        """Put physical values (the names of :data:`ADC`, in mV/mA/mW/degC) into the ADC registers."""
        for name, value in values.items():
            register, bits, unit, offset, _ = ADC[name]
            raw = max(0, min((1 << bits) - 1, int(round((float(value) - offset) / unit))))
            if bits == 24:
                self.registers[register:register + 3] = raw.to_bytes(3, "big")
            else:
                low_bits = bits - 8
                self.registers[register] = raw >> low_bits
                self.registers[register + 1] = raw & ((1 << low_bits) - 1)

    def press_power_key(self, long: bool = False) -> None:
        """The power (PEK) button: a short press sets REG 0x46 bit 1, a long press bit 0."""
        self.registers[0x46] |= 0x01 if long else 0x02

    @property
    def backlight(self) -> int:
        """REG 0x91 bits 7-4 (``setScreenBrightness`` level 0..15 on the M5StickV)."""
        return self.registers[0x91] >> 4

    # -- I2C side --------------------------------------------------------------------------------
    def store(self, register: int, value: int) -> None:
        value &= 0xFF
        if register in (0x44, 0x45, 0x46, 0x47, 0x4D):  # IRQ status: write 1 to clear
            self.registers[register] &= ~value & 0xFF
            return
        self.registers[register] = value
        if register == 0x32 and value & 0x80:
            self._power_off(f"{self.model} (REG 0x32 = 0x{value:02X})")
        if register == 0x12 and not value & 0x01:
            self._power_off(f"{self.model} (REG 0x12 = 0x{value:02X}, DCDC1 off)")

    def _power_off(self, reason: str) -> None:
        self.powered = False
        raise BoardPoweredOff(reason)


class PowerChips:
    """The power chips of the powered-on board, by the (scl, sda) pins they sit on (``current().power``)."""

    def __init__(self, profile: str):
        self.profile = profile
        self.by_pins: dict[tuple[int | None, int | None], PowerChip] = {(scl, sda): PowerChip(model) for model, scl, sda in WIRING.get(profile, [])}

    def at(self, scl: int | None, sda: int | None, address: int) -> PowerChip | None:
        if int(address) != ADDRESS:
            return None
        return self.by_pins.get((scl, sda))


def chips() -> PowerChips:
    """The current board's chips (wired from ``board``'s profile at first use after power-on)."""
    return for_profile("power", PowerChips)
