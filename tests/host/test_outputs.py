"""Issue 24: an output named on the command line replaces only a file maixemu wrote itself (or any file
with ``--overwrite``), and a name that cannot work (a folder, an unwritable place) is one line and
exit 2 when the run starts — never a script error half-way, never a user's file gone."""

from __future__ import annotations

import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from _shared import video_frame_count, write_wav
from maixemu.host import audio, display


def _outputs():
    from maixemu.host import outputs  # new in issue 24: imported here so that each test fails on its own before

    return outputs

DRAWS = "import lcd, image\nlcd.init()\nlcd.display(image.Image(size=(320, 240)))\n"
PLAYS = """
from Maix import I2S
import audio
i2s = I2S(I2S.DEVICE_0)
i2s.channel_config(I2S.CHANNEL_1, I2S.TRANSMITTER, resolution=I2S.RESOLUTION_16_BIT)
i2s.set_sample_rate(16000)
i2s.play(audio.Audio(array=bytearray(4000)))
print("played")
"""


def _run(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    script = tmp_path / "main.py"
    script.write_text(body)
    return subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic", *args],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)


# ------------------------------------------------------------------------------------ videos
def test_a_recording_never_replaces_a_video_maixemu_did_not_write(tmp_path):
    """Today's main overwrote ``--lcd record:FILE`` whatever it was."""
    mine = tmp_path / "holiday.mp4"
    mine.write_bytes(b"my own video")
    proc = _run(tmp_path, DRAWS, "--lcd", f"record:{mine}")
    assert proc.returncode == 2
    assert proc.stderr == (f"maixemu: cannot record to {mine}: it exists and maixemu did not write it; choose another "
                           "name, or pass --overwrite to replace it\n")
    assert mine.read_bytes() == b"my own video"
    proc = _run(tmp_path, DRAWS, "--lcd", f"record:{mine}", "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert video_frame_count(mine) == 2


@pytest.mark.parametrize("suffix", [".mp4", ".avi"])
def test_maixemus_own_recording_is_replaced_and_still_plays(tmp_path, suffix):
    video = tmp_path / f"out{suffix}"
    for _ in range(2):
        proc = _run(tmp_path, DRAWS, "--lcd", f"record:{video}")
        assert proc.returncode == 0, proc.stderr
        assert _outputs().is_maixemu_video(video) and video_frame_count(video) == 2


def test_a_folder_or_an_unwritable_place_is_one_line_at_the_start(tmp_path):
    (tmp_path / "clip.mp4").mkdir()
    for target in (tmp_path / "clip.mp4", Path("/proc/clip.mp4")):
        proc = _run(tmp_path, DRAWS + "print('ran')\n", "--lcd", f"record:{target}")
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(f"maixemu: cannot record to {target}: ")


# ------------------------------------------------------------------------------------ WAV files
def test_audio_out_to_a_folder_is_one_line_and_exit_2_before_the_run(tmp_path):
    """Today's main failed at the first sound, as the script's error (a traceback, exit 1)."""
    (tmp_path / "sounds").mkdir()
    proc = _run(tmp_path, PLAYS, "--lcd", "none", "--audio-out", f"wav:{tmp_path / 'sounds'}")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"maixemu: cannot write the audio output {tmp_path / 'sounds'}: it is a folder; give a file "
                           "name; use --audio-out wav:OUT.wav|speaker|none\n")
    proc = _run(tmp_path, PLAYS, "--lcd", "none", "--audio-out", "wav:/proc/out.wav")
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1


def test_audio_out_never_replaces_a_wav_file_maixemu_did_not_write(tmp_path):
    mine = write_wav(tmp_path / "song.wav", [1] * 800, 8000)
    before = mine.read_bytes()
    proc = _run(tmp_path, PLAYS, "--lcd", "none", "--audio-out", f"wav:{mine}")
    assert proc.returncode == 2 and "maixemu did not write it" in proc.stderr and "--overwrite" in proc.stderr
    assert mine.read_bytes() == before
    ours = tmp_path / "out.wav"
    for _ in range(2):  # maixemu's own file is replaced by the next run
        proc = _run(tmp_path, PLAYS, "--lcd", "none", "--audio-out", f"wav:{ours}")
        assert proc.returncode == 0 and proc.stdout == "played\n", proc.stderr
        assert _outputs().is_maixemu_wav(ours)
        with wave.open(str(ours)) as wav:
            assert (wav.getnchannels(), wav.getframerate(), wav.getnframes()) == (2, 16003, 500)


def test_the_wav_sink_stays_valid_with_its_mark(tmp_path):
    path = tmp_path / "o.wav"
    sink = audio.open_sink(f"wav:{path}", on_notice=lambda m: None)
    sink.write(np.full((100, 2), 7, np.int16), 8000)
    with wave.open(str(path)) as wav:
        assert wav.getnframes() == 100 and wav.readframes(1) == b"\7\0\7\0"
    sink.close()
    foreign = tmp_path / "foreign.wav"
    foreign.write_bytes(path.read_bytes().replace(b"maixemu", b"another"))
    with pytest.raises(audio.AudioError, match="maixemu did not write it"):
        audio.open_sink(f"wav:{foreign}")


# ------------------------------------------------------------------------------------ the KPU log
def test_the_kpu_log_never_replaces_a_file_maixemu_did_not_write(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    proc = _run(tmp_path, "print('ran')\n", "--lcd", "none", "--kpu-log", str(notes))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"maixemu: --kpu-log {notes}: it exists and maixemu did not write it; choose another name, "
                           "or pass --overwrite to replace it\n")
    assert notes.read_text() == "my notes\n"


# ------------------------------------------------------------------------------------ the check itself
def test_an_empty_file_holds_nothing_to_lose(tmp_path):
    empty = tmp_path / "reserved.mp4"
    empty.touch()
    _outputs().check_file(empty, "cannot record to", ours=_outputs().is_maixemu_video, overwrite=False)
    sink = display.VideoFileSink(empty)
    sink.close()


def test_the_kpu_log_may_go_to_a_stream(tmp_path):
    proc = _run(tmp_path, "print('ran')\n", "--lcd", "none", "--kpu-log", "/dev/null")
    assert proc.returncode == 0 and proc.stdout == "ran\n", proc.stderr
