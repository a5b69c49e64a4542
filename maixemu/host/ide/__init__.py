"""The IDE page's host side: a web server, its offline page, the frame streams and the channel.

``maixemu run --ide`` serves a page like the MaixPy IDE's: frame buffer and LCD, terminal,
histogram and statistics, threshold editor, board buttons and LEDs. This package is the PC side
only and knows nothing of the firmware: a run talks to it through an :class:`IdeChannel`
(``maixemu.session.ide`` does the wiring). The server (``server``) needs the ``ide`` extra
(aiohttp); the channel does not, so a run can be wired without it.
"""

from .channel import ArrayFrame, IdeChannel

__all__ = ["ArrayFrame", "IdeChannel"]
