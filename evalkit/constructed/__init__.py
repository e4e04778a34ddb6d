"""Constructed test data with known truth, made from real parts (never shown as real data).

* :mod:`evalkit.constructed.takes`: takes of real speech and real gesture phrases placed at known
  apex–PAPT offsets and strengths (``evalkit rules construct``).
* :mod:`evalkit.constructed.known_truth`: files of every motion format written from bundled
  capture (what the readers are checked on), and real walks lifted onto constructed steps and
  slopes (terrain of known height).
"""
