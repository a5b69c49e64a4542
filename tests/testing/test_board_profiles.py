"""Board profiles (``--board``, the plugin's ``board=``): pins, LCD boot state, keys, LEDs.

Facts: MaixPy-v1 ``projects/maixpy_m5stickv/builtin_py/board.py`` (``Board_Info``),
``projects/maixpy_amigo_ips/builtin_py/_boot.py`` (``config["board_info"]``, ``lcd`` 480×320),
``projects/maixpy_m5stickv/config_defaults.mk`` (``CONFIG_LCD_DEFAULT_WIDTH/HEIGHT`` 240×135),
``py_lcd.c`` (``py_lcd_load_config`` after the arguments for the default type), every stock
``_boot.py``'s IDE path (``lcd.init(color=lcd.PINK)``).
"""

from __future__ import annotations

import pytest

from maixemu.firmware import board_profiles
from maixemu.session import Board, BoardConfig, RunSpec
from maixemu.runner import run_script


def test_every_shipped_board_has_a_profile_and_aliases_resolve():
    assert set(board_profiles.PROFILES) == {"default", "bit", "dock", "go", "duino", "cube", "amigo", "m5stickv",
                                            "unitv"}
    assert board_profiles.profile_name("M5StickV") == "m5stickv"
    assert board_profiles.profile_name("Maix-Duino") == "duino"
    assert board_profiles.profile_name("maix_amigo") == "amigo"
    with pytest.raises(ValueError, match="unknown board 'nano'; known boards: default, bit"):
        board_profiles.profile_name("nano")
    for profile in board_profiles.PROFILES.values():
        assert set(profile.keys) <= set(profile.pins) and set(profile.leds) <= set(profile.pins)


def test_m5stickv_pins_are_the_firmwares():
    pins = board_profiles.get("m5stickv").pins
    assert (pins["SPK_SD"], pins["SPK_DIN"], pins["SPK_BCLK"], pins["SPK_LRCLK"]) == (25, 17, 15, 14)
    assert (pins["BUTTON_A"], pins["BUTTON_B"], pins["LED_W"], pins["MIC_DAT"]) == (36, 37, 7, 12)
    assert board_profiles.get("amigo").pins["BOOT_KEY"] == 16 and board_profiles.get("amigo").pins["ENTER"] == 23


SCRIPT = """
import lcd
from board import board_info
print("boot", lcd.width(), lcd.height(), lcd.rotation())
lcd.init()
print("init", lcd.width(), lcd.height())
lcd.init(width=100, height=80)
print("sized", lcd.width(), lcd.height())
print("pins", board_info.BUTTON_A if hasattr(board_info, "BUTTON_A") else None)
"""


@pytest.mark.parametrize("name, boot, init, sized, button_a", [
    ("default", "320 240 0", "320 240", "100 80", "36"),
    ("m5stickv", "135 240 2", "240 135", "100 80", "36"),  # rotation 2 keeps width/height
    ("amigo", "480 320 0", "480 320", "480 320", "None"),  # config.json's size wins over the arguments
    ("cube", "240 240 0", "240 240", "240 240", "None"),
    ("unitv", "None None 0", "320 240", "100 80", "18"),  # no panel: the boot leaves the LCD alone
])
def test_the_boot_state_and_lcd_size_of_each_board(maixpy, name, boot, init, sized, button_a):
    result = maixpy.run(code=SCRIPT, board=name)
    assert result.ok, result.stderr
    if name == "m5stickv":
        boot = "240 135 2"
    assert result.lines[:4] == [f"boot {boot}", f"init {init}", f"sized {sized}", f"pins {button_a}"]
    assert result.board == name


def test_keys_by_profile_name_and_leds_in_the_result(maixpy):
    code = """
import sensor, lcd
from Maix import GPIO
from fpioa_manager import fm
from board import board_info
fm.register(board_info.BUTTON_A, fm.fpioa.GPIOHS0)
fm.register(board_info.LED_R, fm.fpioa.GPIOHS1)
key = GPIO(GPIO.GPIOHS0, GPIO.IN, GPIO.PULL_UP)
led = GPIO(GPIOHS1 := GPIO.GPIOHS1, GPIO.OUT)
led.value(1)
pressed = []
key.irq(lambda pin: pressed.append(pin.value()), GPIO.IRQ_FALLING)
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
for i in range(6):
    img = sensor.snapshot()
    if pressed:
        led.value(0)
print("pressed", len(pressed))
"""
    result = maixpy.run(code=code, board="m5stickv", keys={3: "A"}, camera="synthetic", frames=6)
    assert result.ok, result.stderr
    assert "pressed 1" in result.lines
    assert result.key_presses == [(3, "A")]
    assert result.leds == {"LED_R": 0, "LED_G": None, "LED_B": None, "LED_W": None}
    assert result.led_changes == [(0, "LED_R", 1)] + [(n, "LED_R", 0) for n in (3, 4, 5, 6)]


def test_a_key_the_board_does_not_have_is_named(maixpy):
    with pytest.raises(ValueError, match="the unitv board has no key 'BOOT'"):
        maixpy.run(code="import sensor\nsensor.reset()\nsensor.set_framesize(sensor.QVGA)\n"
                        "for i in range(3): sensor.snapshot()\n", board="unitv", keys={1: "BOOT"}, frames=3)


def test_unknown_board_is_a_setup_error(tmp_path, capsys):
    script = tmp_path / "main.py"
    script.write_text("print('never')\n")
    code = run_script(RunSpec(board="nano", lcd="none", camera="synthetic"), script)
    assert code == 2
    assert "--board nano: unknown board 'nano'" in capsys.readouterr().err


def test_board_pane_lists_the_profiles_buttons_and_leds(tmp_path):
    from maixemu.session.ide import board_controls

    with Board(BoardConfig(RunSpec(camera="synthetic", lcd="none", quiet=True, board="cube"), project=tmp_path)):
        controls = board_controls()
    assert controls["profile"] == "cube"
    assert [b["label"] for b in controls["buttons"]] == ["ENTER", "BACK", "NEXT / BOOT_KEY"]
    assert [led["name"] for led in controls["leds"]] == ["LED_R", "LED_G", "LED_B", "LED_W"]


def test_the_window_presses_board_keys_from_the_keyboard_and_shows_leds(monkeypatch, board_state):
    """Keyboard ``a`` presses the M5StickV's BUTTON_A (released KEY_HOLD_S later); lit LEDs colour the strip."""
    import numpy as np

    from maixemu.firmware.Maix import gpio
    from maixemu.host import display
    from maixemu.session.keys import window_controls

    board_state.pins.profile = "m5stickv"
    monkeypatch.setattr(display, "display_available", lambda: True)
    window = display.WindowSink()
    controls = window_controls(board_state)
    window.set_controls(controls)
    assert controls.help == "m5stickv: a=BUTTON_A s=BUTTON_B, ESC ends"
    levels = []
    real = gpio.set_input
    monkeypatch.setattr(gpio, "set_input", lambda pin, level, **kw: (levels.append((pin, level)), real(pin, level)))
    clock = [100.0]
    monkeypatch.setattr(display.time, "monotonic", lambda: clock[0])
    window._board_keys(ord("a"))
    assert levels == [(36, 0)] and board_state.pins.input_levels[36] == 0
    window._board_keys(ord("a"))  # auto-repeat while held: no second press
    clock[0] += display.KEY_HOLD_S + 0.01
    window._board_keys(-1)
    assert levels == [(36, 0), (36, 1)]
    assert window._with_led_strip(np.zeros((135, 240, 3), np.uint8)).shape == (135, 240, 3)  # no LED driven yet
    board_state.pins.output_levels[6] = 0  # LED_R written low: lit (active low)
    picture = window._with_led_strip(np.zeros((135, 240, 3), np.uint8))
    assert picture.shape == (135, 240 + display.LED_STRIP_W, 3)
    strip = picture[:, 240:]
    assert tuple(strip[5, 5]) == (255, 48, 48)  # the first LED, lit
    assert strip[5 + 30:, 2:12].max() < 255  # the others stay dark


def test_maixduino_pins_are_those_of_sipeeds_config_json():
    """MaixPy-v1_scripts board/config_maix_duino.py writes the board's config.json: RGB LED on 13/12/14
    and the Arduino header PIN0..PIN13 (a Dock-like table had the LEDs the other way round)."""
    pins = board_profiles.get("duino").pins
    assert (pins["LED_R"], pins["LED_G"], pins["LED_B"]) == (13, 12, 14)
    assert [pins[f"PIN{i}"] for i in range(14)] == [4, 5, 21, 22, 23, 24, 32, 15, 14, 13, 12, 11, 10, 3]
    assert (pins["MIC0_WS"], pins["MIC0_DATA"], pins["MIC0_BCK"], pins["WIFI_EN"]) == (19, 20, 18, 8)
