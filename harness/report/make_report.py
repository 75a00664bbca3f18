#!/usr/bin/env python3
"""Draws specbench's report site from the report data `specbench report` writes.

Usage: make_report.py REPORT_DATA_JSON OUT_DIR

Writes OUT_DIR/index.html, one OUT_DIR/kernel-<name>.html and OUT_DIR/history-<name>.html per
kernel, and OUT_DIR/summary.md, with mode 0644 (as the umask allows). Progress (pages written, ETA)
goes to stderr.

Exit codes, which specbench turns into its message: 0 done; 2 bad usage; 3 a Python module is
missing (matplotlib); 4 an operating-system error (full disk, no permission: the message names the
file and the cause); 5 any other exception (a bug: the traceback follows).
Every figure is an inline SVG drawn by matplotlib with its text as paths, so the pages need no
script, font or file beyond themselves. Every string from the data is HTML-escaped (in Markdown too,
where table cells also have '|' and newlines neutralised). The numbers are computed by specbench
(harness/results/history.cpp); this script only draws and formats them. It names no backend: each
backend's device, colours, order and language comparison come from the data's "backends" table (the
harness's backend records); data written before that table existed falls back to backends.json
beside this script, the same table written out once (`specbench list --backends-json`).
"""

import datetime
import html
import io
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback

EXIT_USAGE, EXIT_MODULE, EXIT_OS, EXIT_BUG = 2, 3, 4, 5

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
    from matplotlib import ticker  # noqa: E402
except ImportError as e:  # noqa: F841
    sys.stderr.write("make_report.py: missing Python module '%s' (%s): run "
                     "harness/scripts/setup.sh, or set SPECBENCH_PYTHON to a Python with "
                     "matplotlib\n" % (getattr(e, "name", None) or "?", e))
    sys.exit(EXIT_MODULE)

plt.rcParams["svg.fonttype"] = "path"  # glyphs as paths: no font needed to show the text
plt.rcParams["svg.hashsalt"] = "specbench"  # stable ids, so unchanged charts give unchanged files
plt.rcParams["font.size"] = 9
plt.rcParams["text.usetex"] = False
plt.rcParams["text.parse_math"] = False  # a '$' in a name is text, never mathtext
plt.rcParams["axes.formatter.use_mathtext"] = False

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 72em; padding: 0 1em;
       color: #222; line-height: 1.4; }
p, figcaption { max-width: 48em; }
h1, h2, h3 { scroll-margin-top: 0.5em; }
h2 a.anchor, h3 a.anchor { margin-left: 0.3em; color: #bbb; text-decoration: none;
                           font-weight: normal; }
h2:hover a.anchor, h3:hover a.anchor { color: #555; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 90%; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: #b00020; font-weight: bold; }
.warn { color: #a05a00; }
.good { color: #1b7a1b; }
.muted { color: #777; }
figure { margin: 0.5em 0 1.5em; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 90%; color: #444; }
nav a { margin-right: 1em; }
nav.toc { font-size: 90%; margin: 0.5em 0 1em; }
nav.toc a { margin: 0 0.3em; }
"""

# The backend records (name -> record), in the harness's order; set by use_backends().
BACKENDS = {}
# Colour maps for backends without a record (one hue family per backend; its variants are shades).
EXTRA_CMAPS = ["BuGn", "PuBu", "YlGn", "OrRd", "GnBu"]
FALLBACK_BACKENDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "backends.json")


def use_backends(data):
    """Takes the records from the report data, or from backends.json for older data."""
    records = data.get("backends")
    if not isinstance(records, list):
        with open(FALLBACK_BACKENDS, encoding="utf-8") as f:
            records = json.load(f)
    BACKENDS.clear()
    for r in records:
        BACKENDS[r["name"]] = r


def backend_cmap(backend):
    return (BACKENDS.get(backend) or {}).get("colormap")


def native_of(device):
    """The name of the device's native backend (C++ for the cpu), or None."""
    for name, r in BACKENDS.items():
        if r.get("native") and r.get("device") == device:
            return name
    return None


def language_of(backend):
    return (BACKENDS.get(backend) or {}).get("language") or backend


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def visible(value):
    """Text with control bytes written as \\xNN (as specbench's escape_control does)."""
    text = "" if value is None else str(value)
    return CONTROL.sub(lambda m: "\\x%02X" % ord(m.group(0)), text)


def esc(value):
    return html.escape(visible(value), quote=True)


def label(value):
    """A string from the data as chart text: control bytes shown, never mathtext."""
    return visible(value)


def md(value):
    """A Markdown table cell: markup characters as entities (Markdown passes raw HTML through),
    '|' escaped and line breaks flattened so the row stays one row."""
    text = html.escape(visible(value), quote=False)
    return text.replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def fmt_time(s):
    if not s or s <= 0:
        return "-"
    if s < 1e-6:
        return "%.1f ns" % (s * 1e9)
    if s < 1e-3:
        return "%.2f us" % (s * 1e6)
    if s < 1:
        return "%.2f ms" % (s * 1e3)
    return "%.3f s" % s


def fmt_num(x, digits=3):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return "%.*g" % (digits, x)


def fmt_pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def fmt_ratio(x):
    return "-" if x is None else "%.2fx" % x


def fmt_bytes(b):
    if b is None:
        return "-"
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= scale:
            v = b / scale
            return ("%d %s" % (round(v), unit)) if abs(v - round(v)) < 0.05 else (
                "%.3g %s" % (v, unit))
    return "%d B" % round(b)


def flags_of(entry):
    """The noise and plausibility flags of an entry (fields written by specbench when it has
    judged them; absent: not flagged)."""
    out = []
    if entry.get("noisy"):
        reasons = entry.get("noise_reasons") or []
        out.append("noisy" + (" (%s)" % "; ".join(str(r) for r in reasons) if reasons else ""))
    if entry.get("suspect"):
        out.append("suspect: %s" % entry["suspect"])
    return "; ".join(out)


def flag_cell(entry):
    text = flags_of(entry)
    return (text, "bad" if entry.get("suspect") else "warn") if text else ""


def anchor_id(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def heading(level, text, ident=None):
    ident = ident or anchor_id(text)
    return "<h%d id='%s'>%s<a class='anchor' href='#%s'>#</a></h%d>" % (
        level, esc(ident), esc(text), esc(ident), level)


def page_name(prefix, kernel, used):
    base = prefix + re.sub(r"[^A-Za-z0-9_.-]", "_", kernel)
    name, n = base, 1
    while name in used:
        n += 1
        name = "%s-%d" % (base, n)
    used.add(name)
    return name + ".html"


def svg_of(fig):
    buf = io.StringIO()
    # A figure laid out by hand (the history charts, the most numerous) is drawn once; "tight"
    # draws twice, to measure.
    fixed = getattr(fig, "_sb_fixed_layout", False)
    fig.savefig(buf, format="svg", bbox_inches=None if fixed else "tight")
    plt.close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def figure(fig, caption, ident=None):
    return "<figure%s>%s<figcaption>%s</figcaption></figure>\n" % (
        " id='%s'" % esc(ident) if ident else "", svg_of(fig), esc(caption))


def backend_order(b):
    names = list(BACKENDS)
    return (names.index(b) if b in names else len(names), b)


def colors_for(entries):
    """backend/variant -> colour: one hue family per backend, shades for its variants."""
    variants = {}
    for e in entries:
        variants.setdefault(e["backend"], set()).add(e["variant"])
    colors, extra = {}, 0
    for backend in sorted(variants, key=backend_order):
        name = backend_cmap(backend)
        if not name:
            name = EXTRA_CMAPS[extra % len(EXTRA_CMAPS)]
            extra += 1
        cmap = plt.get_cmap(name)
        vs = sorted(variants[backend])
        for i, v in enumerate(vs):
            shade = 0.85 if len(vs) == 1 else 0.95 - 0.5 * i / (len(vs) - 1)
            colors["%s/%s" % (backend, v)] = cmap(shade)
    return colors


def backend_color(backend):
    return plt.get_cmap(backend_cmap(backend) or "Greys")(0.8)


def plain_log_axis(axis, kind="num"):
    """Log-axis tick labels in plain form: 1 KiB, 64 MiB for bytes; 0.5, 20, 1e+04 for numbers
    (never "4 x 10^1")."""
    if kind == "bytes":
        lo, hi = axis.get_view_interval()
        axis.set_major_locator(ticker.LogLocator(base=2 if lo > 0 and hi / lo < 64 else 4,
                                                 numticks=12))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: fmt_bytes(v)))
    elif kind == "ratio":
        lo, hi = axis.get_view_interval()
        coarse = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100,
                  200, 500, 1000]
        fine = [0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.2, 1.3, 1.5, 1.75, 2]
        ticks = fine if lo > 0 and hi / lo < 4 and 0.4 < lo and hi < 2.5 else coarse
        axis.set_major_locator(ticker.FixedLocator(ticks))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: "%gx" % v))
    else:
        # 1-2-5 steps over a few decades, whole decades (thinned by the locator) beyond.
        lo, hi = axis.get_view_interval()
        subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo < 1e3 else (1.0,)
        axis.set_major_locator(ticker.LogLocator(base=10, subs=subs, numticks=8))
        axis.set_major_formatter(ticker.FuncFormatter(
            (lambda v, _: fmt_time(v)) if kind == "time" else (lambda v, _: "%g" % v)))
    axis.set_minor_locator(ticker.NullLocator())  # no minor ticks: fewer to lay out and draw


def legend_outside(ax, **kw):
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                  frameon=False, **kw)


def nothing(text):
    return "<p class='muted'>%s</p>\n" % esc(text)


ROOF_STYLE = {"cpu": ("0.25", "--"), "gpu": ("0.55", "-.")}


def device_of(backend):
    """The record's device; the cpu for a backend without a record (as specbench decides)."""
    return (BACKENDS.get(backend) or {}).get("device") or "cpu"


def throughput_chart(kernel, points, limits, caches):
    series = {}
    for p in points:
        if p.get("rate") is None or not p.get("working_set_bytes"):
            continue
        series.setdefault((p["backend"], p["variant"]), []).append(p)
    if not series:
        return nothing("No measured points with a working set to plot.")
    units = sorted({p["unit"] for ps in series.values() for p in ps})
    colors = colors_for(points)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    xs = []
    for (backend, variant), ps in sorted(series.items(), key=lambda kv: (backend_order(kv[0][0]),
                                                                         kv[0][1])):
        ps = sorted(ps, key=lambda p: p["working_set_bytes"])
        name = "%s/%s" % (backend, variant)
        x = [p["working_set_bytes"] for p in ps]
        xs += x
        ax.plot(x, [p["rate"] for p in ps], marker="o", markersize=3.5, label=label(name),
                color=colors[name], linewidth=1.3)
        lo = [p.get("rate_lo") or p["rate"] for p in ps]
        hi = [p.get("rate_hi") or p["rate"] for p in ps]
        ax.fill_between(x, lo, hi, color=colors[name], alpha=0.2, linewidth=0)
        flagged = [p for p in ps if p.get("noisy") or p.get("suspect")]
        if flagged:
            ax.plot([p["working_set_bytes"] for p in flagged], [p["rate"] for p in flagged],
                    marker="o", markersize=9, markerfacecolor="none", markeredgecolor="#b00020",
                    linestyle="none")
    lo_x, hi_x = min(xs), max(xs)
    for c in caches or []:
        b = c.get("bytes")
        if b and lo_x / 4 <= b <= hi_x * 4:
            ax.axvline(b, color="0.6", linestyle=":", linewidth=1)
            ax.text(b, 0.02, "L%s %s " % (c.get("level"), fmt_bytes(b)), fontsize=7,
                    color="0.35", rotation=90, va="bottom", ha="right",
                    transform=ax.get_xaxis_transform())
    limits = limits or {}
    for dev in sorted({device_of(b) for b, _ in series}):
        lim = limits.get(dev) or {}
        for unit, key, what in (("GB/s", "bandwidth_gbps", "bandwidth"),
                                ("GFLOP/s", "compute_gflops", "compute")):
            if unit in units and lim.get(key):
                color, dash = ROOF_STYLE[dev]
                ax.axhline(lim[key], color=color, linestyle=dash, linewidth=1,
                           label="%s %s roof %.0f %s" % (dev, what, lim[key], unit))
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_axis(ax.xaxis, "bytes")
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("working set (bytes every call reads and writes)")
    ax.set_ylabel(" or ".join(units))
    ax.set_title(label("%s: throughput against working set" % kernel))
    ax.grid(True, which="major", alpha=0.3)
    legend_outside(ax)
    return figure(fig, "Median rate of every backend/variant against its working set; the band "
                       "spans the repetitions' quartiles. Dotted lines: the cache sizes; dashed: "
                       "the roof of the latest run's probes. Circled in red: flagged noisy or "
                       "suspect.", "throughput")


def speedup_chart(kernel, points):
    panels = [("vs_naive", "x vs naive (the backend's first variant)"),
              ("vs_cpp", "x vs C++ (the cpu backend's best)")]
    have = [(key, title) for key, title in panels
            if any(p.get(key) and p.get("working_set_bytes") for p in points)]
    if not have:
        return nothing("No speed-ups to draw.")
    colors = colors_for(points)
    fig, axes = plt.subplots(1, len(have), figsize=(4.2 * len(have) + 1.5, 3.6), squeeze=False)
    for ax, (key, title) in zip(axes[0], have):
        series = {}
        for p in points:
            if p.get(key) and p.get("working_set_bytes"):
                series.setdefault((p["backend"], p["variant"]), []).append(p)
        for (backend, variant), ps in sorted(series.items(),
                                             key=lambda kv: (backend_order(kv[0][0]), kv[0][1])):
            ps = sorted(ps, key=lambda p: p["working_set_bytes"])
            name = "%s/%s" % (backend, variant)
            ax.plot([p["working_set_bytes"] for p in ps], [p[key] for p in ps], marker="o",
                    markersize=3, color=colors[name], label=label(name), linewidth=1.2)
        ax.axhline(1, color="0.3", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_axis(ax.xaxis, "bytes")
        plain_log_axis(ax.yaxis, "ratio")
        ax.set_xlabel("working set")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    legend_outside(axes[0][-1])
    fig.suptitle(label("%s: speed-up against size" % kernel), fontsize=10)
    return figure(fig, "Time of the reference over the time of each variant at the same sizes "
                       "(> 1: faster).", "speed-up")


def distribution_chart(kernel, dist):
    rows = [r for r in (dist or {}).get("rows", []) if r.get("samples")]
    if not rows:
        return nothing("No repetitions to show.")
    rows = sorted(rows, key=lambda r: (backend_order(r["backend"]), r["variant"]))
    colors = colors_for(rows)
    fig, ax = plt.subplots(figsize=(7.5, 0.8 + 0.28 * len(rows)))
    for i, r in enumerate(rows):
        name = "%s/%s" % (r["backend"], r["variant"])
        n = len(r["samples"])
        ys = [i + (0.25 * ((j % 5) - 2) / 2 if n > 1 else 0) for j in range(n)]
        ax.scatter(r["samples"], ys, s=12, color=colors[name], alpha=0.8, linewidths=0)
        ax.plot([r["median"], r["median"]], [i - 0.35, i + 0.35], color="black", linewidth=1.2)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label("%s/%s" % (r["backend"], r["variant"])) for r in rows], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.invert_yaxis()
    ax.set_xscale("log")
    plain_log_axis(ax.xaxis, "time")
    ax.set_xlabel("time per call")
    ax.set_title(label("%s: repetitions at %s" % (kernel, dist.get("sizes"))))
    ax.grid(True, axis="x", which="major", alpha=0.3)
    return figure(fig, "Every repetition of every variant at the largest size (dots) and the "
                       "median (bar): a wide or split cloud is a noisy case.", "distribution")


def roofline_chart(kernel, points, limits):
    # The largest size of each backend/variant.
    largest = {}
    for p in points:
        key = (p["backend"], p["variant"])
        if key not in largest or p["size"] > largest[key]["size"]:
            largest[key] = p
    if not largest:
        return nothing("No measured points for a roofline.")
    limits = limits or {}
    colors = colors_for(points)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    with_flops = [p for p in largest.values() if p.get("intensity") and p.get("gflops")]
    if with_flops:
        caption = ("Roofline at each variant's largest size: min(compute probe, intensity x "
                   "bandwidth probe) per device, from the latest run's probes.")
        if not draw_roofs(ax, with_flops, limits):
            caption += " No roof: the latest run has no probe results (e.g. --no-probes)."
        for p in sorted(with_flops, key=lambda p: (backend_order(p["backend"]), p["variant"])):
            name = "%s/%s" % (p["backend"], p["variant"])
            ax.plot([p["intensity"]], [p["gflops"]], marker="o", linestyle="none",
                    label=label(name), color=colors[name])
        ax.set_xscale("log")
        ax.set_yscale("log")
        plain_log_axis(ax.xaxis)
        plain_log_axis(ax.yaxis)
        ax.set_xlabel("arithmetic intensity (flop/byte)")
        ax.set_ylabel("GFLOP/s")
    else:
        # No flops: the memory roof alone, as achieved GB/s against the bandwidth probe.
        ps = sorted(largest.values(), key=lambda p: (backend_order(p["backend"]), p["variant"]))
        names = ["%s/%s" % (p["backend"], p["variant"]) for p in ps]
        ax.barh([label(n) for n in names], [p.get("gbps") or 0 for p in ps],
                color=[colors[n] for n in names])
        for dev in sorted({device_of(p["backend"]) for p in ps}):
            bw = (limits.get(dev) or {}).get("bandwidth_gbps")
            if bw:
                color, dash = ROOF_STYLE[dev]
                ax.axvline(bw, linestyle=dash, color=color)
                ax.text(bw, len(ps) - 0.5, " %s bandwidth %.0f GB/s" % (dev, bw), fontsize=7)
        ax.set_xlabel("GB/s")
        caption = ("The kernel does no floating-point work: achieved bandwidth at each "
                   "variant's largest size against the bandwidth probe.")
        if not any((limits.get(device_of(p["backend"])) or {}).get("bandwidth_gbps") for p in ps):
            caption += " No limit line: the latest run has no probe results (e.g. --no-probes)."
    ax.set_title(label("%s: roofline" % kernel))
    ax.grid(True, which="major", alpha=0.3)
    if with_flops:
        legend_outside(ax)
    return figure(fig, caption, "roofline")


def draw_roofs(ax, entries, limits):
    """Draws each device's roof across the entries' intensities; returns how many."""
    xs = [p["intensity"] for p in entries]
    devs = sorted({device_of(p["backend"]) for p in entries})
    for dev in devs:
        lim = limits.get(dev) or {}
        if lim.get("bandwidth_gbps") and lim.get("compute_gflops"):
            xs.append(lim["compute_gflops"] / lim["bandwidth_gbps"])  # the ridge point
    lo, hi = min(xs) / 8, max(xs) * 8
    roofs = 0
    for dev in devs:
        lim = limits.get(dev) or {}
        bw, peak = lim.get("bandwidth_gbps"), lim.get("compute_gflops")
        if bw and peak:
            roofs += 1
            grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
            color, dash = ROOF_STYLE[dev]
            ax.plot(grid, [min(peak, bw * x) for x in grid], linestyle=dash, color=color,
                    label="%s roof: %.0f GB/s, %.0f GFLOP/s" % (dev, bw, peak))
    return roofs


# --- index charts ----------------------------------------------------------------------------

def overview_roofline_chart(best, limits):
    entries = [e for e in best if e.get("intensity") and e.get("gflops")]
    if not entries:
        return nothing("No kernel with floating-point work was measured: no roofline.")
    fig, ax = plt.subplots(figsize=(8, 5))
    roofs = draw_roofs(ax, entries, limits or {})
    for backend in sorted({e["backend"] for e in entries}, key=backend_order):
        es = [e for e in entries if e["backend"] == backend]
        ax.scatter([e["intensity"] for e in es], [e["gflops"] for e in es], s=22,
                   color=backend_color(backend), label=label(backend), alpha=0.85,
                   edgecolors="white", linewidths=0.4)
        flagged = [e for e in es if e.get("noisy") or e.get("suspect")]
        if flagged:
            ax.scatter([e["intensity"] for e in flagged], [e["gflops"] for e in flagged], s=90,
                       facecolors="none", edgecolors="#b00020", linewidths=1)
    # Name the best point of each kernel, so the cloud can be read.
    top = {}
    for e in entries:
        if e["kernel"] not in top or e["gflops"] > top[e["kernel"]]["gflops"]:
            top[e["kernel"]] = e
    for e in top.values():
        ax.annotate(label(e["kernel"]), (e["intensity"], e["gflops"]), fontsize=6,
                    xytext=(3, 2), textcoords="offset points", color="0.25")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ys = [e["gflops"] for e in entries]
    peaks = [((limits or {}).get(d) or {}).get("compute_gflops") or 0 for d in ("cpu", "gpu")]
    ax.set_ylim(min(ys) / 3, max(ys + peaks) * 2)
    plain_log_axis(ax.xaxis)
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("arithmetic intensity (flop/byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("Every kernel's best variant per backend, at its largest size")
    ax.grid(True, which="major", alpha=0.3)
    legend_outside(ax)
    left_out = len({e["kernel"] for e in best}) - len({e["kernel"] for e in entries})
    caption = ("One dot per kernel and backend: the fastest variant at the largest size "
               "against the roofs of the latest run's probes.")
    if left_out:
        caption += " %d kernel(s) without floating-point work are left out." % left_out
    if not roofs:
        caption += " No roof: the latest run has no probe results."
    return figure(fig, caption, "cross-kernel-roofline")


def heatmap_chart(best):
    entries = [e for e in best if e.get("fraction") is not None]
    if not entries:
        return nothing("No fraction of a limit was measured (no probes): no heat map.")
    kernels = sorted({e["kernel"] for e in entries})
    backends = sorted({e["backend"] for e in entries}, key=backend_order)
    grid = [[float("nan")] * len(backends) for _ in kernels]
    for e in entries:
        grid[kernels.index(e["kernel"])][backends.index(e["backend"])] = 100 * e["fraction"]
    fig, ax = plt.subplots(figsize=(1.6 + 0.9 * len(backends), 0.8 + 0.24 * len(kernels)))
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#eeeeee")
    import numpy  # matplotlib depends on it

    masked = numpy.ma.masked_invalid(numpy.array(grid))
    im = ax.imshow(numpy.clip(masked, 0, 100), aspect="auto", cmap=cmap, vmin=0, vmax=100)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if math.isfinite(v):
                ax.text(j, i, "%.0f" % v, ha="center", va="center", fontsize=6,
                        color="white" if v < 60 else "black",
                        fontweight="bold" if v > 110 else "normal")
    ax.set_xticks(range(len(backends)))
    ax.set_xticklabels([label(b) for b in backends], rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(len(kernels)))
    ax.set_yticklabels([label(k) for k in kernels], fontsize=7)
    ax.set_title("% of the limit: best variant at the largest size")
    bar = fig.colorbar(im, ax=ax, fraction=0.05, pad=0.02)
    bar.set_label("% of limit (clipped at 100)")
    return figure(fig, "Kernels x backends: the fastest variant's rate over the limit that bounds "
                       "it (memory bandwidth or compute), in percent; the colour is clipped at "
                       "100%, the number is not (above 100%: the working set fits in a cache, or "
                       "the figure is suspect). Grey: not measured.", "heat-map")


def languages_chart(rows):
    if not rows:
        return nothing("No kernel was measured both in C++ and in another language.")
    kernels = sorted({r["kernel"] for r in rows}, reverse=True)
    langs = [b for b in BACKENDS if any(r["language"] == b for r in rows)]
    langs += sorted({r["language"] for r in rows} - set(langs))
    fig, ax = plt.subplots(figsize=(7.5, 1.0 + 0.26 * len(kernels)))
    width = 0.7 / max(1, len(langs))
    for li, lang in enumerate(langs):
        rs = [r for r in rows if r["language"] == lang and r.get("ratio")]
        if not rs:
            continue
        ys = [kernels.index(r["kernel"]) - 0.35 + width * (li + 0.5) for r in rs]
        xs = [r["ratio"] for r in rs]
        err = [[max(0, r["ratio"] - (r.get("lo") or r["ratio"])) for r in rs],
               [max(0, (r.get("hi") or r["ratio"]) - r["ratio"]) for r in rs]]
        against = language_of(rs[0].get("against") or "")
        ax.errorbar(xs, ys, xerr=err, fmt="o", markersize=3.5, capsize=2, elinewidth=1,
                    color=backend_color(lang) if backend_cmap(lang) else "0.3",
                    label=label("%s against %s" % (lang, against)))
        flagged = [(x, y) for x, y, r in zip(xs, ys, rs) if r.get("noisy") or r.get("suspect")]
        if flagged:
            ax.scatter([x for x, _ in flagged], [y for _, y in flagged], s=60, facecolors="none",
                       edgecolors="#b00020", linewidths=1)
    ax.axvline(1, color="0.2", linewidth=1)
    ax.set_yticks(range(len(kernels)))
    ax.set_yticklabels([label(k) for k in kernels], fontsize=7)
    ax.set_ylim(-0.6, len(kernels) - 0.4)
    ax.set_xscale("log")
    plain_log_axis(ax.xaxis, "ratio")
    ax.set_xlabel("speed against C++ (C++ time / other time; > 1: the other is faster)")
    ax.set_title("Every language against C++, per kernel")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    legend_outside(ax)
    return figure(fig, "Ratio of the median times of each backend's fastest variant at the "
                       "largest size both measured, with its 95% bootstrap interval over the "
                       "repetitions, against the baseline its backend record names (C++; CUDA "
                       "for a GPU backend).", "languages")


# --- history ---------------------------------------------------------------------------------

def parse_date(text):
    try:
        return datetime.datetime.fromisoformat((text or "").replace("Z", "+00:00"))
    except ValueError:
        return None


def history_chart(kernel, h, runs, links):
    series = [s for s in h["series"] if s["points"]]
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(9, 3.2))
    cmap = plt.get_cmap(backend_cmap(h["backend"]) or "Greys")
    dated = [parse_date(r.get("date")) for r in runs]
    use_dates = all(d is not None for d in dated)
    for i, s in enumerate(series):
        pts = s["points"]
        xs = [dated[p["run"]] if use_dates else p["run"] for p in pts]
        shade = 0.85 if len(series) == 1 else 0.95 - 0.45 * i / (len(series) - 1)
        color = cmap(shade)
        ax.plot(xs, [p["seconds"] for p in pts], linewidth=1, color=color, label=label("%s (%s)" % (s["sizes"], fmt_bytes(
                    s.get("working_set_bytes")))))
        ax.vlines(xs, [p["lo"] for p in pts], [p["hi"] for p in pts], color=color,
                  linewidth=0.8, alpha=0.6)
        # Every point links to its run's JSON.
        dots = ax.scatter(xs, [p["seconds"] for p in pts], s=14, color=color, zorder=3)
        dots.set_urls([links[p["run"]] for p in pts])
        bad = [(x, p) for x, p in zip(xs, pts) if p.get("verdict") == "slower"]
        if bad:
            ax.scatter([x for x, _ in bad], [p["seconds"] for _, p in bad], marker="x", s=70,
                       color="#d00000", zorder=4, linewidths=1.5)
        good = [(x, p) for x, p in zip(xs, pts) if p.get("verdict") == "faster"]
        if good:
            ax.scatter([x for x, _ in good], [p["seconds"] for _, p in good], marker="^", s=40,
                       facecolors="none", edgecolors="#1b7a1b", zorder=4)
    ax.set_yscale("log")
    plain_log_axis(ax.yaxis, "time")
    shown = {dated[p["run"]] for s in series for p in s["points"]} if use_dates else set()
    if use_dates and len(shown) > 1:
        import matplotlib.dates as mdates

        locator = mdates.AutoDateLocator(maxticks=8)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    elif use_dates:
        when = next(iter(shown))
        ax.set_xticks([when])
        ax.set_xticklabels([when.strftime("%Y-%m-%d %H:%M")])
    else:
        ax.set_xlabel("run")
    ax.set_ylabel("median time")
    ax.set_title(label("%s: %s/%s across runs" % (kernel, h["backend"], h["variant"])))
    ax.grid(True, which="major", alpha=0.3)
    legend_outside(ax, title="sizes (working set)", title_fontsize=7)
    fig.subplots_adjust(left=0.12, right=0.66, bottom=0.14, top=0.9)
    fig._sb_fixed_layout = True
    return fig


# --- tables and pages ------------------------------------------------------------------------

def table(header, rows, num_cols=()):
    out = ["<table><thead><tr>"]
    out += ["<th>%s</th>" % esc(h) for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            css = ""
            text = cell
            if isinstance(cell, tuple):
                text, css = cell
            classes = [c for c in (("num" if i in num_cols else ""), css) if c]
            cls = " class='%s'" % " ".join(classes) if classes else ""
            out.append("<td%s>%s</td>" % (cls, esc(text)))
        out.append("</tr>")
    out.append("</tbody></table>\n")
    return "".join(out)


def flags(r):
    """" (noisy)", " (SUSPECT)": a figure not to be trusted as it stands (report-data.json)."""
    return (" (noisy)" if r.get("noisy") else "") + (" (SUSPECT)" if r.get("suspect") else "")


def comparison_rows(summary):
    """The best variant per backend per size, with ratios against cpu (C++)."""
    by_size = {}
    for row in summary:
        by_size.setdefault(row["sizes"], {})[row["backend"]] = row
    rows = []
    for sizes, per in by_size.items():
        cpu = per.get(native_of("cpu"))
        for backend in sorted(per, key=backend_order):
            r = per[backend]
            ratio = cpu["seconds"] / r["seconds"] if cpu and r.get("seconds") else None
            rows.append([sizes, backend, r["variant"] + flags(r), fmt_time(r["seconds"]),
                         "%s %s" % (fmt_num(r.get("rate")), r.get("unit") or ""),
                         fmt_pct(r.get("roofline_fraction")), fmt_ratio(ratio),
                         fmt_ratio(r.get("vs_naive")), fmt_ratio(r.get("vs_vendor")),
                         flag_cell(r)])
    return rows


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>%s</title><style>%s</style></head><body>\n%s</body></html>\n"
            % (esc(title), CSS, body))


def file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path, text):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-report-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, file_mode())  # mkstemp makes 0600; pages are for others to read
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def change_counts(k):
    """"2 slower, 1 faster" from a kernel's changes in the latest comparison ("" when none)."""
    counts = {}
    for row in k.get("changes", []):
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    order = ["slower", "failed", "faster", "new", "missing"]
    return ", ".join("%d %s" % (counts[v], v) for v in order if v in counts)


def fmt_change(ratio):
    return "-" if not ratio else "%+.1f%%" % ((ratio - 1) * 100)


def changes_table(k, data):
    if not data["comparisons"]:
        return nothing("One run so far: nothing to compare with.")
    rows = k.get("changes", [])
    if not rows:
        return "<p class='good'>Every benchmark is the same as in the previous run.</p>\n"
    return table(["benchmark", "previous", "latest", "change", "p", "reps", "verdict", "note",
                  "flags"],
                 [[r["name"], fmt_time(r.get("base_seconds")), fmt_time(r.get("new_seconds")),
                   fmt_change(r.get("ratio")), fmt_num(r.get("p_value"), 2),
                   "%s/%s" % (r["base_repetitions"], r["new_repetitions"]),
                   (r["verdict"] + flags(r), "bad" if r["verdict"] in ("slower", "failed") else
                    "good" if r["verdict"] == "faster" else ""),
                   (r.get("note") or "").split("\n")[0][:200], flag_cell(r)] for r in rows],
                 num_cols=(1, 2, 3, 4, 5))


def gpu_facts_section(k):
    facts = k.get("gpu_facts") or []
    if not facts:
        return ""
    out = [heading(2, "GPU facts")]
    out.append("<p>Each kernel of the GPU variants as ptxas compiled it (<code>nvcc -Xptxas "
               "-v</code> for CUDA, <code>ptxas -v</code> on Mojo's PTX for mojo_gpu): registers per thread, static shared memory per block, stack frame "
               "and bytes spilled per thread; the block size its launcher uses and the "
               "theoretical occupancy at that size (resident warps over the SM's most), with "
               "what limits it; &le; where the launch adds dynamic shared memory.</p>")

    def occupancy(f):
        occ = f.get("occupancy")
        if not isinstance(occ, (int, float)):
            return "unknown"
        text = ("\u2264 " if f.get("occupancy_is_upper_bound") else "") + fmt_pct(occ)
        return text + (" (%s)" % f.get("limited_by") if f.get("limited_by") else "")

    def spills(f):
        st, ld = f.get("spill_store_bytes"), f.get("spill_load_bytes")
        return "%s / %s" % (st, ld) if st is not None and ld is not None else None

    out.append(table(["backend", "variant", "kernel", "arch", "registers", "shared B", "stack B",
                      "spill st / ld B", "block", "occupancy"],
                     [[f.get("backend"), f.get("variant") or "-", f.get("function"), f.get("arch"),
                       f.get("registers"), f.get("shared_bytes"), f.get("stack_bytes"), spills(f),
                       f.get("block_threads") or "unknown", (occupancy(f), "")]
                      for f in facts],
                     num_cols=(4, 5, 6, 8)))
    return "\n".join(out)


def toc(items):
    return "<nav class='toc'>%s</nav>" % " &middot; ".join(
        "<a href='#%s'>%s</a>" % (esc(anchor_id(t)), esc(t)) for t in items)


def kernel_page(kernel, k, data, pages):
    body = ["<nav><a href='index.html'>&larr; all kernels</a><a href='%s'>history</a></nav>"
            % esc(pages["history"][kernel]),
            "<h1>%s</h1>" % esc(kernel)]
    sections = ["Throughput", "Speed-up", "Repetitions", "Roofline", "Backends compared",
                "Verification", "Since the previous run", "History"]
    if k.get("gpu_facts"):
        sections.insert(4, "GPU facts")
    body.append(toc(sections))
    bad = [v for v in k["variants"] if v["status"] == "failed"]
    body.append("<p>Verification: %s</p>" % (
        "<span class='bad'>%d variant(s) FAILED</span>" % len(bad) if bad else
        "<span class='good'>every measured variant verified</span>"))
    flagged = [p for p in k["points"] if flags_of(p)]
    if flagged:
        body.append("<p class='warn'>%d measurement(s) flagged noisy or suspect: see the flags "
                    "column and the red circles.</p>" % len(flagged))
    for w in unsteady_warnings(data.get("limits")):
        body.append("<p class='bad'>%s</p>" % esc(w))
    body.append(heading(2, "Throughput"))
    body.append(throughput_chart(kernel, k["points"], data.get("limits"), data.get("caches")))
    body.append(heading(2, "Speed-up"))
    body.append(speedup_chart(kernel, k["points"]))
    body.append(heading(2, "Repetitions"))
    body.append(distribution_chart(kernel, k.get("distribution")))
    body.append(heading(2, "Roofline"))
    body.append(roofline_chart(kernel, k["points"], data.get("limits")))
    body.append(gpu_facts_section(k))
    body.append(heading(2, "Backends compared"))
    body.append("<p>The fastest verified variant of each backend per size. <em>x vs C++</em> is "
                "the cpu backend's best time over this one (&gt; 1: faster than C++).</p>")
    body.append(table(["sizes", "backend", "best variant", "time", "rate", "% of limit",
                       "x vs C++", "x vs naive", "x vs vendor", "flags"],
                      comparison_rows(k["summary"]), num_cols=(3, 4, 5, 6, 7, 8)))
    if k["languages"]:
        body.append(heading(3, "C++ against other languages"))
        body.append(table(["sizes", "kind", "language", "C++ variant", "other variant", "C++ time",
                           "other time", "C++/other", "within noise", "flags"],
                          [[r["sizes"], r["kind"], r["language"], r["cpp_variant"],
                            r["other_variant"], fmt_time(r["cpp_seconds"]),
                            fmt_time(r["other_seconds"]), fmt_ratio(r["ratio"]),
                            "yes" if r.get("within_noise") else "no", flag_cell(r)]
                           for r in k["languages"]], num_cols=(5, 6, 7)))
    body.append(heading(2, "Verification"))
    body.append(table(["backend/variant", "status", "reason"],
                      [[v["variant"], (v["status"], "bad" if v["status"] == "failed" else ""),
                        (v.get("reason") or "").split("\n")[0][:200]] for v in k["variants"]]))
    body.append(heading(2, "Since the previous run"))
    body.append("<p>Benchmarks whose verdict is not <em>same</em>: a change counts when the "
                "Mann&ndash;Whitney U test gives p &lt; %s and the median time moves by at least "
                "%s%%.</p>" % (esc(data.get("alpha")), esc(100 * data.get("min_effect", 0))))
    body.append(changes_table(k, data))
    body.append(heading(2, "History"))
    n = len(k.get("history", []))
    body.append("<p><a href='%s'>History of every variant at every size</a> (%d variant(s), "
                "%d run(s)).</p>" % (esc(pages["history"][kernel]), n, len(data["runs"])))
    return page("specbench: " + kernel, "\n".join(body))


def run_links(runs, out):
    """Per run, a link from the site to its results JSON (relative, so the site can move with
    the results)."""
    links = []
    for r in runs:
        path = r.get("path") or ""
        try:
            rel = os.path.relpath(os.path.abspath(path), os.path.abspath(out))
        except ValueError:
            rel = os.path.abspath(path)
        links.append(rel.replace(os.sep, "/"))
    return links


def history_page(kernel, k, data, pages, links):
    runs = data["runs"]
    body = ["<nav><a href='index.html'>&larr; all kernels</a><a href='%s'>%s</a></nav>"
            % (esc(pages["kernel"][kernel]), esc(kernel)),
            "<h1>%s: history</h1>" % esc(kernel),
            "<p>One chart per variant, one line per size: the median time of every run on a "
            "time axis, the bar spanning the repetitions' quartiles. A red cross marks a run "
            "significantly slower than the previous run of the same case, a green triangle one "
            "faster (Mann&ndash;Whitney U, p &lt; %s, at least %s%%). Each dot links to its run's "
            "results file.</p>" % (esc(data.get("alpha")), esc(100 * data.get("min_effect", 0)))]
    history = k.get("history", [])
    if not any(len(p["points"]) > 1 for h in history for p in h["series"]):
        body.append(nothing("One run so far: the history appears once there are more."))
    for h in history:
        ident = anchor_id("%s-%s" % (h["backend"], h["variant"]))
        body.append(heading(2, "%s/%s" % (h["backend"], h["variant"]), ident))
        fig = history_chart(kernel, h, runs, links)
        if fig is None:
            body.append(nothing("Never measured."))
            continue
        slower = [(s["sizes"], p) for s in h["series"] for p in s["points"]
                  if p.get("verdict") == "slower"]
        body.append(figure(fig, "%s/%s: %d size(s), %d regression(s) marked." % (
            h["backend"], h["variant"], len(h["series"]), len(slower))))
        if slower:
            rows = ["<table><thead><tr><th>sizes</th><th>run</th><th>time</th><th>file</th>"
                    "</tr></thead><tbody>"]
            for sz, p in slower:
                run = runs[p["run"]]
                rows.append("<tr><td>%s</td><td>%s</td><td class='num'>%s</td>"
                            "<td><a href='%s'>%s</a></td></tr>" % (
                                esc(sz), esc(run.get("date")), esc(fmt_time(p["seconds"])),
                                esc(links[p["run"]]), esc(os.path.basename(run.get("path") or ""))))
            rows.append("</tbody></table>\n")
            body.append("".join(rows))
    body.append(heading(2, "Runs"))
    body.append(runs_table(runs, links))
    return page("specbench: %s history" % kernel, "\n".join(body))


def runs_table(runs, links):
    out = ["<table><thead><tr>"]
    versions = [(r["language"], r["version_key"]) for r in BACKENDS.values()
                if r.get("version_key")]
    out += ["<th>%s</th>" % h for h in ["date", "host", "commit", "CPU", "GPU", "C++", "CUDA"] +
            [lang for lang, _ in versions] + ["verification", "file"]]
    out.append("</tr></thead><tbody>")
    for r, link in zip(runs, links):
        ver = r.get("verification")
        cells = [r.get("date"), r.get("host"), (r.get("git_commit") or "")[:12], r.get("cpu_model"),
                 r.get("gpu"), r.get("cxx"), r.get("nvcc")] + [r.get(k) for _, k in versions] + [
                 ("%s passed, %s failed" % (ver.get("passed"), ver.get("failed")))
                 if isinstance(ver, dict) else "-"]
        out.append("<tr>%s<td><a href='%s'>%s</a></td></tr>" % (
            "".join("<td>%s</td>" % esc(c) for c in cells), esc(link),
            esc(os.path.basename(r.get("path") or ""))))
    out.append("</tbody></table>\n")
    return "".join(out)


def unsteady_warnings(limits):
    """One sentence per device whose limit probes moved during the latest run."""
    out = []
    for dev in ("cpu", "gpu"):
        lim = (limits or {}).get(dev) or {}
        if not lim.get("unsteady"):
            continue
        moved = ", ".join("%s %.0f%%" % (name, 100 * (lim.get(key) or 0))
                          for name, key in (("bandwidth", "bandwidth_drift"),
                                            ("compute", "compute_drift"))
                          if lim.get(key))
        out.append("UNSTEADY: the %s limit probes moved during the latest run (%s between its "
                   "start and end), so every percent of limit on these pages is uncertain by "
                   "about as much. Time again on a quiet machine." % (dev, moved))
    return out


def index_page(data, pages, links):
    runs = data["runs"]
    latest = runs[-1] if runs else {}
    overview = data.get("overview") or {}
    body = ["<h1>specbench results</h1>",
            "<p><a href='summary.md'>summary.md</a>: the same as Markdown, for a pull request "
            "or a post.</p>",
            toc(["Every language against C++", "Roofline across kernels", "Percent of limit",
                 "Kernels", "Runs"])]
    if latest:
        body.append("<p>Latest run %s on %s (%s; GPU: %s), commit %s.</p>" % (
            esc(latest.get("date")), esc(latest.get("host")), esc(latest.get("cpu_model")),
            esc(latest.get("gpu")), esc((latest.get("git_commit") or "")[:12])))
    if data["comparisons"]:
        c = data["comparisons"][-1]
        counts = c["counts"]
        cls = "bad" if c.get("regressed") else "good"
        body.append("<p class='%s'>Against the previous run: %s.</p>" % (cls, esc(
            ", ".join("%d %s" % (counts[k], k) for k in
                      ("slower", "faster", "same", "new", "missing", "failed")))))
        for w in c.get("warnings", []):
            body.append("<p class='muted'>warning: %s</p>" % esc(w))
    for w in unsteady_warnings(data.get("limits")):
        body.append("<p class='bad'>%s</p>" % esc(w))
    best = overview.get("best", [])
    body.append(heading(2, "Every language against C++"))
    body.append(languages_chart(overview.get("languages", [])))
    body.append(heading(2, "Roofline across kernels"))
    body.append(overview_roofline_chart(best, data.get("limits")))
    body.append(heading(2, "Percent of limit"))
    body.append(heatmap_chart(best))
    rows = []
    for kernel, k in data["kernels"].items():
        failed = sum(1 for v in k["variants"] if v["status"] == "failed")
        skipped = sum(1 for v in k["variants"] if v["status"] == "skipped")
        verified = sum(1 for v in k["variants"] if v["status"] == "verified")
        fastest = max(k["points"], key=lambda p: (p.get("working_set_bytes") or p["size"],
                                                  p.get("rate") or 0), default=None)
        flagged = sum(1 for p in k["points"] if flags_of(p))
        rows.append([kernel, pages["kernel"][kernel], pages["history"][kernel],
                     "%d verified, %d failed, %d skipped" % (verified, failed, skipped),
                     failed > 0,
                     ("%s/%s" % (fastest["backend"], fastest["variant"])) if fastest else "-",
                     ("%s %s" % (fmt_num(fastest.get("rate")), fastest.get("unit")))
                     if fastest else "-",
                     flags_of(fastest) if fastest else "",
                     ("%d flagged" % flagged) if flagged else "",
                     change_counts(k) or ("same" if data["comparisons"] else "-")])
    out = ["<table><thead><tr><th>kernel</th><th>verification</th>"
           "<th>fastest at the largest size</th><th>rate</th><th>flags</th>"
           "<th>against the previous run</th></tr></thead><tbody>"]
    for kernel, href, hist, ver, bad, fastest, rate, fflags, nflag, reg in rows:
        out.append("<tr><td><a href='%s'>%s</a> <a class='muted' href='%s'>history</a></td>"
                   "<td%s>%s</td><td>%s</td><td class='num'>%s</td><td class='warn'>%s</td>"
                   "<td%s>%s</td></tr>" % (
                       esc(href), esc(kernel), esc(hist), " class='bad'" if bad else "", esc(ver),
                       esc(fastest), esc(rate), esc("; ".join(x for x in (fflags, nflag) if x)),
                       " class='bad'" if ("slower" in reg or "failed" in reg) else "", esc(reg)))
    out.append("</tbody></table>")
    body.append(heading(2, "Kernels"))
    body.append("".join(out))
    body.append(heading(2, "Runs"))
    body.append(runs_table(runs, links))
    return page("specbench results", "\n".join(body))


def summary_markdown(data):
    runs = data["runs"]
    latest = runs[-1] if runs else {}
    lines = ["# specbench results", ""]
    if latest:
        lines.append("Latest run %s on %s (%s), commit `%s`." % (
            md(latest.get("date")), md(latest.get("host")), md(latest.get("cpu_model")),
            md((latest.get("git_commit") or "")[:12])))
        lines.append("")
    if data["comparisons"]:
        c = data["comparisons"][-1]
        lines.append("Against the previous run: " + ", ".join(
            "%d %s" % (c["counts"][k], k) for k in
            ("slower", "faster", "same", "new", "missing", "failed")) + ".")
        lines.append("")
    for w in unsteady_warnings(data.get("limits")):
        lines += ["**%s**" % md(w), ""]
    lines += ["| kernel | sizes | backend | best variant | time | rate | % of limit | x vs C++ |",
              "|---|---|---|---|---:|---:|---:|---:|"]
    for kernel, k in data["kernels"].items():
        sizes_seen = []
        for row in k["summary"]:
            if row["sizes"] not in sizes_seen:
                sizes_seen.append(row["sizes"])
        largest = sizes_seen[-1] if sizes_seen else None
        for r in comparison_rows([s for s in k["summary"] if s["sizes"] == largest]):
            lines.append("| %s | %s |" % (md(kernel), " | ".join(md(x) for x in
                                                              [r[0], r[1], r[2], r[3], r[4],
                                                               r[5], r[6]])))
    failed = [(kernel, v) for kernel, k in data["kernels"].items() for v in k["variants"]
              if v["status"] == "failed"]
    lines.append("")
    lines.append("Verification: " + ("%d variant(s) failed: %s." % (
        len(failed), ", ".join("%s %s" % (md(kn), md(v["variant"])) for kn, v in failed))
        if failed else "every measured variant verified."))
    lines.append("")
    return "\n".join(lines)


class Progress:
    """'[12/91] kernel-matmul.html, ETA 40 s' on stderr after each page."""

    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()

    def step(self, name):
        self.done += 1
        spent = time.monotonic() - self.start
        eta = spent / self.done * (self.total - self.done)
        line = "report: [%d/%d] %s, %.0f s, ETA %.0f s" % (self.done, self.total, visible(name),
                                                           spent, eta)
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line + ("\n" if self.done == self.total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


# The data of the run being rendered, for the worker processes (inherited by fork).
_JOB = {}


def _render_page(task):
    kind, kernel = task
    data, pages, links, out = _JOB["data"], _JOB["pages"], _JOB["links"], _JOB["out"]
    k = data["kernels"][kernel]
    if kind == "kernel":
        text = kernel_page(kernel, k, data, pages)
    else:
        text = history_page(kernel, k, data, pages, links)
    name = pages[kind][kernel]
    write_atomic(os.path.join(out, name), text)
    return name


def jobs():
    """Worker processes: $SPECBENCH_REPORT_JOBS, else one per CPU (at most 8)."""
    try:
        n = int(os.environ.get("SPECBENCH_REPORT_JOBS", "0"))
    except ValueError:
        n = 0
    return n if n > 0 else max(1, min(8, len(os.sched_getaffinity(0))
                                      if hasattr(os, "sched_getaffinity") else os.cpu_count()))


def render(data_path, out):
    with open(data_path, encoding="utf-8") as f:
        data = json.load(f)
    use_backends(data)
    os.makedirs(out, exist_ok=True)
    used = set()
    pages = {"kernel": {}, "history": {}}
    for kernel in data["kernels"]:
        pages["kernel"][kernel] = page_name("kernel-", kernel, used)
        pages["history"][kernel] = page_name("history-", kernel, used)
    links = run_links(data["runs"], out)
    _JOB.update(data=data, pages=pages, links=links, out=out)
    tasks = [(kind, kernel) for kernel in data["kernels"] for kind in ("kernel", "history")]
    progress = Progress(len(tasks) + 2)
    n = min(jobs(), max(1, len(tasks)))
    if n > 1:
        import multiprocessing

        # Pages are independent: drawn in parallel by forked workers (matplotlib's Agg backend
        # holds no state across figures that a fork could break).
        with multiprocessing.get_context("fork").Pool(n) as pool:
            for name in pool.imap_unordered(_render_page, tasks):
                progress.step(name)
    else:
        for task in tasks:
            progress.step(_render_page(task))
    write_atomic(os.path.join(out, "index.html"), index_page(data, pages, links))
    progress.step("index.html")
    write_atomic(os.path.join(out, "summary.md"), summary_markdown(data))
    progress.step("summary.md")
    return 0


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: make_report.py REPORT_DATA_JSON OUT_DIR\n")
        return EXIT_USAGE
    try:
        return render(argv[1], argv[2])
    except ImportError as e:
        sys.stderr.write("make_report.py: missing Python module '%s' (%s)\n" % (
            getattr(e, "name", None) or "?", e))
        return EXIT_MODULE
    except OSError as e:
        where = getattr(e, "filename2", None) or e.filename or argv[2]  # rename: the target
        sys.stderr.write("make_report.py: %s: %s\n" % (visible(where), e.strerror or e))
        return EXIT_OS
    except Exception:  # noqa: BLE001 - a bug: report it with its traceback
        sys.stderr.write("make_report.py: internal error:\n" + traceback.format_exc())
        return EXIT_BUG


if __name__ == "__main__":
    sys.exit(main(sys.argv))
