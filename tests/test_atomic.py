"""The atomic writer: unique temporary names, the umask, errors that name the user's path."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from evalkit.atomic import atomic_path, check_writable, write_text
from evalkit.errors import InputError


def test_a_users_tmp_file_is_never_touched_and_nothing_is_left(tmp_path):
    mine = tmp_path / "out.csv.tmp"
    mine.write_text("mine\n")
    write_text(tmp_path / "out.csv", "a,b\n")
    assert mine.read_text() == "mine\n" and (tmp_path / "out.csv").read_text() == "a,b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.csv.tmp"]


def test_mode_follows_the_umask_or_the_replaced_file(tmp_path):
    old = os.umask(0o027)
    try:
        write_text(tmp_path / "new.txt", "x")
        (tmp_path / "kept.txt").write_text("old")
        os.chmod(tmp_path / "kept.txt", 0o604)
        write_text(tmp_path / "kept.txt", "new")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "kept.txt").stat().st_mode) == 0o604
    assert (tmp_path / "kept.txt").read_text() == "new"


def test_a_write_error_names_the_users_path_not_the_hidden_temporary(tmp_path):
    target = tmp_path / "scores.csv"
    with pytest.raises(OSError) as info:
        with atomic_path(target) as tmp:
            raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
    assert info.value.filename == str(target) and info.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_a_folder_or_a_file_in_the_way_is_refused_before_writing(tmp_path):
    (tmp_path / "dir.bvh").mkdir()
    with pytest.raises(IsADirectoryError):
        write_text(tmp_path / "dir.bvh", "x")
    assert list((tmp_path / "dir.bvh").iterdir()) == []
    (tmp_path / "file").write_text("mine")
    with pytest.raises(InputError, match="is a file, not a folder"):
        write_text(tmp_path / "file" / "x.txt", "x")
    assert (tmp_path / "file").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.bvh", "file"]


def test_check_writable(tmp_path):
    with pytest.raises(InputError, match=r"unsupported output format '.xlsx'; use .csv, .json"):
        check_writable(tmp_path / "x.xlsx", (".csv", ".json"))
    with pytest.raises(InputError, match="is a folder"):
        check_writable(tmp_path, None)
    with pytest.raises(InputError, match="cannot write in /proc"):
        check_writable("/proc/x.csv", (".csv",))
    assert check_writable(tmp_path / "new" / "deeper" / "x.csv", (".csv",)) == tmp_path / "new" / "deeper" / "x.csv"
    assert list(tmp_path.iterdir()) == []  # checking writes nothing
