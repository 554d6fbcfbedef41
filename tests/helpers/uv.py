"""The uv tests use: the one beside this Python (the venv's), else the one on ``PATH``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def find_uv() -> str | None:
    """The path of uv beside this Python, else on ``PATH``; ``None`` where there is none."""
    return shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")


def uv_or_skip(reason: str = "no uv beside this Python or on PATH") -> str:
    """:func:`find_uv`; skips the calling test with ``reason`` where there is none."""
    uv = find_uv()
    if uv is None:
        pytest.skip(reason)
    return uv


def plugin_wheel(folder: Path, marker: Path) -> None:
    """``folder/attrs-99-py3-none-any.whl``: a wheel of that name whose ``pytest11`` entry point is a module
    writing ``marker``."""
    import base64
    import hashlib
    import zipfile
    files = {"hfplug_mod.py": f"open({str(marker)!r}, 'a').close()\n",
             "attrs-99.dist-info/METADATA": "Metadata-Version: 2.1\nName: attrs\nVersion: 99\n",
             "attrs-99.dist-info/WHEEL": ("Wheel-Version: 1.0\nGenerator: hf\nRoot-Is-Purelib: true\n"
                                          "Tag: py3-none-any\n"),
             "attrs-99.dist-info/entry_points.txt": "[pytest11]\nhfplug = hfplug_mod\n"}
    def digest(text: str) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record = "".join(f"{name},sha256={digest(text)},{len(text.encode())}\n" for name, text in files.items()) \
        + "attrs-99.dist-info/RECORD,,\n"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "attrs-99-py3-none-any.whl", "w") as whl:
        for name, text in {**files, "attrs-99.dist-info/RECORD": record}.items():
            whl.writestr(name, text)
