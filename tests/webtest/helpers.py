"""Helpers shared by the webtest tests (import as ``tests.webtest.helpers``)."""

from __future__ import annotations

import copy
import os
import re
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "studies" / "example-cmu"
PG_URL = os.environ.get("EVALKIT_TEST_DATABASE_URL")

# A small study: 2 items x 2 systems of real CMU capture, trimmed to 0.2 s so timing checks are
# quick; "jitter" is the documented corruption. Tests change it with make_study(**changes).
BASE_STUDY = {
    "id": "mini",
    "title": "Mini study",
    "description": "A *tiny* study.",
    "consent": "Please **agree**.",
    "instructions": "Watch both clips.",
    "scale": "ccr7",
    "stimuli": [
        {"id": "walk.orig", "item": "walk", "system": "original", "file": "sample:cmu/16_15.amc", "trim": [0.0, 0.2]},
        {"id": "walk.jit", "item": "walk", "system": "jitter", "file": "sample:cmu/16_15.amc", "trim": [0.0, 0.2],
         "transform": [{"jitter": {"deg": 3, "seed": 1}}]},
        {"id": "run.orig", "item": "run", "system": "original", "file": "sample:cmu/09_06-run.amc", "trim": [0.0, 0.2]},
        {"id": "run.jit", "item": "run", "system": "jitter", "file": "sample:cmu/09_06-run.amc", "trim": [0.0, 0.2],
         "transform": [{"jitter": {"deg": 3, "seed": 2}}]},
    ],
    "pairs": [["original", "jitter"]],
    "design": {"method": "full", "participants": 4, "seed": 3},
    "playback": {"must_end": False, "min_time_s": 0},
}


def deep_update(base: dict, changes: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in changes.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_update(out[k], v)
        elif v is None:
            out.pop(k, None)
        else:
            out[k] = copy.deepcopy(v)
    return out


ADMIN_PASSWORD = "correct horse battery"


CSRF_RE = re.compile(r'name="csrf-token" content="([^"]+)"')


def csrf(html: str) -> str:
    m = CSRF_RE.search(html)
    assert m, "page has no CSRF token"
    return m.group(1)


class Participant:
    """Drives one participant through the flow with a Flask test client."""

    def __init__(self, client, query: str = ""):
        self.c = client
        r = self.c.get("/" + query)
        self.token = csrf(r.get_data(as_text=True))
        self.landing = r

    def start(self, form: dict | None = None):
        return self.c.post("/start", data={"csrf_token": self.token, **(form or {})})

    def consent(self, choice="agree"):
        return self.c.post("/consent", data={"csrf_token": self.token, "choice": choice})

    def to_trials(self, form: dict | None = None, demographics: dict | None = None):
        self.start(form)
        self.consent()
        r = self.c.get("/demographics")
        if r.status_code == 200:
            data = demographics or {"age": "30", "experience": "none"}
            r = self.c.post("/demographics", data={"csrf_token": self.token, **data})
            assert r.status_code == 302, r.get_data(as_text=True)
        self.c.post("/instructions", data={"csrf_token": self.token})
        return self.c.get("/trial")

    def show(self, n: int):
        return self.c.get(f"/trial/{n}")

    def answer(self, n: int, value, **extra):
        return self.c.post(f"/trial/{n}", json={"answer": value, **extra}, headers={"X-CSRFToken": self.token})

    def complete(self, value=1, wait: float = 0.0) -> list[int]:
        """Answer every trial in order; returns the positions answered."""
        done = []
        r = self.c.get("/trial")
        while r.status_code == 302 and "/trial/" in (r.location or ""):
            n = int(r.location.rsplit("/", 1)[1])
            assert self.show(n).status_code == 200
            if wait:
                time.sleep(wait)
            a = self.answer(n, value)
            assert a.status_code == 200, a.get_json()
            done.append(n)
            r = self.c.get("/trial")
        return done




# -- pictures of the 3-D renderer (static/stage.js) ------------------------------------------
def figure_mask(img):
    """Pixels of the (default blue, shaded) mannequin in an RGB image: blue well above red. The
    ground, grid, shadows and background are greys (blue - red < 27); checked against a render
    without the body, this finds 97 % of its pixels and nothing else."""
    import numpy as np

    img = np.asarray(img, int)
    return (img[..., 2] - img[..., 0]) > 30


def png_rgb(png: bytes):
    """A PNG (e.g. a Playwright screenshot) as an (h, w, 3) int array."""
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
