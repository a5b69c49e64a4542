"""audio.Audio against py_audio.c / wav.c: WAV header rules, play scaling, recording layout, messages."""

from __future__ import annotations

import struct
import wave

import numpy as np
import pytest
from media_board import media_board

from maixemu.firmware import audio
from maixemu.firmware.Maix import I2S
from maixemu.host import audio as host_audio


def _wav(path, samples: np.ndarray, rate: int = 16000, channels: int = 2, fmt_size: int = 16, extra: bytes = b""):
    data = samples.astype("<i2").tobytes()
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * 2 * channels, 2 * channels, 16) + b"\0" * (fmt_size - 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", fmt_size) + fmt + extra + b"data" + struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)


def _player(board, name):
    tx = I2S(I2S.DEVICE_0)
    player = audio.Audio(path=f"/sd/{name}")
    info = player.play_process(tx)
    tx.channel_config(tx.CHANNEL_1, I2S.TRANSMITTER, align_mode=I2S.RIGHT_JUSTIFYING_MODE)
    tx.set_sample_rate(info[1])
    return player, info


def test_play_process_prints_and_returns_the_header(tmp_path, capsys):
    with media_board(tmp_path) as board:
        samples = (np.arange(4000) % 200 - 100).astype(np.int16)
        _wav(board.sd / "a.wav", samples, rate=22050)
        player, info = _player(board, "a.wav")
        assert info == [2, 22050, 88200, 4, 16, 8000]
        out = capsys.readouterr().out.splitlines()
        assert out == ["[MAIXPY]: result = 0", "[MAIXPY]: numchannels = 2", "[MAIXPY]: samplerate = 22050",
                       "[MAIXPY]: byterate = 88200", "[MAIXPY]: blockalign = 4", "[MAIXPY]: bitspersample = 16",
                       "[MAIXPY]: datasize = 8000"]
        assert player.volume() == 40.0  # the firmware's default
        calls = 0
        while player.play():
            calls += 1
        assert calls == 2  # 2000 stereo frames in chunks of i2s.points (1024) words
        player.finish()
        played = board.speaker.frames
        expected = np.trunc(samples.astype(np.float32) * np.float32(40.0) / np.float32(100)).astype(np.int16)
        assert played.reshape(-1).tolist() == expected.tolist()
        assert {rate for _, rate in board.speaker.chunks} == {22005}


def test_mono_files_play_on_both_channels_at_full_volume(tmp_path):
    with media_board(tmp_path) as board:
        samples = np.array([1000, -1000, 32767, -32768], dtype=np.int16)
        _wav(board.sd / "m.wav", samples, channels=1)
        player, info = _player(board, "m.wav")
        assert info[0] == 1
        player.volume(100)
        assert player.play() == 1 and player.play() == 0
        assert board.speaker.frames.tolist() == [[v, v] for v in samples.tolist()]


@pytest.mark.parametrize(("build", "code"), [
    (lambda p: _wav(p, np.zeros(8, np.int16), fmt_size=18), 7),     # an 18-byte fmt chunk
    (lambda p: _wav(p, np.zeros(8, np.int16), extra=b"fact" + struct.pack("<I", 4) + b"\0" * 4), 13),
    (lambda p: p.write_bytes(b"RIFX" + b"\0" * 60), 3),
    (lambda p: p.write_bytes(b"RIFF" + struct.pack("<I", 999) + b"WAVE" + b"\0" * 52), 4),
])
def test_headers_the_board_rejects(tmp_path, capsys, build, code):
    with media_board(tmp_path) as board:
        build(board.sd / "bad.wav")
        player = audio.Audio(path="/sd/bad.wav")
        with pytest.raises(OSError, match="wav init error"):
            player.play_process(I2S(0))
        assert f"[MAIXPY]: wav error code : {code}" in capsys.readouterr().out


def test_a_list_chunk_is_skipped(tmp_path):
    with media_board(tmp_path) as board:
        _wav(board.sd / "l.wav", np.zeros(8, np.int16), extra=b"LIST" + struct.pack("<I", 6) + b"INFOab")
        assert audio.Audio(path="/sd/l.wav").play_process(I2S(0))[5] == 16


def test_empty_file_and_missing_file(tmp_path, capsys):
    with media_board(tmp_path) as board:
        (board.sd / "empty.wav").write_bytes(b"")
        assert audio.Audio(path="/sd/empty.wav").play_process(I2S(0)) is False
        assert "[MAIXPY]: file length is 0" in capsys.readouterr().out
        with pytest.raises(OSError) as info:
            audio.Audio(path="/sd/none.wav")
        assert info.value.errno == 2
        with pytest.raises(ValueError, match="Invaild I2S device"):
            audio.Audio(path="/sd/empty.wav").play_process(object())


def test_recording_writes_the_firmware_header_and_low_halves(tmp_path, capsys):
    tone = host_audio.ToneSource(500, 3000)
    with media_board(tmp_path, source=tone) as board:
        rx = I2S(I2S.DEVICE_0)
        rx.channel_config(rx.CHANNEL_0, rx.RECEIVER)
        rx.set_sample_rate(16000)
        recorder = audio.Audio(path="/sd/rec.wav", is_create=True, samplerate=16000)
        chunks = [rx.record(2048) for _ in range(3)]
        for chunk in chunks:
            assert recorder.record(chunk) is None
        recorder.finish()
        raw = (board.sd / "rec.wav").read_bytes()
        assert len(raw) == 44 + 3 * 2048 * 2
        assert raw[:44] == audio.wav_header_bytes(2, 16000, 16, 3 * 2048 * 2)
        assert struct.unpack_from("<I", raw, 4)[0] == 36 + 3 * 4096
        body = np.frombuffer(raw[44:], "<i2")
        words = np.concatenate([np.frombuffer(c.to_bytes(), "<u4") for c in chunks])
        assert body.tolist() == (words & 0xFFFF).astype(np.uint16).view(np.int16).tolist()
        with wave.open(str(board.sd / "rec.wav")) as wav:
            assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (2, 16000, 3072)
        assert "[MAIXPY]: byterate = 64000" in capsys.readouterr().out


def test_buffers_and_misuse(tmp_path):
    with media_board(tmp_path):
        assert len(audio.Audio(points=16).to_bytes()) == 64
        assert audio.Audio(array=bytes(range(8))).points == 2
        with pytest.raises(AttributeError, match="empty Audio"):
            audio.Audio(points=0).to_bytes()
        with pytest.raises(ValueError, match=r"value:\[0,100\]"):
            audio.Audio().volume(101)
        with pytest.raises(OSError, match="play_process"):
            audio.Audio(points=4).play()
        with pytest.raises(OSError, match="is_create=True"):
            audio.Audio(points=4).record(audio.Audio(points=4))
        assert repr(audio.Audio(points=3)).startswith("[MAIXPY]audio:(points=3, buffer addr=")
