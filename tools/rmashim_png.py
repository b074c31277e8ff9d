"""`rmashim report FILE.json --png OUT`: one picture of a profile, laid out
the way users of mpiP or Score-P look for things: (a) who talks to whom,
the job's origin x target matrix of bytes in world ranks on a log colour
scale; (b) where the time went, each rank's synchronization time stacked
by call and the part of it spent waiting for locks; (c) the busiest
windows (at most MAX_WINDOWS), their operations served in shared memory,
remote ones through the targets' agents or passed to MPI, and node-local
ones fallen back to MPI with the reasons. Ranks
are grouped into at most MAX_BINS bins so that a thousand ranks and
windows stay readable. matplotlib comes from Debian's python3-matplotlib
(scripts/install_deps.sh installs it)."""
import rmashim_report as report

MAX_WINDOWS = 8  # windows drawn, busiest first
MAX_BINS = 64  # bins a side of the matrix and along the ranks axis
COLORS = {"served": "#55a868", "agent": "#8172b3", "remote": "#c0c0c0",
          "fallback": "#c44e52", "lock wait": "black"}


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
    return windows[:MAX_WINDOWS], max(0, len(windows) - MAX_WINDOWS)


def regroup(ranks, bin_size):
    """World ranks per drawn bin: a multiple of the JSON's `bin_size` that
    leaves at most MAX_BINS bins."""
    group = bin_size
    while -(-ranks // group) > MAX_BINS:
        group += bin_size
    return group


def bin_label(b, group, ranks):
    first, last = b * group, min(ranks, (b + 1) * group) - 1
    return str(first) if first == last else f"{first}-{last}"


def bin_ticks(ax, axis, group, ranks, bins):
    """At most about 16 labelled ticks, each naming its bin's ranks."""
    step = max(1, -(-bins // 16))
    ticks = list(range(0, bins, step))
    labels = [bin_label(b, group, ranks) for b in ticks]
    if axis == "x":
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, rotation=90 if group > 1 else 0,
                           fontsize=7)
    else:
        ax.set_yticks(ticks)
        ax.set_yticklabels(labels, fontsize=7)


def traffic_grid(doc):
    """The job's matrix of bytes (ops where no bytes moved) regrouped:
    (grid rows = origin bins, ranks per bin, what the cells count), or None
    for a profile without a matrix."""
    traffic = report.schema.traffic(doc)
    if not traffic or not traffic["matrix"]:
        return None
    ranks = doc["ranks"]
    group = regroup(ranks, traffic["bin_size"])
    per = group // traffic["bin_size"]
    bins = -(-ranks // group)
    grid = [[0] * bins for _ in range(bins)]
    moved = any(c[3] for c in traffic["matrix"])
    for origin, target, ops, nbytes in traffic["matrix"]:
        grid[origin // per][target // per] += nbytes if moved else ops
    return grid, group, "bytes" if moved else "operations"


def draw_matrix(fig, ax, doc):
    """(a) who talks to whom; returns the bins a side (0: nothing drawn)."""
    from matplotlib.colors import LogNorm
    ax.set_title("(a) who talks to whom: origin x target, all windows",
                 fontsize=10)
    found = traffic_grid(doc)
    if found is None:
        ax.text(0.5, 0.5, "no traffic recorded\n(no operations, or a "
                "profile from before the matrix)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return 0
    grid, group, unit = found
    import numpy
    values = numpy.array(grid, dtype=float)
    masked = numpy.ma.masked_less_equal(values, 0)
    top = values.max()
    image = ax.imshow(masked, cmap="viridis", origin="upper",
                      interpolation="nearest", aspect="equal",
                      norm=LogNorm(vmin=max(1.0, masked.min()),
                                   vmax=max(2.0, top)))
    ax.set_facecolor("#f4f4f4")
    bins = len(grid)
    bin_ticks(ax, "x", group, doc["ranks"], bins)
    bin_ticks(ax, "y", group, doc["ranks"], bins)
    grouped = f", {group} ranks per cell" if group > 1 else ""
    ax.set_xlabel(f"target (world rank{grouped})")
    ax.set_ylabel("origin (world rank)")
    fig.colorbar(image, ax=ax, shrink=0.8, label=f"{unit} (log scale)")
    if bins <= 16:  # few cells: their values too, light on dark
        norm = image.norm
        for o, row in enumerate(grid):
            for t, v in enumerate(row):
                if v:
                    ax.text(t, o, human(v), ha="center", va="center",
                            fontsize=8, color="white" if norm(v) < 0.6
                            else "black")
    return bins


def human(n):
    """`n` in at most four digits and a unit (K, M, G, T: powers of 1024)."""
    for unit in ["", "K", "M", "G"]:
        if n < 10000:
            return f"{n:.0f}{unit}"
        n /= 1024
    return f"{n:.0f}T"


def rank_times(doc):
    """({call: seconds per drawn bin}, lock wait per bin, ranks per bin):
    sums over windows, averaged over the ranks of a bin."""
    per = report.schema.per_rank(doc)
    if not per:
        return None
    ranks = doc["ranks"]
    group = regroup(ranks, 1)
    bins = -(-ranks // group)

    def binned(values):
        out = [0.0] * bins
        for r, v in enumerate(values):
            out[r // group] += v
        return [v / min(group, ranks - b * group) for b, v in enumerate(out)]

    calls = {c: binned(v) for c, v in per["sync_seconds"].items() if any(v)}
    return calls, binned(per["lock_wait_seconds"]), group


def draw_time(ax, doc):
    """(b) where the time went; returns the bars drawn."""
    ax.set_title("(b) where the time went: synchronization per rank, "
                 "all windows", fontsize=10)
    found = rank_times(doc)
    if not found or not found[0]:
        ax.text(0.5, 0.5, "no synchronization time recorded", ha="center",
                va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return 0
    calls, lock_wait, group = found
    scale, unit = (1e3, "ms") if max(
        sum(v) for v in zip(*calls.values())) < 1 else (1, "s")
    bins = len(lock_wait)
    bottom = [0.0] * bins
    cmap = __import__("matplotlib").colormaps["tab20"]
    for i, call in enumerate(c for c in report.SYNCS if c in calls):
        heights = [v * scale for v in calls[call]]
        top = [b + h for b, h in zip(bottom, heights)]
        if bins <= 16:
            ax.bar(range(bins), heights, bottom=bottom, width=0.85,
                   label=call, color=cmap(i % 20))
        else:  # one polygon per call, not a bar per rank: quick to draw
            ax.fill_between(range(bins), bottom, top, step="mid",
                            label=call, color=cmap(i % 20), linewidth=0)
        bottom = top
    if any(lock_wait):
        ax.hlines([v * scale for v in lock_wait],
                  [b - 0.42 for b in range(bins)],
                  [b + 0.42 for b in range(bins)], linewidth=2,
                  color=COLORS["lock wait"], label="of which lock waits")
    bin_ticks(ax, "x", group, doc["ranks"], bins)
    ax.set_xlabel("world rank" + (f" (mean over each {group} ranks)"
                                  if group > 1 else ""))
    ax.set_ylabel(f"time synchronizing ({unit})")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return bins


def fallback_text(w):
    reasons = report.fallback_counts(w)
    return ", ".join(f"{k} {n}" for k, n in reasons.items())


def draw_windows(ax, doc):
    """(c) the busiest windows: served, remote, fallen back (reasons)."""
    windows, left_out = chosen_windows(doc)
    more = f"; {left_out} quieter windows not drawn" if left_out else ""
    ax.set_title(f"(c) busiest windows by operations (all ranks){more}",
                 fontsize=10)
    if not windows:
        ax.text(0.5, 0.5, "no windows in this profile", ha="center",
                va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return windows
    rows = range(len(windows))
    parts = {
        "served": [report.served_ops(w) for w in windows],
        "agent": [report.schema.remote_split(w)[0] for w in windows],
        "remote": [report.schema.remote_split(w)[1] for w in windows],
        "fallback": [sum(report.fallback_counts(w).values())
                     for w in windows],
    }
    left = [0] * len(windows)
    labels = {"served": "served in shared memory",
              "agent": "remote, through the target's agent",
              "remote": "remote, to MPI",
              "fallback": "node-local, fell back to MPI"}
    for part, widths in parts.items():
        ax.barh(list(rows), widths, left=left, color=COLORS[part],
                label=labels[part])
        left = [a + b for a, b in zip(left, widths)]
    for row, w in zip(rows, windows):
        reasons = fallback_text(w)
        if reasons:
            ax.text(left[row], row, f"  fell back: {reasons}",
                    va="center", fontsize=7, color=COLORS["fallback"])
        elif not left[row]:
            ax.text(0, row, "  no operations", va="center", fontsize=7)
    ax.set_yticks(list(rows))
    ax.set_yticklabels([report.title(w) for w in windows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, max(left) * 1.45 if max(left) else 1)
    ax.set_xlabel("operations")
    ax.legend(fontsize=7, loc="lower right")
    return windows


def draw(doc, out_path):
    """Writes the picture of `doc` to `out_path` (PNG); returns what it
    drew: {"panels": titles, "matrix_bins", "rank_bars", "windows"}."""
    plt = pyplot()
    fig = plt.figure(figsize=(16, 12), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[1.15, 1],
                            width_ratios=[1, 1.25])
    ax_matrix = fig.add_subplot(grid[0, 0])
    ax_time = fig.add_subplot(grid[0, 1])
    ax_windows = fig.add_subplot(grid[1, :])
    summary = {
        "matrix_bins": draw_matrix(fig, ax_matrix, doc),
        "rank_bars": draw_time(ax_time, doc),
        "windows": [w["id"] for w in draw_windows(ax_windows, doc)],
    }
    summary["panels"] = [a.get_title() for a in
                         (ax_matrix, ax_time, ax_windows)]
    windows = doc.get("windows", [])
    local = sum(report.local_ops(w) for w in windows)
    served = sum(report.served_ops(w) for w in windows)
    fig.suptitle(f"rmashim profile: {doc.get('ranks', '?')} ranks, "
                 f"{len(windows)} windows; served in shared memory: "
                 f"{served} of {local} node-local operations "
                 f"({report.percent(served, local)})")
    fig.savefig(out_path, format="png", dpi=100)
    plt.close(fig)
    return summary
