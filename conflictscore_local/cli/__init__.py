"""The ``conflictscore`` command: one module per command (``score``, ``bench``, ``merge``, ...), each parsing
its flags, calling one library function, writing the page if asked and printing the result; ``app.py``
holds the command table, logging and exit statuses; ``flags.py`` the flags every command shares and
``text.py`` what commands print."""

from .app import build_parser, command_logging, exit_process, leaf_parsers, main, run

__all__ = ["build_parser", "command_logging", "exit_process", "leaf_parsers", "main", "run"]
