"""host.audio: sinks (WAV always valid, lazy temp file, speaker fallback) and sources (tone, WAV, silence)."""

from __future__ import annotations

import wave

import numpy as np
import pytest

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
    path = tmp_path / "in.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(np.arange(800, dtype="<i2").tobytes())
    source = audio.open_source(str(path))
    frames = source.read(1600, 16000)  # 0.1 s of file at twice the rate
    assert frames.shape == (1600, 2) and frames[0, 0] == 0 and frames[2, 0] == 1
    assert source.read(4, 16000)[0, 0] == 0  # looped back to the start
