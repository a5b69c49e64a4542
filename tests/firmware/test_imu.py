"""The board's motion sensors at rest on ``machine.I2C`` (firmware/imu.py): the M5StickV's MPU6886 next
to its AXP192, the SH200Q of early units, an MPU6050 plugged into a Maix board; the plugin's ``imu=``."""

from __future__ import annotations

import pytest

M5_READ = """
from machine import I2C
import ustruct
i2c = I2C(I2C.I2C0, freq=400000, scl=28, sda=29)
print(i2c.scan())
print(hex(i2c.readfrom_mem(0x68, 0x75, 1)[0]))
print(i2c.readfrom_mem(0x68, 0x3B, 6))          # asleep after power-on: zeros
i2c.writeto_mem(0x68, 0x6B, bytearray([0x00]))  # wake
i2c.writeto_mem(0x68, 0x6B, bytearray([0x80]))  # reset: asleep again, registers at power-on values
print(hex(i2c.readfrom_mem(0x68, 0x6B, 1)[0]))
i2c.writeto_mem(0x68, 0x6B, bytearray([0x01]))
i2c.writeto_mem(0x68, 0x1C, bytearray([0x10]))  # +-8 g
i2c.writeto_mem(0x68, 0x1B, bytearray([0x18]))  # +-2000 dps
ax, ay, az, t, gx, gy, gz = ustruct.unpack(">7h", i2c.readfrom_mem(0x68, 0x3B, 14))
print(ax, ay, az, t / 326.8 + 25, gx, gy, gz)
"""


def test_m5stickv_mpu6886_at_rest(maixpy):
    result = maixpy.run(code=M5_READ, board="m5stickv")
    assert result.ok, result.stderr
    assert result.lines == ["[52, 104]", "0x19", "b'\\x00\\x00\\x00\\x00\\x00\\x00'", "0x41",
                            "0 0 4096 25.0 0 0 0"]


MPU6050_ANGLES = """
from machine import I2C
import math, time
i2c = I2C(I2C.I2C1, freq=400000, scl=10, sda=11)
print(i2c.scan())
print(hex(i2c.readfrom_mem(0x68, 0x75, 1)[0]))
i2c.writeto_mem(0x68, 0x6B, b'\\x00')

def word(reg):
    hi, lo = i2c.readfrom_mem(0x68, reg, 2)
    v = (hi << 8) | lo
    return v - 65536 if v & 0x8000 else v

import sensor
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
while True:
    ax, ay, az = word(0x3B) / 16384, word(0x3D) / 16384, word(0x3F) / 16384
    pitch = math.degrees(math.atan2(ax, math.sqrt(ay * ay + az * az)))
    roll = math.degrees(math.atan2(ay, az))
    print("%.1f %.1f %.2f %.1f" % (pitch, roll, az, word(0x41) / 340 + 36.53))
    sensor.snapshot()
"""


def test_an_mpu6050_on_a_maix_board_and_scripted_readings(maixpy):
    result = maixpy.run(code=MPU6050_ANGLES, frames=3, camera="synthetic",
                        imu={2: {"accel": (0.5, 0.0, 0.866), "temperature": 31.0}})
    assert result.ok, result.stderr
    assert result.lines == ["[104]", "0x68", "0.0 0.0 1.00 25.0", "0.0 0.0 1.00 25.0", "30.0 0.0 0.87 31.0",
                            "30.0 0.0 0.87 31.0"]  # frame 2 on (the loop prints before each snapshot)


def test_the_sh200q_of_early_m5stickv_units(maixpy):
    code = """
from machine import I2C
import ustruct
i2c = I2C(I2C.I2C0, freq=100000, scl=28, sda=29)
print(i2c.scan(), hex(i2c.readfrom_mem(0x6C, 0x30, 1)[0]))
ax, ay, az, gx, gy, gz, t = ustruct.unpack("<7h", i2c.readfrom_mem(0x6C, 0x00, 14))
print(az, gz, round(t / 333.87 + 21, 1))
"""
    result = maixpy.run(code=code, board="m5stickv", i2c={(28, 29): "SH200Q"}, imu={0: {"gyro": (0, 0, 10)}})
    assert result.ok, result.stderr
    assert result.lines == ["[52, 108] 0x18", "4096 164 25.0"]


def test_a_specific_maix_board_has_no_imu_unless_one_is_plugged_in(maixpy):
    code = "from machine import I2C\nprint(I2C(I2C.I2C1, scl=10, sda=11).scan())\n"
    assert maixpy.run(code=code, board="bit").lines == ["[]"]
    assert maixpy.run(code=code, board="bit", i2c={(10, 11): "MPU6050"}).lines == ["[104]"]


def test_bad_plugin_arguments(maixpy):
    with pytest.raises(ValueError, match="frames count from 0"):
        maixpy.run(code="pass\n", imu={0: {"speed": 3}})
    with pytest.raises(ValueError, match="the chips maixemu has are MPU6050, MPU6886, SH200Q"):
        maixpy.run(code="pass\n", i2c={(1, 2): "BMI160"})
