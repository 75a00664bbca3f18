#!/usr/bin/env python3
"""make_report.py takes every backend fact from the backend records: from the report data's
"backends" table, or for older data from harness/report/backends.json. It names no backend.

Usage: report_backends_test.py HARNESS_REPORT_DIR
"""

import os
import re
import sys


def main(argv):
    report_dir = argv[1]
    sys.path.insert(0, report_dir)
    import make_report as m  # noqa: E402

    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    # Data without the table (written before it existed): the fallback file's records.
    m.use_backends({})
    check(m.device_of("cuda") == "gpu", "fallback: cuda is a gpu backend")
    check(m.device_of("vendor_cuda") == "gpu", "fallback: vendor_cuda is a gpu backend")
    check(m.device_of("mojo") == "cpu", "fallback: mojo is a cpu backend")
    check(m.device_of("no_such_backend") == "cpu", "a backend without a record is on the cpu")
    check(m.native_of("cpu") == "cpu" and m.native_of("gpu") == "cuda", "fallback: natives")
    check(m.language_of("mojo") == "Mojo", "fallback: mojo's language")
    names = list(m.BACKENDS)
    check(sorted(["zzz", names[-1], names[0]], key=m.backend_order) == [names[0], names[-1], "zzz"],
          "records first, in their order; unknown backends after them")

    # The data's table wins over the fallback.
    m.use_backends({"backends": [
        {"name": "zed", "language": "Zed", "device": "gpu", "native": True, "colormap": "Reds",
         "version_key": "zed"},
        {"name": "cuda", "language": "CUDA", "device": "cpu", "native": True,
         "colormap": "Blues", "version_key": ""}]})
    check(m.device_of("zed") == "gpu", "data: zed is on the gpu")
    check(m.device_of("cuda") == "cpu", "data: the table, not a name, gives the device")
    check(m.native_of("gpu") == "zed", "data: zed is the gpu's native backend")
    check(m.language_of("zed") == "Zed", "data: zed's language")
    check(m.backend_cmap("zed") == "Reds", "data: zed's colour map")
    table = m.runs_table([{"zed": "Zed 1.0"}], ["a.json"])
    check("<th>Zed</th>" in table and "Zed 1.0" in table, "runs table: a column per version key")

    # Limits that moved during the latest run are named on the pages; steady ones are not.
    warnings = m.unsteady_warnings({
        "cpu": {"unsteady": True, "bandwidth_drift": 0.42, "compute_drift": 0.0},
        "gpu": {"unsteady": False, "bandwidth_drift": 0.05}})
    check(len(warnings) == 1 and "cpu" in warnings[0] and "bandwidth 42%" in warnings[0]
          and "compute" not in warnings[0], "unsteady: the cpu's bandwidth drift is named")
    check(m.unsteady_warnings(None) == [] and m.unsteady_warnings({"cpu": None}) == [],
          "unsteady: no limits, no warning")
    summary = m.summary_markdown({"runs": [], "comparisons": [], "kernels": {}, "limits": {
        "cpu": {"unsteady": True, "bandwidth_drift": 0.42}}})
    check("**UNSTEADY: the cpu limit probes moved" in summary, "unsteady: said in summary.md")

    # No backend named in the script (device names "cpu" and "gpu" are not backend names).
    src = open(os.path.join(report_dir, "make_report.py"), encoding="utf-8").read()
    for name in ("cuda", "cudasim", "mojo", "mlir", "vendor_cpu", "vendor_cuda", "mojo_gpu"):
        if re.search(r"[\"']%s[\"']" % name, src):
            failures.append("make_report.py names the backend '%s'" % name)

    for f in failures:
        print("FAIL: " + f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
