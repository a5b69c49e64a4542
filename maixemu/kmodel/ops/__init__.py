"""Numpy kernels of the CPU layers, one family per module, shared by the V3 and V4 containers.

Each kernel reproduces the device's arithmetic (float32 step by step, sequential sums, device
rounding quirks), so that outputs match the reference bytes, not just approximately.
"""
