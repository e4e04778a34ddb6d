"""Rendering: the report's content model and its HTML, CSV and LaTeX (booktabs) outputs.

The HTML is self-contained (CSS inline, figures embedded as base64 PNG, no scripts), built with
a Jinja2 template with autoescaping; tables are written as CSV (full precision) and LaTeX
(booktabs rules, formatted numbers). All files are written atomically.
"""

from __future__ import annotations

import base64
import re
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.csvsafe import neutralise_frame
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
        if v != 0 and abs(v) >= 1e5:  # large counts and sums: whole numbers, grouped by thousands
            return f"{v:,.0f}" if abs(v) < 1e12 else _times_ten(v)
        if v != 0 and abs(v) < 1e-3:
            return _times_ten(v)
        if abs(v) >= 100:
            return f"{v:.1f}"
        if abs(v) >= 10:
            return f"{v:.2f}"
        return f"{v:.3f}"
    return str(v)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _times_ten(v: float) -> str:
    """3 significant digits in scientific notation as a paper prints it: ``1.23×10⁻⁵``."""
    mantissa, exponent = f"{v:.2e}".split("e")
    return f"{mantissa}×10{str(int(exponent)).translate(_SUPERSCRIPT)}"


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


#: Human column headers (with units where there are any) for tables shown without a display frame.
HEADERS = {
    "system": "System", "rank": "Rank", "log_strength": "Log-strength", "se": "SE", "ci_low": "CI low",
    "ci_high": "CI high", "elo": "Elo", "elo_low": "Elo CI low", "elo_high": "Elo CI high",
    "answers": "Answers", "win_share": "Win share", "comparison": "Comparison", "n": "n",
    "n_participants": "Raters", "participants": "Participants", "mean": "Mean", "median": "Median",
    "sd": "SD", "p": "p", "p_holm": "p (Holm)", "p_wilcoxon": "p (Wilcoxon)", "p_sign": "p (sign)",
    "p_adjusted": "p (adjusted)", "significant": "Significant", "mean_left": "Mean left pref.",
    "t_low": "t CI low", "t_high": "t CI high", "share_left": "Share left", "model": "Model",
    "term": "Term", "estimate": "Estimate", "status": "Status", "alpha": "Alpha", "units": "Units",
    "pairable_values": "Pairable values", "level": "Level", "metric": "Metric", "H": "H",
    "epsilon2": "ε²", "tau": "Kendall τ", "q25": "Q1", "q75": "Q3", "stage": "Stage",
    "rule": "Rule", "system_a": "System A", "system_b": "System B", "difference": "Difference",
    "mean_diff": "Mean diff.", "median_diff": "Median diff.", "rank_biserial": "Rank-biserial r",
    "wilcoxon_W": "W", "data": "Data", "note": "Note", "reason": "Reason", "count": "Count",
    "share": "Share", "votes": "Votes", "segment": "Segment", "side": "Side",
}
#: A LaTeX table with more columns than this is split into parts; more than
#: :data:`LATEX_COLUMN_MAX` columns make it a two-column ``table*``.
LATEX_SPLIT_OVER = 8
LATEX_COLUMN_MAX = 6


def human_header(col: str) -> str:
    """A column name as a human header: :data:`HEADERS`, else snake_case turned into words."""
    col = str(col)
    if col in HEADERS:
        return HEADERS[col]
    text = col.replace("_", " ").strip()
    return text[:1].upper() + text[1:] if text and not text[:1].isupper() else text


def display_frame(item: "TableItem") -> pd.DataFrame:
    """The strings shown in HTML and LaTeX: the item's display frame, or its data formatted with
    human headers."""
    if item.display is not None:
        return item.display
    disp = format_frame(_readable_cells(item.data))
    disp.columns = [human_header(c) for c in item.data.columns]
    return disp


#: A text cell spelled like a column name (``offset_mad_rule_s``): shown in words.
_IDENTIFIER = re.compile(r"[a-z]+(_[a-z0-9]+)+")
#: Numbers within this share of their column's largest magnitude (at least 1) of zero are
#: rounding noise of a computation (e.g. 2.2e-16 for a difference of equal values): shown as 0.
NOISE_SHARE = 1e-12


def _readable_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Cells as a reader should see them: identifiers in words (the metric registry's label when
    it knows the name), floating-point noise as 0. The table's data (CSV) keep the raw values."""
    from evalkit.features.registry import metric_info

    out = df.copy()
    for c in out.columns:
        col = out[c]
        if pd.api.types.is_float_dtype(col):
            x = col.to_numpy(float)
            big = np.nanmax(np.abs(x)) if np.isfinite(x).any() else 0.0
            noise = np.isfinite(x) & (x != 0) & (np.abs(x) <= NOISE_SHARE * max(1.0, big))
            if noise.any():
                out[c] = np.where(noise, 0.0, x)
        elif col.dtype == object or pd.api.types.is_string_dtype(col):
            def words(v):
                if isinstance(v, str) and _IDENTIFIER.fullmatch(v):
                    info = metric_info(v)
                    return info.heading if info else human_header(v)
                return v
            out[c] = [words(v) for v in col.tolist()]
    return out


#: Characters that need a command in LaTeX (pdfLaTeX's default inputenc knows none of the Greek).
_LATEX_CHARS = {
    "\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
    "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}",
    "<": "$<$", ">": "$>$", "±": "$\\pm$", "−": "$-$", "–": "--", "—": "---", "ε": "$\\varepsilon$",
    "²": "$^2$", "τ": "$\\tau$", "α": "$\\alpha$", "χ": "$\\chi$", "†": "\\dag{}", "×": "$\\times$",
    "≥": "$\\geq$", "≤": "$\\leq$", "∞": "$\\infty$", "·": "$\\cdot$", "→": "$\\rightarrow$",
    "←": "$\\leftarrow$", "Δ": "$\\Delta$",
}


_POWER_OF_TEN = re.compile("×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def _latex_escape(text: str) -> str:
    """Text for a LaTeX table cell or caption: specials escaped, symbols as math (``×10⁻⁵`` as
    ``$\\times 10^{-5}$``)."""
    parts = _POWER_OF_TEN.split(str(text))
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"$\\times 10^{{{part.translate(_FROM_SUPERSCRIPT)}}}$")
        else:
            out.append("".join(_LATEX_CHARS.get(ch, ch) for ch in part))
    return "".join(out)


#: Width (CSS px at the report's table font) a shown table may take: the page's 1,100 px column
#: less room for padding; about the width of an A4 page at the print font.
HTML_TABLE_WIDTH = 960
_NUMBER_LIKE = re.compile(r"[−\-–<>≥≤+]?[\d∞.]")


def key_columns(display: pd.DataFrame, most: int = 4) -> int:
    """How many leading columns of a shown table name its rows (text, not numbers): repeated in
    every part when the table is split. At least 1, at most ``most``."""
    n = 0
    for c in display.columns[:most]:
        cells = [str(v) for v in display[c].tolist() if str(v) not in ("", "–")]
        if cells and sum(bool(_NUMBER_LIKE.match(v)) for v in cells) > len(cells) / 2:
            break
        n += 1
    return max(1, min(n, display.shape[1] - 1)) if display.shape[1] > 1 else 1


def _column_width(display: pd.DataFrame, c) -> float:
    """Estimated width (px) of one column: its longest cell, or its header's longest word (headers
    wrap), at about 6.8 px per character of a cell and 8 of a (bold) header word, as measured in
    chromium at the table font, plus padding."""
    longest_cell = max((len(str(v)) for v in display[c].tolist()), default=0)
    longest_word = max((len(w) for w in str(c).split()), default=0)
    return max(6.8 * longest_cell, 8.0 * longest_word) + 16


def split_columns(display: pd.DataFrame, width: float = HTML_TABLE_WIDTH) -> list[pd.DataFrame]:
    """A shown table as parts no wider than ``width`` px (estimated), each repeating the key
    columns (:func:`key_columns`); one part when it fits."""
    widths = {c: _column_width(display, c) for c in display.columns}
    if sum(widths.values()) <= width or display.shape[1] <= 2:
        return [display]
    keys = list(display.columns[:key_columns(display)])
    budget = max(width - sum(widths[k] for k in keys), 0.0)
    parts, current, used = [], [], 0.0
    for c in display.columns[len(keys):]:
        if current and used + widths[c] > budget:
            parts.append(current)
            current, used = [], 0.0
        current.append(c)
        used += widths[c]
    parts.append(current)
    return [display[keys + p] for p in parts]


def to_latex(display: pd.DataFrame, caption: str, label: str) -> str:
    """Booktabs LaTeX (``\\toprule``/``\\midrule``/``\\bottomrule``), cells escaped.

    Paper sizes: up to :data:`LATEX_COLUMN_MAX` columns a one-column ``table``; up to
    :data:`LATEX_SPLIT_OVER` a two-column ``table*``; wider tables are split into parts of at
    most that many columns, each repeating the first (key) column.
    """
    ncol = display.shape[1]
    if ncol > LATEX_SPLIT_OVER:
        keys = list(display.columns[:min(key_columns(display), LATEX_SPLIT_OVER - 2)])
        rest = list(display.columns[len(keys):])
        per = LATEX_SPLIT_OVER - len(keys)
        chunks = [rest[i:i + per] for i in range(0, len(rest), per)]
        return "".join(to_latex(display[keys + c], f"{caption} (part {i + 1} of {len(chunks)})",
                                f"{label}-{i + 1}") for i, c in enumerate(chunks))
    env = "table" if ncol <= LATEX_COLUMN_MAX else "table*"
    head = " & ".join(_latex_escape(c) for c in display.columns) + " \\\\"
    rows = [" & ".join(_latex_escape(v) for v in r) + " \\\\" for r in display.astype(str).itertuples(index=False)]
    body = ("\\begin{tabular}{l" + "r" * (ncol - 1) + "}\n\\toprule\n" + head + "\n\\midrule\n"
            + "\n".join(rows) + ("\n" if rows else "") + "\\bottomrule\n\\end{tabular}\n")
    return (f"% requires \\usepackage{{booktabs}}\n\\begin{{{env}}}[t]\n\\centering\n"
            f"\\caption{{{_latex_escape(caption)}}}\n\\label{{tab:{label}}}\n{body}\\end{{{env}}}\n")


def write_table(item: TableItem, out_dir: Path) -> None:
    """``tables/<name>.csv`` (full precision; text cells formula-neutralised, OWASP) and
    ``tables/<name>.tex`` (booktabs, human headers, paper-sized)."""
    tdir = out_dir / "tables"
    atomic_write_text(tdir / f"{item.name}.csv",
                      neutralise_frame(item.data).to_csv(index=False, float_format="%.10g"))
    atomic_write_text(tdir / f"{item.name}.tex", to_latex(display_frame(item), item.caption, item.name))


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
        parts = split_columns(display_frame(item))
        html = []
        for i, part in enumerate(parts):
            if len(parts) > 1:
                html.append(f'<div class="part">Part {i + 1} of {len(parts)}'
                            + (" (more columns; the row names repeated)" if i else "") + "</div>")
            html.append(part.to_html(index=False, escape=True, border=0, classes="data"))
        return "\n".join(html)

    def png_uri(item: FigureItem) -> str:
        return "data:image/png;base64," + base64.b64encode(item.png).decode("ascii")

    tpl = env.get_template("report.html.j2")
    return tpl.render(title=title, banner=banner, sections=sections, methods=methods,
                      summary=summary, table_html=lambda i: jinja2.utils.markupsafe.Markup(table_html(i)),
                      png_uri=png_uri)
