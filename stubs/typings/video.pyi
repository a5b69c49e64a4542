"""MaixPy ``video``: MJPEG AVI files (``.avi`` only) recorded from images and played to the LCD."""

from image import Image

class _Avi:
    def play(self) -> int:
        """Show the next frame / send the next sound chunk: 3 (video), 4 (audio) or 0 (end)."""
    def capture(self, img: Image) -> int:
        """Decode the next frame into ``img``: 3, or 0 at the end."""
    def volume(self, value: int | None = None) -> int:
        """Sound volume in percent (80 by default when playing)."""
    def record(self, img: Image) -> int:
        """Append ``img`` as a JPEG frame (waits for ``interval`` since the last one); its size in bytes."""
    def record_finish(self) -> None:
        """Write the sizes and frame count; a recording without it cannot be played back."""
    def __del__(self) -> None: ...

def open(path: str, *, record: bool = False, interval: int = 100000, quality: int = 50, width: int = 320,
         height: int = 240, audio: bool = False, sample_rate: int = 44100, channels: int = 1) -> _Avi:
    """Open an AVI to play, or with ``record=True`` to record (``interval`` in microseconds per frame)."""
