"""Accuracy as the device sees it: a kmodel over a dataset, optionally against its float model.

The library behind ``maixemu eval`` (the CLI verb in ``maixemu.commands.eval``), one job per module:

* ``dataset``/``annotations``/``labels`` read DATA and refuse labels that do not fit the model;
* ``recipe``, ``device_input``, ``file_input``, ``geometry``: the two input paths and box mapping;
* ``reference``/``compare``: the float model and the per-image comparison;
* ``worker``/``executors``/``checkpoint``: evaluating images here, in processes or on Dask, resumably;
* ``metrics``/``ap``/``aggregate``: the numbers; ``report``/``plots``/``html``/``progress``: the output.

``evaluate(EvalOptions(...))`` runs it all and returns an :class:`EvalOutcome`.
"""

from .errors import EvalError, MissingExtra
from .run import EvalOptions, EvalOutcome, evaluate

__all__ = ["EvalError", "MissingExtra", "EvalOptions", "EvalOutcome", "evaluate"]
