"""Study pipelines: ``pipeline.yaml`` -> stimuli, objective scores, tables, a prepared web test.

A study folder (``studies/<name>/``) holds ``study.yaml`` (the web test, see ``webtest``) and
``pipeline.yaml`` (how its stimuli are made). ``build_study(DIR)`` runs the pipeline:

1. generate the stimuli with the reference generators into ``DIR/stimuli/`` (BVH + manifest
   JSON each; file names are fixed by ``pipeline.yaml`` so ``study.yaml`` can list them);
2. score every stimulus with the automatic metrics (and the naturalness model when one is
   available) into ``DIR/results/scores.csv``;
3. write the generator's objective tables (transition response/duration, graph statistics,
   synchrony per variant) into ``DIR/results/``;
4. validate ``study.yaml`` and precompute the browser stimuli (``webtest.prepare_study``).

Two kinds exist, matching the studies of record: ``locomotion-transitions`` (original capture
vs SMG vs BPMG) and ``gesture-speech`` (original vs GMG random / sync / sync+intensity).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd
import yaml

from evalkit.atomic import atomic_path, write_text
from evalkit.errors import ConfigError, EvalkitError, InputError, yaml_error
from evalkit.yamlfile import key_lines

PIPELINE_FILE = "pipeline.yaml"


# -- paths -------------------------------------------------------------------------------
def resolve_path(spec: str, base: Path) -> Path:
    """``sample:cmu/16_15.amc`` -> the bundled sample; a relative path is taken from ``base``."""
    if spec.startswith("sample:"):
        from evalkit.data import sample_path

        return sample_path(*spec[len("sample:"):].split("/"))
    p = Path(os.path.expandvars(os.path.expanduser(spec)))
    return p if p.is_absolute() else (base / p)


def _atomic_text(path: Path, text: str) -> None:
    write_text(path, text)


def _atomic_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


# -- configuration -----------------------------------------------------------------------
class _Yaml:
    """Errors about ``pipeline.yaml`` as ``FILE, line N: key.path: problem`` (lines from the YAML
    node marks; ``key path`` as in study.yaml errors, e.g. ``requests[0].to``)."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.lines = key_lines(text)

    def error(self, kp: tuple, message: str) -> ConfigError:
        line = next((self.lines[kp[:n]] for n in range(len(kp), 0, -1) if kp[:n] in self.lines), None)
        keys = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in kp).lstrip(".")
        return ConfigError(f"{self.path}{f', line {line}' if line else ''}: {keys or '(top level)'}: {message}")

    def get(self, d: Mapping, kp: tuple, key: str, kind: type | tuple, default: Any = ...) -> Any:
        if key not in d:
            if default is ...:
                raise self.error(kp + (key,), f"missing; add it to {PIPELINE_FILE}")
            return default
        v = d[key]
        if not isinstance(v, kind) or isinstance(v, bool) and kind in (int, float, (int, float)):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise self.error(kp + (key,), f"expected {names}, got {type(v).__name__} {v!r}")
        return v

    def number(self, d: Mapping, kp: tuple, key: str, default: float, *, positive: bool = False) -> float:
        v = float(self.get(d, kp, key, (int, float), default))
        if not math.isfinite(v) or not (v > 0 if positive else v >= 0):
            raise self.error(kp + (key,), f"expected a {'positive' if positive else 'non-negative'} "
                                          f"finite number, got {v:g}")
        return v

    def known(self, m: Mapping, kp: tuple, allowed: tuple[str, ...]) -> None:
        """A key of ``m`` that is not in ``allowed`` (a typo such as ``treshold``) is an error."""
        import difflib

        for k in m:
            if k not in allowed:
                near = difflib.get_close_matches(str(k), allowed, n=1)
                hint = f"did you mean {near[0]!r}?" if near else f"use {', '.join(allowed)}"
                raise self.error(kp + (k,), f"unknown key {k!r}; {hint}")

    def file(self, kp: tuple, spec: Any, base: Path) -> str:
        if not isinstance(spec, str):
            raise self.error(kp, f"expected a file path, got {type(spec).__name__} {spec!r}")
        try:
            path = resolve_path(spec, base)
        except (FileNotFoundError, EvalkitError) as exc:
            raise self.error(kp, str(exc)) from None
        if not path.exists():
            raise self.error(kp, f"{path} not found")
        return spec


@dataclass(frozen=True)
class TransitionRequest:
    """One item of the locomotion study: a gait change requested at ``at_s`` seconds."""

    item: str
    origin: str
    target: str
    at_s: float


@dataclass(frozen=True)
class LocomotionPipeline:
    """``kind: locomotion-transitions`` (see ``studies/locomotion-transitions/pipeline.yaml``)."""

    clips: Mapping[str, str]
    requests: tuple[TransitionRequest, ...]
    fps: float = 60.0
    threshold: float = 0.3
    profile: str = "sp4a"
    lead_s: float = 1.0
    tail_s: float = 2.0
    methods: tuple[str, ...] = ("smg", "bpmg")
    measure: bool = True
    kind: str = "locomotion-transitions"


@dataclass(frozen=True)
class GesturePipeline:
    """``kind: gesture-speech`` (see ``studies/gesture-speech/pipeline.yaml``)."""

    gestures: tuple[str, ...]
    speech: Mapping[str, str]
    variants: tuple[str, ...] = ("random", "sync", "sync+intensity")
    threshold: float = 0.6
    seed: int = 0
    original: bool = True
    rules: str | None = None
    kind: str = "gesture-speech"


def load_pipeline(study_dir: str | os.PathLike) -> LocomotionPipeline | GesturePipeline:
    """Read and validate ``<study_dir>/pipeline.yaml``; errors name the file, line, key path and fix.

    Values are checked here (types, ranges, that clip/gesture/speech/rules files exist), so a
    build never fails later on a value of this file.
    """
    from evalkit.textfile import read_utf8_text

    study = Path(study_dir)
    path = study / PIPELINE_FILE
    if not path.exists():
        raise ConfigError(f"{path}: not found; a study folder needs a {PIPELINE_FILE} to build its stimuli")
    text = read_utf8_text(path)
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc, text) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with a 'kind' key")
    y = _Yaml(path, text)
    kind = y.get(data, (), "kind", str)
    if kind == "locomotion-transitions":
        return _locomotion_pipeline(y, data, study)
    if kind == "gesture-speech":
        return _gesture_pipeline(y, data, study)
    raise y.error(("kind",), f"unknown {kind!r}; use locomotion-transitions or gesture-speech")


def _locomotion_pipeline(y: _Yaml, data: Mapping, study: Path) -> LocomotionPipeline:
    """The checked ``kind: locomotion-transitions`` pipeline of ``data`` (a parsed pipeline.yaml)."""
    from evalkit.synth.bodyparts import SPLIT_PROFILES

    y.known(data, (), ("kind", "clips", "requests", "fps", "threshold", "profile", "lead_s", "tail_s",
                       "methods", "measure"))

    clips = y.get(data, (), "clips", dict)
    if not clips:
        raise y.error(("clips",), "empty; name at least one clip (alias: file)")
    for alias, spec in clips.items():
        y.file(("clips", alias), spec, study)
    reqs = []
    for k, r in enumerate(y.get(data, (), "requests", list)):
        kp = ("requests", k)
        if not isinstance(r, dict):
            raise y.error(kp, "expected a mapping with item, from, to, at_s")
        y.known(r, kp, ("item", "from", "to", "at_s"))
        origin, target = y.get(r, kp, "from", str), y.get(r, kp, "to", str)
        for side, name in (("from", origin), ("to", target)):
            if name not in clips:
                raise y.error(kp + (side,), f"{name!r} is not one of clips: {', '.join(map(str, clips))}")
        reqs.append(TransitionRequest(y.get(r, kp, "item", str), origin, target,
                                      y.number(r, kp, "at_s", ...)))
    if not reqs:
        raise y.error(("requests",), "empty; list at least one transition request")
    methods = tuple(y.get(data, (), "methods", list, ["smg", "bpmg"]))
    bad = [m for m in methods if m not in ("smg", "bpmg")]
    if bad or not methods:
        raise y.error(("methods",), f"unknown {', '.join(map(str, bad))}; use smg and/or bpmg" if bad
                      else "empty; use smg and/or bpmg")
    profile = str(y.get(data, (), "profile", str, "sp4a"))
    if profile not in SPLIT_PROFILES:
        raise y.error(("profile",), f"unknown {profile!r}; use one of {', '.join(SPLIT_PROFILES)}")
    return LocomotionPipeline(
        clips={str(k): str(v) for k, v in clips.items()}, requests=tuple(reqs),
        fps=y.number(data, (), "fps", 60.0, positive=True),
        threshold=y.number(data, (), "threshold", 0.3, positive=True),
        profile=profile,
        lead_s=y.number(data, (), "lead_s", 1.0),
        tail_s=y.number(data, (), "tail_s", 2.0),
        methods=methods, measure=bool(y.get(data, (), "measure", bool, True)),
    )


def _gesture_pipeline(y: _Yaml, data: Mapping, study: Path) -> GesturePipeline:
    """The checked ``kind: gesture-speech`` pipeline of ``data`` (a parsed pipeline.yaml)."""
    y.known(data, (), ("kind", "gestures", "speech", "variants", "threshold", "seed", "original", "rules"))
    gestures = y.get(data, (), "gestures", (str, list))
    gestures = (gestures,) if isinstance(gestures, str) else tuple(gestures)
    if not gestures:
        raise y.error(("gestures",), "empty; give gesture clips or folders")
    for k, g in enumerate(gestures):
        y.file(("gestures", k) if isinstance(data["gestures"], list) else ("gestures",), g, study)
    speech = y.get(data, (), "speech", dict)
    if not speech:
        raise y.error(("speech",), "empty; name at least one utterance (item: file)")
    for item, spec in speech.items():
        y.file(("speech", item), spec, study)
    variants = tuple(y.get(data, (), "variants", list, ["random", "sync", "sync+intensity"]))
    bad = [v for v in variants if v not in ("random", "sync", "sync+intensity")]
    if bad or not variants:
        raise y.error(("variants",), f"unknown {', '.join(map(str, bad))}; use random, sync, sync+intensity"
                      if bad else "empty; use random, sync and/or sync+intensity")
    rules = y.get(data, (), "rules", str, None)
    if rules is not None:
        y.file(("rules",), rules, study)
    seed = y.get(data, (), "seed", int, 0)
    if seed < 0:
        raise y.error(("seed",), f"expected a non-negative integer, got {seed}")
    return GesturePipeline(
        gestures=gestures, speech={str(k): str(v) for k, v in speech.items()}, variants=variants,
        threshold=y.number(data, (), "threshold", 0.6, positive=True),
        seed=seed, original=bool(y.get(data, (), "original", bool, True)), rules=rules,
    )


# -- results -----------------------------------------------------------------------------
@dataclass
class BuildResult:
    """What a build produced (paths) and its objective tables (DataFrames, computed now)."""

    study_dir: Path
    kind: str
    stimuli: list[Path] = field(default_factory=list)
    scores: pd.DataFrame | None = None
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _log(progress: Callable[[str], None] | None, msg: str) -> None:
    if progress:
        progress(msg)


# -- locomotion --------------------------------------------------------------------------
def _build_locomotion(p: LocomotionPipeline, study: Path, log) -> BuildResult:
    from evalkit.motion import write_bvh
    from evalkit.synth import ClipSet, build_bpmg, build_smg, synthesize_transition, write_stimulus

    res = BuildResult(study, p.kind)
    stim_dir = study / "stimuli"
    paths = {alias: resolve_path(spec, study) for alias, spec in p.clips.items()}
    for alias, path in paths.items():
        if not path.exists():
            raise ConfigError(f"{study / PIPELINE_FILE}: clips.{alias}: {path} not found")
    log(f"preparing {len(paths)} clips at {p.fps:g} fps")
    aliases = list(paths)
    cs = ClipSet.from_clips([paths[a] for a in aliases], fps=p.fps)
    idx = {a: i for i, a in enumerate(aliases)}
    graphs = {}
    if "smg" in p.methods:
        log(f"building the standard motion graph (threshold {p.threshold} m)")
        graphs["smg"] = build_smg(cs, threshold=p.threshold)
    if "bpmg" in p.methods:
        log(f"building body part motion graphs (profile {p.profile}, threshold {p.threshold} m)")
        graphs["bpmg"] = build_bpmg(cs, profile=p.profile, threshold=p.threshold)
    rows = []
    for req in p.requests:
        a, b = idx[req.origin], idx[req.target]
        for method, g in graphs.items():
            motion, manifest = synthesize_transition(g, a, b, req.at_s, lead_s=p.lead_s, tail_s=p.tail_s,
                                                     name=f"{req.item}.{method}")
            out = stim_dir / f"{req.item}.{method}.bvh"
            write_stimulus(motion, manifest, out)
            res.stimuli.append(out)
            tr = manifest.get("transition", {})
            rows.append({"item": req.item, "method": method.upper(), "from": req.origin, "to": req.target,
                         "request_s": req.at_s, "response_frames": tr.get("response_frames"),
                         "duration_frames": tr.get("duration_frames"), "cost_m": tr.get("cost_m")})
        # "original": unedited capture of the origin gait around the request, same skeleton/fps
        src = cs.clips[a]
        f0 = max(0, int(round((req.at_s - p.lead_s) * cs.fps)))
        f1 = min(src.n_frames, int(round((req.at_s + p.tail_s) * cs.fps)) + 1)
        orig = src.slice(f0, f1).with_(name=f"{req.item}.original")
        out = stim_dir / f"{req.item}.original.bvh"
        write_bvh(orig, out)
        _atomic_text(out.with_suffix(".json"), json.dumps({
            "format": "evalkit.stimulus/1", "method": "original",
            "note": "unedited capture of the origin gait around the request time (the capture has no "
                    "transition of its own); same skeleton and frame rate as the synthesized stimuli",
            "source": str(paths[req.origin].name), "frames": [f0, f1], "fps": cs.fps,
            "acknowledgement": "The data used in this project was obtained from mocap.cs.cmu.edu. "
                               "The database was created with funding from NSF EIA-0196217.",
        }, indent=2))
        res.stimuli.append(out)
    res.tables["transitions_requested"] = pd.DataFrame(rows)
    if p.measure:
        from evalkit.synth.measure import measure_transitions, write_measurements

        log("measuring transition response and duration for every ordered pair of clips")
        m = measure_transitions(cs, threshold=p.threshold, profile=p.profile)
        write_measurements(m, study / "results" / "measurements")
        for name in ("pairs", "maneuverability", "stats", "skate"):
            res.tables[f"transition_{name}"] = m.tables()[name]
    return res


# -- gesture -----------------------------------------------------------------------------
GMG_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _build_gesture(p: GesturePipeline, study: Path, log) -> BuildResult:
    from evalkit.motion import write_bvh
    from evalkit.synth.gmg import (build_gesture_database, build_gmg, cmu_gesture_database, gmg_statistics,
                                   pooled_objective, save_result, speech_input, synthesize, variant_slug,
                                   blind_order, objective_table)
    from evalkit.synth.gmg.db import is_bundled_cmu

    res = BuildResult(study, p.kind)
    stim_dir = study / "stimuli"
    stim_dir.mkdir(parents=True, exist_ok=True)
    gesture_paths = [resolve_path(g, study) for g in p.gestures]
    for g in gesture_paths:
        if not g.exists():
            raise ConfigError(f"{study / PIPELINE_FILE}: gestures: {g} not found")
    rules = None
    if p.rules:
        from evalkit.gesture_speech import load_rules

        rules = load_rules(resolve_path(p.rules, study))
    if is_bundled_cmu(gesture_paths):
        log("building the gesture database from the bundled CMU capture (not conversational; noted in outputs)")
        db = cmu_gesture_database()
    else:
        log(f"building the gesture database from {', '.join(str(g) for g in gesture_paths)}")
        db = build_gesture_database(gesture_paths)
    if db.note:
        res.notes.append(db.note)
    log(f"{len(db)} gesture phrases; building the gesture motion graph (threshold {p.threshold})")
    gmg = build_gmg(db, threshold=p.threshold)
    res.tables["gmg_stats"] = gmg_statistics(db, thresholds=GMG_THRESHOLDS)
    results = []
    for item, spec in p.speech.items():
        wav = resolve_path(spec, study)
        if not wav.exists():
            raise ConfigError(f"{study / PIPELINE_FILE}: speech.{item}: {wav} not found")
        audio = stim_dir / f"{item}.wav"
        shutil.copyfile(wav, audio)
        speech = speech_input(audio)
        for variant in p.variants:
            name = f"{item}.gmg-{variant_slug(variant)}"
            result = synthesize(gmg, speech, variant=variant, rules=rules, seed=p.seed, name=name)
            save_result(result, stim_dir)
            res.stimuli.append(stim_dir / f"{name}.bvh")
            results.append(result)
        if p.original:
            # CONSTRUCTED "original": captured gestures played unchanged with this utterance (no
            # recording of these gestures with this speech exists).
            rec_name = db.recording_names[len(res.stimuli) % len(db.recording_names)]
            rec = db.recordings[rec_name]
            n = min(rec.n_frames, max(2, int(round(speech.duration * rec.fps))))
            out = stim_dir / f"{item}.original.bvh"
            write_bvh(rec.slice(0, n).with_(name=f"{item}.original"), out)
            _atomic_text(out.with_suffix(".json"), json.dumps({
                "format": "evalkit.stimulus/1", "method": "original", "constructed": True,
                "note": "CONSTRUCTED: captured gestures played unchanged with this utterance; the gestures were "
                        "not performed with this speech (no open take with both exists). " + (db.note or ""),
                "source": rec_name, "frames": [0, n], "fps": rec.fps, "audio": audio.name,
            }, indent=2))
            res.stimuli.append(out)
    res.tables["gmg_objective"] = (pd.concat({r: pooled_objective(results, rules, r) for r in ("planned", "realised", "analysed")},
                                             names=["reading"]).reset_index() if results else pd.DataFrame())
    res.tables["gmg_blind_order"] = blind_order(objective_table(results)) if results else pd.DataFrame()
    return res


# -- scoring -----------------------------------------------------------------------------
def score_stimuli(stimuli: list[Path], log, jobs: int = 1) -> pd.DataFrame:
    """Automatic metrics (and naturalness, when a model is available) for each stimulus, with
    ``item`` and ``system`` columns parsed from ``<item>.<system>.bvh``; each stimulus is read once."""
    from evalkit.features.batch import BatchOptions, score_paths
    from evalkit.models.naturalness import ROW_COLUMNS, NaturalnessAnalysis
    from evalkit.models.training import DEFAULT_MODEL, load_model

    log(f"scoring {len(stimuli)} stimuli")
    analyses = ()
    if DEFAULT_MODEL.exists():
        log("adding naturalness from the shipped default discriminator")
        analyses = (NaturalnessAnalysis(load_model(str(DEFAULT_MODEL))[0]),)
    df = score_paths(stimuli, BatchOptions(analyses=analyses), jobs=jobs, progress=False)
    stems = [Path(p).stem for p in df["path"]]
    model_cols = [c for c in df.columns if analyses and c in ROW_COLUMNS]
    df.insert(len(df.columns) - len(model_cols), "item", [s.rsplit(".", 1)[0] for s in stems])
    df["system"] = [s.rsplit(".", 1)[-1] for s in stems]
    for c in model_cols[-2:]:  # the text columns (reasons, notes): empty, not missing, for an unjudged clip
        df[c] = df[c].fillna("")
    return df


def _refuse_if_rated(study: Path) -> None:
    """A build rewrites the stimuli; once the study's database holds answers they rate the
    current files, so rebuilding in place would lose what was rated."""
    sy = study / "study.yaml"
    if not sy.exists():
        return
    from evalkit.textfile import read_utf8_text

    try:
        study_id = (yaml.safe_load(read_utf8_text(sy)) or {}).get("id")
    except (yaml.YAMLError, InputError, AttributeError):
        return  # an invalid study.yaml is reported, with its line, when the web test is prepared
    if not isinstance(study_id, str):
        return
    from webtest import stored_answers

    n = stored_answers(study, study_id)
    if n:
        raise InputError(f"{study}: the study {study_id!r} has {n} answer(s) in its database; rebuilding "
                         "would replace the stimuli they rate; fix: copy the study folder and build the copy "
                         "(with a new 'id:' in its study.yaml if it shares the database), or move the "
                         "ratings database away once the ratings are exported")


def build_study(study_dir: str | os.PathLike, progress: Callable[[str], None] | None = print,
                jobs: int = 1, prepare_web: bool = True) -> BuildResult:
    """Run a study's pipeline (see the module docstring). Returns the :class:`BuildResult`."""
    t0 = time.perf_counter()
    study = Path(study_dir)
    if not study.is_dir():
        raise InputError(f"{study}: not a folder; give a study folder with study.yaml and {PIPELINE_FILE}")
    if jobs < 1:
        raise InputError(f"jobs (--jobs) must be at least 1 worker process, got {jobs}")
    p = load_pipeline(study)
    _refuse_if_rated(study)
    log = lambda m: _log(progress, f"[{study.name}] {m}")  # noqa: E731
    res = _build_locomotion(p, study, log) if p.kind == "locomotion-transitions" else _build_gesture(p, study, log)
    res.scores = score_stimuli(res.stimuli, log, jobs=jobs)
    results = study / "results"
    _atomic_csv(res.scores, results / "scores.csv")
    for name, df in res.tables.items():
        _atomic_csv(df, results / f"{name}.csv")
    if prepare_web and (study / "study.yaml").exists():
        from webtest import prepare_study

        log("validating study.yaml and preparing the browser stimuli")
        prepared = prepare_study(study)
        res.notes.append(f"web test ready: {len(prepared.stimuli)} stimuli")
    res.seconds = time.perf_counter() - t0
    _atomic_text(results / "build.json", json.dumps({
        "kind": res.kind, "stimuli": [str(s.relative_to(study)) for s in res.stimuli],
        "tables": sorted(res.tables), "notes": res.notes, "seconds": round(res.seconds, 1),
    }, indent=2))
    return res


def copy_study(src: Path, dest: Path) -> Path:
    """Copy a study folder's definition files (not its generated outputs or database)."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.name in ("stimuli", "results", ".webtest") or item.suffix in (".sqlite", ".db") or item.name.endswith(("-wal", "-shm")):
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, dirs_exist_ok=True)
        else:
            shutil.copy2(item, dest / item.name)
    return dest


# -- reporting ---------------------------------------------------------------------------
#: Objective tables of a built study, in report order, with their section titles.
REPORT_TABLES = {
    "transitions_requested": "Transitions of the stimuli (response and duration in frames at the study's frame rate)",
    "transition_pairs": "Transition response and duration per ordered clip pair (frames at 60 fps)",
    "transition_stats": "Graph statistics: transition points, connectivity, mean transition cost",
    "transition_maneuverability": "Local maneuverability",
    "gmg_stats": "Gesture motion graph statistics per similarity threshold (cf. thesis Table 4.2)",
    "gmg_objective": "Synchrony and intensity per GMG variant (apex–PAPT offsets, accents covered, GSI–PSI agreement): "
                     "as planned, as rendered (GP by GP) and as analysed blind (the clips re-analysed as capture)",
    "gmg_blind_order": "GMG variants judged blind, utterance by utterance: win rate of the first variant and Wilcoxon "
                       "signed-rank test (|offset - rule|, share in the intensity margin, planned strokes found)",
}


def study_outputs(study_dir: str | os.PathLike) -> tuple[pd.DataFrame | None, pd.DataFrame | None, dict[str, pd.DataFrame]]:
    """Ratings (from the study's database, if any answers exist), scores and objective tables
    of a built study folder, ready for :func:`reports.build_report`."""
    import io

    from evalkit.errors import FileFormatError
    from evalkit.textfile import read_utf8_text

    def read(f: Path) -> pd.DataFrame:
        try:
            return pd.read_csv(io.StringIO(read_utf8_text(f)))
        except pd.errors.EmptyDataError:
            raise FileFormatError(f, 1, "the file is empty (expected a CSV header line); rebuild the "
                                        f"study with 'evalkit study build {study}'") from None
        except pd.errors.ParserError as exc:
            raise FileFormatError(f, None, f"not a valid CSV file ({exc})") from None

    study = Path(study_dir)
    results = study / "results"
    scores = read(results / "scores.csv") if (results / "scores.csv").exists() else None
    if scores is not None:
        scores.attrs["source"] = str(results / "scores.csv")
    tables = {}
    for name, title in REPORT_TABLES.items():
        f = results / f"{name}.csv"
        if f.exists():
            tables[title] = read(f)
    ratings = None
    url = os.environ.get("EVALKIT_DATABASE_URL")
    sqlite = study / "ratings.sqlite"
    if url or sqlite.exists():
        from reports.io import NoRatingsError, read_ratings_db

        # Only a readable ratings table without rows means "no ratings yet"; an unreadable or
        # malformed database, or a wrong EVALKIT_DATABASE_URL, is an error the user must see.
        try:
            ratings = read_ratings_db(url or f"sqlite:///{sqlite.resolve()}")
        except NoRatingsError:
            ratings = None
    if scores is None and ratings is None and not tables:
        have = "its database has no ratings yet" if url or sqlite.exists() else "it has no ratings database"
        if (study / PIPELINE_FILE).exists():
            advice = (f"run 'evalkit study build {study}' to make its stimuli and scores, and "
                      f"'evalkit serve {study}' to collect ratings")
        else:
            advice = (f"collect ratings with 'evalkit serve {study}' (it has no {PIPELINE_FILE}, so "
                      "'evalkit study build' cannot score it), or report on a ratings CSV")
        raise InputError(f"{study}: nothing to report yet ({have}, and there is no results/scores.csv); {advice}")
    return ratings, scores, tables
