"""Training and test examples from real CMU capture: limb transplants between clips."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.features.body import limb_joints
from evalkit.models.dataset import ExampleSpec, load_natural, make_examples, trim_glitches
from evalkit.motion import find_roles, load_motion


@pytest.fixture(scope="module")
def clips(cmu_dir):
    return load_natural([cmu_dir])


def test_transplant_takes_the_limb_from_another_clip_of_the_subject(clips):
    """Subject 131 has two bundled BVH takes on one skeleton: each one's transplants take the
    limb from the other take; a take alone on its skeleton (131_04 in ASF/AMC, subject 16's one
    walk) falls back to another time of the clip."""
    by_name = {c.motion.name: c for c in clips}
    assert {"131_01", "131_03", "131_04-dance"} <= set(by_name)
    ex = make_examples(clips, ExampleSpec(types=("transplant",), severity=0.5, seed=0))
    bad = [e for e in ex if not e.natural]
    of_131 = [e for e in bad if e.group == "cmu:131" and e.rig == by_name["131_01"].rig]
    assert of_131 and all(e.provenance.donor in ("131_01", "131_03") for e in of_131)
    assert all(e.provenance.donor != e.segment.split("#")[0] for e in of_131)
    dance = [e for e in bad if e.segment.startswith("131_04-dance")]
    assert dance and all(e.provenance.donor is None for e in dance)
    others = [e for e in bad if e.group == "cmu:16"]
    assert others and all(e.provenance.donor is None for e in others)

    # inside the transplanted interval (past the blends) the limb moves exactly as the donor's did
    e = of_131[0]
    donor = by_name[e.provenance.donor].motion
    p = e.provenance.params
    roles = find_roles(e.motion.skeleton, strict=True)
    joints = sorted({j for limb in p["limbs"] for j in limb_joints(e.motion, limb, roles)})
    a, b, d0, ramp = p["start_frame"], p["end_frame"], p["donor_start_frame"], p["blend_frames"]
    got = e.motion.rotations[a + ramp:b - ramp][:, joints]
    want = donor.rotations[d0 + ramp:d0 + (b - a) - ramp][:, joints]
    assert np.allclose(np.abs(np.sum(got * want, axis=-1)), 1.0, atol=1e-6)


def test_mirrored_segments_take_a_mirrored_limb(clips):
    """Mirrored (and augmented) segments get their transplanted limb from the mirrored donor."""
    ex = make_examples([c for c in clips if c.motion.name in ("131_01", "131_03")],
                       ExampleSpec(types=("transplant",), severity=0.5, seed=0, mirror=True, augment=True))
    bad = [e for e in ex if not e.natural]
    mirrored = [e for e in bad if "~mirror" in e.segment]
    assert mirrored and len(mirrored) < len(bad)
    assert all(e.provenance.donor.endswith("_mirrored") for e in mirrored)
    assert not any(e.provenance.donor.endswith("_mirrored") for e in bad if e not in mirrored)


def test_same_clip_transplants_on_request(clips):
    ex = make_examples([c for c in clips if c.group == "cmu:131"],
                       ExampleSpec(types=("transplant",), severity=0.5, seed=0, transplant_donor="same_clip"))
    assert all(e.provenance.donor is None for e in ex)
    with pytest.raises(InputError, match="transplant_donor"):
        make_examples(clips, ExampleSpec(types=("transplant",), transplant_donor="elsewhere"))


def test_training_options_check_the_donor_setting():
    from evalkit.models.training import TrainOptions

    assert TrainOptions().transplant_donor == "other_clip"
    with pytest.raises(InputError, match="transplant_donor"):
        TrainOptions(transplant_donor="elsewhere")


def test_long_examples_cover_the_schedule_and_stay_deterministic(clips):
    """Training draws windows from clips of all lengths. Each natural clip gives, beside
    its segments, a natural example (and one of its mirror image) at lengths of the schedule taken
    in turn; each type one corrupted version with every 5-s piece corrupted."""
    from evalkit.models.dataset import LONG_LENGTHS, long_examples, long_lengths_of

    pairs = long_lengths_of(len(clips), LONG_LENGTHS, seed=0)
    assert {v for p in pairs for v in p} == set(LONG_LENGTHS)  # 8 clips x 2: every length is used
    assert all(a != b for a, b in pairs)
    spec = ExampleSpec(types=("foot_skate", "jitter"), mirror=True, long_lengths=LONG_LENGTHS, seed=0)
    ex = list(long_examples(clips, spec))
    natural = [e for e in ex if e.natural]
    assert len(natural) == 2 * len(clips)
    by_name = {c.motion.name: c for c in clips}
    for e, (clip, (la, lb)) in zip(natural, [(c, p) for c, p in zip(clips, pairs) for _ in (0, 1)]):
        want = la if "~mirror" not in e.segment else lb
        how = e.motion.meta["long_example"]
        if how == "whole":  # asked for the whole clip, or no seamless loop / exactly as long
            assert abs(e.motion.duration - clip.motion.duration) < 1e-6
        else:
            assert abs(e.motion.duration - want) < 1.5 / 30
            assert how == ("excerpt" if clip.motion.duration >= want else "loop")
    assert any(e.motion.duration >= 59.9 for e in natural)  # minute-long clips are in training
    bad = [e for e in ex if not e.natural]
    assert {e.provenance.corruption for e in bad} == {"foot_skate", "jitter"}
    for e in bad:  # every 5-s piece corrupted: the corrupted share does not fall with length
        pieces = max(1, round(e.motion.duration / 5.0))
        assert len(e.provenance.intervals) >= min(pieces, 2) - 1
    again = list(long_examples(clips, spec))
    assert [e.segment for e in again] == [e.segment for e in ex]
    assert all(np.array_equal(a.motion.rotations, b.motion.rotations) for a, b in zip(ex, again))
    assert set(by_name) >= {e.segment.split("~")[0].split("@")[0] for e in ex}


def test_a_looped_natural_example_is_learnt_once(clips):
    """The windows of a natural loop after its first copy repeat it: context only (label -1)."""
    from evalkit.models.dataset import example_windows, long_examples

    spec = ExampleSpec(types=(), mirror=True, long_lengths=(60.0, 30.0), seed=0)
    loops = [e for e in long_examples(clips, spec) if e.motion.meta.get("long_example") == "loop"]
    assert loops
    e = loops[0]
    f = example_windows(0, e)
    loop_s = e.motion.meta["distinct_s"]
    assert (f.loc[f["end_s"] <= loop_s + 1e-6, "label"] == 1).all()
    assert (f.loc[f["end_s"] > loop_s + 1e-6, "label"] == -1).all()
    assert (f["label"] == -1).sum() > (f["label"] == 1).sum()  # 30-60 s from a clip of a few seconds


def test_training_iterates_segments_then_long_examples_per_clip(clips):
    from evalkit.models.dataset import iter_examples

    spec = ExampleSpec(types=("jitter",), mirror=False, long_lengths=(20.0,), seed=0)
    names = [e.segment for e in iter_examples(clips[:2], spec)]
    assert names[0].endswith("#0")
    assert sum(n.startswith(clips[0].motion.name + "@") for n in names) == 2  # natural + jitter
    first_long = next(i for i, n in enumerate(names) if "@" in n)
    assert all(n.startswith(clips[0].motion.name) for n in names[:first_long + 2])
    assert not any("@" in e.segment for e in iter_examples(clips[:2], ExampleSpec(types=("jitter",))))


def test_clips_above_the_working_rate_keep_a_decimated_copy_for_the_mirrored_examples(clips):
    """120-fps takes are learnt band-limited and, for their mirrored copies, as datasets decimate
    them (every 4th frame): same frames in time, no low-pass; 30-fps files keep none."""
    high = [c for c in clips if c.decimated is not None]
    assert high, "the bundled CMU clips include 120-fps takes"
    for c in high:
        assert c.decimated.n_frames == c.motion.n_frames and c.decimated.fps == c.motion.fps
        raw = trim_glitches(load_motion(c.path))  # the captured frames, as load_natural reads them
        k = int(round(raw.fps / c.motion.fps))
        kept = raw.rotations[::k][:c.decimated.n_frames]
        assert np.abs(np.abs((kept * c.decimated.rotations).sum(-1)) - 1).max() < 1e-9  # every k-th frame
        assert not np.allclose(c.decimated.rotations, c.motion.rotations)  # the learnt clip is filtered
