"""``python -m polars_cumdev.cli``: the ``cumdev`` command."""

import sys

from polars_cumdev.cli.main import main

sys.exit(main())
