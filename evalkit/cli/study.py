"""``evalkit study build DIR``: generate a study's stimuli, score them, prepare its web test."""

from __future__ import annotations

import argparse

from evalkit.cli.common import add_command


def register(sub) -> None:
    p = add_command(sub, None,
        "study", help="build a study folder (stimuli, scores, objective tables, web test)",
        description="Work with study folders (studies/<name>/ with study.yaml and pipeline.yaml).")
    ssub = p.add_subparsers(dest="study_command", metavar="ACTION")
    b = add_command(ssub, run_build,
        "build", help="generate stimuli with the reference generators, score them, prepare the web test",
        description="Run STUDY/pipeline.yaml: generate the stimuli into STUDY/stimuli/ (BVH + manifest "
                    "JSON), score them into STUDY/results/scores.csv, write the generators' objective "
                    "tables into STUDY/results/, and validate study.yaml and precompute the browser "
                    "stimuli. Then: 'evalkit serve STUDY' and 'evalkit report STUDY'.")
    b.add_argument("study", metavar="STUDY", help="study folder")
    b.add_argument("--jobs", type=int, default=1, help="worker processes for scoring (default: 1)")
    b.add_argument("--no-web", action="store_true", help="skip preparing the web test")


def run_build(args: argparse.Namespace) -> int:
    from evalkit.pipeline import build_study

    res = build_study(args.study, jobs=args.jobs, prepare_web=not args.no_web)
    print(f"built {args.study}: {len(res.stimuli)} stimuli, scores in {res.study_dir / 'results' / 'scores.csv'}, "
          f"{len(res.tables)} objective tables ({res.seconds:.0f} s)")
    for note in res.notes:
        print(note)
    print(f"next: evalkit serve {args.study}    |    evalkit report {args.study}")
    return 0
