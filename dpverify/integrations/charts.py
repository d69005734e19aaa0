"""Line charts as inline SVG, drawn with matplotlib, for the HTML reports.

:func:`line_chart` draws series of ``(x, y)`` points on one axes and returns an ``<svg>`` element to
paste into a page: no XML prolog, no metadata, no date, ids prefixed so that many charts share one
page, text left as ``<text>`` (``svg.fonttype = 'none'``: the page's font draws it, the file stays
small) and coordinates to 0.01 pt. The same input gives the same bytes (``svg.hashsalt`` fixed).

Axes: ticks at round numbers, labels printed short (``0.05``, not ``5.000e-02``); the y axis is
logarithmic when the series' magnitudes differ by more than :data:`LOG_RATIO` (a claim's constant
eight times the measured value would otherwise flatten the measurement against the axis). The x
axis reaches past every marker-only point (a claim's star is inside the plot, whatever the series
beside it span). The legend shows each series' line and marker, above the axes and inside the
chart: its entries side by side when they fit in :data:`LEGEND_WIDTH` of the chart's width, else
one under the other; a label longer than :data:`LEGEND_CHARS` characters wraps.

matplotlib is imported only when a chart is drawn (``import dpverify`` stays fast), through
``matplotlib.figure.Figure`` and the Agg canvas: no pyplot, no global backend change. rcParams
are set only inside an ``rc_context`` and restored.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Series", "line_chart", "profile_chart", "omitted", "wants_log_scale", "LOG_RATIO", "SIZE", "LEGEND_WIDTH",
           "LEGEND_CHARS", "MARGIN"]

#: Series whose magnitudes differ by more than this share a logarithmic y axis.
LOG_RATIO = 10.0
#: A chart's width and height in inches (72 pt each; 1 pt = 4/3 CSS px): 4.6 in is 442 px, its text
#: 11 pt (the legend 10 pt); on a 390 px phone the page shrinks it to about 345 px, the text to about
#: 11 px (10 px).
SIZE = (4.6, 3.0)
#: The share of the chart's width its legend may take: matplotlib measures the text in DejaVu Sans,
#: the page may draw it in a font a little wider (Verdana, where DejaVu Sans is missing).
LEGEND_WIDTH = 0.9
#: A legend label longer than this wraps (at 10 pt, about 230 pt of the chart's 331).
LEGEND_CHARS = 38
#: The margin left beside a marker-only point at an end of the x axis, as a share of the axis' span
#: before it is widened for the point (the span matplotlib chose, stretched to the points if need be).
MARGIN = 0.06
#: Colours that stay apart for colour-blind readers (Okabe–Ito).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
_RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "dpverify",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 11.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.frameon": True,
    "legend.framealpha": 0.9,
    "legend.edgecolor": "#cccccc",
    "path.simplify": True,
}


@dataclass(frozen=True)
class Series:
    """One series: its legend ``label`` and points; ``marker_only`` draws the points without a line
    (a claim's single point)."""

    label: str
    points: tuple[tuple[float, float], ...]
    marker_only: bool = False
    marker: str = "o"


def _magnitude(series: Series) -> float | None:
    """The geometric mean of the series' positive finite y values (None if it has none)."""
    values = [y for _, y in series.points if math.isfinite(y) and y > 0]
    if not values:
        return None
    return math.exp(math.fsum(math.log(y) for y in values) / len(values))


def wants_log_scale(series: Sequence[Series]) -> bool:
    """True when two series' magnitudes (geometric means of their positive values) differ by more
    than :data:`LOG_RATIO`: one series' own range never makes the axis logarithmic."""
    magnitudes = [m for m in map(_magnitude, series) if m is not None]
    return len(magnitudes) > 1 and max(magnitudes) / min(magnitudes) > LOG_RATIO


def _short(value: float) -> str:
    """A tick label: ``0.05``, ``1``, ``2.5``, ``1e-05`` (no float noise: ``0.30000000000000004`` is ``0.3``)."""
    if value == 0:
        return "0"
    return f"{value:.4g}"


def line_chart(series: Sequence[Series], *, x_label: str, y_label: str, title: str, prefix: str,
               size: tuple[float, float] = SIZE) -> str:
    """An ``<svg>`` element: ``series`` on one axes with a legend, ``title`` as its accessible name.

    Args:
        series: the series; points with a non-finite y are left out (so are y <= 0 on a log axis:
            :func:`omitted` counts them, for the page to say so).
        x_label, y_label: the axis labels.
        title: the chart's accessible name (``<title>``); the page prints the visible title.
        prefix: a prefix for every id in the SVG, unique on the page (``"chart-3-"``).
        size: width and height in inches (72 pt each).

    Raises:
        ValueError: no series has a point to draw.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    log = wants_log_scale(series)
    drawable = [(s, _drawable(s, log)) for s in series]
    if not any(points for _, points in drawable):
        raise ValueError(f"chart {title!r}: no series has a finite point to draw; series={[s.label for s in series]}")
    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=size, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        for index, (s, points) in enumerate(drawable):
            if not points:
                continue
            xs, ys = zip(*points)
            colour = PALETTE[index % len(PALETTE)]
            label = textwrap.fill(s.label, LEGEND_CHARS)
            if s.marker_only:
                axes.plot(xs, ys, linestyle="none", marker=s.marker, markersize=9, color=colour, label=label,
                          zorder=3, clip_on=False)
            else:  # not clipped: a point on the axis (delta = 0) shows whole
                axes.plot(xs, ys, marker=s.marker, markersize=4, linewidth=1.6, color=colour, label=label,
                          clip_on=False)
        _reach_markers(axes, [x for s, points in drawable if s.marker_only for x, _ in points])
        formatter = FuncFormatter(lambda value, _: _short(value))
        axes.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        axes.xaxis.set_major_formatter(formatter)
        if log:
            axes.set_yscale("log")
            low, high = axes.get_ylim()
            decades = math.log10(high / low)
            axes.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades < 3 else (1.0,)))
            axes.yaxis.set_minor_formatter(NullFormatter())
        else:
            axes.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
            if min(y for _, points in drawable for _, y in points) >= 0:
                axes.set_ylim(bottom=0)  # deltas, losses, ratios: from 0, so a small change does not look large
        axes.yaxis.set_major_formatter(formatter)
        axes.set_xlabel(x_label)
        axes.set_ylabel(y_label + (" (log scale)" if log else ""))
        _legend(figure, sum(1 for _, points in drawable if points))  # never over the data
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    return _inline(out.getvalue(), title, prefix)


def _reach_markers(axes: Any, xs: Sequence[float]) -> None:
    """The x axis widened, when it must be, to hold every x in ``xs`` with :data:`MARGIN` of its span
    to spare on either side (a star at the axis' end would stand half outside the plot)."""
    if not xs:
        return
    low, high = axes.get_xlim()
    span = max(high, *xs) - min(low, *xs) or 1.0
    axes.set_xlim(min(low, min(xs) - MARGIN * span), max(high, max(xs) + MARGIN * span))


def _legend(figure: Any, entries: int) -> Any:
    """The figure's legend above the axes: its entries side by side (at most 3 to a row) when that
    fits in :data:`LEGEND_WIDTH` of the figure's width, else in fewer columns, down to one."""
    renderer = figure.canvas.get_renderer()
    for columns in range(min(entries, 3), 1, -1):
        legend = figure.legend(loc="outside upper center", ncols=columns, fontsize=10)
        if legend.get_window_extent(renderer).width <= LEGEND_WIDTH * figure.bbox.width:
            return legend
        legend.remove()
    return figure.legend(loc="outside upper center", ncols=1, fontsize=10)


def profile_chart(profile: Sequence[tuple[float, float]], claim: tuple[float, float], *, title: str,
                  prefix: str) -> str:
    """A privacy profile δ(ε) with the claim ``(epsilon, delta)`` marked by a star: the claim holds
    where its star lies on or above the curve. The axes include the star, inside the plot (a claim at
    ε = 2.773 beside a profile swept to 1 widens the x axis past it)."""
    epsilon, delta = claim
    star = Series(f"claim (ε={_short(epsilon)}, δ={_short(delta)})", ((epsilon, delta),), marker_only=True,
                  marker="*")
    return line_chart([Series("worst-case δ(ε) over all pairs", tuple(profile)), star], x_label="ε", y_label="δ",
                      title=title, prefix=prefix)


def _drawable(series: Series, log: bool) -> list[tuple[float, float]]:
    return [(x, y) for x, y in series.points if math.isfinite(x) and math.isfinite(y) and (y > 0 or not log)]


def omitted(series: Sequence[Series]) -> int:
    """How many points :func:`line_chart` leaves out (non-finite y; y <= 0 on a log axis)."""
    log = wants_log_scale(series)
    return sum(len(s.points) - len(_drawable(s, log)) for s in series)


_NUMBER = re.compile(r"(-?\d+\.\d\d)\d+")
_GEOMETRY = re.compile(r'\b(d|x|y|x1|x2|y1|y2|width|height|transform|viewBox)="([^"]*)"')
_GIDS = re.compile(r' id="[\w.]+_\d+"')  # matplotlib's group ids: figure_1, patch_2, matplotlib.axis_1...


def _cut_decimals(match: re.Match[str]) -> str:
    values = " ".join(_NUMBER.sub(r"\1", match.group(2)).split())
    return f'{match.group(1)}="{values}"'


_SVG = "http://www.w3.org/2000/svg"
_XLINK = "http://www.w3.org/1999/xlink"


def _unwrap_groups(svg: str) -> str:
    """``<g>`` elements without attributes replaced by their children (matplotlib nests every
    artist in one), written back with the same namespaces."""
    import xml.etree.ElementTree as ET

    ET.register_namespace("", _SVG)
    ET.register_namespace("xlink", _XLINK)
    root = ET.fromstring(svg)
    group = f"{{{_SVG}}}g"

    def flatten(element: ET.Element) -> None:
        children = list(element)
        for child in children:
            flatten(child)
        if not any(child.tag == group and not child.attrib for child in children):
            return
        kept: list[ET.Element] = []
        for child in children:
            if child.tag == group and not child.attrib and not (child.text or "").strip():
                kept.extend(child)
            else:
                kept.append(child)
        element[:] = kept

    flatten(root)
    return ET.tostring(root, encoding="unicode")


def _inline(svg: str, title: str, prefix: str) -> str:
    """matplotlib's SVG document as an element for a page: prolog, metadata and stylesheet dropped,
    group ids dropped (the legend's group becomes ``class="legend"``), the remaining ids (markers,
    clip paths) prefixed, coordinates cut to 0.01 pt, the font left to the page, ``<title>`` added."""
    from html import escape

    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r'\s*<defs>\s*<style type="text/css">.*?</style>\s*</defs>', "", svg, flags=re.S)
    svg = re.sub(r' id="legend_\d+"', ' class="legend"', svg)
    svg = _GIDS.sub("", svg)
    svg = re.sub(r"font-family: [^;\"]*;?\s*", "", svg)
    svg = re.sub(r'\s*transform="rotate\(-0 [^"]*\)"', "", svg)  # matplotlib's no-op rotation of every label
    svg = _unwrap_groups(svg)
    svg = re.sub(r' id="([^"]+)"', lambda m: f' id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r'(xlink:href|href)="#([^"]+)"', lambda m: f'{m.group(1)}="#{prefix}{m.group(2)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = _GEOMETRY.sub(_cut_decimals, svg)
    svg = re.sub(r"\s*\n\s*", "\n", svg).replace(" />", "/>")
    head_end = svg.index(">") + 1
    return (svg[:head_end].replace("<svg ", f'<svg role="img" aria-label="{escape(title)}" ', 1)
            + f"\n<title>{escape(title)}</title>" + svg[head_end:])
