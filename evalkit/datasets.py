"""Fetch public datasets: checksummed, resumable downloads into a local folder.

The registry (``evalkit/datasets.yaml``, or a YAML file of the same shape) lists per dataset a
``base_url`` and files with ``url`` (relative to it), ``path`` (where it is saved), ``size`` in
bytes and ``sha256``. Downloads go to ``PATH.part`` and resume from its length with an HTTP
``Range`` request; a finished file is verified and renamed into place, so an interrupted or
corrupted download never looks complete. ``mirror`` replaces every ``base_url`` (a local copy,
or a loopback server in tests).
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from evalkit.errors import ConfigError, EvalkitError, InputError, yaml_error
from evalkit.textfile import read_config_text

REGISTRY_PATH = Path(__file__).with_name("datasets.yaml")
CHUNK = 1 << 16


class DownloadError(EvalkitError):
    """A download failed (network, server answer, size or checksum mismatch)."""


@dataclass(frozen=True)
class RemoteFile:
    url: str
    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    licence: str
    base_url: str
    files: tuple[RemoteFile, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def load_registry(path: str | os.PathLike | None = None) -> dict[str, Dataset]:
    """Datasets by name from a registry YAML (default: the one shipped with evalkit)."""
    path = Path(path) if path else REGISTRY_PATH
    text = read_config_text(path, "registry")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc, text) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of dataset names")
    out = {}
    for name, d in data.items():
        where = f"{path}: {name}"
        if not isinstance(d, dict) or not isinstance(d.get("files"), list) or not d["files"]:
            raise ConfigError(f"{where}: expected keys description, licence, base_url and a non-empty 'files' list")
        files = []
        for k, f in enumerate(d["files"]):
            if not isinstance(f, dict):
                raise ConfigError(f"{where}.files[{k}]: expected a mapping with url, path, size and sha256")
            missing = [key for key in ("url", "path", "size", "sha256") if key not in f]
            if missing:
                raise ConfigError(f"{where}.files[{k}]: missing {', '.join(missing)}")
            if Path(f["path"]).is_absolute() or ".." in Path(f["path"]).parts:
                raise ConfigError(f"{where}.files[{k}].path: must be a relative path inside the dataset folder")
            size = f["size"]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ConfigError(f"{where}.files[{k}].size: expected a whole number of bytes, found {size!r}")
            files.append(RemoteFile(str(f["url"]), str(f["path"]), size, str(f["sha256"]).lower()))
        out[name] = Dataset(name, str(d.get("description", "")), str(d.get("licence", "")),
                            str(d.get("base_url", "")), tuple(files))
    return out


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _join(base: str, rel: str) -> str:
    return base.rstrip("/") + "/" + rel.lstrip("/")


def download_file(url: str, dest: Path, size: int, sha256: str, timeout: float = 30.0,
                  progress: Callable[[int], None] | None = None) -> str:
    """Download ``url`` to ``dest``, resuming ``dest.part``; verify size and SHA-256.

    Returns ``"present"`` (already there and valid), ``"resumed"`` or ``"downloaded"``.
    """
    if dest.exists() and dest.stat().st_size == size and sha256_of(dest) == sha256:
        return "present"
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    if have > size:
        part.unlink()
        have = 0
    status = "resumed" if have else "downloaded"
    if have < size:
        req = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                code = resp.getcode()
                mode = "ab"
                if have and code != 206:  # server ignored the range: start again
                    mode, have, status = "wb", 0, "downloaded"
                with open(part, mode) as fh:
                    while True:
                        block = resp.read(CHUNK)
                        if not block:
                            break
                        fh.write(block)
                        if progress:
                            progress(len(block))
        except urllib.error.HTTPError as exc:
            raise DownloadError(f"{url}: server answered {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise DownloadError(
                f"{url}: download interrupted ({reason}); run the same command again to resume "
                f"from {part.stat().st_size if part.exists() else 0} bytes"
            ) from None
    got = part.stat().st_size
    if got != size:
        raise DownloadError(f"{url}: download interrupted at {got} of {size} bytes; run the same command again to resume")
    digest = sha256_of(part)
    if digest != sha256:
        part.unlink()
        raise DownloadError(f"{url}: SHA-256 {digest} does not match the registry's {sha256}; the file was discarded")
    os.replace(part, dest)
    return status


def fetch(dataset: Dataset, dest: str | os.PathLike, mirror: str | None = None,
          progress: Callable[[int], None] | None = None) -> dict[str, str]:
    """Fetch every file of ``dataset`` into ``dest``; returns ``{path: status}``."""
    dest = Path(dest)
    base = mirror or dataset.base_url
    scheme = urllib.parse.urlsplit(base).scheme.lower()
    if scheme not in ("http", "https", "ftp", "file"):
        what = "--mirror" if mirror else f"base_url of {dataset.name!r}"
        raise InputError(f"{what} {base!r} is not a URL; expected http://, https://, ftp:// or file://")
    blocker = next((p for p in (dest, *dest.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise InputError(f"{blocker}: is a file, expected a folder to download into")
    results = {}
    for f in dataset.files:
        results[f.path] = download_file(_join(base, f.url), dest / f.path, f.size, f.sha256, progress=progress)
    return results
