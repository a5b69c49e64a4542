"""The PC side of the emulator: camera sources, display sinks, storage and flash images.

FFmpeg (inside OpenCV) prints its own errors, e.g. ``moov atom not found``, to stderr before
OpenCV reports the failure to us; maixemu states each camera/LCD fault in one line of its own, so
FFmpeg is kept quiet unless the user set ``OPENCV_FFMPEG_LOGLEVEL`` (OpenCV reads it when it first
uses FFmpeg, which is after this package is imported).
"""

import os as _os

_os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
