"""A throwaway PostgreSQL server on loopback for the webtest load benchmark.

Uses Debian's binaries (``/usr/lib/postgresql/<v>/bin``); when run as root the cluster belongs
to the ``postgres`` user. The data directory is deleted on exit.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Iterator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return os.path.dirname(found[-1]) if found else None


@contextlib.contextmanager
def throwaway_postgres(max_connections: int = 200) -> Iterator[str]:
    """Start a PostgreSQL server on 127.0.0.1; yields a SQLAlchemy URL to database ``bench``."""
    bindir = pg_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL binaries not found under /usr/lib/postgresql (apt-get install postgresql)")
    data = tempfile.mkdtemp(prefix="evalkit-bench-pg-")
    port = _free_port()
    as_root = os.geteuid() == 0

    def run(cmd: list[str]) -> None:
        if as_root:
            uid = pwd.getpwnam("postgres").pw_uid
            subprocess.run(cmd, check=True, capture_output=True, user=uid)
        else:
            subprocess.run(cmd, check=True, capture_output=True)

    if as_root:
        shutil.chown(data, "postgres")
    try:
        run([f"{bindir}/initdb", "-D", data, "-A", "trust", "-U", "postgres"])
        opts = f"-p {port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections={max_connections} -c fsync=on"
        run([f"{bindir}/pg_ctl", "-D", data, "-o", opts, "-l", f"{data}/log", "-w", "start"])
        url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        from sqlalchemy import create_engine, text

        eng = create_engine(url, isolation_level="AUTOCOMMIT")
        for _ in range(50):
            try:
                with eng.connect() as c:
                    c.execute(text("CREATE DATABASE bench"))
                break
            except Exception:  # noqa: BLE001 - the server may still be starting
                time.sleep(0.1)
        eng.dispose()
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/bench"
    finally:
        with contextlib.suppress(Exception):
            run([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"])
        shutil.rmtree(data, ignore_errors=True)
