"""Training and test examples from real CMU capture: limb transplants between clips."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.features.body import limb_joints
from evalkit.models.dataset import ExampleSpec, load_natural, make_examples
from evalkit.motion import find_roles


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
