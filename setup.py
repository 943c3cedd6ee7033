"""setuptools' build, plus the compiled kernel prepared for the machine that builds it.

After ``build_py`` copies the package, ``warm_kernel.py`` runs the first calls
on the copy so that Numba's cache files go into the wheel (see its
docstring). Anything that fails there is said and skipped: the wheel is then
the plain one, and the kernel compiles on first use. ``CUMDEV_NO_WARM=1``
skips it; an editable install never runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
_WARM = (
    "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


class BuildWithCompiledKernel(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode or os.environ.get("CUMDEV_NO_WARM"):
            return
        built = Path(self.build_lib).resolve()
        package = built / "polars_cumdev"
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        # pip's isolated build finds numba and polars through its own PYTHONPATH (a
        # sitecustomize adding the build environment): keep it, after the built copy.
        paths = [str(built), *filter(None, [os.environ.get("PYTHONPATH")])]
        env.update(PYTHONPATH=os.pathsep.join(paths), PYTHONDONTWRITEBYTECODE="1")
        try:
            # -c, not the script's path: sys.path[0] is then the build copy, not the source
            done = subprocess.run(
                [sys.executable, "-c", _WARM, str(HERE / "warm_kernel.py"), str(package)],
                env=env,
                cwd=built,
                capture_output=True,
                text=True,
                timeout=3600,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"polars-cumdev: kernel not compiled at build ({exc}); it compiles on first use")
            return
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            print(f"polars-cumdev: kernel not compiled at build ({last}); it compiles on first use")
            return
        print((done.stderr.strip().splitlines() or [""])[-1])


setup(cmdclass={"build_py": BuildWithCompiledKernel})
