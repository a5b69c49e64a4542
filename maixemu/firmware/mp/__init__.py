"""The MicroPython runtime around the MaixPy modules: the import-name registry, argument parsing
as ``mp_arg_parse_all``, builtins, tracebacks as the firmware prints them, maixemu's notices,
boot names, the modules' device face, VFS. Imports no MaixPy module
(``tests/session/test_layering.py``)."""
