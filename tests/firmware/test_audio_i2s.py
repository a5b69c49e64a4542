"""Maix.I2S against Maix_i2s.c and the SDK's i2s/sysctl drivers: arguments, messages, clocks, word formats, pacing."""

from __future__ import annotations

import numpy as np
import pytest
from media_board import media_board

from maixemu.firmware.chip import audio_device, k210_clock
from maixemu.firmware.Maix import I2S
from maixemu.firmware.Maix.i2s import frames_from_words, words_from_frames
from maixemu.host import audio as host_audio


def test_constants_are_the_sdk_enums():
    assert (I2S.DEVICE_0, I2S.DEVICE_1, I2S.DEVICE_2) == (0, 1, 2)
    assert (I2S.TRANSMITTER, I2S.RECEIVER) == (0, 1)
    assert (I2S.STANDARD_MODE, I2S.RIGHT_JUSTIFYING_MODE, I2S.LEFT_JUSTIFYING_MODE) == (1, 2, 4)
    assert (I2S.SCLK_CYCLES_16, I2S.SCLK_CYCLES_24, I2S.SCLK_CYCLES_32) == (0, 1, 2)
    assert (I2S.IGNORE_WORD_LENGTH, I2S.RESOLUTION_16_BIT, I2S.RESOLUTION_32_BIT) == (0, 2, 5)


def test_pll2_and_the_rates_the_divider_gives():
    # The SDK's PLL search from the 26 MHz crystal: the boot logs' "Pll2:freq:45066666".
    assert k210_clock.pll_frequency(45_158_400) == 45_066_666
    assert k210_clock.pll_frequency(400_000_000) == 398_666_666
    pll2 = 45_066_666
    got = {rate: k210_clock.i2s_sample_rate(k210_clock.i2s_clock(pll2, k210_clock.i2s_threshold(pll2, rate, 2)), 2)
           for rate in (8000, 16000, 22050, 44100)}
    assert got == {8000: 8001, 16000: 16003, 22050: 22005, 44100: 44010}


def test_set_sample_rate_and_print(tmp_path, capsys):
    with media_board(tmp_path):
        rx = I2S(I2S.DEVICE_0)
        assert rx.channel_config(rx.CHANNEL_0, rx.RECEIVER, align_mode=I2S.STANDARD_MODE) is True
        assert rx.set_sample_rate(16000) is True
        assert rx.sample_rate == 16003
        print(rx)
        out = capsys.readouterr().out
        assert out.startswith("[MAIXPY]i2s0:(sampling rate=16003, sampling points=1024)\n")
        assert "[MAIXPY]channle0:(resolution=2, cycles=2, align_mode=1, mode=1)\n" in out
        assert "[MAIXPY]channle3:(resolution=0, cycles=0, align_mode=0, mode=0)\n" in out
        # cycles=16 halves the divisor: the firmware divides the block clock by 32
        tx = I2S(I2S.DEVICE_2)
        tx.channel_config(I2S.CHANNEL_1, I2S.TRANSMITTER, cycles=I2S.SCLK_CYCLES_16)
        tx.set_sample_rate(16000)
        assert abs(tx.sample_rate - 16000) < 20


@pytest.mark.parametrize(("call", "message"), [
    (lambda: I2S(3), "[MAIXPY]I2S3:does not exist"),
    (lambda: I2S(0, sample_points=64 * 1024 + 1), "[MAIXPY]I2S:invalid buffer length"),
    (lambda: I2S(0).channel_config(4), "[MAIXPY]I2S:invalid i2s channle"),
    (lambda: I2S(0).channel_config(0, resolution=6), "[MAIXPY]I2S:invalid resolution"),
    (lambda: I2S(0).channel_config(0, cycles=3), "[MAIXPY]I2S:invalid cycles"),
    (lambda: I2S(0).channel_config(0, align_mode=3), "[MAIXPY]I2S:invalid align mode"),
    (lambda: I2S(0).channel_config(0, 2), "[MAIXPY]I2S:invalid cycles"),  # sic, for a bad mode
    (lambda: I2S(0).set_sample_rate(4 * 1024 * 1024 + 1), "[MAIXPY]I2S:invalid sample rate"),
    (lambda: I2S(0).record(), "[MAIXPY]I2S:please input recording points or time"),
    (lambda: I2S(0).record(time=1), "[MAIXPY]I2S:please set sample rate"),
])
def test_errors_carry_the_firmware_messages(tmp_path, call, message):
    with media_board(tmp_path):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


def test_record_by_time_is_bounded_by_the_buffer(tmp_path):
    with media_board(tmp_path):
        rx = I2S(I2S.DEVICE_0, sample_points=40000)
        rx.channel_config(0, I2S.RECEIVER)
        rx.set_sample_rate(16000)
        assert rx.record(time=2).points == 32006
        with pytest.raises(ValueError, match="sampling size is out of bounds"):
            rx.record(time=3)
        with pytest.raises(MemoryError, match="memory allocation failed"):
            rx.record(10_000_000)


def test_receiver_words_are_sign_extended_samples_left_right(tmp_path):
    frames = np.array([[-3, 5], [100, -32768]], dtype=np.int16)
    words = words_from_frames(frames, I2S.RESOLUTION_16_BIT)
    assert words.tolist() == [0xFFFFFFFD, 5, 100, 0xFFFF8000]
    assert words_from_frames(frames, I2S.RESOLUTION_24_BIT).tolist()[:2] == [0xFFFFFD00, 0x500]
    assert frames_from_words(words, I2S.RESOLUTION_16_BIT, divide_16=False).tolist() == frames.tolist()
    packed = np.array([(5 << 16) | 0xFFFD], dtype=np.uint32)  # divide-16 mode: one stereo frame per word
    assert frames_from_words(packed, I2S.RESOLUTION_16_BIT, divide_16=True).tolist() == [[-3, 5]]


def test_loopback_plays_what_the_microphone_heard_at_the_bus_rate(tmp_path):
    tone = host_audio.ToneSource(1000, 8000)
    with media_board(tmp_path, source=tone) as board:
        rx, tx = I2S(I2S.DEVICE_0), I2S(I2S.DEVICE_2)
        rx.channel_config(I2S.CHANNEL_0, I2S.RECEIVER)
        rx.set_sample_rate(22050)
        tx.channel_config(I2S.CHANNEL_1, I2S.TRANSMITTER, align_mode=I2S.RIGHT_JUSTIFYING_MODE)
        tx.set_sample_rate(22050)
        for _ in range(8):
            tx.play(rx.record(1024))
        played = board.speaker.frames
        assert played.shape == (8 * 512, 2) and {rate for _, rate in board.speaker.chunks} == {22005}
        spectrum = np.abs(np.fft.rfft(played[:, 0].astype(float)))
        assert abs(np.argmax(spectrum) * 22005 / len(played) - 1000) < 10
        assert np.abs(played).max() == 8000
        # DMA pacing on the board clock: a transfer keeps its channel busy for 512 / 22005 s and the
        # next one on that channel waits for it (the last one is still running when the loop ends)
        assert board.clock.ns == pytest.approx(7 * 512 / 22005 * 1e9, rel=0.01)
        I2S(I2S.DEVICE_0).wait_record()
        assert board.clock.ns == pytest.approx(8 * 512 / 22005 * 1e9, rel=0.01)
        assert audio_device.current().frames_recorded == 8 * 512


def test_play_rejects_what_is_not_an_audio(tmp_path):
    with media_board(tmp_path):
        with pytest.raises(TypeError, match="audio.Audio"):
            I2S(0).play(b"\0" * 16)
