"""Models of the K210 chip and the parts on its boards: clocks, heap, soft IRQs and timers' alarms,
threads, UART lines, I2S/DMA audio, I2C power and motion chips, the camera's registers, board
pin profiles. Imports no MaixPy module (``tests/session/test_layering.py``)."""
