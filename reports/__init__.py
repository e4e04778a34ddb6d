"""Paper-ready statistics and figures from ratings (pairwise/CMOS, MUSHRA/ACR) and metrics.

Entry points: :func:`build_report` (a report folder with report.html, figures, CSV/LaTeX tables
and a methods paragraph), :func:`load_input` (ratings from CSV in several formats or from a
database URL), and the analysis modules: :mod:`reports.screening`, :mod:`reports.pairwise`,
:mod:`reports.ranking`, :mod:`reports.regression`, :mod:`reports.agreement`,
:mod:`reports.absolute`, :mod:`reports.objective`, :mod:`reports.genea` (GENEA protocol),
:mod:`reports.figures`.
``reports`` never imports ``webtest``; it reads webtest's ``ratings_long`` table (docs/reports.md).
"""

from reports.importers import combine_ratings, load_input
from reports.ranking import BattleWeights
from reports.report import ReportConfig, build_report
from reports.screening import ScreeningRules
from reports.table import RATINGS_COLUMNS, SCALES, validate_ratings

__all__ = [
    "BattleWeights", "RATINGS_COLUMNS", "ReportConfig", "SCALES", "ScreeningRules", "build_report",
    "combine_ratings", "load_input", "validate_ratings",
]
