#!/usr/bin/env python3
"""The report site rendered in headless Chromium.

Usage: report_browser_test.py SPECBENCH DATA_DIR WORK_DIR

Builds a report from the fixtures (a history of runs with a regression, and a run whose strings
try to inject markup), then loads every page in Chromium: it must load with no console error, show
every chart as a non-empty inline SVG, and contain none of the injected elements. Exit 77 (skipped)
when Chromium is not installed.
"""

import glob
import os
import re
import shutil
import subprocess
import sys

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
    runs = [os.path.join(data, f) for f in
            ("base.json", "same.json", "slower.json", "hostile.json")]
    r = subprocess.run([specbench, "report", *runs, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail("specbench report exited %d\n%s%s" % (r.returncode, r.stdout, r.stderr))

    pages = sorted(glob.glob(os.path.join(out, "*.html")))
    names = sorted(os.path.basename(p) for p in pages)
    expected = ["index.html", "kernel-dot.html", "kernel-matmul.html", "kernel-saxpy.html"]
    if names != expected:
        fail("pages %s, expected %s" % (names, expected))
    summary = open(os.path.join(out, "summary.md"), encoding="utf-8").read()
    if "| saxpy |" not in summary:
        fail("summary.md has no saxpy row\n" + summary)
    for line in summary.splitlines():
        if line.startswith("| saxpy |") and line.count(" | ") != 7:  # 8 cells
            fail("summary.md row broken by a cell: " + line)
    if "<img" in summary or "<script" in summary:
        fail("summary.md: markup from the data is not escaped")

    for page in pages:
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
        svgs = re.findall(r"<svg\b.*?</svg>", dom, re.S)
        if os.path.basename(page).startswith("kernel-"):
            # saxpy, in the latest run: throughput, roofline and trend (4 runs of history); dot
            # and matmul, in the three earlier runs only: their trend
            want = 3 if os.path.basename(page) == "kernel-saxpy.html" else 1
            if len(svgs) < want:
                fail("%s: %d charts, expected at least %d" % (page, len(svgs), want))
            for svg in svgs:
                if len(re.findall(r"<path\b", svg)) < 10:
                    fail("%s: a chart is empty" % page)
        if os.path.basename(page) == "kernel-saxpy.html":
            if "&lt;img src=x onerror=alert(1)&gt;" not in dom:
                fail("kernel-saxpy.html: the hostile variant name is not shown escaped")
            if "&lt;/td&gt;&lt;/tr&gt;&lt;script&gt;" not in dom:
                fail("kernel-saxpy.html: the hostile failure reason is not shown escaped")
        if os.path.basename(page) == "index.html":
            if "&lt;b&gt;Evil &amp; \"CPU\"&lt;/b&gt;" not in dom:
                fail("index.html: the hostile CPU model is not shown escaped")
            if "kernel-saxpy.html" not in dom:
                fail("index.html: no link to the saxpy page")

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
