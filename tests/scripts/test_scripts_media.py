"""Whole scripts in the style of the MaixPy/CanMV audio and video demos, run through the maixpy fixture."""

from __future__ import annotations

import wave

import numpy as np

RECORD_THEN_PLAY = """
from maix import I2S
import audio
rx = I2S(I2S.DEVICE_0)
rx.channel_config(rx.CHANNEL_0, rx.RECEIVER, align_mode=I2S.STANDARD_MODE)
rx.set_sample_rate(16000)
recorder = audio.Audio(path="/sd/record.wav", is_create=True, samplerate=16000)
for i in range(6):
    recorder.record(rx.record(2048))
    rx.wait_record()
recorder.finish()
tx = I2S(I2S.DEVICE_0)
player = audio.Audio(path="/sd/record.wav")
info = player.play_process(tx)
tx.channel_config(tx.CHANNEL_1, I2S.TRANSMITTER, resolution=I2S.RESOLUTION_16_BIT,
                  cycles=I2S.SCLK_CYCLES_32, align_mode=I2S.RIGHT_JUSTIFYING_MODE)
tx.set_sample_rate(info[1])
player.volume(100)
while player.play():
    pass
player.finish()
print("done", info)
"""

FFT_BARS = """
from Maix import I2S, FFT
import image, lcd
lcd.init()
rx = I2S(I2S.DEVICE_0)
rx.channel_config(rx.CHANNEL_0, rx.RECEIVER, align_mode=I2S.STANDARD_MODE)
rx.set_sample_rate(38640)
img = image.Image()
peaks = []
while True:
    amp = FFT.amplitude(FFT.run(rx.record(1024).to_bytes(), 512, shift=0x1FF))
    peaks.append(amp.index(max(amp[:256])))
    img = img.clear()
    for i in range(50):
        h = min(240, amp[i])
        img = img.draw_rectangle((i * 6, 240 - h, 6, h), [255, 255, 255], 2, True)
    lcd.display(img)
    if len(peaks) == 3:
        print("peaks", peaks)
"""

VIDEO = """
import sensor, lcd, video, image
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
v = video.open("/sd/capture.avi", record=1, interval=50000, quality=50)
for i in range(4):
    print("bytes", v.record(sensor.snapshot()))
v.record_finish()
v.__del__()
v = video.open("/sd/capture.avi")
print(v)
while True:
    if v.play() == 0:
        print("play end")
        break
v.__del__()
"""


def test_record_then_play_wav(maixpy):
    result = maixpy.run(code=RECORD_THEN_PLAY, audio_in="tone:750:9000")
    assert result.exit_code == 0, result.stderr
    assert "done [2, 16000, 64000, 4, 16, 24576]" in result.stdout
    with wave.open(str(result.sd_dir / "record.wav")) as wav:
        assert wav.getnframes() == 6144 and wav.getframerate() == 16000
    left = result.audio[:, 0].astype(float)
    assert result.audio_rate == 16003 and len(result.audio) == 6144
    assert abs(np.argmax(np.abs(np.fft.rfft(left))) * 16003 / len(left) - 750) < 10


def test_fft_spectrum_loop_ends_on_the_frame_budget(maixpy):
    result = maixpy.run(code=FFT_BARS, audio_in="tone:3000:6000", frames=5)
    assert result.exit_code == 0 and result.budget_spent and len(result.lcd_frames) >= 4
    # 512 interleaved words = 256 stereo frames at 39120 Hz: the tone sits near bin 3000 / 78240 * 512
    assert "peaks [20, 20, 20]" in result.stdout


def test_video_record_and_play(maixpy):
    result = maixpy.run(code=VIDEO, frames=10)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("bytes ") == 4 and "total_frame:4" in result.stdout and "play end" in result.stdout
    assert (result.sd_dir / "capture.avi").stat().st_size > 1000
    assert len(result.lcd_frames) >= 4
