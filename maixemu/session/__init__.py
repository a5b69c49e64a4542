"""The session layer: what boots a board and runs a script on it (see ``docs/DESIGN.md``).

Today ``maixemu.runner.Session`` does most of that; ``ide`` wires ``maixemu run --ide`` into it.
"""
