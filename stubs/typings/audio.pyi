"""MaixPy ``audio``: ``audio.Audio`` buffers and WAV files, played and recorded with ``Maix.I2S``.

Playing: ``player = audio.Audio(path="/sd/6.wav")``, ``info = player.play_process(i2s)``,
``i2s.set_sample_rate(info[1])``, ``while player.play(): pass``, ``player.finish()``.
Recording: ``rec = audio.Audio(path="/sd/r.wav", is_create=True, samplerate=16000)``,
``rec.record(rx.record(2048))`` ..., ``rec.finish()`` (writes the header; without it the file has none).
"""

from Maix import Audio as Audio
