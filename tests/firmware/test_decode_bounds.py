"""Bounded decoding (issue 10): an image's header is checked before anything is decoded or allocated.

``image.Image(path)`` and ``image.Image(size=...)`` refuse buffers the K210's 6 MiB of main memory
cannot hold (RGB565: 3 145 728 pixels, e.g. 2048x1536) with the firmware's ``xalloc`` MemoryError;
``--camera`` refuses pictures past 64 megapixels with its one line and exit 2.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest
from PIL import Image as PILImage

from maixemu.firmware.state import current
from maixemu.firmware import heap, image
from maixemu.host import storage
from maixemu.host.camera import FolderSource, FrameTooLarge, open_source

XALLOC = ("Out of normal MicroPython Heap Memory! Please reduce the resolution of the image you are running "
          "this algorithm on to bypass this issue!")


def jpeg_claiming(width: int, height: int) -> bytes:
    """A 633-byte JPEG whose frame header claims ``width`` x ``height`` pixels (16x16 of data)."""
    buf = io.BytesIO()
    PILImage.new("RGB", (16, 16), (200, 10, 10)).save(buf, "JPEG")
    data = bytearray(buf.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 7] = height.to_bytes(2, "big")
    data[sof + 7:sof + 9] = width.to_bytes(2, "big")
    return bytes(data)


@pytest.fixture()
def sd(tmp_path):
    current().storage = storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path)
    return tmp_path


def test_image_load_of_a_lying_header_is_the_devices_memory_error(sd, capsys):
    (sd / "bomb.jpg").write_bytes(jpeg_claiming(16000, 16000))
    assert len((sd / "bomb.jpg").read_bytes()) == 633
    with pytest.raises(MemoryError) as info:  # picojpeg_util xallocs 16000*16000*2 bytes
        image.Image("/sd/bomb.jpg")
    assert str(info.value) == XALLOC
    (sd / "huge.jpg").write_bytes(jpeg_claiming(30000, 30000))  # past picojpeg's 16384: its init fails
    assert image.Image("/sd/huge.jpg").size() == 0  # and the firmware hands back an empty image
    assert capsys.readouterr().out == "pjpeg_decode_init() failed with status 8\nFailed loading source image!\n"


def test_the_image_cap_is_the_boards_main_memory(sd):
    PILImage.new("RGB", (2048, 1536), (0, 0, 255)).save(sd / "fits.bmp")  # 2048*1536*2 = 6 MiB exactly
    PILImage.new("RGB", (2049, 1536), (0, 0, 255)).save(sd / "over.bmp")
    assert image.Image("/sd/fits.bmp").width() == 2048
    with pytest.raises(MemoryError, match="Out of normal MicroPython Heap Memory"):
        image.Image("/sd/over.bmp")
    assert image.Image(size=(2048, 1536)).height() == 1536
    with pytest.raises(MemoryError, match="Out of normal MicroPython Heap Memory"):
        image.Image(size=(30000, 30000))
    assert heap.IMAGE_MAX_BYTES == 6 * 1024 * 1024


def test_an_unreadable_image_is_the_firmwares_error_without_the_host_path(sd):
    (sd / "notes.jpg").write_text("not a picture")
    with pytest.raises(ValueError) as info:  # imlib_load_image: neither "BM" nor FF D8
        image.Image("/sd/notes.jpg")
    assert str(info.value) == "format not supported" and str(sd) not in str(info.value)


def test_camera_sources_check_the_header_first(tmp_path):
    bomb = tmp_path / "bomb.jpg"
    bomb.write_bytes(jpeg_claiming(30000, 30000))
    with pytest.raises(FrameTooLarge, match=r"bomb\.jpg is 900000000 pixels, more than the 8192x8192"):
        open_source(str(bomb))
    wide = tmp_path / "wide.jpg"
    wide.write_bytes(jpeg_claiming(16000, 5000))  # under Pillow's own limit, over ours
    with pytest.raises(FrameTooLarge, match=r"wide\.jpg is 16000x5000 pixels"):
        open_source(str(wide))
    folder = tmp_path / "frames"
    folder.mkdir()
    bomb.rename(folder / "a_bomb.jpg")
    PILImage.new("RGB", (32, 24), (0, 255, 0)).save(folder / "b_good.png")
    told = []
    source = FolderSource(folder, on_notice=told.append)
    assert source.read().shape == (24, 32, 3) and source.read().shape == (24, 32, 3)
    assert told == ["maixemu: camera folder: skipping a_bomb.jpg (900000000 pixels, more than the 64 Mpx "
                    "decoded for a camera frame)"]


def _limited_memory():  # a decode that ignores the header would fail here instead of eating the machine
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS guard is Linux-only")
def test_camera_with_a_lying_header_is_one_line_exit_2(tmp_path):
    bomb = tmp_path / "bomb.jpg"
    bomb.write_bytes(jpeg_claiming(30000, 30000))
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import sensor
        sensor.reset()
        print(sensor.snapshot())
    """))
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--camera",
                           str(bomb)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          preexec_fn=_limited_memory, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"maixemu: camera failed at main.py line 3: {bomb} is 900000000 pixels, more than the "
                           "8192x8192 (64 Mpx) maixemu decodes for a camera frame; use --camera "
                           "synthetic|DIR|VIDEO|IMAGE\n")


@pytest.mark.parametrize("make", [
    lambda img: img.cut(0, 0, 100000, 100000),
    lambda img: img.resize(100000, 100000),
    lambda img: img.to_grayscale(copy=True).resize(4000, 4000),
], ids=["cut", "resize", "resize-gray"])
def test_image_methods_refuse_buffers_the_board_cannot_hold(make):
    """Issue 24: ``cut``/``resize`` to a huge size allocated the PC's memory (a 20 GB array) where the
    firmware's ``xalloc`` fails; ``eval --crop 0,0,100000,100000`` ran into it."""
    img = image.Image(size=(320, 240))
    with pytest.raises(MemoryError) as info:
        make(img)
    assert str(info.value) == XALLOC
    assert img.cut(0, 0, 400, 300).width() == 400  # past the picture, still a board-sized buffer
