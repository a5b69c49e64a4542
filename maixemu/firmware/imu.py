"""Motion sensors on the board's I2C bus: the M5StickV's MPU6886 (later units) or SH200Q (early
units), and an InvenSense MPU6050 plugged into a Maix board, as register files at rest.

Scripts drive these chips themselves through ``machine.I2C`` (``readfrom_mem(0x68, 0x3B, 14)``), so
each is modelled at its registers, from the datasheets and the drivers scripts use:

* **MPU6050** (RM-MPU-6000A, address 0x68): ``WHO_AM_I`` (0x75) = 0x68; asleep after power-on
  (``PWR_MGMT_1`` = 0x40) until a script clears the SLEEP bit, and while asleep the sensor registers
  hold 0; bit 7 resets every register. Accelerometer 0x3B..0x40, temperature 0x41..0x42, gyroscope
  0x43..0x48, big-endian signed 16-bit; full scale from ``ACCEL_CONFIG`` (0x1C bits 4:3, ±2/4/8/16 g
  = 16384/8192/4096/2048 LSB/g) and ``GYRO_CONFIG`` (0x1B bits 4:3, ±250/500/1000/2000 °/s =
  131/65.5/32.8/16.4 LSB per °/s); temperature = raw / 340 + 36.53 °C. ``INT_STATUS`` (0x3A) says
  data ready while awake.
* **MPU6886** (DS-000193, address 0x68): the same map and scales with ``WHO_AM_I`` = 0x19,
  ``PWR_MGMT_1`` = 0x41 after power-on and temperature = raw / 326.8 + 25 °C.
* **SH200Q** (Senodia, address 0x6C, M5Stack's driver): ``WHO_AM_I`` (0x30) = 0x18; accelerometer
  0x00..0x05, gyroscope 0x06..0x0B, temperature 0x0C..0x0D, little-endian; accelerometer range
  0x16 (0/1/2 = ±4/8/16 g), gyroscope range 0x2B (0..4 = ±2000/1000/500/250/125 °/s); temperature =
  raw / 333.87 + 21 °C.

At rest means: gravity on +Z (1 g), no rotation, 25 °C — the values a board lying flat on a desk
gives. The PC cannot feel motion; tests set it (:meth:`Imu.set_motion`, the pytest plugin's
``imu=``), and what a script then reads follows the chip's scale settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from .i2c_chip import RegisterFile, for_profile

#: What the sensors feel when the board lies still, face up: (g, g, g), (°/s, °/s, °/s), °C.
AT_REST_ACCEL = (0.0, 0.0, 1.0)
AT_REST_GYRO = (0.0, 0.0, 0.0)
AT_REST_TEMPERATURE = 25.0


def _int16(value: float) -> int:
    return max(-32768, min(32767, int(round(value))))


@dataclass
class Motion:
    """What the sensor feels: acceleration in g, rotation in °/s, die temperature in °C."""

    accel: tuple[float, float, float] = AT_REST_ACCEL
    gyro: tuple[float, float, float] = AT_REST_GYRO
    temperature: float = AT_REST_TEMPERATURE


class Imu(RegisterFile):
    """A motion sensor's registers; sensor registers are computed from :attr:`motion` when read."""

    model = "IMU"
    address = 0x68

    def __init__(self) -> None:
        super().__init__()
        self.motion = Motion()
        self.reset()

    def reset(self) -> None:
        self.registers[:] = bytes(256)

    def set_motion(self, accel: tuple[float, float, float] | None = None, gyro: tuple[float, float, float] | None = None,
                   temperature: float | None = None) -> None:
        """Set what the sensor feels (g, °/s, °C); a reading not given stays."""
        self.motion = Motion(tuple(float(v) for v in accel) if accel is not None else self.motion.accel,  # type: ignore[arg-type]
                             tuple(float(v) for v in gyro) if gyro is not None else self.motion.gyro,  # type: ignore[arg-type]
                             float(temperature) if temperature is not None else self.motion.temperature)


class Mpu6050(Imu):
    """InvenSense MPU-6050 (see the module docstring)."""

    model = "MPU6050"
    who_am_i = 0x68
    power_on_pwr_mgmt_1 = 0x40
    temperature_sensitivity = 340.0
    temperature_offset = 36.53
    ACCEL_LSB_PER_G = (16384.0, 8192.0, 4096.0, 2048.0)
    GYRO_LSB_PER_DPS = (131.0, 65.5, 32.8, 16.4)
    _SENSOR = range(0x3B, 0x49)

    def reset(self) -> None:
        super().reset()
        self.registers[0x6B] = self.power_on_pwr_mgmt_1
        self.registers[0x75] = self.who_am_i

    @property
    def asleep(self) -> bool:
        return bool(self.registers[0x6B] & 0x40)

    def store(self, register: int, value: int) -> None:
        if register == 0x75 or register in self._SENSOR:
            return  # read-only
        if register == 0x6B and value & 0x80:  # DEVICE_RESET: every register to its power-on value
            self.reset()
            return
        self.registers[register] = value

    def _sensor_words(self) -> list[int]:
        """ACCEL X/Y/Z, TEMP, GYRO X/Y/Z as raw signed words at the current full scales."""
        accel_scale = self.ACCEL_LSB_PER_G[(self.registers[0x1C] >> 3) & 3]
        gyro_scale = self.GYRO_LSB_PER_DPS[(self.registers[0x1B] >> 3) & 3]
        m = self.motion
        temp = (m.temperature - self.temperature_offset) * self.temperature_sensitivity
        return ([_int16(a * accel_scale) for a in m.accel] + [_int16(temp)]
                + [_int16(g * gyro_scale) for g in m.gyro])

    def load(self, register: int) -> int:
        if register in self._SENSOR:
            if self.asleep:
                return 0
            word = self._sensor_words()[(register - 0x3B) // 2] & 0xFFFF
            return word >> 8 if (register - 0x3B) % 2 == 0 else word & 0xFF
        if register == 0x3A:  # INT_STATUS: DATA_RDY_INT while the sensors run
            return 0 if self.asleep else 0x01
        return self.registers[register]


class Mpu6886(Mpu6050):
    """TDK InvenSense MPU-6886, the M5StickV's IMU on later units (see the module docstring)."""

    model = "MPU6886"
    who_am_i = 0x19
    power_on_pwr_mgmt_1 = 0x41
    temperature_sensitivity = 326.8
    temperature_offset = 25.0


class Sh200q(Imu):
    """Senodia SH200Q, the M5StickV's IMU on early units (see the module docstring)."""

    model = "SH200Q"
    address = 0x6C
    ACCEL_LSB_PER_G = (8192.0, 4096.0, 2048.0)
    GYRO_LSB_PER_DPS = (16.4, 32.8, 65.5, 131.0, 262.0)
    _SENSOR = range(0x00, 0x0E)

    def reset(self) -> None:
        super().reset()
        self.registers[0x30] = 0x18
        self.registers[0x16] = 0x01  # ±8 g, M5Stack's driver setting and the chip's use on the stick
        self.registers[0x2B] = 0x00  # ±2000 °/s

    def store(self, register: int, value: int) -> None:
        if register == 0x30 or register in self._SENSOR:
            return
        self.registers[register] = value

    def load(self, register: int) -> int:
        if register not in self._SENSOR:
            return self.registers[register]
        accel_scale = self.ACCEL_LSB_PER_G[min(self.registers[0x16] & 3, 2)]
        gyro_scale = self.GYRO_LSB_PER_DPS[min(self.registers[0x2B] & 7, 4)]
        m = self.motion
        words = ([_int16(a * accel_scale) for a in m.accel] + [_int16(g * gyro_scale) for g in m.gyro]
                 + [_int16((m.temperature - 21.0) * 333.87)])
        word = words[register // 2] & 0xFFFF
        return word & 0xFF if register % 2 == 0 else word >> 8  # little-endian


MODELS: dict[str, type[Imu]] = {cls.model: cls for cls in (Mpu6050, Mpu6886, Sh200q)}

#: Board profile -> [(chip, scl pin, sda pin)]: the IMUs soldered on (the M5StickV's shares the bus
#: with its AXP192: board.py ``MPU_SCL`` 28, ``MPU_SDA`` 29). The default board carries the
#: M5StickV's there too and answers an MPU6050 on every other pair of pins (:data:`ANY_PINS`), as
#: a Maix board with one plugged in.
WIRING: dict[str, list[tuple[str, int, int]]] = {
    "m5stickv": [("MPU6886", 28, 29)],
    "default": [("MPU6886", 28, 29)],
}
#: Profile -> the chip that answers on pins no wiring names (a plug-in module), if any.
ANY_PINS: dict[str, str] = {"default": "MPU6050"}


class BoardImus:
    """The IMUs of the powered-on board, by the (scl, sda) pins they sit on (``current().imu``)."""

    def __init__(self, profile: str):
        self.profile = profile
        self.by_pins: dict[tuple[int, int], Imu] = {(scl, sda): MODELS[model]() for model, scl, sda in
                                                    WIRING.get(profile, [])}
        self._plug_in = ANY_PINS.get(profile)
        self.motion = Motion()
        for chip in self.by_pins.values():
            chip.motion = self.motion

    def attach(self, model: str, scl: int, sda: int) -> Imu:
        """Put a chip (``"MPU6050"``, ``"MPU6886"``, ``"SH200Q"``) on ``(scl, sda)``, replacing what was there."""
        if model not in MODELS:
            raise ValueError(f"unknown IMU {model!r}; known: {', '.join(MODELS)}")
        chip = MODELS[model]()
        chip.motion = self.motion
        self.by_pins[(int(scl), int(sda))] = chip
        return chip

    def set_motion(self, **readings: object) -> None:
        """What every IMU of the board feels from now on (``accel=``, ``gyro=``, ``temperature=``)."""
        probe = Imu()
        probe.motion = self.motion
        probe.set_motion(**readings)  # type: ignore[arg-type]
        self.motion = probe.motion
        for chip in self.by_pins.values():
            chip.motion = self.motion

    def on(self, scl: int | None, sda: int | None) -> Imu | None:
        """The IMU on these pins (the plug-in one is attached at first use), or None."""
        if scl is None or sda is None:
            return None
        chip = self.by_pins.get((scl, sda))
        if chip is None and self._plug_in is not None:
            chip = self.attach(self._plug_in, scl, sda)
        return chip

    def at(self, scl: int | None, sda: int | None, address: int) -> Imu | None:
        chip = self.on(scl, sda)
        return chip if chip is not None and chip.address == int(address) else None


def imus() -> BoardImus:
    """The current board's IMUs (wired from ``board``'s profile at first use after power-on)."""
    return for_profile("imu", BoardImus)


__all__ = ["ANY_PINS", "AT_REST_ACCEL", "AT_REST_GYRO", "AT_REST_TEMPERATURE", "BoardImus", "Imu", "MODELS",
           "Motion", "Mpu6050", "Mpu6886", "Sh200q", "WIRING", "imus"]
