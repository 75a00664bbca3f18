#!/usr/bin/env python3
"""`specbench nightly` killed and restarted, then compared against a planted earlier run.

Usage: nightly_resume_test.py SPECBENCH WORK_DIR CACHE_DIR

1. A nightly run on one small spec (cpu backend, its verify sizes) is killed with SIGKILL once it
   has checkpointed two measured cases. Restarted, it says it resumes, keeps those entries exactly
   as they were, measures the rest, writes one complete results file and removes the checkpoint,
   and renders the report. Killed after that (the checkpoint put back), a restart measures nothing
   and finishes the same run.
2. In a fresh results folder, an earlier run is planted: the complete file with every time divided
   by 10^6 (far beyond any noise, even OpenMP on busy cores). The next nightly finds every case
   slower against it and exits 1, naming the regression; its ETA comes from the planted run's
   step times.
"""

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

KERNEL = "vector_add"


def fail(msg):
    sys.stderr.write("FAIL: " + msg + "\n")
    sys.exit(1)


def nightly_cmd(specbench, results, report, cache):
    return [specbench, "nightly", KERNEL, "-b", "cpu", "--sizes", "verify", "--repetitions", "5",
            "--min-time", "0.01", "--no-probes", "--results-dir", results, "--report-dir", report,
            "--cache-dir", cache]


def main(argv):
    specbench, work, cache = argv[1], argv[2], argv[3]
    shutil.rmtree(work, ignore_errors=True)
    results, report = os.path.join(work, "results"), os.path.join(work, "report")
    os.makedirs(results)
    cmd = nightly_cmd(specbench, results, report, cache)

    # 1. Kill once two cases are checkpointed: <stamp>.partial.json holds the run's state and
    # <stamp>.partial/ one file per timed case.
    with open(os.path.join(work, "first.log"), "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        case_files = []
        deadline = time.time() + 300
        while time.time() < deadline and proc.poll() is None:
            case_files = sorted(glob.glob(os.path.join(results, "*.partial", "*.json")))
            if len(case_files) >= 2:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                break
            time.sleep(0.05)
    if len(case_files) < 2:
        fail("the nightly run ended (exit %s) before two cases were checkpointed" % proc.poll())
    case_files = sorted(glob.glob(os.path.join(results, "*.partial", "*.json")))
    kept = {"benchmarks": []}
    for f in case_files:
        try:
            kept["benchmarks"] += json.load(open(f))["benchmarks"]
        except ValueError:
            fail("%s is not valid JSON: case files must be written atomically" % f)
    checkpoint = glob.glob(os.path.join(results, "*.partial.json"))[0]
    state = json.load(open(checkpoint))
    if state["nightly"]["state"] != "in_progress" or "verification" not in state:
        fail("the checkpoint lacks the nightly state or the verification")

    # Killed between writing and renaming, a writer leaves <file>.tmp.<pid> (issue 19): those of
    # a dead process are removed when the next nightly starts, a live writer's are kept.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stamp = os.path.basename(checkpoint)[:16]
    litter = [os.path.join(results, stamp + ".json.tmp.%d" % dead.pid),
              os.path.join(results, stamp + ".partial", "000009.json.tmp.%d" % dead.pid)]
    live = os.path.join(results, stamp + ".json.tmp.%d" % os.getpid())
    for f in litter + [live]:
        with open(f, "w") as out:
            out.write('{"truncated": ')

    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail("resumed nightly exited %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    left = [f for f in litter if os.path.exists(f)]
    if left:
        fail("stale temporaries were left: %s\n%s" % (left, r.stderr))
    if not os.path.exists(live):
        fail("a live writer's temporary was removed")
    os.remove(live)
    if "resuming the interrupted run" not in r.stderr:
        fail("the restarted nightly did not resume\n" + r.stderr)
    if "verification was done before the interruption" not in r.stderr:
        fail("the restarted nightly verified again\n" + r.stderr)
    if os.path.exists(checkpoint) or glob.glob(os.path.join(results, "*.partial")):
        fail("the checkpoint was not removed after the run completed")
    final = checkpoint.replace(".partial.json", ".json")
    if not os.path.exists(final):
        fail("no results file %s (the resumed run must keep the interrupted run's name)" % final)
    doc = json.load(open(final))
    if doc["schema_version"] != 1 or doc["nightly"]["state"] != "complete":
        fail("the results file is not a complete schema-1 document")
    by_name = {}
    for e in doc["benchmarks"]:
        by_name.setdefault(e["run_name"], []).append(e)
    for e in kept["benchmarks"]:
        same = [x for x in by_name.get(e["run_name"], []) if x.get("name") == e["name"] and
                x.get("repetition_index") == e.get("repetition_index")]
        if not same or same[0]["real_time"] != e["real_time"]:
            fail("a measurement taken before the kill was lost or redone: " + e["name"])
    # Every case of the spec's verify sizes on every cpu variant, each with 5 repetitions.
    reps = {n: len([e for e in es if e.get("run_type") == "iteration"])
            for n, es in by_name.items()}
    if len(reps) < 4 or any(v != 5 for v in reps.values()):
        fail("cases and repetitions in the final file: %s" % reps)
    if not os.path.exists(os.path.join(report, "index.html")):
        fail("no report written")

    # Killed after storing, during compare or report: the checkpoint is still there, and the
    # restart measures nothing and finishes the same run.
    stale = json.loads(json.dumps(doc))
    stale["nightly"]["state"] = "in_progress"
    stale["benchmarks"] = []
    with open(checkpoint, "w") as f:
        json.dump(stale, f)
    os.makedirs(checkpoint.replace(".partial.json", ".partial"))
    with open(os.path.join(checkpoint.replace(".partial.json", ".partial"), "000001.json"),
              "w") as f:
        json.dump({"case": "every case", "benchmarks": doc["benchmarks"]}, f)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or "resuming the interrupted run" not in r.stderr:
        fail("restart after the store step: exit %d\n%s" % (r.returncode, r.stderr))
    if "] timed " in r.stderr:
        fail("restart after the store step measured again\n" + r.stderr)
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(results, "*.json")))
    if files != [os.path.basename(final)] or os.path.exists(checkpoint) or \
            glob.glob(os.path.join(results, "*.partial")):
        fail("restart after the store step left %s" % files)
    again = json.load(open(final))
    if [e["real_time"] for e in again["benchmarks"]] != [e["real_time"] for e in doc["benchmarks"]]:
        fail("restart after the store step changed the measurements")

    # 2. A planted, a million times faster earlier run: everything regresses.
    results2, report2 = os.path.join(work, "results2"), os.path.join(work, "report2")
    os.makedirs(results2)
    planted = json.loads(json.dumps(doc))
    for e in planted["benchmarks"]:
        if e.get("aggregate_name") != "cv":
            e["real_time"] /= 1e6
    with open(os.path.join(results2, "20000101T000000Z.json"), "w") as f:
        json.dump(planted, f)
    r = subprocess.run(nightly_cmd(specbench, results2, report2, cache), capture_output=True,
                       text=True)
    if r.returncode != 1:
        fail("nightly against a 10^6x faster run exited %d, expected 1\n%s%s"
             % (r.returncode, r.stdout, r.stderr))
    if "regression" not in r.stderr or "SLOWER" not in r.stdout:
        fail("the regression is not reported\n%s%s" % (r.stdout, r.stderr))
    if "by the previous run" not in r.stderr:
        fail("no ETA from the previous run's step times\n" + r.stderr)
    comparison = json.load(open(os.path.join(report2, "compare.json")))
    if comparison["counts"]["slower"] != len(reps) or not comparison["regressed"]:
        fail("compare.json: %s" % comparison["counts"])
    print("ok: resumed after SIGKILL with %d cases kept; regression caught" % len(case_files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
