"""`evalkit data fetch` against a real HTTP server on loopback (no internet needed)."""

from __future__ import annotations

import hashlib
import http.server
import threading
from functools import partial
from pathlib import Path

import pytest
import yaml

from evalkit.cli import main
from evalkit.datasets import DownloadError, download_file, fetch, load_registry


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files with HTTP Range support; can cut a response short to simulate a dropped line."""

    cut_after: dict = {}  # url path -> bytes to send before dropping the connection (once)
    requests: list = []

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        rng = self.headers.get("Range")
        RangeHandler.requests.append((self.path, rng))
        if rng:
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        cut = RangeHandler.cut_after.pop(self.path, None)
        if cut is not None:
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.connection.shutdown(2)
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "srv"
    root.mkdir()
    handler = partial(RangeHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    RangeHandler.requests = []
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_resumes_an_interrupted_download_and_verifies(server, tmp_path, cmu_dir):
    root, url = server
    src = (cmu_dir / "16_15.amc").read_bytes()
    (root / "16").mkdir()
    (root / "16" / "16_15.amc").write_bytes(src)
    sha = hashlib.sha256(src).hexdigest()
    dest = tmp_path / "out" / "16_15.amc"
    RangeHandler.cut_after["/16/16_15.amc"] = 100_000
    with pytest.raises(DownloadError, match="run the same command again to resume"):
        download_file(f"{url}/16/16_15.amc", dest, len(src), sha, timeout=5)
    part = dest.with_name("16_15.amc.part")
    assert part.stat().st_size == 100_000 and not dest.exists()
    assert download_file(f"{url}/16/16_15.amc", dest, len(src), sha, timeout=5) == "resumed"
    assert dest.read_bytes() == src and not part.exists()
    assert RangeHandler.requests[-1] == ("/16/16_15.amc", "bytes=100000-")
    assert download_file(f"{url}/16/16_15.amc", dest, len(src), sha) == "present"


def test_checksum_mismatch_is_an_error_and_the_file_is_dropped(server, tmp_path):
    root, url = server
    (root / "f.bin").write_bytes(b"x" * 1000)
    dest = tmp_path / "f.bin"
    with pytest.raises(DownloadError, match="SHA-256"):
        download_file(f"{url}/f.bin", dest, 1000, "0" * 64)
    assert not dest.exists() and not dest.with_name("f.bin.part").exists()
    with pytest.raises(DownloadError, match="404"):
        download_file(f"{url}/missing.bin", dest, 10, "0" * 64)


def test_builtin_registry_checksums_match_the_cmu_files(server, tmp_path):
    """Serve the CMU originals under CMU's URL layout and fetch the real registry entry."""
    from tests.conftest import shared_data

    root, url = server
    src = shared_data("mocap", "cmu-asfamc")
    layout = {"16/16.asf": "16.asf", "16/16_15.amc": "16_15.amc", "07/07.asf": "07-walk.asf",
              "07/07_05.amc": "07_05-walk.amc", "09/09.asf": "09-run.asf", "09/09_06.amc": "09_06-run.amc"}
    for rel, name in layout.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((src / name).read_bytes())
    ds = load_registry()["cmu-locomotion"]
    results = fetch(ds, tmp_path / "cmu", mirror=url)
    assert set(results.values()) == {"downloaded"} and len(results) == 6
    from evalkit.motion import load_motion

    m = load_motion(tmp_path / "cmu" / "07_05.amc")
    assert m.n_frames == 517


def test_cli_fetch_list_and_errors(server, tmp_path, capsys):
    root, url = server
    (root / "a.txt").write_bytes(b"hello")
    reg = tmp_path / "reg.yaml"
    reg.write_text(yaml.safe_dump({"tiny": {"description": "test", "licence": "CC0", "base_url": "http://example.invalid/",
                                            "files": [{"url": "a.txt", "path": "a.txt", "size": 5,
                                                       "sha256": hashlib.sha256(b"hello").hexdigest()}]}}))
    assert main(["data", "list", "--registry", str(reg)]) == 0
    assert "tiny" in capsys.readouterr().out
    assert main(["data", "fetch", "tiny", "--registry", str(reg), "--dest", str(tmp_path / "d"), "--mirror", url]) == 0
    assert (tmp_path / "d" / "tiny" / "a.txt").read_bytes() == b"hello"
    assert main(["data", "fetch", "nope", "--registry", str(reg)]) == 2
    assert "unknown dataset" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("tiny: {files: [{url: a}]}\n")
    assert main(["data", "list", "--registry", str(bad)]) == 2
    assert "missing path, size, sha256" in capsys.readouterr().err


def test_cli_bad_registry_dest_and_mirror_are_one_line_errors(tmp_path, capsys):
    reg = tmp_path / "reg.yaml"
    reg.write_bytes(b"tiny:\n  description: caf\xe9\n")
    assert main(["data", "list", "--registry", str(reg)]) == 2
    assert "reg.yaml, line 2: byte 0xe9 is not UTF-8; expected UTF-8 text" in capsys.readouterr().err
    entry = {"description": "t", "licence": "CC0", "base_url": "http://127.0.0.1:9/",
             "files": [{"url": "a.txt", "path": "a.txt", "size": "abc", "sha256": "0" * 64}]}
    reg.write_text(yaml.safe_dump({"tiny": entry}))
    assert main(["data", "list", "--registry", str(reg)]) == 2
    assert "tiny.files[0].size: expected a whole number of bytes, found 'abc'" in capsys.readouterr().err
    entry["files"][0]["size"] = 5
    reg.write_text(yaml.safe_dump({"tiny": entry}))
    afile = tmp_path / "clip.bvh"
    afile.write_text("mine\n")
    assert main(["data", "fetch", "tiny", "--registry", str(reg), "--dest", str(afile)]) == 2
    assert "clip.bvh: is a file, expected a folder" in capsys.readouterr().err
    assert afile.read_text() == "mine\n"
    assert main(["data", "fetch", "tiny", "--registry", str(reg), "--dest", str(tmp_path / "d"),
                 "--mirror", "notaurl"]) == 2
    assert "--mirror 'notaurl' is not a URL" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
