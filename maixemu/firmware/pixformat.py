"""Pixel-format and sensor-id constants shared by ``image`` and ``sensor`` (the firmware's enums)."""

BINARY = 1
GRAYSCALE = 2
RGB565 = 3
YUV422 = 4
BAYER = 5
JPEG = 6

#: Sensor ids (``sensor.get_id()`` values of the OpenMV/MaixPy drivers).
OV9650 = 0x96
OV2640 = 0x26
OV7725 = 0x77
OV7740 = 0x7742
MT9V034 = 0x13
LEPTON = 0x54
GC0328 = 0x9D

NAMES = {BINARY: "BINARY", GRAYSCALE: "GRAYSCALE", RGB565: "RGB565", YUV422: "YUV422", BAYER: "BAYER", JPEG: "JPEG"}
