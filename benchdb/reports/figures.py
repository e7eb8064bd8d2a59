"""The drawing toolkit of the report's plots: matplotlib set up for SVG whose text is paths (so a
hostile model name can never become markup), and each figure's root <svg> carrying what it shows as
escaped attributes read back from the figure (data-title; data-axes: each axes' x/y label and
whether the axis is numeric), so a browser test can check every plot's title and axis labels."""

from __future__ import annotations

import html
import io
import json

MAX_SERIES = 10
MAX_BARS = 40
RATING_COLORS = {0: "#cf222e", 1: "#d4a72c", 2: "#8cc265", 3: "#1a7f37"}


def pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "path",
            "font.size": 8,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "svg.hashsalt": "benchdb",
        }
    )
    return plt


def _meta(fig) -> tuple[str, list[dict]]:
    """The figure's title (suptitle, else its axes' titles) and each axes' labels, from the figure."""
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    # fixed tick labels (set_yticks(ticks, labels): FixedFormatter, or FuncFormatter in matplotlib 3.11)
    # make an axis categorical: its label names what the ticks are, no unit
    fixed = (FixedFormatter, FuncFormatter)

    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    title = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else ""
    title = title or " | ".join(ax.get_title() for ax in axes if ax.get_title())
    return title, [
        {
            "title": ax.get_title(),
            "x": ax.get_xlabel(),
            "y": ax.get_ylabel(),
            "x_numeric": not isinstance(ax.xaxis.get_major_formatter(), fixed),
            "y_numeric": not isinstance(ax.yaxis.get_major_formatter(), fixed),
        }
        for ax in axes
    ]


def svg(fig) -> str:
    title, axes = _meta(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    pyplot().close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    attrs = (
        f' role="img" aria-label="{html.escape(title, quote=True)}" data-title="{html.escape(title, quote=True)}"'
        f' data-axes="{html.escape(json.dumps(axes), quote=True)}"'
    )
    return "<svg" + attrs + text[4:]


def legend_below(fig, ax, n: int) -> None:
    """A legend under the axes, in columns, so it never covers the data or gets cut off."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.06),
            ncol=1 if n > 6 else 2,
            fontsize=6,
            frameon=False,
        )


def short(text: str, n: int = 38) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def yerr(points: list[dict], key: str, lo: str, hi: str, scale: float = 1.0):
    """Error bar lengths from each point's interval (0 where a point has none); None when none has one."""
    if not any(p.get(lo) is not None and p.get(hi) is not None for p in points):
        return None
    return [
        [max(0.0, (p[key] - p[lo]) * scale) if p.get(lo) is not None else 0.0 for p in points],
        [max(0.0, (p[hi] - p[key]) * scale) if p.get(hi) is not None else 0.0 for p in points],
    ]
