"""machine names the firmware tables have, with the firmware's values (machine_i2c.c, machine_spi.c,
machine_pwm.c, machine_sdcard.c)."""

from __future__ import annotations

from maixemu.firmware import machine


def test_i2c_software_bus_and_slave_event_constants():
    assert (machine.I2C.I2C3, machine.I2C.I2C5, machine.I2C.I2C_SOFT) == (3, 5, 6)
    assert (machine.I2C.MODE_MASTER, machine.I2C.MODE_SLAVE, machine.I2C.MODE_MASTER_SOFT) == (0, 1, 2)
    assert (machine.I2C.I2C_EV_START, machine.I2C.I2C_EV_RESTART, machine.I2C.I2C_EV_STOP) == (0, 1, 2)
    bus = machine.I2C(machine.I2C.I2C_SOFT, freq=100000, scl=6, sda=7)  # sp_weather's software bus
    assert bus.readfrom_mem(0x76, 0xD0, 1) == b"\x00"  # no BME280 attached: zeros, as documented


def test_spi_soft_is_spi_device_max_and_chip_selects():
    assert machine.SPI.SPI_SOFT == 4
    assert (machine.SPI.CS0, machine.SPI.CS1, machine.SPI.CS2, machine.SPI.CS3) == (0, 1, 2, 3)


def test_pwm_init_replaces_the_given_settings():
    pwm = machine.PWM(machine.Timer(machine.Timer.TIMER0, machine.Timer.CHANNEL0, mode=machine.Timer.MODE_PWM),
                      freq=1000, duty=50, pin=13)
    pwm.init(freq=2000)
    assert (pwm.freq(), pwm.duty(), pwm.pin) == (2000, 50, 13)
    pwm.init(duty=25, pin=14, enable=False)
    assert (pwm.freq(), pwm.duty(), pwm.pin) == (2000, 25, 14)


def test_sdcard_answers_the_block_device_commands():
    assert machine.SDCard.remount() is None
    assert machine.SDCard.ioctl(machine.SDCard.IOCTL_SEC_SIZE, 0) == 512
    assert machine.SDCard.ioctl(machine.SDCard.IOCTL_INIT, 0) == 0
    assert machine.SDCard.ioctl(machine.SDCard.IOCTL_SEC_COUNT, 0) > 0
    assert machine.SDCard.ioctl(99, 0) == -1
