"""Offline wheels and an offline PEP 517 backend for the uv environment tests.

CI has no network for these tests, and this machine's setuptools cannot build wheels without the
``wheel`` package, so wheels are made here: :func:`write_wheel` zips files into a valid wheel
(``METADATA``, ``WHEEL``, ``RECORD`` with SHA-256 hashes), :func:`wheel_from_installed` turns an
installed distribution (pytest and its requirements) into a wheel the same way, and
:data:`BACKEND_SOURCE` is a tiny in-tree PEP 517 backend (``backend-path``) that a fixture
project commits so that uv can build and install the project itself without downloading setuptools.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["write_wheel", "wheel_from_installed", "find_links", "BACKEND_SOURCE", "PYTEST_DISTS"]

#: pytest and what it needs on Python >= 3.11.
PYTEST_DISTS = ("pytest", "iniconfig", "pluggy", "packaging", "pygments")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(out_dir: Path, name: str, version: str, files: Mapping[str, bytes], *,
                requires: Sequence[str] = (), metadata: str | None = None, extra_dist_info: Mapping[str, bytes] = {}
                ) -> Path:
    """Write ``<name>-<version>-py3-none-any.whl`` holding ``files`` (archive path -> bytes)."""
    norm = name.replace("-", "_")
    info = f"{norm}-{version}.dist-info"
    meta = metadata or ("Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
                        + "".join(f"Requires-Dist: {r}\n" for r in requires))
    entries = dict(files)
    entries.update({f"{info}/{k}": v for k, v in extra_dist_info.items()})
    entries[f"{info}/METADATA"] = meta.encode()
    entries[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: homefield-tests\nRoot-Is-Purelib: true\n"
                                b"Tag: py3-none-any\n")
    record = [_record_line(k, v) for k, v in entries.items()] + [f"{info}/RECORD,,"]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{norm}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, v in entries.items():
            zf.writestr(k, v)
        zf.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def wheel_from_installed(dist_name: str, out_dir: Path) -> Path:
    """A wheel of the installed distribution ``dist_name`` (its package files and metadata; no
    scripts, no ``__pycache__``)."""
    dist = importlib.metadata.distribution(dist_name)
    files: dict[str, bytes] = {}
    extra: dict[str, bytes] = {}
    info_prefix = None
    for f in dist.files or []:
        rel = str(f)
        if rel.startswith("..") or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        full = Path(str(f.locate()))
        if not full.is_file():
            continue
        if ".dist-info/" in rel:
            info_prefix = rel.split("/", 1)[0]
            leaf = rel.split("/", 1)[1]
            if leaf in ("RECORD", "WHEEL", "METADATA", "INSTALLER", "REQUESTED", "direct_url.json"):
                continue
            extra[leaf] = full.read_bytes()
            continue
        files[rel] = full.read_bytes()
    assert info_prefix is not None, dist_name
    metadata = dist.read_text("METADATA") or ""
    return write_wheel(out_dir, dist.metadata["Name"], dist.version, files, metadata=metadata, extra_dist_info=extra)


def find_links(out_dir: Path) -> Path:
    """A folder with wheels of :data:`PYTEST_DISTS` (built from the installed ones)."""
    for d in PYTEST_DISTS:
        wheel_from_installed(d, out_dir)
    return out_dir


#: A PEP 517 backend (no build requirements) that packs the project's package folder into a wheel;
#: reads ``[project] name``, ``version`` and ``dependencies`` from ``pyproject.toml``.
BACKEND_SOURCE = '''\
"""Minimal in-tree PEP 517 backend for the homefield tests."""
import base64, hashlib, os, tomllib, zipfile


def _project():
    with open("pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    name, version = p["name"], p["version"]
    info = f"{name}-{version}.dist-info"
    entries = {}
    for root, _dirs, names in os.walk(name):
        for n in sorted(names):
            if n.endswith(".py"):
                path = os.path.join(root, n)
                with open(path, "rb") as fh:
                    entries[path.replace(os.sep, "/")] = fh.read()
    meta = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n" + "".join(
        f"Requires-Dist: {d}\\n" for d in p.get("dependencies", []))
    entries[f"{info}/METADATA"] = meta.encode()
    entries[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: hf\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for k, v in entries.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode()
        record.append(f"{k},sha256={d},{len(v)}")
    record.append(f"{info}/RECORD,,")
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as zf:
        for k, v in entries.items():
            zf.writestr(k, v)
        zf.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
    return wheel
'''
