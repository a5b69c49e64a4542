"""video against py_video.c / video.c / avi.c: the recorded file's layout, the parser, play/capture, errors."""

from __future__ import annotations

import struct

import cv2
import numpy as np
import pytest
from media_board import media_board

from maixemu.firmware.state import current
from maixemu.firmware import image, video


def _frame(value: int, w: int = 64, h: int = 48):
    rgb = np.zeros((h, w, 3), np.uint8)
    rgb[:, : w // 2] = (value, 255 - value, 40)
    return image.Image._from_rgb888(rgb)


def test_open_needs_an_avi_path(tmp_path):
    with media_board(tmp_path):
        with pytest.raises(NotImplementedError, match=r"\[MaixPy\] video: format not support"):
            video.open("/sd/clip.mp4")
        with pytest.raises(OSError) as info:
            video.open("/sd/missing.avi")
        assert info.value.errno == 2


def test_recording_layout_is_the_firmwares(tmp_path):
    with media_board(tmp_path) as board:
        v = video.open("/sd/rec.avi", record=True, interval=200000, quality=50, width=64, height=48)
        sizes = [v.record(_frame(i * 60)) for i in range(3)]
        assert all(size % 8 == 0 and size > 100 for size in sizes)
        assert board.clock.ns == pytest.approx(2 * 200_000_000)  # record waits out the interval
        v.record_finish()
        raw = (board.sd / "rec.avi").read_bytes()
        head, movi = video.record_header(200000, 64, 48, False, 0, 1)
        # the header as written, apart from the three fields record_finish patches
        assert raw[8:48] == head[8:48] and raw[52:movi - 8] == head[52:movi - 8]
        assert raw[:4] == b"RIFF" and struct.unpack_from("<I", raw, 4)[0] == len(raw) - 8
        assert raw[12:16] == b"LIST" and raw[20:28] == b"hdrlavih"
        assert struct.unpack_from("<IIIII", raw, 32) == (200000, 0, 0, 0, 3)  # usec, ..., total_frame at 48
        assert struct.unpack_from("<I", raw, movi - 4)[0] == sum(sizes) + 3 * 8 + 4
        assert raw[movi:movi + 8] == b"movi00dc"
        assert b"idx1" not in raw  # the firmware writes no index
        capture = cv2.VideoCapture(str(board.sd / "rec.avi"))  # and common tools still read it
        assert capture.read()[0]
        capture.release()
        with pytest.raises(OSError) as info:
            v.play()
        assert info.value.errno == 1  # EPERM on a recording


def test_recorded_file_plays_back_and_captures(tmp_path, capsys):
    from maixemu.firmware import lcd

    with media_board(tmp_path) as board:
        v = video.open("/sd/rec.avi", record=True, interval=100000, width=64, height=48)
        for i in range(4):
            v.record(_frame(i * 60))
        v.record_finish()
        player = video.open("/sd/rec.avi")
        print(player)
        assert capsys.readouterr().out == ("[MaixPy] avi:\n[video] w:64, h:48, t:100000us, fps:10.00, total_frame:4, "
                                           "status:2\n[audio] format:0, channel:0, sample_rate:0\n")
        assert player.volume() == 80
        img = image.Image()
        statuses = [player.capture(img) for _ in range(4)]
        assert statuses == [3, 3, 3, 0] and (img.width(), img.height()) == (64, 48)
        left = img.get_pixel(5, 5)
        assert abs(left[0] - 180) < 12 and abs(left[1] - 75) < 12  # the 4th frame's colour, through JPEG
        with pytest.raises(OSError) as info:
            player.record(img)
        assert info.value.errno == 1
        lcd.init()
        again = video.open("/sd/rec.avi")
        assert [again.play() for _ in range(4)] == [3, 3, 3, 0]
        again.__del__()


def test_unfinished_recordings_and_foreign_codecs_fail_as_on_the_board(tmp_path, capsys):
    with media_board(tmp_path) as board:
        v = video.open("/sd/half.avi", record=True, width=32, height=32)
        v.record(_frame(10, 32, 32))
        v.__del__()  # no record_finish: frame count 0 and no sizes
        current().video.close()  # the files the board held open are closed (as at power-off)
        player = video.open("/sd/half.avi")
        with pytest.raises(OSError) as info:
            player.play()
        assert info.value.errno == 11 and "frame error" in capsys.readouterr().out
        raw = bytearray((board.sd / "half.avi").read_bytes())
        handler = raw.index(b"MJPG")
        raw[handler:handler + 4] = b"XVID"
        (board.sd / "xvid.avi").write_bytes(bytes(raw))
        with pytest.raises(OSError) as info:
            video.open("/sd/xvid.avi")
        assert info.value.errno == 10 and "MJPEG" in str(info.value)


def test_opencv_mjpeg_files_play(tmp_path):
    with media_board(tmp_path) as board:
        writer = cv2.VideoWriter(str(board.sd / "cv.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10, (80, 60))
        for i in range(5):
            writer.write(np.full((60, 80, 3), i * 40, np.uint8))
        writer.release()
        player = video.open("/sd/cv.avi")
        img = image.Image()
        statuses = [player.capture(img) for _ in range(5)]
        assert statuses == [3, 3, 3, 3, 0]
        assert (img.width(), img.height()) == (80, 60) and abs(img.get_pixel(10, 10)[0] - 160) < 10
