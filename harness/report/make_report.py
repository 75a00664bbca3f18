#!/usr/bin/env python3
"""Draws specbench's report site from the report data `specbench report` writes.

Usage: make_report.py REPORT_DATA_JSON OUT_DIR

Writes OUT_DIR/index.html, one OUT_DIR/kernel-<name>.html per kernel and OUT_DIR/summary.md.
Every figure is an inline SVG drawn by matplotlib with its text as paths, so the pages need no
script, font or file beyond themselves. Every string from the data is HTML-escaped (in Markdown too,
where table cells also have '|' and newlines neutralised). The numbers are computed by specbench
(harness/history.cpp); this script only draws and formats them.
"""

import html
import io
import json
import math
import os
import re
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams["svg.fonttype"] = "path"  # glyphs as paths: no font needed to show the text
plt.rcParams["svg.hashsalt"] = "specbench"  # stable ids, so unchanged charts give unchanged files
plt.rcParams["font.size"] = 9

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 90%; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: #b00020; font-weight: bold; }
.good { color: #1b7a1b; }
.muted { color: #777; }
figure { margin: 0.5em 0 1.5em; }
figure svg { max-width: 100%; height: auto; }
nav a { margin-right: 1em; }
"""

LANGUAGE_BACKENDS = ["cpu", "cuda", "mojo", "mlir", "vendor_cpu", "vendor_cuda"]


def esc(value):
    return html.escape("" if value is None else str(value), quote=True)


def md(value):
    """A Markdown table cell: markup characters as entities (Markdown passes raw HTML through),
    '|' escaped and line breaks flattened so the row stays one row."""
    text = html.escape(str("" if value is None else value), quote=False)
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


def page_name(kernel, used):
    base = "kernel-" + re.sub(r"[^A-Za-z0-9_.-]", "_", kernel)
    name, n = base, 1
    while name in used:
        n += 1
        name = "%s-%d" % (base, n)
    used.add(name)
    return name + ".html"


def svg_of(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def figure(fig, caption):
    return "<figure>%s<figcaption>%s</figcaption></figure>\n" % (svg_of(fig), esc(caption))


def colors_for(points):
    """One colour per backend/variant, the same in every chart of a page."""
    names = sorted({"%s/%s" % (p["backend"], p["variant"]) for p in points})
    palette = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    return {n: palette(i % palette.N) for i, n in enumerate(names)}


ROOF_STYLE = {"cpu": ("0.25", "--"), "gpu": ("0.55", "-.")}


def throughput_chart(kernel, points):
    series = {}
    for p in points:
        if p.get("rate") is None or not p.get("size"):
            continue
        series.setdefault((p["backend"], p["variant"]), []).append(p)
    if not series:
        return "<p class='muted'>No measured points to plot.</p>\n"
    units = sorted({p["unit"] for ps in series.values() for p in ps})
    colors = colors_for(points)
    fig, ax = plt.subplots(figsize=(7, 4))
    for (backend, variant), ps in sorted(series.items()):
        ps = sorted(ps, key=lambda p: p["size"])
        name = "%s/%s" % (backend, variant)
        ax.plot([p["size"] for p in ps], [p["rate"] for p in ps], marker="o", label=name,
                color=colors[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("problem size (product of the sizes)")
    ax.set_ylabel(" or ".join(units))
    ax.set_title("%s: throughput against problem size" % kernel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return figure(fig, "Throughput of every backend/variant (log axes); the unit is the rate "
                       "of the kernel's bound.")


def device_of(backend):
    return "gpu" if any(k in backend for k in ("cuda", "cublas", "gpu")) else "cpu"


def roofline_chart(kernel, points, limits):
    # The largest size of each backend/variant.
    largest = {}
    for p in points:
        key = (p["backend"], p["variant"])
        if key not in largest or p["size"] > largest[key]["size"]:
            largest[key] = p
    if not largest:
        return "<p class='muted'>No measured points for a roofline.</p>\n"
    limits = limits or {}
    colors = colors_for(points)
    fig, ax = plt.subplots(figsize=(7, 4))
    with_flops = [p for p in largest.values() if p.get("intensity") and p.get("gflops")]
    if with_flops:
        xs = [p["intensity"] for p in with_flops]
        for dev in {device_of(p["backend"]) for p in with_flops}:
            lim = limits.get(dev) or {}
            if lim.get("bandwidth_gbps") and lim.get("compute_gflops"):
                xs.append(lim["compute_gflops"] / lim["bandwidth_gbps"])  # the ridge point
        lo, hi = min(xs) / 8, max(xs) * 8
        roofs = 0
        for dev in sorted({device_of(p["backend"]) for p in with_flops}):
            lim = limits.get(dev) or {}
            bw, peak = lim.get("bandwidth_gbps"), lim.get("compute_gflops")
            if bw and peak:
                roofs += 1
                grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
                color, dash = ROOF_STYLE[dev]
                ax.plot(grid, [min(peak, bw * x) for x in grid], linestyle=dash, color=color,
                        label="%s roof: %.0f GB/s, %.0f GFLOP/s" % (dev, bw, peak))
        for p in sorted(with_flops, key=lambda p: (p["backend"], p["variant"])):
            name = "%s/%s" % (p["backend"], p["variant"])
            ax.plot([p["intensity"]], [p["gflops"]], marker="o", linestyle="none", label=name,
                    color=colors[name])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity (flop/byte)")
        ax.set_ylabel("GFLOP/s")
        caption = ("Roofline at each variant's largest size: min(compute probe, intensity x "
                   "bandwidth probe) per device, from the latest run's probes.")
        if not roofs:
            caption += " No roof: the latest run has no probe results (e.g. --no-probes)."
    else:
        # No flops: the memory roof alone, as achieved GB/s against the bandwidth probe.
        ps = sorted(largest.values(), key=lambda p: (p["backend"], p["variant"]))
        names = ["%s/%s" % (p["backend"], p["variant"]) for p in ps]
        ax.barh(names, [p.get("gbps") or 0 for p in ps], color=[colors[n] for n in names])
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
    ax.set_title("%s: roofline" % kernel)
    ax.grid(True, which="both", alpha=0.3)
    if with_flops:
        ax.legend(fontsize=7, loc="best")
    return figure(fig, caption)


def trend_chart(kernel, trend, runs):
    if not any(len(s["points"]) > 1 for s in trend):
        return ("<p class='muted'>One run so far: the trend appears once there is history.</p>\n")
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for s in trend:
        ps = s["points"]
        ax.plot([p["run"] for p in ps], [p["seconds"] for p in ps], marker="o",
                label="%s (%s)" % (s["backend"], s["sizes"]))
        bad = [p for p in ps if p.get("verdict") == "slower"]
        if bad:
            ax.plot([p["run"] for p in bad], [p["seconds"] for p in bad], marker="x",
                    markersize=12, linestyle="none", color="red")
    ax.set_yscale("log")
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels([(r.get("date") or "?")[:16] for r in runs], rotation=30, fontsize=7)
    ax.set_ylabel("time of the best variant (s)")
    ax.set_title("%s: best variant across runs (red x: regression)" % kernel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return figure(fig, "Median time of each backend's best variant at its largest size, per run; "
                       "a red cross marks a significant slowdown against the previous run's best "
                       "(which may have been another variant).")


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
            cls = " class='%s'" % " ".join(
                c for c in (("num" if i in num_cols else ""), css) if c) if (
                i in num_cols or css) else ""
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
        cpu = per.get("cpu")
        for backend in sorted(per, key=lambda b: (LANGUAGE_BACKENDS.index(b)
                                                   if b in LANGUAGE_BACKENDS else 99, b)):
            r = per[backend]
            ratio = cpu["seconds"] / r["seconds"] if cpu and r.get("seconds") else None
            rows.append([sizes, backend, r["variant"] + flags(r), fmt_time(r["seconds"]),
                         "%s %s" % (fmt_num(r.get("rate")), r.get("unit") or ""),
                         fmt_pct(r.get("roofline_fraction")), fmt_ratio(ratio),
                         fmt_ratio(r.get("vs_naive")), fmt_ratio(r.get("vs_vendor"))])
    return rows


def page(title, body):
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>%s</title><style>%s</style></head><body>\n%s</body></html>\n"
            % (esc(title), CSS, body))


def write_atomic(path, text):
    folder = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-report-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
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
        return "<p class='muted'>One run so far: nothing to compare with.</p>\n"
    rows = k.get("changes", [])
    if not rows:
        return "<p class='good'>Every benchmark is the same as in the previous run.</p>\n"
    return table(["benchmark", "previous", "latest", "change", "p", "reps", "verdict", "note"],
                 [[r["name"], fmt_time(r.get("base_seconds")), fmt_time(r.get("new_seconds")),
                   fmt_change(r.get("ratio")), fmt_num(r.get("p_value"), 2),
                   "%s/%s" % (r["base_repetitions"], r["new_repetitions"]),
                   (r["verdict"] + flags(r), "bad" if r["verdict"] in ("slower", "failed") else
                    "good" if r["verdict"] == "faster" else ""),
                   (r.get("note") or "").split("\n")[0][:200]] for r in rows],
                 num_cols=(1, 2, 3, 4, 5))


def kernel_page(kernel, k, data, runs):
    body = ["<nav><a href='index.html'>&larr; all kernels</a></nav>",
            "<h1>%s</h1>" % esc(kernel)]
    bad = [v for v in k["variants"] if v["status"] == "failed"]
    body.append("<p>Verification: %s</p>" % (
        "<span class='bad'>%d variant(s) FAILED</span>" % len(bad) if bad else
        "<span class='good'>every measured variant verified</span>"))
    body.append("<h2>Throughput</h2>")
    body.append(throughput_chart(kernel, k["points"]))
    body.append("<h2>Roofline</h2>")
    body.append(roofline_chart(kernel, k["points"], data.get("limits")))
    body.append("<h2>Backends compared</h2>")
    body.append("<p>The fastest verified variant of each backend per size. <em>x vs C++</em> is "
                "the cpu backend's best time over this one (&gt; 1: faster than C++).</p>")
    body.append(table(["sizes", "backend", "best variant", "time", "rate", "% of limit",
                       "x vs C++", "x vs naive", "x vs vendor"],
                      comparison_rows(k["summary"]), num_cols=(3, 4, 5, 6, 7, 8)))
    if k["languages"]:
        body.append("<h3>C++ against other languages</h3>")
        body.append(table(["sizes", "kind", "language", "C++ variant", "other variant", "C++ time",
                           "other time", "C++/other", "within noise"],
                          [[r["sizes"], r["kind"], r["language"], r["cpp_variant"],
                            r["other_variant"], fmt_time(r["cpp_seconds"]),
                            fmt_time(r["other_seconds"]), fmt_ratio(r["ratio"]),
                            ("yes" if r.get("within_noise") else "no") + flags(r)]
                           for r in k["languages"]], num_cols=(5, 6, 7)))
    body.append("<h2>Verification</h2>")
    body.append(table(["backend/variant", "status", "reason"],
                      [[v["variant"], (v["status"], "bad" if v["status"] == "failed" else ""),
                        (v.get("reason") or "").split("\n")[0][:200]] for v in k["variants"]]))
    body.append("<h2>Since the previous run</h2>")
    body.append("<p>Benchmarks whose verdict is not <em>same</em>: a change counts when the "
                "Mann&ndash;Whitney U test gives p &lt; %s and the median time moves by at least "
                "%s%%.</p>" % (esc(data.get("alpha")), esc(100 * data.get("min_effect", 0))))
    body.append(changes_table(k, data))
    body.append("<h2>History</h2>")
    body.append(trend_chart(kernel, k["trend"], runs))
    rows = []
    for s in k["trend"]:
        for p in s["points"]:
            v = p.get("verdict") or ""
            rows.append([s["backend"], s["sizes"], (runs[p["run"]].get("date") or "?"),
                         p["variant"], fmt_time(p["seconds"]), (v, "bad" if v == "slower" else "")])
    body.append(table(["backend", "sizes", "run", "best variant", "time",
                       "verdict vs the previous run's best"],
                      rows, num_cols=(4,)))
    return page("specbench: " + kernel, "\n".join(body))


def index_page(data, pages):
    runs = data["runs"]
    latest = runs[-1] if runs else {}
    body = ["<h1>specbench results</h1>",
            "<p><a href='summary.md'>summary.md</a>: the same as Markdown, for a pull request "
            "or a post.</p>"]
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
    rows = []
    for kernel, k in data["kernels"].items():
        failed = sum(1 for v in k["variants"] if v["status"] == "failed")
        skipped = sum(1 for v in k["variants"] if v["status"] == "skipped")
        verified = sum(1 for v in k["variants"] if v["status"] == "verified")
        best = max(k["points"], key=lambda p: (p["size"], p.get("rate") or 0), default=None)
        rows.append([kernel, pages[kernel],
                     "%d verified, %d failed, %d skipped" % (verified, failed, skipped),
                     failed > 0,
                     ("%s/%s" % (best["backend"], best["variant"])) if best else "-",
                     ("%s %s" % (fmt_num(best.get("rate")), best.get("unit"))) if best else "-",
                     change_counts(k) or ("same" if data["comparisons"] else "-")])
    out = ["<table><thead><tr><th>kernel</th><th>verification</th>"
           "<th>fastest at the largest size</th><th>rate</th><th>against the previous run</th>"
           "</tr></thead><tbody>"]
    for kernel, href, ver, bad, best, rate, reg in rows:
        out.append("<tr><td><a href='%s'>%s</a></td><td%s>%s</td><td>%s</td>"
                   "<td class='num'>%s</td><td%s>%s</td></tr>" % (
                       esc(href), esc(kernel), " class='bad'" if bad else "", esc(ver), esc(best),
                       esc(rate), " class='bad'" if ("slower" in reg or "failed" in reg) else "",
                       esc(reg)))
    out.append("</tbody></table>")
    body.append("<h2>Kernels</h2>")
    body.append("".join(out))
    body.append("<h2>Runs</h2>")
    body.append(table(["date", "host", "commit", "CPU", "GPU", "C++", "CUDA", "Mojo",
                       "verification", "file"],
                      [[r.get("date"), r.get("host"), (r.get("git_commit") or "")[:12],
                        r.get("cpu_model"), r.get("gpu"), r.get("cxx"), r.get("nvcc"),
                        r.get("mojo"),
                        ("%s passed, %s failed" % (r["verification"].get("passed"),
                                                   r["verification"].get("failed")))
                        if isinstance(r.get("verification"), dict) else "-",
                        os.path.basename(r.get("path") or "")] for r in runs]))
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


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: make_report.py REPORT_DATA_JSON OUT_DIR\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        data = json.load(f)
    out = argv[2]
    os.makedirs(out, exist_ok=True)
    used, pages = set(), {}
    for kernel in data["kernels"]:
        pages[kernel] = page_name(kernel, used)
    for kernel, k in data["kernels"].items():
        write_atomic(os.path.join(out, pages[kernel]), kernel_page(kernel, k, data, data["runs"]))
    write_atomic(os.path.join(out, "index.html"), index_page(data, pages))
    write_atomic(os.path.join(out, "summary.md"), summary_markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
