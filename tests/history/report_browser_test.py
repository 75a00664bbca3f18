#!/usr/bin/env python3
"""The report site rendered in headless Chromium.

Usage: report_browser_test.py SPECBENCH DATA_DIR WORK_DIR

Builds a report from the fixtures (a history of runs with a regression, a run whose strings try to
inject markup) and a richer latest run written here (several sizes, four backends, caches, a
variant named in matplotlib mathtext and one with control bytes), then loads every page in
Chromium: it must load with no console error, show every chart as a non-empty inline SVG, and
contain none of the injected elements. Also checks the pages' mode (0644) and that each way the
report generator can fail is named. Exit 77 (skipped) when Chromium is not installed.
"""

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures  # noqa: E402

MATHTEXT = "$\\frac{a}{$"
CONTROL = "ctl\x1b[31mred\x07"


def rich_run(path):
    """The latest run: saxpy at three sizes on cpu, mojo and mlir (the language chart, the
    speed-ups, the distributions), a mathtext name and a name with control bytes."""
    base = make_fixtures.BASE
    cases = []
    for n, scale in ((1024, 1.0), (65536, 40.0), (1048576, 700.0)):
        for backend, variant, strategy, speed in (
                ("cpu", "loops", "loops", 1.0), ("cpu", "omp_simd", "omp_simd", 0.6),
                ("mojo", "loops", "loops", 1.1), ("mojo", "vectorize_parallel",
                                                  "vectorize_parallel", 0.5),
                ("mlir", "loops", "loops", 0.9), ("mlir", "openmp", "openmp", 0.55),
                ("cpu", MATHTEXT, "loops", 1.2), ("cpu", CONTROL, "loops", 1.3)):
            cases.append(("saxpy", backend, variant, "N=%d" % n,
                          [x * scale * speed * 1e-3 for x in base], strategy))
    d = make_fixtures.doc("2026-11-08T00:00:00+00:00", cases)
    for e in d["benchmarks"]:
        n = e["sizes"]["N"]
        e["bytes_per_call"] = 12.0 * n
        e["flops_per_call"] = 2.0 * n
        e["naive_variant"] = "loops"
    d["context"]["caches"] = [{"level": 1, "type": "Data", "size": 32768, "num_sharing": 1},
                              {"level": 2, "type": "Unified", "size": 1048576, "num_sharing": 1},
                              {"level": 3, "type": "Unified", "size": 33554432, "num_sharing": 2}]
    with open(path, "w") as f:
        json.dump(d, f, indent=1)


def charts(dom):
    return re.findall(r"<svg\b.*?</svg>", dom, re.S)


def check_failures(specbench, runs, work):
    """Each way the generator fails has its own message, and exit code 2."""
    # A missing module: a Python without matplotlib (python3 -I with an empty path hides it).
    fake = os.path.join(work, "python-without-matplotlib")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nexec %s -c 'import sys; sys.modules[\"matplotlib\"] = None; "
                "sys.argv = sys.argv[1:]; exec(open(sys.argv[0]).read())' \"$@\"\n"
                % sys.executable)
    os.chmod(fake, 0o755)
    r = subprocess.run([specbench, "report", *runs, "--out", os.path.join(work, "nomod")],
                       capture_output=True, text=True, env=dict(os.environ, SPECBENCH_PYTHON=fake))
    if r.returncode != 2 or "lacks a Python module" not in r.stderr or \
            "matplotlib" not in r.stderr:
        fail("missing module: exit %d\n%s" % (r.returncode, r.stderr))
    # No such Python.
    r = subprocess.run([specbench, "report", *runs, "--out", os.path.join(work, "nopy")],
                       capture_output=True, text=True,
                       env=dict(os.environ, SPECBENCH_PYTHON=os.path.join(work, "no-python")))
    if r.returncode != 2 or "cannot run the report generator's Python" not in r.stderr:
        fail("missing Python: exit %d\n%s" % (r.returncode, r.stderr))
    # A write that fails (index.html is a folder): the cause and the file, not "needs matplotlib".
    blocked = os.path.join(work, "blocked")
    os.makedirs(os.path.join(blocked, "index.html", "x"))
    r = subprocess.run([specbench, "report", *runs, "--out", blocked], capture_output=True,
                       text=True)
    if r.returncode != 2 or "could not write" not in r.stderr or "index.html" not in r.stderr \
            or "needs Python" in r.stderr:
        fail("write failure: exit %d\n%s" % (r.returncode, r.stderr))
    # A Python exception (a report-data file of the wrong shape): named as a bug, with its trace.
    bad = os.path.join(work, "bad-data.json")
    with open(bad, "w") as f:
        f.write('{"kernels": 7}\n')
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness",
                          "report", "make_report.py")
    r = subprocess.run([sys.executable, script, bad, os.path.join(work, "bad")],
                       capture_output=True, text=True)
    if r.returncode != 5 or "internal error" not in r.stderr or "Traceback" not in r.stderr:
        fail("exception: exit %d\n%s" % (r.returncode, r.stderr))

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-extensions",
                  "--allow-file-access-from-files", "--enable-logging=stderr", "--v=0"]


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def main(argv):
    specbench, data, work = argv[1], argv[2], argv[3]
    browser = chromium()
    if not browser:
        print("SKIP: no chromium found (harness/scripts/setup.sh installs it)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "site")
    rich = os.path.join(work, "rich.json")
    rich_run(rich)
    runs = [os.path.join(data, f) for f in
            ("base.json", "same.json", "slower.json", "hostile.json")] + [rich]
    r = subprocess.run([specbench, "report", *runs, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail("specbench report exited %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    if not re.search(r"report: \[\d+/\d+\] .*ETA", r.stderr):
        fail("no progress on stderr:\n" + r.stderr)
    if "Traceback" in r.stderr or "ParseException" in r.stderr:
        fail("the report generator complained:\n" + r.stderr)

    pages = sorted(glob.glob(os.path.join(out, "*.html")))
    names = sorted(os.path.basename(p) for p in pages)
    expected = sorted(["index.html"] + ["%s-%s.html" % (kind, k) for kind in ("kernel", "history")
                                        for k in ("dot", "matmul", "saxpy")])
    if names != expected:
        fail("pages %s, expected %s" % (names, expected))
    for f in pages + [os.path.join(out, "summary.md")]:
        mode = stat.S_IMODE(os.stat(f).st_mode)
        if mode & 0o044 != 0o044:
            fail("%s has mode %o: not readable by others" % (f, mode))
    summary = open(os.path.join(out, "summary.md"), encoding="utf-8").read()
    if "| saxpy |" not in summary:
        fail("summary.md has no saxpy row\n" + summary)
    for line in summary.splitlines():
        if line.startswith("| saxpy |") and line.count(" | ") != 7:  # 8 cells
            fail("summary.md row broken by a cell: " + line)
    if "<img" in summary or "<script" in summary or "\x1b" in summary:
        fail("summary.md: markup or control bytes from the data are not escaped")

    # The charts each page must have, by the id of their <figure>.
    want = {"index.html": ["languages", "cross-kernel-roofline", "heat-map"],
            "kernel-saxpy.html": ["throughput", "speed-up", "distribution", "roofline"]}
    for page in pages:
        base = os.path.basename(page)
        url = "file://" + os.path.abspath(page)
        res = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom", url], capture_output=True,
                             text=True, timeout=120)
        dom, log = res.stdout, res.stderr
        if res.returncode != 0 or "<body" not in dom:
            fail("%s did not load (exit %d)\n%s" % (page, res.returncode, log[-3000:]))
        console = [l for l in log.splitlines() if "CONSOLE" in l or "Uncaught" in l
                   or "Failed to load resource" in l or "net::ERR" in l]
        if console:
            fail("%s: console errors:\n%s" % (page, "\n".join(console)))
        # No injected element survives: the only <script> or <img> would be from the data.
        if re.search(r"<script\b", dom, re.I) or re.search(r"<img\b", dom, re.I):
            fail("%s: an element from the data was not escaped" % page)
        if re.search(r"""(src|href)=["']?(https?:)?//""", dom):
            fail("%s: refers to something outside the page" % page)
        if "\x1b" in dom or "\x07" in dom:
            fail("%s: a raw control byte from the data reached the page" % page)
        svgs = charts(dom)
        for svg in svgs:
            if len(re.findall(r"<path\b", svg)) < 10:
                fail("%s: a chart is empty" % page)
        for ident in want.get(base, []):
            m = re.search(r"<figure id=\"%s\">(.*?)</figure>" % re.escape(ident), dom, re.S)
            if not m or not charts(m.group(1)):
                fail("%s: no %s chart" % (page, ident))
            if len(re.findall(r"<path\b", m.group(1))) < 10:
                fail("%s: the %s chart is empty" % (page, ident))
        if base.startswith("history-"):
            # One chart per variant with history; saxpy/cpu/loops has five runs with a regression.
            if not svgs:
                fail("%s: no history chart" % page)
        if base == "history-saxpy.html":
            if "20261103T" not in dom and "slower.json" not in dom:
                fail("history-saxpy.html: the regression's run is not listed")
            if not re.search(r"href=\"[^\"]*base\.json\"", dom):
                fail("history-saxpy.html: no link to a run's JSON")
        if base == "kernel-saxpy.html":
            if "&lt;img src=x onerror=alert(1)&gt;" not in dom:
                fail("kernel-saxpy.html: the hostile variant name is not shown escaped")
            if "$\\frac{a}{$" not in dom:
                fail("kernel-saxpy.html: the mathtext variant name is not shown as text")
            if "ctl\\x1B[31mred\\x07" not in dom:
                fail("kernel-saxpy.html: the control bytes are not shown escaped")
        if base == "index.html":
            if "&lt;b&gt;Evil &amp; \"CPU\"&lt;/b&gt;" not in dom:
                fail("index.html: the hostile CPU model is not shown escaped")
            if "kernel-saxpy.html" not in dom:
                fail("index.html: no link to the saxpy page")
        if base == "kernel-dot.html" and "history-dot.html" not in dom:
            fail("kernel-dot.html: no link to its history")
    # With the hostile run as the latest, its failure reason is in the verification table.
    out2 = os.path.join(work, "site-hostile")
    r = subprocess.run([specbench, "report", *runs[:4], "--out", out2], capture_output=True,
                       text=True)
    if r.returncode != 0:
        fail("specbench report (hostile latest) exited %d\n%s" % (r.returncode, r.stderr))
    res = subprocess.run([browser, *CHROMIUM_FLAGS, "--dump-dom",
                          "file://" + os.path.abspath(os.path.join(out2, "kernel-saxpy.html"))],
                         capture_output=True, text=True, timeout=120)
    if "&lt;/td&gt;&lt;/tr&gt;&lt;script&gt;" not in res.stdout:
        fail("kernel-saxpy.html: the hostile failure reason is not shown escaped")

    check_failures(specbench, runs, work)

    # A screenshot of a kernel page is not blank: a rendered chart has many distinct colours.
    shot = os.path.join(work, "saxpy.png")
    subprocess.run([browser, *CHROMIUM_FLAGS, "--screenshot=" + shot, "--window-size=1000,1400",
                    "file://" + os.path.abspath(os.path.join(out, "kernel-saxpy.html"))],
                   capture_output=True, timeout=120)
    if not os.path.exists(shot) or os.path.getsize(shot) < 20000:
        fail("the screenshot of kernel-saxpy.html is missing or blank")
    print("ok: %d pages rendered in %s" % (len(pages), browser))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
