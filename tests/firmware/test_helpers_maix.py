"""Maix (GPIO, FPIOA, utils, freq, inert audio), fpioa_manager, board, machine and gc."""

from __future__ import annotations

import pytest

from maixemu.firmware import board, fpioa_manager, machine, mgc, notices, registry
from maixemu.firmware.Maix import FFT, FPIOA, GPIO, I2S, config, freq, gpio, utils
from maixemu.firmware.Maix import fpioa as fpioa_mod
from maixemu.firmware.state import BoardState, activate, current, deactivate
from maixemu.host import storage


# -- GPIO ------------------------------------------------------------------------------------------

def test_gpio_constants_are_the_firmware_values():
    assert (GPIO.GPIOHS0, GPIO.GPIOHS31, GPIO.GPIO0, GPIO.GPIO7) == (0, 31, 32, 39)
    assert (GPIO.IN, GPIO.PULL_DOWN, GPIO.PULL_UP, GPIO.OUT, GPIO.PULL_NONE) == (0, 1, 2, 3, -1)
    assert (GPIO.IRQ_NONE, GPIO.IRQ_FALLING, GPIO.IRQ_RISING, GPIO.IRQ_BOTH) == (0, 1, 2, 3)
    assert GPIO.WAKEUP_NOT_SUPPORT == 0


@pytest.mark.parametrize("pin", [-1, 40, 100])
def test_gpio_invalid_pin(pin):
    with pytest.raises(ValueError, match="^invalid pin$"):
        GPIO(pin, GPIO.IN)


def test_gpio_output_with_pull_is_refused():
    with pytest.raises(ValueError, match=r"^When this pin is in output mode, it is not allowed to pull up and down\.$"):
        GPIO(GPIO.GPIOHS1, GPIO.OUT, GPIO.PULL_UP)
    GPIO(GPIO.GPIOHS1, GPIO.OUT, GPIO.PULL_NONE)  # explicit "no pull" is fine


def test_gpio_unknown_pull_and_expecting_a_pin():
    with pytest.raises(ValueError, match=r"^this mode not support\.$"):
        GPIO(GPIO.GPIOHS1, GPIO.IN, 7)
    with pytest.raises(ValueError, match="^expecting a pin$"):
        gpio.gpio_id(5)
    assert gpio.gpio_id(GPIO(GPIO.GPIO2)) == 34


def test_unmapped_inputs_read_released_or_their_pull():
    assert GPIO(GPIO.GPIOHS0, GPIO.IN).value() == 1
    assert GPIO(GPIO.GPIOHS1, GPIO.IN, GPIO.PULL_UP).value() == 1
    assert GPIO(GPIO.GPIOHS2, GPIO.IN, GPIO.PULL_DOWN).value() == 0
    assert GPIO(GPIO.GPIOHS3, GPIO.PULL_UP).value() == 1  # boot.py passes the pull as the mode


def test_outputs_read_back_and_reach_led_pins():
    fm = fpioa_manager.fm
    fm.register(board.board_info.LED_R, fm.fpioa.GPIO0, force=True)
    led = GPIO(GPIO.GPIO0, GPIO.OUT)
    events = []
    current().events.gpio_output.append(lambda pin, level: events.append((pin, level)))
    led.value(1)
    assert led.value() == 1
    led.value(0)
    assert led() == 0
    assert current().pins.output_levels[13] == 0
    assert events == [(13, 1), (13, 0)]
    assert repr(led) == "Pin(32)"


def test_key_press_reaches_the_gpio_through_the_fpioa_mapping():
    fm = fpioa_manager.fm
    key = GPIO(GPIO.GPIOHS0, GPIO.IN)
    gpio.press("BOOT_KEY")
    assert key.value() == 1  # pin 16 is not routed to GPIOHS0 yet
    fm.register(board.board_info.BOOT_KEY, fm.fpioa.GPIOHS0)
    assert key.value() == 0
    gpio.release(16)
    assert key.value() == 1
    current().pins.input_levels[16] = 0  # the runner may also set levels directly
    assert key.value() == 0


def test_irq_on_gpiohs_edges():
    fm = fpioa_manager.fm
    fm.register(16, fm.fpioa.GPIOHS5)
    key = GPIO(GPIO.GPIOHS5, GPIO.IN, GPIO.PULL_UP)
    calls = []
    irq = key.irq(lambda pin: calls.append(pin), GPIO.IRQ_FALLING, GPIO.WAKEUP_NOT_SUPPORT, 7)
    gpio.press(16)
    gpio.release(16)
    assert calls == []  # scheduled by the ISR: the handler runs at the next soft-IRQ point
    current().checkpoint()
    assert calls == [key]  # one argument, the pin: the firmware's mp_sched_schedule(handler, self)
    irq.trigger(GPIO.IRQ_BOTH)
    gpio.press(16)
    gpio.release(16)
    current().checkpoint()
    assert len(calls) == 3
    key.disirq()
    gpio.press(16)
    assert len(calls) == 3
    with pytest.raises(ValueError, match="interrupt wakeup"):
        key.irq(lambda *a: None, GPIO.IRQ_RISING, 1)
    assert GPIO(GPIO.GPIO1, GPIO.IN).irq(lambda *a: None, GPIO.IRQ_RISING) is None  # only GPIOHS


def test_mode_without_argument_configures_nothing():
    pin = GPIO(GPIO.GPIOHS9, value=1)
    assert pin.mode() == GPIO.IN
    pin.mode(GPIO.OUT)
    assert pin.mode() == GPIO.OUT


# -- FPIOA and fm ------------------------------------------------------------------------------------

def test_fpioa_function_numbers():
    assert fpioa_mod.USABLE_FUNC_NUM == 204
    expected = {"JTAG_TCLK": 0, "UARTHS_RX": 18, "GPIOHS0": 24, "GPIOHS31": 55, "GPIO0": 56, "GPIO7": 63,
                "UART1_RX": 64, "UART1_TX": 65, "UART2_TX": 67, "SPI1_D0": 70, "I2S0_MCLK": 87,
                "I2C0_SCLK": 126, "I2C0_SDA": 127, "CMOS_XCLK": 132, "SCCB_SDA": 147, "UART1_CTS": 148,
                "UART3_RS485_EN": 189, "TIMER0_TOGGLE1": 190, "CLK_I2C2": 203}
    for name, number in expected.items():
        assert getattr(FPIOA, name) == number


def test_fpioa_set_function_errors_and_uniqueness(capsys):
    io = FPIOA()
    assert io.set_function(16, FPIOA.GPIOHS0) is True
    assert io.set_function(17, FPIOA.GPIOHS0) is True
    assert io.get_Pin_num(FPIOA.GPIOHS0) == 17  # a function lives on one pin
    with pytest.raises(ValueError, match="^Don't have this Pin$"):
        io.set_function(49, FPIOA.GPIOHS0)
    with pytest.raises(ValueError, match="^This function is invalid$"):
        io.set_function(3, 205)
    with pytest.raises(OSError):
        io.set_function(48, FPIOA.GPIOHS0)
    assert "[Maix]:Opps!Can not set fpioa" in capsys.readouterr().out
    io.help(FPIOA.GPIOHS0)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[2] == out[4] == "+-------------------+----------------------------------+"
    assert out[3].startswith("|  GPIOHS0          |  ") and len(out[3]) == len(out[0])
    assert io.help(300) is False


def test_fm_register_unregister(capsys):
    """builtin_py/fpioa_manager.py (MaixPy v0.6+): fm asks the mux, warns when a function moves."""
    fm = fpioa_manager.fm
    assert fm.fpioa.GPIOHS0 == 24
    assert fm.register(12, fm.fpioa.GPIO1) is None
    assert fpioa_mod.pin_of_function(FPIOA.GPIO1) == 12
    assert fm.get_pin_by_function(fm.fpioa.GPIO1) == 12
    assert fm.register(12, fm.fpioa.GPIO1) is None  # already there: nothing, no warning
    assert capsys.readouterr().out == ""
    fm.register(35, fm.fpioa.GPIO1)  # force=True is the firmware's default: warn, then move
    assert capsys.readouterr().out == "[Warning] function is used by fm.fpioa.GPIO1(pin:12)\n"
    assert fm.get_pin_by_function(fm.fpioa.GPIO1) == 35 and fpioa_mod.function_of_pin(12) is None
    with pytest.raises(Exception) as err:  # noqa: B017 - the firmware raises a plain Exception
        fm.register(13, fm.fpioa.GPIO1, force=False)
    assert type(err.value) is Exception and str(err.value) == "[Warning] function is used by fm.fpioa.GPIO1(pin:35)"
    assert fm.get_pin_by_function(fm.fpioa.GPIO1) == 35  # refused: nothing changed
    fm.fpioa.set_function(20, fm.fpioa.GPIOHS7)  # the mux itself counts, not only fm's own calls
    fm.register(21, fm.fpioa.GPIOHS7)
    assert capsys.readouterr().out == "[Warning] function is used by fm.fpioa.GPIOHS7(pin:20)\n"
    fm.fpioa.set_function(4, fm.fpioa.UARTHS_RX)
    fm.register(6, fm.fpioa.UARTHS_RX)
    assert capsys.readouterr().out == "[Warning] function is used by unknown(pin:4)\n"
    assert fm.unregister(35) is None and fm.get_pin_by_function(fm.fpioa.GPIO1) is None
    assert fpioa_mod.function_of_pin(35) is None  # RESV0
    used = fm.get_gpio_used()
    assert len(used) == 40 and used[0] == ("fm.fpioa.GPIOHS0", None) and used[-1] == ("fm.fpioa.GPIO7", None)
    assert ("fm.fpioa.GPIOHS7", 21) in used
    assert fm.str_function(fm.fpioa.UART1_TX) == "unknown"
    with pytest.raises(ValueError, match="^This function is invalid$"):
        fm.register(3, 500)
    fm.help()
    assert capsys.readouterr().out.startswith("+-------------------+")
    assert fpioa_manager.board_info is board.board_info  # as the v0.5 module exported it


def test_lcd_init_muxes_the_panel_pins(capsys):
    from maixemu.firmware import lcd

    lcd.init()
    fm = fpioa_manager.fm
    assert (fm.get_pin_by_function(fm.fpioa.GPIOHS30), fm.get_pin_by_function(fm.fpioa.GPIOHS31)) == (37, 38)
    assert (fm.get_pin_by_function(fm.fpioa.SPI0_SS3), fm.get_pin_by_function(fm.fpioa.SPI0_SCLK)) == (36, 39)
    fm.register(12, fm.fpioa.GPIOHS31)
    assert capsys.readouterr().out == "[Warning] function is used by fm.fpioa.GPIOHS31(pin:38)\n"
    lcd.init(type=3)  # the M5StickV panel: py_lcd.c's fixed pins
    assert fm.get_pin_by_function(fm.fpioa.GPIOHS30) == 21 and fm.get_pin_by_function(fm.fpioa.SPI0_D0) == 18


# -- board -----------------------------------------------------------------------------------------

def test_board_info_default_names():
    info = board.board_info
    assert (info.LED_R, info.LED_G, info.LED_B, info.BOOT_KEY) == (13, 12, 14, 16)
    assert (info.BUTTON_A, info.BUTTON_B, info.ENTER) == (36, 37, 10)
    assert info.PIN0 == 0 and info.PIN47 == 47
    assert info.get("LED_R") == 13
    with pytest.raises(AttributeError):
        info.NO_SUCH_PIN  # noqa: B018


def test_board_profiles():
    board.use_profile("dock")
    assert (board.board_info.LED_R, board.board_info.LED_B) == (14, 12)
    assert not hasattr(board.board_info, "BUTTON_A")
    assert config.get_value("board_info")["LED_R"] == 14
    board.use_profile("m5stickv")
    assert (board.board_info.BUTTON_A, board.board_info.LED_W) == (36, 7)
    with pytest.raises(ValueError):
        board.use_profile("nope")
    board.use_profile("default")
    assert board.board_info.LED_R == 13


def test_board_names_used_by_the_scripts(shared_dir):
    import re

    used = set()
    for path in (shared_dir / "scripts").rglob("*.py"):
        used |= set(re.findall(r"board_info\.([A-Z][A-Z0-9_]*)", path.read_text(errors="replace")))
    assert used, "no board_info names found"
    for name in used:
        assert isinstance(getattr(board.board_info, name), int), name


# -- utils / freq / inert ----------------------------------------------------------------------------

def test_utils(tmp_path):
    assert utils.gc_heap_size() == 0x80000
    assert utils.gc_heap_size(1024 * 1024) is None
    assert utils.gc_heap_size() == 1024 * 1024
    assert utils.heap_free() / 1024 == 4640.0
    model = tmp_path / "m.kmodel"
    model.write_bytes(b"KMDL" + bytes(range(10)))
    current().storage = storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path, flash_map={0x300000: model})
    assert utils.flash_read(0x300000, 4) == b"KMDL"
    assert utils.flash_read(0x2FFFFE, 4) == b"\xff\xffKM"
    assert utils.flash_read(0x100000, 3) == b"\xff\xff\xff"


def test_freq(capsys):
    assert freq.get() == (400, 400)
    assert freq.get_cpu() == 400 and freq.get_kpu() == 400
    assert freq.set(cpu=400) is None
    assert capsys.readouterr().out == "No change\n"
    with pytest.raises(OSError, match="Unsupported CPU frequency!"):
        freq.set(cpu=700)
    with pytest.raises(OSError, match="Unsupported KPU frequency!"):
        freq.set(pll1=800)
    with pytest.raises(registry.ScriptReset):
        freq.set(cpu=500)
    assert "reboot now" in capsys.readouterr().out


def test_audio_parts_are_the_firmware_classes():
    """I2S/FFT are emulated now (tests/firmware/test_audio_i2s.py); Maix re-exports audio.Audio."""
    from maixemu.firmware import Maix, audio

    assert I2S.DEVICE_0 == 0 and I2S.RECEIVER == 1 and I2S.STANDARD_MODE == 1
    assert I2S(I2S.DEVICE_0).channel_config(I2S.CHANNEL_0, I2S.RECEIVER) is True
    assert FFT.run(bytes(256), 64) == [(0, 0)] * 64
    assert Maix.Audio is audio.Audio


# -- machine ---------------------------------------------------------------------------------------

def test_machine_reset_ends_the_script(capsys):
    with pytest.raises(registry.ScriptReset) as info:
        try:
            machine.reset()
        except Exception:  # a script's broad except must not swallow the reboot
            pytest.fail("ScriptReset must not be an Exception")
    assert info.value.reason == "machine.reset()"
    assert "[maixemu] machine.reset()" in capsys.readouterr().err


def test_machine_uart_is_inert_and_logs_once(capsys):
    from maixemu.firmware.machine import UART

    uart = UART(UART.UART1, 115200, 8, None, 1, timeout=1000, read_buf_len=4096)
    # the K210 SDK's UART_DEVICE_1..3, and MICROPY_UARTHS_DEVICE = 4 (mpconfigboard.h)
    assert (UART.UART1, UART.UART2, UART.UART3, UART.UARTHS) == (0, 1, 2, 4)
    assert uart.write(b"hello") == 5
    assert uart.write("x") == 1
    assert uart.read() is None and uart.readline() is None and uart.any() == 0
    assert bytes(current().uart.sent[UART.UART1]) == b"hellox"
    assert capsys.readouterr().err.count("machine.UART(0) is not connected") == 1
    uart.deinit()
    assert uart.write(b"z") == 0


def test_machine_i2c_spi_pwm_timer_wdt_inert(capsys):
    from maixemu.firmware.machine import I2C, PWM, SPI, WDT, Timer

    bus = I2C(I2C.I2C3, freq=100000, scl=10, sda=11)  # no power chip on these pins
    assert bus.writeto_mem(0x34, 0x27, 0x20) is None
    # the default board answers only the MPU6050 plugged into any free pins (firmware/imu.py)
    assert bus.scan() == [0x68] and bus.readfrom(0x34, 2) == b"\0\0"
    spi = SPI(SPI.SPI1, mode=SPI.MODE_MASTER, baudrate=1000000)
    assert spi.read(3) == b"\0\0\0"
    fired = []
    tim = Timer(Timer.TIMER0, Timer.CHANNEL0, mode=Timer.MODE_PERIODIC, period=1, callback=fired.append)
    pwm = PWM(Timer(Timer.TIMER0, Timer.CHANNEL1, mode=Timer.MODE_PWM), freq=500000, duty=50, pin=13)
    pwm.duty(20)
    assert pwm.duty() == 20
    tim.start()
    WDT(id=0, timeout=1000).feed()
    assert fired == []  # nothing is due yet: callbacks run at soft-IRQ points (tests/firmware/test_timer_wdt.py)
    assert machine.freq() == 400_000_000 and len(machine.unique_id()) == 32


# -- gc ----------------------------------------------------------------------------------------------

def test_gc_numbers():
    assert mgc.collect() is None
    assert mgc.mem_free() / 1024 == 352.09375
    assert mgc.mem_free() + mgc.mem_alloc() == 512 * 1024
    mgc.disable()
    assert mgc.isenabled() is False
    import gc

    assert gc.isenabled()  # the script's switch does not reach CPython's collector
    assert mgc.threshold() == -1
    mgc.threshold(4096)
    assert mgc.threshold() == 4096


def test_notices_once(capsys):
    assert notices.notice_once("k", "hello") is True
    assert notices.notice_once("k", "hello") is False
    assert capsys.readouterr().err == "[maixemu] hello\n"
    fresh = BoardState()  # a new run (a power-on) shows its notices again
    activate(fresh)
    try:
        assert notices.notice_once("k", "hello") is True
    finally:
        deactivate(fresh)
