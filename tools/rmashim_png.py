"""`rmashim report FILE.json --png OUT`: one picture of a profile, a panel per
window: operations by kind stacked by locality (self, node, remote) and the
node-local operations that fell back to MPI, by reason. matplotlib comes
from Debian's python3-matplotlib (scripts/install_deps.sh installs it)."""
import rmashim_report as report

# Panels drawn at most; the windows with the most operations come first.
MAX_PANELS = 8
COLORS = {"self": "#4c72b0", "node": "#55a868", "remote": "#c0c0c0",
          "fallback": "#c44e52"}


class NoMatplotlib(Exception):
    """python3-matplotlib is not installed."""


def pyplot():
    try:
        import matplotlib
    except ImportError as e:
        raise NoMatplotlib(
            "rmashim report --png needs python3-matplotlib "
            "(apt-get install python3-matplotlib)") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def total_ops(w):
    return sum(report.op_count(w, op, r)
               for op in report.OPS for r in report.REACHES)


def chosen_windows(doc):
    """The windows to draw (busiest first) and how many were left out."""
    windows = sorted(doc.get("windows", []), key=total_ops, reverse=True)
    return windows[:MAX_PANELS], max(0, len(windows) - MAX_PANELS)


def draw_ops(ax, w):
    """Stacked bars per operation kind; one red bar per fallback reason."""
    ops = [op for op in report.OPS if any(report.op_count(w, op, r)
                                          for r in report.REACHES)]
    fallbacks = report.fallback_counts(w)
    labels = ops + [f"fell back:\n{key}" for key in fallbacks]
    positions = range(len(labels))
    bottom = [0] * len(ops)
    for reach in report.REACHES:
        heights = [report.op_count(w, op, reach) for op in ops]
        ax.bar(range(len(ops)), heights, bottom=bottom, label=reach,
               color=COLORS[reach])
        bottom = [b + h for b, h in zip(bottom, heights)]
    if fallbacks:
        ax.bar(range(len(ops), len(labels)), list(fallbacks.values()),
               color=COLORS["fallback"], label="fell back to MPI")
    ax.set_xticks(list(positions))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("operations (all ranks)")
    ax.yaxis.get_major_locator().set_params(integer=True)
    if not labels:
        ax.text(0.5, 0.5, "no RMA operations", ha="center", va="center",
                transform=ax.transAxes)


def panel_title(w):
    local = report.local_ops(w)
    served = report.served_ops(w)
    return (f"{report.title(w)}\nserved in shared memory: {served} of "
            f"{local} node-local ops ({report.percent(served, local)})")


def draw(doc, out_path):
    """Writes the picture of `doc` to `out_path` (PNG)."""
    plt = pyplot()
    windows, left_out = chosen_windows(doc)
    panels = max(1, len(windows))
    fig, axes = plt.subplots(panels, 1, figsize=(10, 3.6 * panels),
                             squeeze=False)
    for ax, w in zip(axes[:, 0], windows):
        draw_ops(ax, w)
        ax.set_title(panel_title(w), fontsize=9)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if not windows:
        axes[0, 0].text(0.5, 0.5, "no windows in this profile", ha="center",
                        va="center")
        axes[0, 0].set_axis_off()
    heading = f"rmashim profile: {doc.get('ranks', '?')} ranks"
    if left_out:
        heading += f" ({left_out} quieter windows not drawn)"
    fig.suptitle(heading)
    fig.tight_layout()
    fig.savefig(out_path, format="png", dpi=100)
    plt.close(fig)
