"""Rendering: the report's content model and its HTML, CSV and LaTeX (booktabs) outputs.

The HTML is self-contained (CSS inline, figures embedded as base64 PNG, no scripts), built with
a Jinja2 template with autoescaping; tables are written as CSV (full precision) and LaTeX
(booktabs rules, formatted numbers). All files are written atomically.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from reports.io import atomic_write_text

P_COLUMNS = ("p", "p_holm", "p_wilcoxon", "p_sign", "p_position")


@dataclass
class TableItem:
    """A table: ``data`` is written to CSV as is; ``display`` (strings) to HTML and LaTeX."""

    name: str
    caption: str
    data: pd.DataFrame
    display: pd.DataFrame | None = None
    kind: str = "table"


@dataclass
class FigureItem:
    """A figure saved as ``figures/<name>.pdf|png``; ``png`` is embedded in the HTML."""

    name: str
    caption: str
    png: bytes
    kind: str = "figure"


@dataclass
class Section:
    """A report section: heading, paragraphs (plain text) and tables/figures in order."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    items: list = field(default_factory=list)
    level: int = 2

    @property
    def anchor(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")


def fmt_value(v, col: str = "") -> str:
    """Compact text for one cell: p-values as ``<0.001``/3 digits, floats 3 significant places."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if col.startswith("p") and (col in P_COLUMNS or col.startswith("p_")):
            return "<0.001" if v < 0.001 else f"{v:.3f}"
        if col.startswith("share") or col in ("win_share", "cles", "fraction_below", "straightline_share"):
            return f"{v:.2f}"
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        if abs(v) >= 100:
            return f"{v:.1f}"
        if abs(v) >= 10:
            return f"{v:.2f}"
        return f"{v:.3f}"
    return str(v)


def p_text(p) -> str:
    """A p-value in running text: ``p < 0.001`` or ``p = 0.042`` (``p = –`` when undefined)."""
    v = fmt_value(p, "p")
    return f"p {v[0]} {v[1:]}" if v[:1] in "<>" and len(v) > 1 else f"p = {v}"


def _latex_math_signs(text: str) -> str:
    """``<`` and ``>`` as math (``$<$``): in LaTeX text mode without T1 fonts they print as ¡ ¿."""
    return text.replace("<", "$<$").replace(">", "$>$")


def format_frame(df: pd.DataFrame) -> pd.DataFrame:
    """All cells of ``df`` as display strings (see :func:`fmt_value`)."""
    out = pd.DataFrame(index=df.index)
    for c in df.columns:
        out[str(c)] = [fmt_value(v, str(c)) for v in df[c].tolist()]
    return out


def to_latex(display: pd.DataFrame, caption: str, label: str) -> str:
    """A booktabs LaTeX table (``\\toprule``/``\\midrule``/``\\bottomrule``), cells escaped."""
    sty = display.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    body = _latex_math_signs(sty.to_latex(hrules=True, column_format="l" + "r" * (display.shape[1] - 1)))
    cap = caption.replace("\\", "\\textbackslash{}")
    for ch in "&%$#_{}":
        cap = cap.replace(ch, "\\" + ch)
    cap = _latex_math_signs(cap)
    return ("% requires \\usepackage{booktabs}\n\\begin{table}[t]\n\\centering\n"
            f"\\caption{{{cap}}}\n\\label{{tab:{label}}}\n{body}\\end{{table}}\n")


def write_table(item: TableItem, out_dir: Path) -> None:
    """``tables/<name>.csv`` (full precision) and ``tables/<name>.tex`` (booktabs)."""
    tdir = out_dir / "tables"
    atomic_write_text(tdir / f"{item.name}.csv", item.data.to_csv(index=False, float_format="%.10g"))
    disp = item.display if item.display is not None else format_frame(item.data)
    atomic_write_text(tdir / f"{item.name}.tex", to_latex(disp, item.caption, item.name))


def render_html(*, title: str, banner: str | None, sections: list[Section], methods: str,
                summary: list[str]) -> str:
    """The self-contained HTML page (Jinja2 template ``templates/report.html.j2``)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True, lstrip_blocks=True,
    )

    def table_html(item: TableItem) -> str:
        disp = item.display if item.display is not None else format_frame(item.data)
        return disp.to_html(index=False, escape=True, border=0, classes="data")

    def png_uri(item: FigureItem) -> str:
        return "data:image/png;base64," + base64.b64encode(item.png).decode("ascii")

    tpl = env.get_template("report.html.j2")
    return tpl.render(title=title, banner=banner, sections=sections, methods=methods,
                      summary=summary, table_html=lambda i: jinja2.utils.markupsafe.Markup(table_html(i)),
                      png_uri=png_uri)
