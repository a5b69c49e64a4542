"""host.audio: sinks (WAV always valid, lazy temp file, speaker fallback) and sources (tone, WAV, silence)."""

from __future__ import annotations

import wave

import numpy as np
import pytest

from _shared import write_wav
from maixemu.host import audio


def _frames(n: int, value: int = 100) -> np.ndarray:
    return np.full((n, 2), value, np.int16)


def test_wav_sink_is_a_valid_file_after_every_chunk(tmp_path):
    path = tmp_path / "out.wav"
    told = []
    sink = audio.open_sink(f"wav:{path}", on_notice=told.append)
    sink.write(_frames(100), 22005)
    with wave.open(str(path)) as wav:  # readable before close (a run killed here keeps its sound)
        assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (2, 22005, 100)
    sink.write(_frames(50), 44010)  # another rate: resampled to the first one
    sink.close()
    with wave.open(str(path)) as wav:
        assert wav.getnframes() == 125
    assert any("recorded to" in t for t in told) and any("rate changed" in t for t in told)


def test_default_sink_makes_its_temp_file_only_when_something_plays(tmp_path, monkeypatch):
    monkeypatch.setattr(audio.tempfile, "tempdir", str(tmp_path))
    sink = audio.open_sink(None, on_notice=lambda m: None)
    sink.close()
    assert list(tmp_path.iterdir()) == []
    sink = audio.open_sink("auto", on_notice=lambda m: None)
    sink.write(_frames(10), 8000)
    sink.close()
    assert [p.suffix for p in tmp_path.iterdir()] == [".wav"]


def test_specs_and_errors(tmp_path):
    assert isinstance(audio.open_sink("none"), audio.NullAudioSink)
    with pytest.raises(audio.AudioError, match="--audio-out"):
        audio.open_sink("mp3:x")
    with pytest.raises(audio.AudioError, match="--audio-in"):
        audio.open_source("noise")
    with pytest.raises(audio.AudioError, match="cannot read"):
        audio.open_source(str(tmp_path / "none.wav"))
    assert isinstance(audio.open_source(None), audio.SilenceSource)


def test_speaker_falls_back_to_a_wav_file_without_a_device(monkeypatch):
    monkeypatch.setattr(audio, "_sounddevice", lambda kind, on_notice: None)
    told = []
    assert isinstance(audio.open_sink("speaker", on_notice=told.append), audio.WavFileSink)
    assert isinstance(audio.open_source("mic", on_notice=told.append), audio.SilenceSource)
    assert len(told) == 2


def test_tone_is_continuous_across_reads():
    tone = audio.open_source("tone:1000:12000")
    first, second = tone.read(37, 16000), tone.read(63, 16000)
    whole = audio.ToneSource(1000, 12000).read(100, 16000)
    assert np.array_equal(np.concatenate([first, second]), whole)
    assert np.abs(whole).max() <= 12000 and np.array_equal(whole[:, 0], whole[:, 1])


def test_wav_source_resamples_and_loops(tmp_path):
    path = write_wav(tmp_path / "in.wav", np.arange(800), 8000)
    source = audio.open_source(str(path))
    frames = source.read(1600, 16000)  # 0.1 s of file at twice the rate
    assert frames.shape == (1600, 2) and frames[0, 0] == 0 and frames[2, 0] == 1
    assert source.read(4, 16000)[0, 0] == 0  # looped back to the start


# ---------------------------------------------------------------------------------- issue 24: hostile inputs
def _wav_with_header(path, *, rate=16000, channels=1, bits=16, tag=1, frames=100):
    import struct

    block = channels * ((bits + 7) // 8)
    data = b"\1\0" * (min(frames * block, 4096) // 2)
    fmt = struct.pack("<HHIIHH", tag, channels, rate, rate * block & 0xFFFFFFFF, block & 0xFFFF, bits)
    path.write_bytes(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
                     + b"data" + struct.pack("<I", len(data)) + data)
    return path


@pytest.mark.parametrize("header, says", [
    ({"rate": 1}, "a rate of 1 Hz (1000..768000)"),
    ({"rate": 0}, "a rate of 0 Hz (1000..768000)"),
    ({"rate": 4_000_000_000}, "a rate of 4000000000 Hz"),
    ({"channels": 0}, "0 channels (1..32)"),
    ({"channels": 65535}, "65535 channels (1..32)"),
    ({"bits": 40}, "40-bit samples (8, 16, 24 or 32)"),
    ({"tag": 3}, "format 0x3 is not PCM"),
])
def test_a_wav_input_header_is_checked_before_anything_is_allocated(tmp_path, header, says):
    """Today's main resampled the whole file to each rate asked for: a 1 Hz header reached 21.8 GB and
    was OOM-killed; a rate of 0 was a ZeroDivisionError traceback."""
    path = _wav_with_header(tmp_path / "in.wav", **header)
    with pytest.raises(audio.AudioError) as info:
        audio.open_source(str(path))
    assert says in str(info.value) and str(info.value).endswith(audio.AUDIO_IN_HINT)


def test_a_bad_wav_input_is_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys

    path = _wav_with_header(tmp_path / "in.wav", rate=1)
    script = tmp_path / "main.py"
    script.write_text("print('ran')\n")
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--audio-in",
                           str(path)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "a rate of 1 Hz" in proc.stderr


def test_a_long_wav_input_costs_memory_per_read_not_per_file(tmp_path):
    import tracemalloc

    samples = np.tile(np.arange(-1000, 1000, dtype="<i2"), 48000 * 60 * 2 // 2000)
    path = write_wav(tmp_path / "long.wav", samples, 48000, channels=2)  # 60 s of 48 kHz stereo: 11.5 MB
    tracemalloc.start()
    try:
        source = audio.open_source(str(path))
        frames = source.read(1600, 8000)  # a low rate: each read interpolates only what it returns
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert frames.shape == (1600, 2) and frames[1, 0] == -1000 + 2 * 6  # file frame 6 (L of interleaved samples)
    assert peak < 2_000_000


@pytest.mark.parametrize("spec", ["tone:1e400", "tone:nan", "tone:0", "tone:2e6", "tone:440:40000", "tone:440:1:2",
                                  "tone:440:1e9"])
def test_tone_arguments_are_bounded(spec):
    with pytest.raises(audio.AudioError):
        audio.open_source(spec)


def test_a_fifo_as_wav_input_is_refused_not_waited_for(tmp_path):
    """A FIFO named like a WAV file: today's main waited for a writer for ever at set-up."""
    import os

    fifo = tmp_path / "in.wav"
    os.mkfifo(fifo)
    with pytest.raises(audio.AudioError, match="is not a regular file"):
        audio.open_source(str(fifo))


def test_a_rate_change_into_the_wav_sink_is_resampled_in_bounded_blocks():
    """A chunk at 10 Hz into a sink at 4 MHz is 400 000 frames per input frame: resampled a block at a
    time (today's main made the whole result at once)."""
    frames = np.arange(20, dtype=np.int16).repeat(2).reshape(-1, 2)
    blocks = list(audio.resampled_blocks(frames, 10, 4_000_000))
    assert max(len(b) for b in blocks) <= audio.RESAMPLE_BLOCK
    assert sum(len(b) for b in blocks) == 8_000_000
    assert np.array_equal(np.concatenate(blocks[:1])[:, 0], audio.resample(frames, 10, 4_000_000)[:audio.RESAMPLE_BLOCK, 0])
