"""Start-up cost of the command: `evalkit --help` and `evalkit info CLIP.bvh` import no heavy
package (each costs a tenth of a second or more before any work is done)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evalkit.data import sample_path

#: Packages that a command imports only in the function that uses them.
HEAVY = ("pandas", "scipy", "sklearn", "matplotlib", "statsmodels", "joblib", "flask", "sqlalchemy",
         "parselmouth", "PIL", "dask", "playwright", "pyarrow")


def _imported_after(code: str) -> list[str]:
    """Heavy packages in ``sys.modules`` of a fresh interpreter after running ``code``."""
    probe = (f"import sys, json\n{code}\n"
             f"print(json.dumps([p for p in {HEAVY!r} if p in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_help_imports_no_heavy_package():
    code = ("from evalkit.cli import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        main(['--help'])\n"
            "    except SystemExit:\n"
            "        pass")
    assert _imported_after(code) == []


@pytest.mark.parametrize("name", ["01_01.bvh", "131_03.bvh"])
def test_info_of_a_bvh_clip_imports_no_heavy_package(name):
    path = str(sample_path("cmu", name))
    code = ("from evalkit.cli import main\n"
            "import contextlib, io\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    rc = main(['info', {path!r}])\n"
            "assert rc == 0 and 'failed' in buf.getvalue(), buf.getvalue()")
    assert _imported_after(code) == []
