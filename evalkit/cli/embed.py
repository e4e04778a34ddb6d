"""``evalkit embed train|info``: the FGD feature extractor (autoencoder) and its protocol card."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evalkit.cli.common import no_motion_files, add_load_options, load_options

EPILOG = """\
examples:
  # the shipped default extractor, byte for byte on one machine (about a minute of CPU time)
  evalkit embed train evalkit/data/samples/cmu --out evalkit/distribution/default_extractor

  # an extractor for 64-frame windows at 30 fps (GENEA 2022 also used 30/60/90-frame chunks)
  evalkit embed train mocap/ --window 64 --stride 16 --out ext64/
  evalkit compare --reference mocap/ sysA=outA/ --extractor ext64/ --out report/

  evalkit embed info default
"""


def register(sub) -> None:
    p = sub.add_parser(
        "embed",
        help="train or inspect the FGD feature extractor (autoencoder over windows of joint positions)",
        description=(
            "FGD embeds windows of motion with an autoencoder trained on real motion. 'embed train' trains one "
            "under a pinned protocol (window, stride, frame rate, joint set, normalisation, seed, data hashes, "
            "versions) written to the extractor's card; 'embed info' prints a card. Details: docs/distribution.md."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ss = p.add_subparsers(dest="embed_command", metavar="SUBCOMMAND")
    t = ss.add_parser("train", help="train an extractor on real motion",
                      description="Train an FGD extractor on real motion (files or folders, searched recursively). "
                                  "Deterministic for a seed on one machine.",
                      epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("paths", nargs="+", metavar="PATH", help="real motion: files or folders")
    t.add_argument("--out", "-o", required=True, metavar="FOLDER",
                   help="folder to write extractor.npz (weights) and card.json (protocol) into")
    t.add_argument("--window", type=int, default=30, metavar="FRAMES", help="window length, frames (default: 30)")
    t.add_argument("--stride", type=int, default=10, metavar="FRAMES",
                   help="step between windows when comparing, frames (default: 10)")
    t.add_argument("--fps", type=float, default=30.0, help="frame rate clips are resampled to (default: 30)")
    t.add_argument("--train-stride", type=int, default=2, metavar="FRAMES",
                   help="step between training windows, frames (default: 2)")
    t.add_argument("--epochs", type=int, default=150, help="training epochs (default: 150)")
    t.add_argument("--hidden", type=int, default=64, help="hidden units (default: 64)")
    t.add_argument("--latent", type=int, default=32, help="embedding size (default: 32)")
    t.add_argument("--batch", type=int, default=64, help="minibatch size (default: 64)")
    t.add_argument("--learning-rate", type=float, default=1e-3, help="Adam step size (default: 0.001)")
    t.add_argument("--seed", type=int, default=0, help="seed of initialisation and shuffling (default: 0)")
    t.add_argument("--activation", choices=("leaky_relu", "elu", "tanh"), default="leaky_relu",
                   help="hidden-layer activation (default: leaky_relu, which does not bound the embedding; "
                        "tanh saturates, so FGD stops growing with gross degradations)")
    t.add_argument("--no-mirror", action="store_true", help="do not add left/right mirrored copies")
    t.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_load_options(t)
    t.set_defaults(func=run_train)
    i = ss.add_parser("info", help="print an extractor's card (protocol, hashes, training data)")
    i.add_argument("extractor", nargs="?", default="default", metavar="FOLDER",
                   help="extractor folder, or 'default' for the shipped one (default)")
    i.add_argument("--json", action="store_true", help="print the whole card as JSON")
    i.set_defaults(func=run_info)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def _positive(name: str, value, integer: bool = True) -> None:
    from evalkit.errors import InputError

    if not (value > 0):
        raise InputError(f"--{name} must be a positive {'number of frames' if integer else 'number'}, got {value}")


def run_train(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.distribution.embedding import CARD_FILE, TrainingSettings, WindowProtocol, train_extractor
    from evalkit.motion.formats import check_fps, iter_motion_files
    from evalkit.motion.roles import load_role_map

    for name in ("window", "stride", "train_stride", "epochs", "hidden", "latent", "batch"):
        _positive(name.replace("_", "-"), getattr(args, name))
    _positive("learning-rate", args.learning_rate, integer=False)
    if args.window < 4:
        raise InputError(f"--window must be at least 4 frames, got {args.window}")
    check_fps(args.fps, "--fps")
    check_fps(args.amc_fps, "--amc-fps")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, expected a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    from evalkit.atomic import check_writable

    check_writable(out / CARD_FILE)
    files = list(iter_motion_files(args.paths))
    if not files:
        raise no_motion_files(args.paths)
    protocol = WindowProtocol(window=args.window, stride=args.stride, fps=float(args.fps))
    settings = TrainingSettings(hidden=args.hidden, latent=args.latent, epochs=args.epochs, batch=args.batch,
                                learning_rate=args.learning_rate, seed=args.seed, train_stride=args.train_stride,
                                augment="none" if args.no_mirror else "mirror", activation=args.activation)
    roles = load_role_map(args.roles) if args.roles else None
    ext = train_extractor(files, protocol, settings, load_options(args), roles, progress=not args.quiet)
    ext.save(out)
    print(f"trained on {len(files)} file(s), {ext.card['protocol']['n_training_windows']} windows; final loss "
          f"{ext.card['final_loss']:.4g}; protocol {ext.card['protocol_hash'][:16]}, extractor "
          f"{ext.extractor_hash} -> {out}", file=sys.stderr)
    return 0


def run_info(args: argparse.Namespace) -> int:
    import json

    from evalkit.distribution.embedding import load_extractor

    ext = load_extractor(args.extractor)
    card = ext.card
    if args.json:
        print(json.dumps(card, indent=1, sort_keys=True))
        return 0
    p = card["protocol"]
    c = p["comparison"]
    print(f"extractor       {ext.source}")
    print(f"extractor hash  {card['extractor_hash']}")
    print(f"protocol hash   {card['protocol_hash']}")
    print(f"window          {c['window']} frames ({c['window'] / c['fps']:.2f} s), stride {c['stride']} frames, "
          f"{c['fps']:g} fps")
    print(f"joint set       {len(c['joint_set'])} roles: {', '.join(c['joint_set'])}")
    print(f"normalisation   {c['normalisation']}")
    tr = p["training"]
    print(f"training        {tr['epochs']} epochs, batch {tr['batch']}, lr {tr['learning_rate']:g}, seed {tr['seed']}, "
          f"hidden {tr['hidden']}, latent {tr['latent']}, training stride {tr['train_stride']}, augment {tr['augment']}, "
          f"activation {ext.activation}{'' if 'activation' in tr else ' (card format before the setting)'}")
    print(f"data            {len(p['data'])} file(s), {p['n_training_windows']} windows: "
          + ", ".join(d["name"] for d in p["data"]))
    print("versions        " + ", ".join(f"{k} {v}" for k, v in p["versions"].items()))
    print(f"final loss      {card['final_loss']:.4g}")
    return 0
