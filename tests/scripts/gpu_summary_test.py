#!/usr/bin/env python3
"""harness/scripts/gpu_summary.py on a results document made here: its rows, its percentages
against the triad and the memory peak, the CUDA / other-language ratio, the failures, and the
--strict exit status. usage: gpu_summary_test.py REPO_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "harness", "scripts", "gpu_summary.py")
records = json.load(open(os.path.join(root, "harness", "report", "backends.json")))
gpu = [r for r in records if r["device"] == "gpu" and r["timed"]]
native = [r["name"] for r in gpu if r["native"]][0]
vendor = [r["name"] for r in gpu if r["vendor"]][0]


def entry(backend, variant, seconds, gbps, fraction, vs_vendor=None, suspect=None):
    return {"kernel": "saxpy", "sizes": "N=1048576", "backend": backend, "variant": variant,
            "seconds": seconds, "bound": "memory", "gbps": gbps, "rate": gbps, "unit": "GB/s",
            "roofline_fraction": fraction, "vs_vendor": vs_vendor, "suspect": suspect,
            "noisy": False}


doc = {
    "context": {"gpu": "Test GPU", "nvcc": "13.0", "git_commit": "abc",
                "probes": {"gpu": {
                    "triad": {"ok": True, "gbps": 4000.0, "detail": "measured"},
                    "memory_peak": {"ok": True, "gbps": 5000.0, "detail": "theoretical"},
                    "sgemm": {"ok": False, "reason": "not run here"}}}},
    "verification": {"checks": 10, "passed": 9, "failed": 1, "skipped": 0},
    "summary": [entry(native, "vectorized", 3.0e-6, 4200.0, 1.05, vs_vendor=1.5),
                entry(vendor, "cublas_axpy", 4.5e-6, 2800.0, 0.70),
                entry("cpu", "omp_simd", 1e-3, 40.0, 0.9)],
    "kernel_facts": [
        {"kernel": "saxpy", "backend": native, "variant": "vectorized", "arch": "sm_90",
         "registers": 24, "occupancy": 1.0, "occupancy_is_upper_bound": False,
         "spill_store_bytes": 0, "spill_load_bytes": 0},
        {"kernel": "saxpy", "backend": native, "variant": "vectorized", "arch": "sm_80",
         "registers": 40, "occupancy": 0.75, "occupancy_is_upper_bound": False,
         "spill_store_bytes": 8, "spill_load_bytes": 8}],
    "failed": [{"kernel": "saxpy", "backend": native, "variant": "grid_stride",
                "sizes": {"N": 1048576}, "reason": "3 of 10 elements differ"}],
    "skipped": [],
}
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "run.json")
    json.dump(doc, open(path, "w"))
    p = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    row = [line for line in out.splitlines() if line.startswith("| saxpy")]
    assert len(row) == 1, out  # one row per kernel and size; the cpu entry is not a GPU row
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert cells[2] == "vectorized" and cells[3] == "3 us", cells
    assert cells[5] == "105%", cells       # against the measured triad (the run's limit)
    assert cells[6] == "84%", cells        # 4200 / 5000 of the theoretical peak
    assert cells[7] == "1.50x", cells
    assert cells[8] == "40 regs, 75% occ, spills", cells  # the worst over the architectures
    assert cells[9] == "cublas_axpy", cells
    assert "the triad reaches 80% of the memory's theoretical peak" in out, out
    assert "probe sgemm: skipped: not run here" in out, out
    assert f"saxpy/{native}/grid_stride N=1048576: 3 of 10 elements differ" in out, out
    strict = subprocess.run([sys.executable, script, "--strict", path], capture_output=True,
                            text=True)
    assert strict.returncode == 1, strict
    assert "1 GPU failures" in strict.stderr, strict.stderr
    # Nothing failed or skipped: --strict passes.
    doc["failed"] = []
    json.dump(doc, open(path, "w"))
    ok = subprocess.run([sys.executable, script, "--strict", path], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    # A skipped GPU case on a GPU machine means the device was not used: --strict fails.
    doc["skipped"] = [{"kernel": "saxpy", "backend": vendor, "variant": "cublas_axpy",
                       "sizes": {"N": 4}, "reason": "no GPU"}]
    json.dump(doc, open(path, "w"))
    sk = subprocess.run([sys.executable, script, "--strict", path], capture_output=True, text=True)
    assert sk.returncode == 1 and "1 cases: no GPU" in sk.stdout, sk
# --backends -: the timed GPU backends' names from the records on stdin, native first.
names = subprocess.run([sys.executable, script, "--backends", "-"], input=json.dumps(records),
                       capture_output=True, text=True)
assert names.returncode == 0, names.stderr
assert names.stdout.split() == [r["name"] for r in gpu if r["native"]] + \
    [r["name"] for r in gpu if r["vendor"]] + \
    [r["name"] for r in gpu if not r["native"] and not r["vendor"]], names.stdout
assert "cpu" not in names.stdout.split() and "cudasim" not in names.stdout.split(), names.stdout
print("gpu_summary_test: all passed")
