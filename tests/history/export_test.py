#!/usr/bin/env python3
"""`specbench export RESULTS --format csv`: one row per repetition, tidy columns.

Usage: export_test.py SPECBENCH DATA_DIR WORK_DIR

Exports two fixtures and loads the CSV with pandas' read_csv when pandas is installed (setup.sh
installs it into .venv), else with Python's csv module; either way it must hold exactly one row
per stored repetition, with the same times. A corrupt file exits 2 naming it.
"""

import csv
import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def repetitions(path):
    with open(path) as f:
        doc = json.load(f)
    return [(b["kernel"], b["backend"], b["variant"], b["real_time"] * 1e-9)
            for b in doc["benchmarks"] if b.get("kernel") and b.get("run_type") == "iteration"]


def main(argv):
    specbench, data, work = argv[1], argv[2], argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    files = [os.path.join(data, "base.json"), os.path.join(data, "hostile.json")]
    out = os.path.join(work, "reps.csv")
    r = subprocess.run([specbench, "export", *files, "--format", "csv", "--out", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("export exited %d\n%s" % (r.returncode, r.stderr))
    stdout = subprocess.run([specbench, "export", *files, "--format", "csv"],
                            capture_output=True, text=True).stdout
    if stdout.replace("\r\n", "\n") != open(out, newline="").read().replace("\r\n", "\n"):
        fail("export on stdout differs from --out")
    want = [rep for f in files for rep in repetitions(f)]
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        frame = pandas.read_csv(out)
        rows = frame.to_dict("records")
        how = "pandas %s read_csv" % pandas.__version__
    else:
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        how = "the csv module (pandas is not installed)"
    if len(rows) != len(want):
        fail("%d rows, expected one per repetition: %d" % (len(rows), len(want)))
    for col in ("run", "date", "host", "kernel", "backend", "variant", "sizes", "bytes_per_call",
                "flops_per_call", "repetition", "repetitions", "seconds", "gbps", "gflops"):
        if col not in rows[0]:
            fail("no column %s in %s" % (col, list(rows[0])))
    got = sorted((row["kernel"], row["backend"], row["variant"], float(row["seconds"]))
                 for row in rows)
    for (gk, gb, gv, gs), (wk, wb, wv, ws) in zip(got, sorted(want)):
        if (gk, gb, gv) != (wk, wb, wv) or abs(gs - ws) > 1e-12 * ws:
            fail("row %s differs from the repetition %s" % ((gk, gb, gv, gs), (wk, wb, wv, ws)))
    if not any(row["variant"] == "<img src=x onerror=alert(1)>" for row in rows):
        fail("the hostile variant name did not survive the CSV quoting")
    keys = {(row["run"], row["kernel"], row["backend"], row["variant"], row["sizes"],
             int(row["repetition"])) for row in rows}
    if len(keys) != len(rows):
        fail("rows are not one per run, case and repetition")
    r = subprocess.run([specbench, "export", os.path.join(data, "truncated.json")],
                       capture_output=True, text=True)
    if r.returncode != 2 or "truncated.json" not in r.stderr:
        fail("a corrupt file: exit %d\n%s" % (r.returncode, r.stderr))
    print("ok: %d rows, one per repetition, loaded with %s" % (len(rows), how))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
