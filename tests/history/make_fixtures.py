#!/usr/bin/env python3
"""Writes the results fixtures in data/ (run from anywhere: python3 make_fixtures.py [OUT_DIR]).

Hand-made schema-1 documents with known repetitions, for the compare, report and bad-input
tests: base, same (also a +2% change, significant but under the 5% minimum effect), slower
(saxpy +30%), faster (saxpy -30%, matmul missing), failed (a failed variant and verification),
few_reps_base/few_reps (three repetitions a side), hostile (markup in strings), and the bad files
wrong_version, truncated, wrong_type, not_results and empty.
"""
import json
import os
import sys


def entries(kernel, backend, variant, sizes, samples_ms, strategy="loops"):
    name = f"{kernel}/{backend}/{variant}/{sizes}"
    out = []
    common = {"kernel": kernel, "backend": backend, "variant": variant,
              "sizes": {k: int(v) for k, v in (p.split("=") for p in sizes.split(","))},
              "verified": True, "max_error": 0.0, "strategy": strategy, "naive_variant": "loops",
              "bytes_per_call": 12.0 * 1e6, "flops_per_call": 2.0e6, "time_unit": "ns",
              "bound": "memory", "arithmetic_intensity": 2.0 / 12, "roofline_limit": 40.0,
              "run_name": name + "/real_time", "threads": 1, "iterations": 100}
    for i, ms in enumerate(samples_ms):
        out.append(dict(common, name=name + "/real_time", run_type="iteration", repetition_index=i,
                        repetitions=len(samples_ms), real_time=ms * 1e6, cpu_time=ms * 1e6))
    s = sorted(samples_ms)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    out.append(dict(common, name=name + "/real_time_median", run_type="aggregate",
                    aggregate_name="median", aggregate_unit="time", real_time=med * 1e6,
                    cpu_time=med * 1e6, repetitions=n))
    return out


def doc(date, cases, failed=(), verification=None):
    return {"schema_version": 1,
            "context": {"date": date, "host_name": "testhost", "git_commit": "0123456789abcdef",
                        "cpu_model": "Test CPU", "gpu": "none", "specbench_version": "0.1.0",
                        "cxx": "g++ (test) 12", "nvcc": "none", "mojo": "none",
                        "limits": {"cpu": {"bandwidth_gbps": 40.0, "compute_gflops": 200.0},
                                   "gpu": {"bandwidth_gbps": None, "compute_gflops": None}}},
            "benchmarks": [e for c in cases for e in entries(*c)],
            "skipped": [], "failed": list(failed),
            "verification": verification or {"checks": 10, "passed": 10, "failed": 0,
                                             "skipped": 0}}


BASE = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00, 1.02]
SAME = [1.01, 0.99, 1.00, 1.02, 1.00, 0.98, 1.01, 1.00, 0.99, 1.01]
SLOW = [x * 1.30 for x in BASE]
FAST = [x * 0.70 for x in BASE]
TINY = [x * 1.02 for x in BASE]  # significant but below the 5% minimum effect


def cases(saxpy, dot, matmul=None):
    c = [("saxpy", "cpu", "loops", "N=1024", saxpy),
         ("dot", "cpu", "omp_simd", "N=4096", dot, "omp_simd")]
    if matmul:
        c.append(("matmul", "cpu", "loops", "M=8,N=8,K=8", matmul))
    return c


def main(out):
    def w(name, d):
        with open(os.path.join(out, name), "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")

    def raw(name, text):
        with open(os.path.join(out, name), "w") as f:
            f.write(text)

    w("base.json", doc("2026-11-01T00:00:00+00:00", cases(BASE, BASE, BASE)))
    w("same.json", doc("2026-11-02T00:00:00+00:00", cases(SAME, TINY, BASE)))
    w("slower.json", doc("2026-11-03T00:00:00+00:00", cases(SLOW, BASE, BASE)))
    w("faster.json", doc("2026-11-04T00:00:00+00:00", cases(FAST, BASE)))
    w("failed.json", doc("2026-11-05T00:00:00+00:00", cases(BASE, BASE, BASE),
                         failed=[{"kernel": "saxpy", "backend": "cpu", "variant": "omp_simd",
                                  "sizes": {"N": 1024}, "reason": "max abs error 3.5 at [7]",
                                  "verified": False, "max_error": 3.5}],
                         verification={"checks": 10, "passed": 9, "failed": 1, "skipped": 0}))
    few = doc("2026-11-06T00:00:00+00:00", [("saxpy", "cpu", "loops", "N=1024", [1.3, 1.31, 1.29])])
    w("few_reps.json", few)
    few_base = json.loads(json.dumps(few))
    for e in few_base["benchmarks"]:
        e["real_time"] /= 1.3
        e["cpu_time"] /= 1.3
    few_base["context"]["date"] = "2026-10-31T00:00:00+00:00"
    w("few_reps_base.json", few_base)
    hostile = doc("2026-11-07T00:00:00+00:00",
                  [("saxpy", "cpu", "<img src=x onerror=alert(1)>", "N=1024", BASE),
                   ("saxpy", "cpu", "loops", "N=1024", SAME)],
                  failed=[{"kernel": "saxpy", "backend": "cpu",
                           "variant": "<script>alert(2)</script>", "sizes": {"N": 1024},
                           "reason": "</td></tr><script>alert(3)</script> | x",
                           "verified": False, "max_error": 1.0}])
    hostile["context"]["cpu_model"] = "<b>Evil & \"CPU\"</b>"
    w("hostile.json", hostile)
    w("wrong_version.json",
      dict(doc("2026-11-08T00:00:00+00:00", cases(BASE, BASE)), schema_version=99))
    text = json.dumps(doc("2026-11-09T00:00:00+00:00", cases(BASE, BASE)), indent=1)
    raw("truncated.json", text[: len(text) // 2])
    bad_type = doc("2026-11-10T00:00:00+00:00", cases(BASE, BASE))
    bad_type["benchmarks"][3]["real_time"] = "fast"
    w("wrong_type.json", bad_type)
    raw("not_results.json", '{"hello": "world"}\n')
    raw("empty.json", "")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "data"))
