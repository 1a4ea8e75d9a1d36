"""The sample project's own PEP 517 backend (``backend-path``), copied in as ``backend.py``.

It requires nothing, so pip's isolated build installs nothing from an index: setuptools
there cost each ``pip install`` of the project about 4 s of CPU. Only the hooks pip calls
to install: a wheel of ``src/mypkg``, and an editable one that is a ``.pth`` to ``src``.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

NAME, VERSION = "mypkg", "1.0"
INFO = f"{NAME}-{VERSION}.dist-info"
METADATA = f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
WHEEL = "Wheel-Version: 1.0\nGenerator: inplace_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _wheel(directory: str, files: dict[str, bytes]) -> str:
    """Write ``files`` plus the dist-info as a wheel into ``directory``; its file name."""
    files = {**files, f"{INFO}/METADATA": METADATA.encode(), f"{INFO}/WHEEL": WHEEL.encode()}
    record = "".join(_record_line(path, data) for path, data in files.items())
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(Path(directory) / name, "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{INFO}/RECORD", record + f"{INFO}/RECORD,,\n")
    return name


def build_wheel(wheel_directory: str, config_settings: object = None,
                metadata_directory: object = None) -> str:
    return _wheel(wheel_directory, {f"{NAME}/__init__.py":
                                    Path("src", NAME, "__init__.py").read_bytes()})


def build_editable(wheel_directory: str, config_settings: object = None,
                   metadata_directory: object = None) -> str:
    return _wheel(wheel_directory, {f"{NAME}.pth": f"{Path('src').resolve()}\n".encode()})
