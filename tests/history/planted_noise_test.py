#!/usr/bin/env python3
"""A planted noisy case is flagged noisy in the summary, compare and the report (issue 17).

A scratch tree holds saxpy with its generated files; the cpu file is edited by hand (as
tests/e2e/hand_edit.cmake does) so that every variant, after computing its result, sleeps 5 ms
at random on one call in 25: a variant whose repetitions are spread out, which still verifies.
Then:
1. `bench` there: the summary marks the rows noisy and lists the cases with the reasons; the
   results file's median entries carry "noise" with "noisy": true;
2. a second `bench`, then `compare` of the two: the table, the Markdown and the JSON mark the
   verdicts noisy (never a bare verdict);
3. `report` of the two runs: report-data.json has "noisy": true on the kernel's points and
   summary rows, and the kernel page shows the marker.

Usage: planted_noise_test.py SPECBENCH SOURCE_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

PLANT = r"""

/* Planted by tests/history/planted_noise_test.py: every variant sleeps 5 ms at random. */
#include <time.h>
static unsigned long long sb_planted_state;
static void sb_planted_sleep(void) {
  if (!sb_planted_state) sb_planted_state = ((unsigned long long)time(NULL) << 1) | 1;
  sb_planted_state ^= sb_planted_state << 13;
  sb_planted_state ^= sb_planted_state >> 7;
  sb_planted_state ^= sb_planted_state << 17;
  if (sb_planted_state % 25 == 0) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, 0);
  }
}
static const sb_module* sb_planted_original;
template <int I>
static int sb_planted_variant(const sb_args* args) {
  int rc = sb_planted_original->variants[I].fn(args);
  sb_planted_sleep();
  return rc;
}
extern "C" __attribute__((visibility("default"))) const sb_module* specbench_module(void) {
  static sb_module table;
  static sb_variant variants[4];
  static const sb_variant_fn wrapped[4] = {sb_planted_variant<0>, sb_planted_variant<1>,
                                           sb_planted_variant<2>, sb_planted_variant<3>};
  sb_planted_original = specbench_planted_original_module();
  table = *sb_planted_original;
  for (int i = 0; i < table.num_variants && i < 4; ++i) {
    variants[i] = table.variants[i];
    variants[i].fn = wrapped[i];
  }
  table.variants = variants;
  return &table;
}
"""


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def run(cmd, rc):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != rc:
        fail("%s: exit %d, expected %d\n%s%s" % (" ".join(cmd), r.returncode, rc, r.stdout,
                                                  r.stderr))
    return r


def main(argv):
    specbench, source, work = argv[1], argv[2], argv[3]
    shutil.rmtree(work, ignore_errors=True)
    root = os.path.join(work, "root")
    os.makedirs(os.path.join(root, "specs"))
    shutil.copy(os.path.join(source, "specs", "saxpy.yaml"), os.path.join(root, "specs"))
    shutil.copytree(os.path.join(source, "generated", "saxpy"),
                    os.path.join(root, "generated", "saxpy"))
    src = os.path.join(root, "generated", "saxpy", "cpu", "saxpy.cpp")
    text = open(src).read()
    if "specbench_module" not in text:
        fail(src + " defines no specbench_module")
    with open(src, "w") as f:
        f.write(text.replace("specbench_module", "specbench_planted_original_module") + PLANT)

    bench = [specbench, "bench", "saxpy", "-b", "cpu", "--sizes", "verify", "--min-time", "0.02",
             "--no-probes", "--root", root, "--cache-dir", os.path.join(work, "cache")]
    a, b = os.path.join(work, "a.json"), os.path.join(work, "b.json")
    r = run(bench + ["--out", a], 0)

    # 1. The summary: rows flagged, and the noisy cases listed with their reasons.
    rows = [l for l in r.stdout.splitlines() if l.startswith("saxpy ") and " cpu " in l]
    if not rows or not all(re.search(r"\bnoisy\s*$", l) for l in rows):
        fail("summary rows of the planted kernel are not all flagged noisy:\n" + r.stdout)
    m = re.search(r"^noisy: (\d+) of (\d+) measured cases$", r.stdout, re.M)
    if not m or int(m.group(1)) < 1:
        fail("the summary does not list the noisy cases:\n" + r.stdout)
    for variant in ("saxpy/cpu/loops", "saxpy/cpu/omp_simd"):
        if not re.search(r"^%s +N=\d+ +\S" % re.escape(variant), r.stdout, re.M):
            fail("the summary's noisy list lacks %s:\n%s" % (variant, r.stdout))
    doc = json.load(open(a))
    medians = [e for e in doc["benchmarks"] if e.get("aggregate_name") == "median"]
    if not medians or not any(e.get("noise", {}).get("noisy") for e in medians):
        fail("no median entry of the results carries noise.noisy = true")
    for e in medians:
        n = e["noise"]
        if n["noisy"] and not n["noise_reasons"]:
            fail("%s is noisy without a reason" % e["name"])
        if not (n["median_ci"][0] <= n["median_ci"][1]) or n["repetitions"] != 5:
            fail("%s: bad noise record %s" % (e["name"], n))
    ml = doc["context"].get("machine_load")
    if not isinstance(ml, dict) or "contended" not in ml or ml.get("start") is None:
        fail("the results context has no machine_load: %s" % ml)

    # 2. compare: every format marks the noisy verdicts.
    run(bench + ["--out", b], 0)
    md, cj = os.path.join(work, "c.md"), os.path.join(work, "c.json")
    r = subprocess.run([specbench, "compare", a, b, "--markdown", md, "--json", cj],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        fail("compare exited %d\n%s" % (r.returncode, r.stderr))
    if not re.search(r"^saxpy/cpu/\S+ .*\(noisy\)", r.stdout, re.M):
        fail("the compare table marks no verdict noisy:\n" + r.stdout)
    if "are noisy in one run or both" not in r.stdout:
        fail("compare does not warn about the noisy verdicts:\n" + r.stdout)
    if not re.search(r"^\| saxpy/cpu/\S+ \|.*\(noisy\) \|", open(md).read(), re.M):
        fail("the compare Markdown marks no verdict noisy")
    c = json.load(open(cj))
    noisy_rows = [row for row in c["benchmarks"] if row["noisy"]]
    if not noisy_rows or c["counts"]["noisy"] != len(noisy_rows):
        fail("compare JSON: %d noisy rows, counts %s" % (len(noisy_rows), c["counts"]))
    if not all(row["noise"] for row in noisy_rows):
        fail("compare JSON: a noisy row without its reasons")

    # 3. report: the data and the page.
    out = os.path.join(work, "report")
    run([specbench, "report", a, b, "--out", out], 0)
    data = json.load(open(os.path.join(out, "report-data.json")))
    k = data["kernels"]["saxpy"]
    if not any(p["noisy"] for p in k["points"]) or not all("suspect" in p for p in k["points"]):
        fail("report-data.json: no noisy point for saxpy")
    if not any(s["noisy"] for s in k["summary"]):
        fail("report-data.json: no noisy summary row for saxpy")
    page = open(os.path.join(out, "kernel-saxpy.html")).read()
    if "(noisy)" not in page:
        fail("kernel-saxpy.html shows no noisy marker")
    print("planted noise flagged in the summary, the results, compare and the report")


if __name__ == "__main__":
    main(sys.argv)
