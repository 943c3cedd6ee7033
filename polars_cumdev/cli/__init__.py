"""The ``cumdev`` command line: ``cumdev demo``, ``screen``, ``curve``, ``report``, ...

- :mod:`.main`: the parser and the subcommands (the ``cumdev`` entry point);
- :mod:`.arguments`, :mod:`.input`, :mod:`.output`: shared arguments, reading
  files with errors in the user's terms, printing tables;
- :mod:`.calibration`, :mod:`.paired`: the calibration and paired subcommands.
"""

from __future__ import annotations

from polars_cumdev.cli.main import main

__all__ = ["main"]
