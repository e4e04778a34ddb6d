"""``evalkit data list`` / ``evalkit data fetch NAME``: public datasets, checksummed and resumable."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evalkit.cli.common import add_command
from evalkit.errors import InputError


def register(sub) -> None:
    p = add_command(sub, None, "data", help="list and fetch public motion datasets",
                       description="List and fetch public datasets (CMU motion capture subsets) with "
                                   "SHA-256 checksums and resumable downloads.")
    dsub = p.add_subparsers(dest="data_command", metavar="ACTION")
    lp = add_command(dsub, run_list, "list", help="list the datasets that can be fetched",
                         description="List the datasets of the registry: name, download size and what "
                                     "they hold.")
    lp.add_argument("--registry", help="a registry YAML instead of the built-in one")
    fp = add_command(dsub, run_fetch, "fetch", help="download a dataset (resumes interrupted downloads)",
                         description="Download every file of a dataset into DEST/NAME, resuming partial "
                                     "files and verifying sizes and SHA-256 checksums.")
    fp.add_argument("name", help="dataset name (see 'evalkit data list')")
    fp.add_argument("--dest", default=os.environ.get("EVALKIT_DATA_DIR", str(Path.home() / ".cache" / "evalkit" / "data")),
                    help="folder to download into (default: $EVALKIT_DATA_DIR or ~/.cache/evalkit/data)")
    fp.add_argument("--mirror", default=os.environ.get("EVALKIT_DATA_MIRROR"),
                    help="base URL replacing the dataset's own (default: $EVALKIT_DATA_MIRROR)")
    fp.add_argument("--registry", help="a registry YAML instead of the built-in one")


def run_list(args: argparse.Namespace) -> int:
    from evalkit.datasets import load_registry

    for name, d in load_registry(args.registry).items():
        print(f"{name:28s} {d.total_bytes / 1e6:7.1f} MB  {d.description}")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evalkit.datasets import fetch, load_registry

    reg = load_registry(args.registry)
    if args.name not in reg:
        raise InputError(f"unknown dataset {args.name!r}; available: {', '.join(reg)}")
    ds = reg[args.name]
    dest = Path(args.dest) / ds.name
    with tqdm(total=ds.total_bytes, unit="B", unit_scale=True, desc=ds.name, disable=None) as bar:
        results = fetch(ds, dest, mirror=args.mirror, progress=bar.update)
    for path, status in results.items():
        print(f"{status:10s} {dest / path}")
    print(f"licence: {ds.licence}")
    return 0
