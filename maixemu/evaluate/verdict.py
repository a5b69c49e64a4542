"""The one-line deploy verdict: does the kmodel, as the device feeds it, decide as the float model does?

The measure is the agreement of the two models' decisions (top-1 for a classifier, the arg-max of
every row of the class output for a detector's per-anchor scores), because that is what a script
acts on; the output cosine backs it. Levels:

* ``ready``: agreement ≥ :data:`READY` and cosine ≥ :data:`READY_COSINE`;
* ``check``: agreement ≥ :data:`CHECK` (a few decisions change: look at the worst images);
* ``not ready``: below that.

The line then names the larger error source (the device input path or the quantisation, when
``--layers`` measured both) and the layer where the error jumps.
"""

from __future__ import annotations

READY = 0.98
READY_COSINE = 0.98
CHECK = 0.90


def deploy_verdict(results: dict) -> dict:
    reference = results["reference"]
    agreement = reference.get("top1_agreement", reference.get("agreement"))
    cosine = reference.get("cosine_mean")
    what = "top-1" if "top1_agreement" in reference else f"output {reference['class_output']} arg-max"
    if agreement is None or cosine is None:
        return {"level": "unknown", "text": "verdict: no image was compared with the float model"}
    if agreement >= READY and cosine >= READY_COSINE:
        level = "ready"
    elif agreement >= CHECK:
        level = "check"
    else:
        level = "not ready"
    parts = [f"{what} agrees with the float model on {100 * agreement:.1f} % (cosine {cosine:.3f})"]
    accuracy, float_accuracy = results.get("accuracy"), reference.get("float_accuracy")
    if accuracy is not None and float_accuracy is not None:
        parts.append(f"top-1 {100 * accuracy:.1f} % vs {100 * float_accuracy:.1f} % for the float model")
    source = error_source(results.get("input_error"), results.get("quantisation_error"))
    if source:
        parts.append(source)
    jump = (results.get("layer_summary") or {}).get("jump")
    if jump:
        before = "its rounding floor " if jump["after"] is None else ""
        parts.append(f"the error jumps at layer {jump['index']} ({jump['kind']}: SQNR {before}{jump['sqnr_before_db']:.1f} → "
                     f"{jump['sqnr_db']:.1f} dB)")
    advice = {"ready": "deploy", "check": "deploy after looking at the worst images",
              "not ready": "fix the largest error source before deploying"}[level]
    return {"level": level, "agreement": agreement, "text": f"verdict: {level} — " + "; ".join(parts) + f": {advice}"}


def error_source(input_error: dict | None, quantisation_error: dict | None) -> str | None:
    """Which of the two output errors is larger, in words (None when one of them is not measured)."""
    if not input_error or not quantisation_error:
        return None
    ie, qe = input_error.get("sqnr_db"), quantisation_error.get("sqnr_db")
    if ie is None and qe is None:
        return "both the input path and the quantisation are exact"
    if ie is None:
        return f"all of the error is quantisation (SQNR {qe:.1f} dB; the device input path changes nothing)"
    if qe is None:
        return f"all of the error is the device input path (SQNR {ie:.1f} dB)"
    larger = "the device input path" if ie < qe else "quantisation"
    return f"{larger} costs more (input path SQNR {ie:.1f} dB, quantisation {qe:.1f} dB)"
