"""Every "basic camera / LCD / image / helper" script of ../shared/scripts, run unchanged for 30 frames.

The table says what each script must do: ``OK`` (exit 0, and LCD frames recorded when it uses the
LCD) or ``fails(...)`` with the words the error must contain — a missing feature must be named, not
hidden. Changing a row is a decision, visible in review.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import SHARED_DIR
from script_harness import run_maixpy_script


@dataclass(frozen=True)
class Expect:
    ok: bool
    error_contains: str = ""
    lcd: bool = True  # the script shows something on the LCD
    setup: str = ""  # name of a setup step below
    flash: tuple[tuple[str, str], ...] = ()  # (address, file under ../shared) mapped with --flash


OK = Expect(True)
NO_LCD = Expect(True, lcd=False)


def fails(text: str) -> Expect:
    return Expect(False, text, lcd=False)


V1 = "MaixPy-v1_scripts/"
FONT_16 = "scripts/canmv_examples/01-K210/52-Multimedia/image/demo_draw_font/tools/0xA00000_font_uincode_16_16_tblr.Dzk"
PURIN = "purin_wo_motto_mimamoru_gijutsu/03_maixpy_example/"
BASIC_SCRIPTS: dict[str, Expect] = {
    V1 + "hardware/demo_camera.py": OK,
    V1 + "hardware/demo_lcd.py": OK,
    V1 + "hardware/demo_lcd_800x480.py": OK,
    V1 + "hardware/demo_switch_sensor.py": OK,
    V1 + "hardware/demo_binocular.py": OK,
    V1 + "hardware/demo_gpio_led.py": NO_LCD,
    V1 + "machine_vision/demo_affine.py": OK,
    V1 + "machine_vision/demo_find_green_blob.py": OK,
    V1 + "machine_vision/demo_fps_display.py": OK,
    V1 + "machine_vision/demo_image_deal.py": OK,
    V1 + "machine_vision/demo_scan_qr_code.py": OK,
    V1 + "multimedia/gui/image/anime.py": OK,
    V1 + "multimedia/gui/image/demo_draw_circle.py": OK,
    V1 + "multimedia/gui/image/demo_draw_font/image_draw_font.py": OK,
    # The 16x16 Unicode font the demo expects in flash at 0xA00000 (the CanMV demo ships it); the
    # script never calls lcd.init(), so on the board too its lcd.display() shows nothing.
    V1 + "multimedia/gui/image/demo_draw_font/image_draw_string.py": Expect(True, lcd=False, flash=(("0xA00000", FONT_16),)),
    # Needs a .Dzk font file on the SD card, which the scripts folder does not have: the device's ENOENT.
    V1 + "multimedia/gui/image/demo_draw_font/test_draw_font.py": fails("ENOENT"),
    V1 + "multimedia/gui/image/demo_rotation_corr.py": OK,
    V1 + "multimedia/gui/image/demo_save_picture.py": OK,
    V1 + "basic/hello_wrold.py": OK,
    V1 + "basic/demo_time.py": NO_LCD,
    V1 + "basic/demo_view_mem.py": NO_LCD,
    V1 + "basic/demo_set_gc_heap_size.py": NO_LCD,
    # Prints /flash/main.py, which every board has: the test puts one there.
    V1 + "basic/demo_files.py": Expect(True, lcd=False, setup="main_py"),
    V1 + "basic/demo_fs_info.py": NO_LCD,
    V1 + "application/camera/cube_camera_shutter.py": OK,
    V1 + "application/capture_image_tool/boot.py": OK,
    "CorgiDude/01 - Hello World/HelloCorgiDude.py": OK,
    "CorgiDude/03 - Image Processing/find_circles.py": OK,
    "CorgiDude/03 - Image Processing/find_face_eyes.py": OK,
    "CorgiDude/03 - Image Processing/find_lines.py": OK,
    "CorgiDude/03 - Image Processing/find_qrcode.py": OK,
    "CorgiDude/03 - Image Processing/find_rects.py": OK,
    "CorgiDude/03 - Image Processing/tracking_red_box.py": OK,
    PURIN + "009_camera_capture.py": OK,
    PURIN + "010_camera_save_sdcard.py": OK,
    PURIN + "011_image_filter.py": OK,
    PURIN + "012_image_custom_filter.py": OK,
    PURIN + "019_LCD_draw_face.py": OK,
    "purin_wo_motto_mimamoru_gijutsu/05_pudding_rock_app/pudding_rock_app.py": OK,
    "MakerAndCoderDocumentation/AI_Camera/helloworld.py": OK,
    # No LCD: prints blob area changes only.
    "MakerAndCoderDocumentation/AI_Camera/untitled_1.py": NO_LCD,
    "maixpy_sample/save_picture.py": OK,
}


def _listed_basic_scripts() -> list[str]:
    text = (SHARED_DIR / "scripts" / "SCRIPTS.md").read_text(encoding="utf-8")
    section = text.split("## Basic camera / LCD / image / helper scripts", 1)[1]
    return [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")]


def test_table_covers_every_basic_script_in_scripts_md():
    if not (SHARED_DIR / "scripts" / "SCRIPTS.md").exists():
        pytest.skip("../shared/scripts is absent")
    assert sorted(_listed_basic_scripts()) == sorted(BASIC_SCRIPTS)


def _setup(step: str, sd: Path) -> None:
    if step == "main_py":
        (sd / "main.py").write_text("print('hello from main.py')\n")


@pytest.mark.scripts
@pytest.mark.parametrize("script", sorted(BASIC_SCRIPTS))
def test_basic_script_runs_30_frames(script: str, tmp_path: Path):
    path = SHARED_DIR / "scripts" / script
    if not path.exists():
        pytest.skip(f"{path} not found (../shared/scripts is absent)")
    expect = BASIC_SCRIPTS[script]
    (tmp_path / "sd").mkdir()
    _setup(expect.setup, tmp_path / "sd")
    extra = [arg for addr, rel in expect.flash for arg in ("--flash", f"{addr}={SHARED_DIR / rel}")]
    result = run_maixpy_script(path, tmp_path, camera=SHARED_DIR / "images", frames=30, timeout=90, extra=extra)
    if expect.ok:
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        if expect.lcd:
            assert result.lcd_frames, "the script should have shown something on the LCD"
    else:
        assert result.returncode == 1, result.stderr[-3000:]
        assert expect.error_contains in result.stderr, result.stderr[-3000:]
        # The traceback points at the script's own lines as the device names them, not maixemu internals
        # (the script lies outside --sd: it is named as if it ran from the card).
        assert f'  File "/sd/{path.name}", line ' in result.stderr, result.stderr[-3000:]
        assert str(path.resolve()) not in result.stderr
        assert "/maixemu/session/" not in result.stderr and "/maixemu/firmware/" not in result.stderr
