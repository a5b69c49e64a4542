"""Maix.FFT (Maix_fft.c over the hardware FFT model) and Maix.MIC_ARRAY (Maix_mic_array.c)."""

from __future__ import annotations

import numpy as np
import pytest
from media_board import media_board

from maixemu.firmware.chip import audio_device
from maixemu.firmware import image
from maixemu.firmware.Maix import FFT, MIC_ARRAY, fpioa
from maixemu.firmware.Maix.fft import hardware_fft
from maixemu.host import audio as host_audio


def _words(samples) -> bytes:
    return (np.asarray(samples, dtype=np.int64) & 0xFFFFFFFF).astype("<u4").tobytes()


def test_run_checks_points_and_buffer(capsys):
    with pytest.raises(ValueError, match=r"\[MAIXPY\]FFT:invalid points"):
        FFT.run(bytes(4096), 1024)
    with pytest.raises(ValueError, match="invalid byte"):
        FFT.run(None, 64)
    with pytest.raises(ValueError, match="multiple of 4"):
        FFT.run(bytes(6), 64)
    with pytest.raises(TypeError):
        FFT()
    out = FFT.run(bytes(16), 64)
    assert len(out) == 64 and out[0] == (0, 0)
    assert capsys.readouterr().out == "[MAIXPY]FFT:Zero padding\n"


def test_impulse_and_dc_are_exact():
    impulse = FFT.run(_words([1000] + [0] * 63), 64)
    assert impulse == [(1000, 0)] * 64
    dc = FFT.run(_words([100] * 64), 64, shift=0x3F)  # every layer halves: dc / 64 * 64 ... = 100
    assert dc[0] == (100, 0) and all(bin_ == (0, 0) for bin_ in dc[1:])


def test_shifted_transform_is_the_dft_scaled_by_points():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(512) * 3000).astype(np.int16)
    re, im = hardware_fft(x, np.zeros(512, np.int16), 0x1FF, forward=True)
    reference = np.fft.fft(x.astype(float)) / 512
    assert np.abs(re - reference.real).max() <= 8 and np.abs(im - reference.imag).max() <= 8
    back, _ = hardware_fft(x, np.zeros(512, np.int16), 0x1FF, forward=False)
    assert np.abs(back - np.fft.ifft(x.astype(float)).real).max() <= 8


def test_unshifted_loud_input_overflows_as_int16():
    loud = np.full(512, 20000, dtype=np.int16)
    re, _ = hardware_fft(loud, np.zeros(512, np.int16), 0, forward=True)
    assert -32768 <= re.min() and re.max() <= 32767 and re[0] != 20000 * 512


def test_amplitude_and_freq_in_unsigned_integers():
    assert FFT.amplitude([(3, 4), (-3, -4), (0, 0), (1, 1)]) == [2 * 5 // 4, 2 * 5 // 4, 0, 2 * 1 // 4]
    with pytest.raises(ValueError, match="obj is not a list"):
        FFT.amplitude(((3, 4),))
    assert FFT.freq(8, 16000) == [0, 2000, 4000, 6000, 8000, 10000, 12000, 14000]
    assert FFT.freq() == [250 * i for i in range(64)]


def test_tone_peaks_in_its_bin(tmp_path):
    from maixemu.firmware.Maix import I2S

    with media_board(tmp_path, source=host_audio.ToneSource(2000, 4000)):
        rx = I2S(I2S.DEVICE_0)
        rx.channel_config(rx.CHANNEL_0, rx.RECEIVER)
        rx.set_sample_rate(16000)
        amp = FFT.amplitude(FFT.run(rx.record(1024).to_bytes(), 512, shift=0x1FF))
        # interleaved L/R words: the word stream runs at twice the frame rate
        assert int(np.argmax(amp[:256])) == round(2000 / (2 * 16003) * 512)


def test_mic_array_dir_and_leds(tmp_path):
    with media_board(tmp_path, source=host_audio.ToneSource(440, 6400)):
        with pytest.raises(OSError) as info:
            MIC_ARRAY.get_map()
        assert info.value.errno == 110
        assert MIC_ARRAY.init(i2s_d0=12, i2s_ws=24, sk9822_dat=11) is True
        assert fpioa.function_of_pin(12) == fpioa.FUNCTIONS["I2S0_IN_D0"]
        assert fpioa.function_of_pin(11) == fpioa.FUNCTIONS["GPIOHS27"]
        level_map = MIC_ARRAY.get_map()
        assert (level_map.width(), level_map.height(), level_map.format()) == (16, 16, image.GRAYSCALE)
        assert 60 <= level_map.get_pixel(3, 3) <= 80  # RMS of a 6400 sine / 64
        cells = np.zeros((16, 16), np.uint8)
        cells.reshape(-1)[[197, 198, 199, 213, 214, 215, 228, 229, 230, 231, 244, 245, 246, 247]] = 30
        strengths = MIC_ARRAY.get_dir(image.Image._wrap(image.GRAYSCALE, cells))
        assert strengths[0] == (14 * 30 & 0xFF) // 14 == 11  # (uint8_t)sum / len: 420 -> 164 -> 11
        assert strengths[1:] == (0,) * 11
        with pytest.raises(ValueError, match="16\\*16 grayscale"):
            MIC_ARRAY.get_dir(image.Image(size=(8, 8)))
        MIC_ARRAY.set_led(strengths, (0, 0, 255))
        leds = audio_device.current().mic_leds
        assert leds[0] == ((0xE0 | 22) << 24) | (255 << 16) and leds[1] == 0xE0000000
