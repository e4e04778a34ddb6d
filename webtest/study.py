"""The study file: ``studies/<name>/study.yaml`` read into a typed, validated :class:`Study`.

Validation collects every problem and raises one :class:`~evalkit.errors.ConfigError` whose
lines each name the file, the line, the key path (``stimuli[2].kind``), what is wrong and the fix.
See ``docs/webtest.md`` for the full reference of keys.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from evalkit.errors import ConfigError, yaml_error
from evalkit.motion.formats import MOTION_EXTENSIONS
from evalkit.yamlfile import key_lines
from webtest.config import HASH_FIX, is_password_hash
from webtest.scales import DEFAULT_SCALE, SCALES, Scale
from webtest.strings import EN

STUDY_FILE = "study.yaml"
KINDS = ("motion", "video", "audio")
MOTION_EXT = MOTION_EXTENSIONS  # BVH, AMC, SMPL-family .npz, HumanML3D/MDM .npy, position arrays
VIDEO_EXT = (".mp4", ".webm", ".ogv", ".mov")
AUDIO_EXT = (".wav", ".mp3", ".ogg", ".oga", ".flac", ".m4a", ".opus")
DESIGN_METHODS = ("full", "latin_square", "balanced_incomplete")
PLATFORMS = ("none", "prolific", "mturk")
FIELD_TYPES = ("text", "number", "choice")
CAMERAS = ("follow", "fixed")  # playback.camera (static/stage.js, used by the page and webtest.render)
FRAMINGS = ("full", "upper")  # playback.framing: the whole body, or GENEA's upper-body view
SETUP_STAGES = ("device", "volume", "headphones")  # setup: checks before the instructions (webtest.setup)
_HEX_COLOR = re.compile(r"^#(?:[0-9A-Fa-f]{3}){1,2}$")


def check_color(value) -> str | None:
    """``#rrggbb`` (lower case) for a ``#rgb`` or ``#rrggbb`` colour, None if it is not one."""
    if not isinstance(value, str) or not _HEX_COLOR.match(value.strip()):
        return None
    v = value.strip().lower()
    return "#" + "".join(ch * 2 for ch in v[1:]) if len(v) == 4 else v
SAMPLE_PREFIX = "sample:"
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# ----------------------------------------------------------------------------------------------
# The typed model
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Transform:
    """A documented corruption applied to a motion stimulus when the study is prepared.

    ``jitter``: Gaussian noise on every joint rotation, ``deg`` degrees standard deviation per
    axis per frame (independent frames, so it shows as tremor). ``timewarp``: the clip is
    resampled at warped times ``t + amount * period_s / (2 pi) * sin(2 pi t / period_s)`` (same
    duration; ``amount`` < 1 keeps time monotonic), so it speeds up and slows down periodically.
    """

    name: str
    params: Mapping[str, float]


@dataclass(frozen=True)
class Stimulus:
    """One stimulus file shown to participants.

    Attributes:
        id: unique id within the study (never shown to participants).
        system: the system (condition) that produced it.
        item: the content item; the two sides of a trial show the same item.
        kind: ``motion`` (rendered in the browser), ``video`` or ``audio``.
        file: resolved path of the file.
        audio: optional audio played in sync with a motion stimulus.
        trim: optional ``(start_s, end_s)`` of a motion stimulus, seconds.
        transforms: corruptions applied to a motion stimulus, in order.
        duration_s: declared duration for video/audio (probed when absent), seconds.
    """

    id: str
    system: str
    item: str
    kind: str
    file: Path
    audio: Path | None = None
    trim: tuple[float, float] | None = None
    transforms: tuple[Transform, ...] = ()
    duration_s: float | None = None


@dataclass(frozen=True)
class DemographicField:
    id: str
    label: str
    type: str = "text"
    options: tuple[str, ...] = ()
    required: bool = False
    min: float | None = None
    max: float | None = None


@dataclass(frozen=True)
class Design:
    """How trials are spread over participants.

    ``full``: every participant sees every item x pair. ``latin_square``: every participant sees
    each item once, the pair rotating across participants. ``balanced_incomplete``: a cyclic
    balanced incomplete block design, ``trials_per_participant`` conditions each. Sides are
    balanced across participants in all three.
    """

    method: str = "full"
    participants: int = 12
    trials_per_participant: int | None = None
    seed: int = 0


@dataclass(frozen=True)
class TrainingTrial:
    item: str
    system_a: str
    system_b: str


@dataclass(frozen=True)
class Quality:
    """Quality-check trials added to every participant's sequence.

    gold: identical pairs (the same stimulus on both sides), the answer must be 0 ± tolerance.
    attention: the page tells which answer to give ("choose left"-style).
    repeat: a main trial shown again with sides swapped; both sign-corrected scores must agree
    within ``repeat_tolerance``.
    """

    gold: int = 0
    gold_tolerance: float = 1.0
    attention: int = 0
    repeat: int = 0
    repeat_tolerance: float = 1.0


@dataclass(frozen=True)
class SetupStage:
    """One setup check shown after the consent (and demographics), before the instructions.

    ``device``: the browser window must be at least ``min_width`` x ``min_height`` CSS pixels
    (the participant may enlarge it and check again) and, unless ``allow_touch_only``, the
    device must have a mouse or trackpad (phones and tablets without one fail).
    ``volume``: a calibration noise is played; the participant sets the system volume to a
    comfortable level and confirms, or says they cannot hear it (a failure).
    ``headphones``: the antiphase screening of Woods et al. (2017): ``trials`` trials of three
    200 Hz tones, one 6 dB quieter, one in antiphase between the channels; passed with at least
    ``pass_min`` quietest tones found.
    """

    name: str
    min_width: int = 0
    min_height: int = 0
    allow_touch_only: bool = True
    trials: int = 6
    pass_min: int = 5


@dataclass(frozen=True)
class Exclusion:
    """Rules, declared before data collection, that mark a participant as excluded.

    ``setup_failures``: a failed setup check (a touch-only device where not allowed, a
    participant who cannot hear the calibration sound, a failed headphone screening) excludes
    the participant, as ``action`` says (``flag``: continue, marked excluded; ``screen_out``:
    the study ends there and the cell is freed)."""

    max_gold_failures: int | None = None
    max_attention_failures: int | None = None
    max_repeat_inconsistencies: int | None = None
    min_median_response_s: float | None = None
    action: str = "flag"  # or "screen_out": end the study for the participant when a rule fires
    setup_failures: bool = True


@dataclass(frozen=True)
class Playback:
    """Playback rules. The server requires ``max(min_time_s, slack * stimuli time)`` seconds
    between showing a trial and accepting its answer; the stimuli time is the sum of both
    durations when ``exclusive`` (one plays at a time), else the longer one.

    ``camera`` is how motion stimuli are filmed in the browser: ``follow`` (each side's view
    follows its clip's smoothed root, a standing body fills about 65 % of the canvas height) or
    ``fixed`` (one still view of both clips' whole paths); ``framing`` what it shows: ``full``
    (the whole body) or ``upper`` (GENEA's upper-body view for gesture studies); ``color_left``,
    ``color_right`` and ``background`` the figures' and the background's colours (``#rrggbb``;
    None: the renderer's defaults, the same figure colour on both sides); see
    ``static/stage.js``. ``play_both`` adds a button that plays both sides together, in step.
    ``video_fallback``: each motion stimulus is also rendered to an MP4 by the same renderer
    when the study is prepared (:mod:`webtest.fallback`), and a browser without WebGL plays
    those videos instead of refusing the trial."""

    must_end: bool = True
    min_time_s: float = 0.0
    exclusive: bool = True
    slack: float = 0.9
    camera: str = "follow"
    framing: str = "full"
    color_left: str | None = None
    color_right: str | None = None
    background: str | None = None
    play_both: bool = False
    video_fallback: bool = False


@dataclass(frozen=True)
class Crowdsourcing:
    platform: str = "none"
    completion_code: str | None = None
    screen_out_code: str | None = None
    completion_url: str | None = None
    screen_out_url: str | None = None


@dataclass(frozen=True)
class MotionOptions:
    fps: float = 30.0
    units: str | float = "auto"
    up: str = "auto"


@dataclass(frozen=True)
class Study:
    """A validated study. Paths are resolved; text fields are raw Markdown/plain text."""

    id: str
    root: Path
    title: str
    consent: str
    instructions: str
    stimuli: tuple[Stimulus, ...]
    pairs: tuple[tuple[str, str], ...]
    design: Design
    scale: Scale = SCALES[DEFAULT_SCALE]
    description: str = ""
    question: str | None = None
    duration_minutes: int | None = None
    demographics: tuple[DemographicField, ...] = ()
    setup: tuple[SetupStage, ...] = ()
    training: tuple[TrainingTrial, ...] = ()
    quality: Quality = Quality()
    exclusion: Exclusion = Exclusion()
    playback: Playback = Playback()
    crowdsourcing: Crowdsourcing = Crowdsourcing()
    motion: MotionOptions = MotionOptions()
    strings: Mapping[str, str] = field(default_factory=dict)
    admin_password_hash: str | None = None
    assignment_timeout_s: float = 3600.0

    def setup_stage(self, name: str) -> SetupStage | None:
        """The setup stage called ``name`` (None when the study has none of that name)."""
        return next((st for st in self.setup if st.name == name), None)

    def stage_after(self, stage: str) -> str:
        """The participant stage that follows ``stage`` (``consent``, ``demographics`` or a
        setup stage's name): demographics if any, the setup stages in their order, then the
        instructions."""
        order = ["consent"] + (["demographics"] if self.demographics else []) + [st.name for st in self.setup]
        order.append("instructions")
        return order[order.index(stage) + 1] if stage in order[:-1] else "instructions"

    @property
    def items(self) -> tuple[str, ...]:
        """Items in first-appearance order."""
        return tuple(dict.fromkeys(s.item for s in self.stimuli))

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.system for s in self.stimuli))

    def stimulus(self, stim_id: str) -> Stimulus:
        for s in self.stimuli:
            if s.id == stim_id:
                return s
        raise KeyError(stim_id)

    def find(self, item: str, system: str) -> Stimulus:
        """The stimulus of ``system`` for ``item``."""
        for s in self.stimuli:
            if s.item == item and s.system == system:
                return s
        raise KeyError((item, system))


# ----------------------------------------------------------------------------------------------
# Loading and validation
# ----------------------------------------------------------------------------------------------
def study_file(study_dir: str | Path) -> Path:
    p = Path(study_dir)
    return p if p.is_file() else p / STUDY_FILE


def load_study(study_dir: str | Path) -> Study:
    """Read and validate ``<study_dir>/study.yaml`` (or a YAML file given directly).

    Raises:
        ConfigError: listing every problem with file, line, key path and fix.
    """
    if not Path(study_dir).exists():
        raise ConfigError(f"{study_dir}: no such folder; fix: give the folder that holds {STUDY_FILE} "
                          "(e.g. studies/example-cmu)")
    path = study_file(study_dir)
    if not path.exists():
        raise ConfigError(
            f"{path}: no study file; fix: create {STUDY_FILE} in the study folder "
            "(see studies/example-cmu/study.yaml)"
        )
    text = _read_text(path)
    try:
        data = yaml.safe_load(text)
        lines = _line_map(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc, text, fix="fix: check indentation and quoting") from None
    return validate_study(data, path, lines)


def _read_text(path: Path) -> str:
    """The study file as text; a file that is not UTF-8 is reported with the line of the first bad byte."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc}); "
                          "fix: check that it is a readable file") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}, line {line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {column}); "
            "fix: save the file with UTF-8 encoding") from None


def validate_study(data: Any, path: Path, lines: Mapping[tuple, int] | None = None) -> Study:
    """Validate parsed YAML ``data`` of the study file at ``path`` into a :class:`Study`."""
    c = _Checker(path, lines or {})
    root = path.parent.resolve()
    top = c.mapping(
        data, (),
        allowed=("id", "title", "description", "consent", "instructions", "question", "scale",
                 "duration_minutes", "strings", "demographics", "motion", "stimuli", "pairs",
                 "design", "training", "quality", "exclusion", "playback", "assignment",
                 "crowdsourcing", "admin", "setup"),
        required=("title", "consent", "instructions", "stimuli", "pairs", "design"),
    )
    if top is None:
        c.raise_if_any()

    study_id = c.string(top, ("id",), default=root.name, pattern=_SLUG,
                        fix="use letters, digits, '-', '_' or '.', at most 64 characters")
    title = c.string(top, ("title",))
    description = c.string(top, ("description",), default="")
    consent = c.string(top, ("consent",))
    instructions = c.string(top, ("instructions",))
    question = c.string(top, ("question",), default=None)
    scale_name = c.choice(top, ("scale",), tuple(SCALES), default=DEFAULT_SCALE)
    duration_minutes = c.integer(top, ("duration_minutes",), default=None, minimum=1)

    strings: dict[str, str] = {}
    raw_strings = c.mapping(top.get("strings", {}), ("strings",), allowed=None)
    for key, value in (raw_strings or {}).items():
        if key not in EN:
            c.error(("strings", key), f"unknown string key {key!r}", _did_you_mean(key, EN, "a key of webtest/strings.py"))
        elif not isinstance(value, str):
            c.error(("strings", key), "must be text", "quote the value")
        else:
            strings[key] = value

    demographics = _demographics(c, top.get("demographics", []))
    setup = _setup(c, top.get("setup", []))
    motion = _motion_options(c, top.get("motion", {}))
    stimuli = _stimuli(c, top.get("stimuli"), root)
    pairs = _pairs(c, top.get("pairs"), stimuli)
    design = _design(c, top.get("design"), stimuli, pairs)
    training = _training(c, top.get("training", []), stimuli)
    quality, invalid_checks = _quality(c, top.get("quality", {}), pairs)
    exclusion = _exclusion(c, top.get("exclusion", {}), quality, invalid_checks, setup)
    playback = _playback(c, top.get("playback", {}))
    crowd = _crowdsourcing(c, top.get("crowdsourcing", {}))

    timeout_min = 60.0
    asg = c.mapping(top.get("assignment", {}), ("assignment",), allowed=("timeout_minutes",))
    if asg is not None:
        timeout_min = c.number(asg, ("assignment", "timeout_minutes"), default=60.0, minimum=0.1)
    admin_hash = None
    adm = c.mapping(top.get("admin", {}), ("admin",), allowed=("password_hash",))
    if adm is not None:
        admin_hash = c.string(adm, ("admin", "password_hash"), default=None)
        if admin_hash and not is_password_hash(admin_hash):
            c.error(("admin", "password_hash"), "is not a password hash", HASH_FIX)

    c.raise_if_any()
    return Study(
        id=study_id, root=root, title=title, description=description or "", consent=consent,
        instructions=instructions, question=question, scale=SCALES[scale_name],
        duration_minutes=duration_minutes, strings=strings, demographics=demographics, setup=setup,
        motion=motion, stimuli=stimuli, pairs=pairs, design=design, training=training,
        quality=quality, exclusion=exclusion, playback=playback, crowdsourcing=crowd,
        admin_password_hash=admin_hash, assignment_timeout_s=float(timeout_min) * 60.0,
    )


def resolve_file(value: str, root: Path) -> Path:
    """A stimulus path: ``sample:cmu/16_15.amc`` (bundled evalkit sample) or relative to the study."""
    if value.startswith(SAMPLE_PREFIX):
        from evalkit.data import SAMPLES_DIR

        return (SAMPLES_DIR / value[len(SAMPLE_PREFIX):]).resolve()
    p = Path(value).expanduser()
    return (p if p.is_absolute() else root / p).resolve()


# -- sections -----------------------------------------------------------------------------------
def _demographics(c: "_Checker", raw) -> tuple[DemographicField, ...]:
    items = c.sequence(raw, ("demographics",))
    out, seen = [], set()
    for i, f in enumerate(items or []):
        kp = ("demographics", i)
        m = c.mapping(f, kp, allowed=("id", "label", "type", "options", "required", "min", "max"),
                      required=("id", "label"))
        if m is None:
            continue
        fid = c.string(m, kp + ("id",), pattern=_SLUG, fix="use a short name like 'age'")
        if fid in seen:
            c.error(kp + ("id",), f"duplicate field id {fid!r}", "give every field its own id")
        seen.add(fid)
        ftype = c.choice(m, kp + ("type",), FIELD_TYPES, default="text")
        options = ()
        if ftype == "choice":
            opts = c.sequence(m.get("options"), kp + ("options",))
            if not opts:
                c.error(kp + ("options",), "a choice field needs options", "add 'options: [a, b, c]'")
            else:
                options = tuple(str(o) for o in opts)
        elif "options" in m:
            c.error(kp + ("options",), f"options only apply to type 'choice', not {ftype!r}", "remove options or set type: choice")
        lo = c.number(m, kp + ("min",), default=None)
        hi = c.number(m, kp + ("max",), default=None)
        if (lo is not None or hi is not None) and ftype != "number":
            c.error(kp + ("min" if lo is not None else "max",), "min/max only apply to type 'number'", "remove them or set type: number")
        if lo is not None and hi is not None and lo > hi:
            c.error(kp + ("max",), f"max {hi} is below min {lo}", "swap them")
        out.append(DemographicField(
            id=fid or f"field{i}", label=c.string(m, kp + ("label",)) or "", type=ftype or "text",
            options=options, required=bool(c.boolean(m, kp + ("required",), default=False)),
            min=lo, max=hi))
    return tuple(out)


def _motion_options(c: "_Checker", raw) -> MotionOptions:
    m = c.mapping(raw, ("motion",), allowed=("fps", "units", "up"))
    if m is None:
        return MotionOptions()
    fps = c.number(m, ("motion", "fps"), default=30.0, minimum=1.0, maximum=240.0)
    units = m.get("units", "auto")
    if not isinstance(units, (str, int, float)) or isinstance(units, bool):
        c.error(("motion", "units"), f"{units!r} is not a unit", "use auto, m, cm, mm, inch, cmu or a number of metres per unit")
        units = "auto"
    up = c.string(m, ("motion", "up"), default="auto")
    return MotionOptions(fps=fps or 30.0, units=units, up=up or "auto")


def _kind_from_ext(path: str) -> str | None:
    ext = Path(path).suffix.lower()
    if ext in MOTION_EXT:
        return "motion"
    if ext in VIDEO_EXT:
        return "video"
    if ext in AUDIO_EXT:
        return "audio"
    return None


def _stimuli(c: "_Checker", raw, root: Path) -> tuple[Stimulus, ...]:
    items = c.sequence(raw, ("stimuli",))
    if items is not None and len(items) < 2:
        c.error(("stimuli",), f"has {len(items)} stimulus, a pairwise test needs at least 2", "list the stimuli of at least two systems")
    out, seen = [], {}
    for i, s in enumerate(items or []):
        kp = ("stimuli", i)
        m = c.mapping(s, kp, allowed=("id", "system", "item", "kind", "file", "audio", "trim", "transform", "duration_s"),
                      required=("system", "item", "file"))
        if m is None:
            continue
        system = c.string(m, kp + ("system",))
        item = c.string(m, kp + ("item",))
        file_value = c.string(m, kp + ("file",))
        sid = c.string(m, kp + ("id",), default=f"{item}.{system}" if item and system else f"stimulus{i}")
        if sid is not None and not _SLUG.match(sid) and "id" in m:
            c.error(kp + ("id",), f"{sid!r} is not a valid id", "use letters, digits, '-', '_' or '.', at most 64 characters")
        if sid in seen:
            c.error(kp + ("id",), f"duplicate stimulus id {sid!r} (also stimuli[{seen[sid]}])", "give each stimulus its own id")
        seen.setdefault(sid, i)
        guessed = _kind_from_ext(file_value) if file_value else None
        kind = c.choice(m, kp + ("kind",), KINDS, default=guessed)
        if kind is None and file_value and "kind" not in m:
            c.error(kp + ("kind",), f"cannot tell the kind of {file_value!r} from its extension",
                    f"add 'kind:' (one of {', '.join(KINDS)})")
        path = None
        if file_value:
            path = resolve_file(file_value, root)
            if not path.is_file():
                c.error(kp + ("file",), f"file not found: {path}", "fix the path (relative to the study folder, or sample:cmu/<file> for a bundled clip)")
            elif kind == "motion" and path.suffix.lower() not in MOTION_EXT:
                c.error(kp + ("file",), f"a motion stimulus must be .bvh or .amc (or {', '.join(MOTION_EXT[2:])}), got {path.suffix!r}", "convert it or set kind: video/audio")
        audio = None
        if "audio" in m:
            av = c.string(m, kp + ("audio",))
            if kind != "motion":
                c.error(kp + ("audio",), "audio can only accompany a motion stimulus", "remove it, or use a video with sound")
            elif av:
                audio = resolve_file(av, root)
                if not audio.is_file():
                    c.error(kp + ("audio",), f"file not found: {audio}", "fix the path (relative to the study folder)")
                    audio = None
        trim = None
        if "trim" in m:
            t = m["trim"]
            if kind != "motion":
                c.error(kp + ("trim",), "trim applies to motion stimuli only", "cut the media file instead")
            elif (not isinstance(t, list) or len(t) != 2 or not all(_is_number(v) for v in t)
                  or t[0] < 0 or t[1] <= t[0]):
                c.error(kp + ("trim",), f"{t!r} is not a [start_s, end_s] range", "write e.g. 'trim: [0.5, 3.5]' (seconds, end after start)")
            else:
                trim = (float(t[0]), float(t[1]))
        transforms = _transforms(c, m.get("transform"), kp + ("transform",), kind) if "transform" in m else ()
        duration = c.number(m, kp + ("duration_s",), default=None, minimum=0.01)
        if duration is not None and kind == "motion":
            c.error(kp + ("duration_s",), "the duration of a motion stimulus comes from its file", "remove duration_s (use trim to shorten)")
        if system and item and file_value and path is not None:
            out.append(Stimulus(id=sid, system=system, item=item, kind=kind or "motion", file=path,
                                audio=audio, trim=trim, transforms=transforms, duration_s=duration))
    return tuple(out)


def _transforms(c: "_Checker", raw, kp: tuple, kind) -> tuple[Transform, ...]:
    specs = {"jitter": {"deg": (0.0, 90.0), "seed": None}, "timewarp": {"amount": (0.0, 0.99), "period_s": (0.05, 600.0)}}
    items = c.sequence(raw, kp)
    if kind != "motion":
        c.error(kp, "transforms apply to motion stimuli only", "remove 'transform'")
        return ()
    out = []
    for i, t in enumerate(items or []):
        tk = kp + (i,)
        if not isinstance(t, dict) or len(t) != 1:
            c.error(tk, f"{t!r} is not a transform", "write e.g. '- jitter: {deg: 2, seed: 1}' or '- timewarp: {amount: 0.5, period_s: 1.0}'")
            continue
        (name, params), = t.items()
        if name not in specs:
            c.error(tk, f"unknown transform {name!r}", _did_you_mean(name, specs, "jitter or timewarp"))
            continue
        p = c.mapping(params, tk + (name,), allowed=tuple(specs[name]), required=tuple(k for k, v in specs[name].items() if v))
        if p is None:
            continue
        values = {}
        for key, bounds in specs[name].items():
            if key == "seed":
                values[key] = float(c.integer(p, tk + (name, key), default=0, minimum=0) or 0)
            elif key in p:
                v = c.number(p, tk + (name, key), minimum=bounds[0], maximum=bounds[1])
                if v is not None:
                    values[key] = v
        out.append(Transform(name, values))
    return tuple(out)


def _pairs(c: "_Checker", raw, stimuli: tuple[Stimulus, ...]) -> tuple[tuple[str, str], ...]:
    items = c.sequence(raw, ("pairs",))
    systems = {s.system for s in stimuli}
    by_item: dict[str, set[str]] = {}
    for s in stimuli:
        by_item.setdefault(s.item, set()).add(s.system)
    out = []
    for i, p in enumerate(items or []):
        kp = ("pairs", i)
        if not isinstance(p, list) or len(p) != 2 or not all(isinstance(x, str) for x in p):
            c.error(kp, f"{p!r} is not a pair of systems", "write '- [system_a, system_b]'")
            continue
        a, b = p
        if a == b:
            c.error(kp, f"compares {a!r} with itself", "identical-pair checks go under quality.gold")
            continue
        bad = [x for x in (a, b) if x not in systems]
        for x in bad:
            c.error(kp, f"system {x!r} has no stimuli", _did_you_mean(x, systems, "one of the systems in stimuli"))
        if bad:
            continue
        if (a, b) in out or (b, a) in out:
            c.error(kp, f"pair {a!r} vs {b!r} is listed twice", "remove the duplicate")
            continue
        for item, have in by_item.items():
            for x in (a, b):
                if x not in have:
                    c.error(kp, f"item {item!r} has no stimulus of system {x!r}",
                            f"add a stimulus with item: {item}, system: {x}")
        out.append((a, b))
    if items is not None and not out and not c.errors:
        c.error(("pairs",), "no pairs to compare", "list at least one '- [system_a, system_b]'")
    return tuple(out)


def _design(c: "_Checker", raw, stimuli, pairs) -> Design:
    m = c.mapping(raw, ("design",), allowed=("method", "participants", "trials_per_participant", "seed"),
                  required=("participants",))
    if m is None:
        return Design()
    method = c.choice(m, ("design", "method"), DESIGN_METHODS, default="full")
    n_part = c.integer(m, ("design", "participants"), minimum=1, maximum=100000)
    tpp = c.integer(m, ("design", "trials_per_participant"), default=None, minimum=1)
    seed = c.integer(m, ("design", "seed"), default=0, minimum=0)
    n_items = len({s.item for s in stimuli})
    n_cond = n_items * len(pairs)
    if method == "balanced_incomplete":
        if tpp is None:
            c.error(("design", "trials_per_participant"), "is required for method balanced_incomplete",
                    f"set how many of the {n_cond} item x pair conditions each participant rates")
        elif n_cond and tpp > n_cond:
            c.error(("design", "trials_per_participant"), f"{tpp} is more than the {n_cond} conditions",
                    "lower it, or use method: full")
    elif tpp is not None and method in ("full", "latin_square"):
        expected = n_cond if method == "full" else n_items
        if tpp != expected:
            c.error(("design", "trials_per_participant"),
                    f"method {method} gives {expected} trials per participant, not {tpp}",
                    "remove trials_per_participant or use method: balanced_incomplete")
    if method == "latin_square" and pairs and n_items < 1:
        c.error(("design", "method"), "latin_square needs items", "add stimuli")
    return Design(method=method or "full", participants=n_part or 1, trials_per_participant=tpp, seed=seed or 0)


def _training(c: "_Checker", raw, stimuli) -> tuple[TrainingTrial, ...]:
    items = c.sequence(raw, ("training",))
    have = {(s.item, s.system) for s in stimuli}
    out = []
    for i, t in enumerate(items or []):
        kp = ("training", i)
        m = c.mapping(t, kp, allowed=("item", "systems"), required=("item", "systems"))
        if m is None:
            continue
        item = c.string(m, kp + ("item",))
        systems = m.get("systems")
        if not isinstance(systems, list) or len(systems) != 2 or not all(isinstance(x, str) for x in systems):
            c.error(kp + ("systems",), f"{systems!r} is not two systems", "write 'systems: [system_a, system_b]'")
            continue
        ok = True
        for x in systems:
            if (item, x) not in have:
                c.error(kp + ("systems",), f"no stimulus for item {item!r}, system {x!r}", "add it to stimuli or change the training trial")
                ok = False
        if ok and item:
            out.append(TrainingTrial(item, systems[0], systems[1]))
    return tuple(out)


def _quality(c: "_Checker", raw, pairs) -> tuple[Quality, frozenset[str]]:
    """The quality checks, and which of ``gold``/``attention``/``repeat`` were invalid (already
    reported, so rules about them are not judged against a count of 0)."""
    m = c.mapping(raw, ("quality",), allowed=("gold", "attention", "repeat"))
    if m is None:
        return Quality(), frozenset(("gold", "attention", "repeat"))
    q: dict[str, Any] = {}
    invalid = set()
    for check, keys in (("gold", ("count", "tolerance")), ("attention", ("count",)), ("repeat", ("count", "tolerance"))):
        kp = ("quality", check)
        section = c.mapping(m.get(check, {}), kp, allowed=keys)
        count = None if section is None else c.integer(section, kp + ("count",), default=0, minimum=0, maximum=50)
        if count is None:
            invalid.add(check)
        q[check] = count or 0
        if section is not None and "tolerance" in keys:
            q[f"{check}_tolerance"] = c.number(section, kp + ("tolerance",), default=1.0, minimum=0.0)
    return Quality(**{k: v for k, v in q.items() if v is not None}), frozenset(invalid)


def _setup(c: "_Checker", raw) -> tuple[SetupStage, ...]:
    """``setup:``, a list of one-key mappings, e.g. ``- device: {min_width: 1024}``."""
    items = c.sequence(raw, ("setup",))
    out: list[SetupStage] = []
    keys = {"device": ("min_width", "min_height", "allow_touch_only"), "volume": (), "headphones": ("trials", "pass")}
    for i, entry in enumerate(items or []):
        kp = ("setup", i)
        if isinstance(entry, str):
            entry = {entry: {}}
        if not isinstance(entry, dict) or len(entry) != 1:
            c.error(kp, f"{entry!r} is not one setup stage",
                    "write one of '- device: {min_width: 1024}', '- volume: {}', '- headphones: {pass: 5}'")
            continue
        (name, opts), = entry.items()
        if name not in SETUP_STAGES:
            c.error(kp, f"{name!r} is not one of {', '.join(SETUP_STAGES)}", _did_you_mean(name, SETUP_STAGES, "one of " + ", ".join(SETUP_STAGES)))
            continue
        if any(st.name == name for st in out):
            c.error(kp, f"the {name} stage is listed twice", "list each setup stage once")
            continue
        m = c.mapping(opts, kp + (name,), allowed=keys[name])
        if m is None:
            continue
        okp = kp + (name,)
        if name == "device":
            out.append(SetupStage(
                name, min_width=c.integer(m, okp + ("min_width",), default=0, minimum=0, maximum=10000) or 0,
                min_height=c.integer(m, okp + ("min_height",), default=0, minimum=0, maximum=10000) or 0,
                allow_touch_only=bool(c.boolean(m, okp + ("allow_touch_only",), default=True))))
        elif name == "headphones":
            trials = c.integer(m, okp + ("trials",), default=6, minimum=1, maximum=24) or 6
            need = c.integer(m, okp + ("pass",), default=min(5, trials), minimum=0) or 0
            if need > trials:
                c.error(okp + ("pass",), f"{need} correct of {trials} trials can never be reached",
                        f"use at most {trials} (Woods et al. 2017: 5 of 6)")
            out.append(SetupStage(name, trials=trials, pass_min=need))
        else:
            out.append(SetupStage(name))
    return tuple(out)


def _exclusion(c: "_Checker", raw, quality: Quality, invalid_checks: frozenset[str] = frozenset(),
               setup: tuple[SetupStage, ...] = ()) -> Exclusion:
    m = c.mapping(raw, ("exclusion",), allowed=("max_gold_failures", "max_attention_failures",
                                                 "max_repeat_inconsistencies", "min_median_response_s", "action",
                                                 "setup_failures"))
    if m is None:
        return Exclusion()
    e = Exclusion(
        max_gold_failures=c.integer(m, ("exclusion", "max_gold_failures"), default=None, minimum=0),
        max_attention_failures=c.integer(m, ("exclusion", "max_attention_failures"), default=None, minimum=0),
        max_repeat_inconsistencies=c.integer(m, ("exclusion", "max_repeat_inconsistencies"), default=None, minimum=0),
        min_median_response_s=c.number(m, ("exclusion", "min_median_response_s"), default=None, minimum=0.0),
        action=c.choice(m, ("exclusion", "action"), ("flag", "screen_out"), default="flag") or "flag",
        setup_failures=bool(c.boolean(m, ("exclusion", "setup_failures"), default=True)),
    )
    for key, count, check in (("max_gold_failures", quality.gold, "gold"),
                              ("max_attention_failures", quality.attention, "attention"),
                              ("max_repeat_inconsistencies", quality.repeat, "repeat")):
        if getattr(e, key) is not None and count == 0 and check not in invalid_checks:
            c.error(("exclusion", key), f"the study has no {check} trials, so this rule can never fire",
                    f"add quality.{check}.count or remove the rule")
    return e


def _playback(c: "_Checker", raw) -> Playback:
    m = c.mapping(raw, ("playback",), allowed=("must_end", "min_time_s", "exclusive", "slack", "camera",
                                               "framing", "colors", "background", "play_both",
                                               "video_fallback"))
    if m is None:
        return Playback()
    colors = {}
    cm = c.mapping(m.get("colors"), ("playback", "colors"), allowed=("left", "right")) if m.get("colors") is not None else {}
    for key, kp in [(k, ("playback", "colors", k)) for k in ("left", "right")] + [("background", ("playback", "background"))]:
        raw_v = (cm or {}).get(key) if key != "background" else m.get("background")
        if raw_v is None:
            continue
        colors[key] = check_color(raw_v)
        if colors[key] is None:
            c.error(kp, f"{raw_v!r} is not a colour", "write it as '#rrggbb' (or '#rgb') in quotes, e.g. '#5b7fb5'")
    return Playback(
        must_end=bool(c.boolean(m, ("playback", "must_end"), default=True)),
        min_time_s=c.number(m, ("playback", "min_time_s"), default=0.0, minimum=0.0) or 0.0,
        exclusive=bool(c.boolean(m, ("playback", "exclusive"), default=True)),
        slack=c.number(m, ("playback", "slack"), default=0.9, minimum=0.0, maximum=1.0),
        camera=c.choice(m, ("playback", "camera"), CAMERAS, default="follow") or "follow",
        framing=c.choice(m, ("playback", "framing"), FRAMINGS, default="full") or "full",
        color_left=colors.get("left"), color_right=colors.get("right"), background=colors.get("background"),
        play_both=bool(c.boolean(m, ("playback", "play_both"), default=False)),
        video_fallback=bool(c.boolean(m, ("playback", "video_fallback"), default=False)),
    )


def _crowdsourcing(c: "_Checker", raw) -> Crowdsourcing:
    kp = ("crowdsourcing",)
    m = c.mapping(raw, kp, allowed=("platform", "completion_code", "screen_out_code", "completion_url", "screen_out_url"))
    if m is None:
        return Crowdsourcing()
    platform = c.choice(m, kp + ("platform",), PLATFORMS, default="none") or "none"
    code = c.string(m, kp + ("completion_code",), default=None, pattern=re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
                    fix="use letters and digits only")
    so = c.string(m, kp + ("screen_out_code",), default=None, pattern=re.compile(r"^[A-Za-z0-9_-]{1,64}$"),
                  fix="use letters and digits only")
    urls = {}
    for key in ("completion_url", "screen_out_url"):
        u = c.string(m, kp + (key,), default=None)
        if u is not None and not re.match(r"^https://", u):
            c.error(kp + (key,), f"{u!r} is not an https:// URL", "use the full https:// address from the platform")
            u = None
        urls[key] = u
    if platform in ("prolific", "mturk") and not code:
        c.error(kp + ("completion_code",), f"{platform} studies need a completion code", "copy the completion code from the platform's study settings")
    return Crowdsourcing(platform=platform, completion_code=code, screen_out_code=so, **urls)


# ----------------------------------------------------------------------------------------------
# The checker: typed getters that record errors with key paths and line numbers
# ----------------------------------------------------------------------------------------------
def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _did_you_mean(word: str, choices: Iterable[str], fallback: str) -> str:
    options = [str(x) for x in choices]
    close = difflib.get_close_matches(str(word), options, n=1)
    if not close:
        close = [o for o in options if str(word) and (o.startswith(str(word)) or str(word) in o)][:1]
    return f"did you mean {close[0]!r}?" if close else f"use {fallback}"


def format_keypath(kp: tuple) -> str:
    out = ""
    for k in kp:
        if isinstance(k, int):
            out += f"[{k}]"
        else:
            out += ("." if out else "") + str(k)
    return out or "(top level)"


_line_map = key_lines  # 1-based line of every key path (evalkit.yamlfile)


class _Checker:
    def __init__(self, path: Path, lines: Mapping[tuple, int]):
        self.path = path
        self.lines = lines
        self.errors: list[str] = []

    def line(self, kp: tuple) -> int | None:
        while kp:
            if kp in self.lines:
                return self.lines[kp]
            kp = kp[:-1]
        return None

    def error(self, kp: tuple, message: str, fix: str) -> None:
        ln = self.line(kp)
        where = f"{self.path}, line {ln}" if ln else str(self.path)
        self.errors.append(f"{where}: {format_keypath(kp)}: {message}; fix: {fix}")

    def raise_if_any(self) -> None:
        if self.errors:
            if len(self.errors) == 1:
                raise ConfigError(self.errors[0])
            raise ConfigError(f"{len(self.errors)} problems in the study file:\n  " + "\n  ".join(self.errors))

    # typed getters ------------------------------------------------------------------------
    def mapping(self, value, kp, allowed: Iterable[str] | None, required: Iterable[str] = ()) -> dict | None:
        if value is None and kp:
            value = {}
        if not isinstance(value, dict):
            self.error(kp, f"must be a mapping of keys, got {type(value).__name__}", "write 'key: value' lines indented under it")
            return None
        if allowed is not None:
            for k in value:
                if k not in allowed:
                    self.error(kp + (k,), f"unknown key {k!r}", _did_you_mean(k, allowed, "one of " + ", ".join(allowed)))
        for k in required:
            if k not in value or value[k] is None:
                self.error(kp + (k,), "is missing", f"add '{k}:' to {format_keypath(kp) if kp else 'the study file'}")
        return value

    def sequence(self, value, kp) -> list | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.error(kp, f"must be a list, got {type(value).__name__}", "write one '- ' entry per line")
            return None
        return value

    _MISSING = object()

    def _get(self, m, kp, default):
        if m is None:
            return default
        key = kp[-1]
        if key not in m or m[key] is None:
            if default is self._MISSING:
                return self._MISSING
            return default
        return m[key]

    def string(self, m, kp, default=_MISSING, pattern: re.Pattern | None = None, fix: str = "quote the value"):
        v = self._get(m, kp, default)
        if v is self._MISSING:
            return None  # already reported as missing by mapping(required=...)
        if v is default:
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = str(v)
        if not isinstance(v, str):
            self.error(kp, f"must be text, got {type(v).__name__}", "write it as a quoted string")
            return None
        if not v.strip():
            self.error(kp, "is empty", "write something or remove the key")
            return None
        if pattern is not None and not pattern.match(v):
            self.error(kp, f"{v!r} is not valid", fix)
            return None
        return v

    def choice(self, m, kp, choices: tuple[str, ...], default=_MISSING):
        v = self._get(m, kp, default)
        if v is self._MISSING:
            return None
        if v is default:
            return v
        if v not in choices:
            self.error(kp, f"{v!r} is not one of {', '.join(choices)}", _did_you_mean(v, choices, "one of " + ", ".join(choices)))
            return None
        return v

    def boolean(self, m, kp, default=_MISSING):
        v = self._get(m, kp, default)
        if v is self._MISSING or v is default:
            return None if v is self._MISSING else v
        if not isinstance(v, bool):
            self.error(kp, f"must be true or false, got {v!r}", "write true or false")
            return None
        return v

    def number(self, m, kp, default=_MISSING, minimum=None, maximum=None):
        v = self._get(m, kp, default)
        if v is self._MISSING or v is default:
            return None if v is self._MISSING else v
        if not _is_number(v):
            fix = "write a plain number like 1.5"
            if isinstance(v, str):
                try:  # YAML 1.1 reads '1e9' (no dot, no exponent sign) as text
                    fix = f"YAML reads {v!r} as text; write it with a dot and a signed exponent, {float(v):.1e}"
                except ValueError:
                    pass
            self.error(kp, f"must be a number, got {v!r}", fix)
            return None
        return self._bounds(kp, float(v), minimum, maximum)

    def integer(self, m, kp, default=_MISSING, minimum=None, maximum=None):
        v = self._get(m, kp, default)
        if v is self._MISSING or v is default:
            return None if v is self._MISSING else v
        if not isinstance(v, int) or isinstance(v, bool):
            self.error(kp, f"must be a whole number, got {v!r}", "write a whole number like 3")
            return None
        return self._bounds(kp, v, minimum, maximum)

    def _bounds(self, kp, v, minimum, maximum):
        if minimum is not None and v < minimum:
            self.error(kp, f"{v} is below the minimum {minimum}", f"use a value of at least {minimum}")
            return None
        if maximum is not None and v > maximum:
            self.error(kp, f"{v} is above the maximum {maximum}", f"use a value of at most {maximum}")
            return None
        return v
