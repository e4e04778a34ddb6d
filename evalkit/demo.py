"""``evalkit demo``: both studies of record, end to end, on the bundled data only.

Builds the locomotion-transitions study (original capture vs SMG vs BPMG) and the gesture-speech
study (original vs GMG random / sync / sync+intensity) in a working folder, scores every
stimulus (automatic metrics and, when available, the naturalness discriminator), and writes ONE
REPORT PER STUDY under the study's results folder (``DIR/<study>/results/report/``) plus an index
page ``DIR/index.html`` linking them. The two studies are unrelated (locomotion and gesture), so
no test ever pools their systems.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from evalkit.errors import InputError

STUDIES = ("locomotion-transitions", "gesture-speech")
SYSTEM_NAMES = {
    ("locomotion-transitions", "original"): "original capture",
    ("locomotion-transitions", "smg"): "SMG",
    ("locomotion-transitions", "bpmg"): "BPMG",
    ("gesture-speech", "original"): "original (constructed)",
    ("gesture-speech", "gmg-random"): "GMG random",
    ("gesture-speech", "gmg-sync"): "GMG sync",
    ("gesture-speech", "gmg-sync-intensity"): "GMG sync+intensity",
}
#: Order of the systems for the simulated raters, most preferred first (an ASSUMPTION of the
#: demonstration: original capture best, then the more informed generators; not a result).
SIMULATED_ORDER = {
    "locomotion-transitions": ("original", "bpmg", "smg"),
    "gesture-speech": ("original", "gmg-sync-intensity", "gmg-sync", "gmg-random"),
}
#: Spread of the simulated raters' log-strengths: evenly from +SPREAD (first) to -SPREAD (last).
SIMULATED_SPREAD = 0.8


def studies_root() -> Path:
    """The repository's ``studies/`` folder (the demo runs from a clone)."""
    root = Path(__file__).resolve().parents[1] / "studies"
    if not (root / STUDIES[0] / "pipeline.yaml").exists():
        raise InputError(f"{root}: the study folders are not there; run 'evalkit demo' from a clone of the repository")
    return root


def readable_scores(study: str, scores: pd.DataFrame) -> pd.DataFrame:
    """A study's scores with readable system names (one study only: never pooled)."""
    df = scores.copy()
    df["system"] = [SYSTEM_NAMES.get((study, s), s) for s in df["system"]]
    df.attrs["source"] = f"evalkit demo, study {study} (scored in this run)"
    return df


def simulated_raters(study: str) -> SimulatedRaters:
    """The demo's simulated raters of one study: log-strengths evenly spaced in the assumed order."""
    order = SIMULATED_ORDER[study]
    return SimulatedRaters(dict(zip(order, np.linspace(SIMULATED_SPREAD, -SIMULATED_SPREAD, len(order)).tolist())))


def readable_ratings(study: str, ratings: pd.DataFrame) -> pd.DataFrame:
    """A study's ratings with the readable system names of :func:`readable_scores` (gold checks'
    ``"<system> (identical)"`` too)."""
    suffix = " (identical)"

    def name(s: str) -> str:
        if isinstance(s, str) and s.endswith(suffix):
            return SYSTEM_NAMES.get((study, s[:-len(suffix)]), s[:-len(suffix)]) + suffix
        return SYSTEM_NAMES.get((study, s), s)

    df = ratings.copy()
    for col in ("system_a", "system_b"):
        df[col] = [name(s) for s in df[col]]
    df.attrs = dict(ratings.attrs)
    return df


def simulated_banner(study: str, ratings: pd.DataFrame) -> str:
    """The report's first line when its ratings come from the demo's simulated raters."""
    order = " > ".join(SYSTEM_NAMES.get((study, s), s) for s in SIMULATED_ORDER[study])
    return ("SIMULATED RATINGS: the subjective results in this report come from "
            f"{ratings['participant'].nunique()} simulated raters who took this study's web test "
            "(its pages and answer path, on a temporary database), answering from a Bradley–Terry "
            f"model with an assumed order ({order}); they were not collected from people. The "
            "objective metrics were computed in this run from real motion capture.")


def write_simulated_ratings(ratings: pd.DataFrame, path: Path) -> Path:
    """The simulated answers as CSV with a first column ``data`` = ``simulated`` (read back by
    ``evalkit report``, the report marks everything made from them as simulated)."""
    from evalkit.csvsafe import neutralise_frame
    from reports.io import atomic_write_text

    out = ratings.copy()
    out.insert(0, "data", "simulated")
    numeric = pd.to_numeric(out["raw_answer"], errors="coerce")
    if numeric.notna().all():  # "-2" is a number, not text to neutralise
        out["raw_answer"] = numeric.astype(int)
    return atomic_write_text(path, neutralise_frame(out).to_csv(index=False))


def _study_yaml(study: Path) -> dict:
    import yaml

    from evalkit.textfile import read_utf8_text

    data = yaml.safe_load(read_utf8_text(study / "study.yaml")) or {}
    return data if isinstance(data, dict) else {}


def write_index(out: Path, entries: list[tuple[str, str, Path, str]], *, simulated: bool) -> Path:
    """``out/index.html``: one line per study report (id, title, report path, summary)."""
    from reports.io import atomic_write_text

    items = "\n".join(
        f'<li><a href="{html.escape(p.relative_to(out).as_posix())}">{html.escape(title)}</a> '
        f"<small>({html.escape(sid)})</small><br>{html.escape(summary)}</li>"
        for sid, title, p, summary in entries)
    note = ('<p class="banner"><b>SIMULATED RATINGS</b> in the subjective parts of these reports: '
            "simulated raters took each study's web test; nobody was asked. The objective metrics "
            "are real.</p>" if simulated else "")
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>evalkit demo</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:820px;margin:2rem auto;line-height:1.5}"
            ".banner{background:#fff3cd;padding:.5rem .8rem}li{margin:.8rem 0}</style></head><body>"
            f"{note}<h1>evalkit demo: one report per study</h1><p>The two studies of record are "
            "unrelated (locomotion and gesture), so each has its own report and no test compares "
            f"systems across them.</p><ul>\n{items}\n</ul></body></html>\n")
    return atomic_write_text(out / "index.html", page)


def run_demo(out_dir: str | os.PathLike = "evalkit-demo", jobs: int = 1, ratings_on: bool = True,
             seed: int = 0, progress: Callable[[str], None] | None = print) -> Path:
    """Build both studies under ``out_dir``, write one report per study
    (``out_dir/<study>/results/report/report.html``) and ``out_dir/index.html``; returns the index.

    ``ratings_on``: simulated raters take each study's web test (:func:`collect_simulated_ratings`);
    their answers go to ``out_dir/<study>/results/ratings.simulated.csv`` and into the report,
    which says they are simulated. ``False``: objective reports only.
    """
    from evalkit.pipeline import build_study, copy_study, study_outputs
    from reports.report import build_report

    out = Path(out_dir)
    root = studies_root()
    entries = []
    for i, name in enumerate(STUDIES):
        study = copy_study(root / name, out / name)
        res = build_study(study, progress=progress, jobs=jobs)
        for note in res.notes:
            if progress:
                progress(f"[{name}] {note}")
        _, scores, tables = study_outputs(study)
        scores = readable_scores(name, scores if scores is not None else res.scores)
        meta = _study_yaml(study)
        title = str(meta.get("title") or name)
        ratings, banner = None, None
        if ratings_on:
            if progress:
                progress(f"[{name}] simulated raters taking the web test")
            collected = collect_simulated_ratings(study, simulated_raters(name), seed=seed + i)
            write_simulated_ratings(collected, study / "results" / SIMULATED_RATINGS_FILE)
            ratings = readable_ratings(name, collected)
            banner = simulated_banner(name, collected)
        if progress:
            progress(f"[{name}] writing the report")
        path = build_report(ratings, scores, study / "results" / "report", seed=seed, title=title,
                            banner=banner, extra_tables=tables or None,
                            description=f"Study {name}: {len(scores)} stimuli from "
                                        f"{scores['system'].nunique()} systems, scored in this run.",
                            progress=(lambda m, n=name: progress(f"[{n}] {m}")) if progress else False)
        summary = f"{scores['system'].nunique()} systems: " + ", ".join(dict.fromkeys(scores["system"]))
        if ratings is not None:
            summary += (f". Ratings: SIMULATED, {ratings['participant'].nunique()} simulated raters through "
                        f"the web test, {len(ratings)} answers ({name}/results/{SIMULATED_RATINGS_FILE})")
        entries.append((name, title, path, summary))
    return write_index(out, entries, simulated=ratings_on)


# ---------------------------------------------------------------- simulated raters in the web test

#: Where the demo's simulated answers are written (the file name says what they are).
SIMULATED_RATINGS_FILE = "ratings.simulated.csv"

_CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')
_SRC = re.compile(r'id="stim-(left|right)"[^>]*data-src="/stimulus/([^"]+)"')
_REQUIRED = re.compile(r'data-required-s="([0-9.eE+-]+)"')
_POINT = re.compile(r'<input type="radio" name="answer" value="(-?\d+)"[^>]*><span><kbd>\d+</kbd> ([^<]*)</span>')
_QUESTION = re.compile(r'<legend id="question">(.*?)</legend>', re.S)


@dataclass(frozen=True)
class SimulatedRaters:
    """How the demo's simulated raters answer (a Bradley–Terry model of ONE study's systems).

    ``strengths``: system id -> log-strength (logits; higher = preferred); ``rater_sd``: SD of
    each rater's own offset per system, logits; ``tie_share``: share of "about the same"
    answers; ``strong_share``: share of wins given the scale's strongest point;
    ``viewing_s``: mean seconds a rater spends on a page beyond the clips' playing time.
    """

    strengths: dict[str, float]
    rater_sd: float = 0.3
    tie_share: float = 0.15
    strong_share: float = 0.5
    viewing_s: float = 3.0


def _page(client, url: str):
    r = client.get(url)
    while r.status_code in (301, 302, 303):
        r = client.get(r.location)
    return r


def _demographics_form(fields, rng) -> dict[str, str]:
    """Plausible answers to the study's demographic questions (min/max and options respected)."""
    form = {}
    for f in fields:
        if f.type == "number":
            lo = 18 if f.min is None else f.min
            hi = min(70 if f.max is None else f.max, max(lo, 70))
            form[f.id] = str(int(rng.integers(int(lo), int(hi) + 1)))
        elif f.type == "choice" and f.options:
            form[f.id] = str(f.options[int(rng.integers(len(f.options)))])
        else:
            form[f.id] = ""
    return form


def _credit_viewing(client, n: int, seconds: float) -> None:
    """Move trial ``n``'s shown-at time (kept in the signed session cookie) back by ``seconds``:
    the simulated rater watched the clips for that long instead of the run waiting for it."""
    with client.session_transaction() as sess:
        keys = [k for k, v in sess.items() if isinstance(v, list) and len(v) == 2 and v[0] == n
                and isinstance(v[1], (int, float))]
        if len(keys) != 1:
            raise RuntimeError(f"trial {n}: the web test's session holds no shown-at time to credit")
        sess[keys[0]] = [n, sess[keys[0]][1] - seconds]


def _answer(page: str, systems: tuple[str | None, str | None], bias: dict[str, float],
            raters: SimulatedRaters, top: int, rng) -> int:
    """The simulated rater's raw answer to one trial page (positive = right clip better)."""
    points = {int(v): html.unescape(label.strip()) for v, label in _POINT.findall(page)}
    if not points:
        raise RuntimeError("a trial page without the points of a comparison scale")
    q = _QUESTION.search(page)
    question = html.unescape(q.group(1)) if q else ""
    asked = [v for v, label in points.items() if label and f"“{label}”" in question]
    if asked:  # an attention check: the page says which answer to give, and the rater reads it
        return asked[0]
    left, right = systems
    if left == right:  # the same clip on both sides (a gold check): about the same
        return 0
    if rng.random() < raters.tie_share:
        return 0
    d = bias[right] - bias[left]
    right_wins = rng.random() < 1.0 / (1.0 + np.exp(-d))
    mag = top if rng.random() < raters.strong_share else 1
    return mag if right_wins else -mag


def collect_simulated_ratings(study_dir: str | os.PathLike, raters: SimulatedRaters, *, seed: int = 0,
                              n_raters: int | None = None) -> pd.DataFrame:
    """SIMULATED ratings of ONE study, collected through its web test's own answer path.

    The study's app is built with :func:`webtest.app.create_app` on a temporary SQLite
    database; each simulated participant goes through it with the Flask test client as a person
    would (landing, consent, demographics, instructions, every practice, check and comparison
    page, answers posted to the trial URLs) and the answers are read back with
    :func:`webtest.export.ratings_long`. The answers follow ``raters`` (a Bradley–Terry model
    with per-rater offsets); attention checks are answered as the page asks, identical pairs
    "about the same". ``n_raters``: participants (default: the design's number of cells).

    Returns the long-format ratings table (``webtest.db.RATINGS_COLUMNS``), marked simulated
    (``attrs["simulated"]``, ``attrs["notes"]``).
    """
    import secrets
    import tempfile

    from reports.simulate import SIMULATED_NOTE
    from webtest.app import create_app
    from webtest.config import WebtestConfig
    from webtest.export import ratings_long

    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="evalkit-simulated-raters-") as tmp:
        config = WebtestConfig(study_dir=Path(study_dir), database_url=f"sqlite:///{Path(tmp) / 'ratings.sqlite'}",
                               secret_key=secrets.token_hex(32))
        app = create_app(config=config)
        st = app.extensions["webtest"]
        study = st.study
        if study.scale.kind != "comparison":
            raise InputError(f"{study_dir}: simulated raters answer comparison scales only, not {study.scale.name}")
        unknown = sorted({s.system for s in study.stimuli} - set(raters.strengths))
        if unknown:
            raise InputError(f"{study_dir}: no simulated strength for system(s) {', '.join(unknown)}")
        system_of = {names["file"]: study_stim.system for study_stim in study.stimuli
                     for sid, names in st.stimulus_urls.items() if sid == study_stim.id}
        top = study.scale.maximum
        systems = sorted(raters.strengths)
        for _ in range(n_raters or study.design.participants):
            offsets = rng.normal(0.0, raters.rater_sd, len(systems))
            bias = {s: raters.strengths[s] + o for s, o in zip(systems, offsets)}
            client = app.test_client()
            token = _CSRF.search(client.get("/").get_data(as_text=True)).group(1)
            client.post("/start", data={"csrf_token": token})
            r = client.post("/consent", data={"csrf_token": token, "choice": "agree"})
            if "/stop" in (r.location or ""):
                break  # the design is full
            if study.demographics:
                client.post("/demographics", data={"csrf_token": token,
                                                   **_demographics_form(study.demographics, rng)})
            client.post("/instructions", data={"csrf_token": token})
            r = client.get("/trial")
            while r.status_code in (302, 303) and "/trial/" in (r.location or ""):
                n = int(r.location.rsplit("/", 1)[1])
                page = _page(client, f"/trial/{n}").get_data(as_text=True)
                shown = dict(_SRC.findall(page))
                required = float(_REQUIRED.search(page).group(1))
                _credit_viewing(client, n, required + float(rng.gamma(2.0, raters.viewing_s / 2.0)))
                value = _answer(page, (system_of.get(shown.get("left")), system_of.get(shown.get("right"))),
                                bias, raters, top, rng)
                a = client.post(f"/trial/{n}", json={"answer": value}, headers={"X-CSRFToken": token})
                if a.status_code != 200:
                    raise RuntimeError(f"the web test refused a simulated answer to trial {n}: "
                                       f"{a.status_code} {a.get_data(as_text=True)[:200]}")
                r = client.get("/trial")
        ratings = ratings_long(st.db, study.id)
        st.db.dispose()
    ratings.attrs.update(simulated=True, notes=[SIMULATED_NOTE],
                         source=f"simulated raters answering the study's web test ({len(ratings)} answers)")
    return ratings
