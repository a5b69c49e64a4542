"""Float fully-connected layer: ``out[o] = (Σ_i in[i]*w[o][i]) + bias[o]``, then relu/relu6.

The sum is accumulated left to right in float32 from 0.0f with every product rounded to float32
first (the device loop without fused multiply-add), so the result is bit-identical to that C code.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
ACTIVATIONS = {0: "linear", 1: "relu", 2: "relu6"}


def fully_connected(x: np.ndarray, weights: np.ndarray, bias: np.ndarray, act: int = 0, *,
                    weights_t: np.ndarray | None = None) -> np.ndarray:
    """``x`` [in], ``weights`` [out, in] float32, ``bias`` [out] → float32 [out].

    ``weights_t`` (the same weights as a contiguous [in, out] array) lets the compiled kernel of
    the fast engine do the sums when it is loaded (``kpu.fast``): the same float32 operations in
    the same order, across the outputs at once."""
    x = x.astype(F32).reshape(-1)
    from ..kpu.fast import loaded_kernels

    compiled = loaded_kernels() if weights_t is not None else None
    with np.errstate(all="ignore"):
        if compiled is not None:
            s = np.empty(weights.shape[0], dtype=F32)
            compiled.fully_connected(x, weights_t, s)
        elif weights.shape[1] == 0:
            s = np.zeros(weights.shape[0], dtype=F32)
        else:
            prod = weights * x[None, :]
            s = np.add.accumulate(prod, axis=1)[:, -1]
        out = s + bias.astype(F32)
    if act == 1:
        out = np.maximum(out, F32(0))
    elif act == 2:
        out = np.minimum(np.maximum(out, F32(0)), F32(6))
    return out.astype(F32, copy=False)
