// One record per backend: everything the harness decides about a backend, kept in one place.
//
// The runner, history, analysis, the console and report tables and harness/report/make_report.py
// (through the "backends" table of the report data, backends_json()) read these records; no other
// harness file names a backend. Adding a backend means: its emitter and one line in
// all_emitters() (codegen/backends/emitter.cpp), its Runtime (harness/run/runtime_<name>.cpp), and
// one record in backend_records() (backend_record.cpp). Device names ("cpu", "gpu") are not
// backend names: they pick the machine limits a backend is measured against.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace sb {

class Runtime;

enum class Device { Cpu, Gpu };
// "cpu" or "gpu", as in the results' limits and probes.
const char* device_name(Device d);

struct BackendRecord {
  std::string name;      // as on the command line and in results: "cuda"
  std::string language;  // for people: "C++", "CUDA", "Mojo", "MLIR", "C++ with OpenBLAS"
  // The kind of device its code is written for, whose limits and probes it is measured
  // against. A simulator has its twin's device (it runs GPU code on the CPU).
  Device device = Device::Cpu;
  // The backend whose emitter, generated files and spec variants it runs: its own name, except
  // for a simulator (cudasim runs cuda's).
  std::string source;
  // Whether bench times it by default and at all; a simulator verifies and is never timed.
  bool timed = true;
  // Its simulator twin, which verifies its generated files on the CPU ("cudasim" for cuda).
  std::string simulator;
  // The backend it is put against in the language comparison ("cpu" for mojo); "" for none.
  std::string baseline;
  // A vendor library: the "x vs vendor" reference of the backends of its device.
  bool vendor = false;
  // The device's own language (C++ for the cpu, CUDA for the gpu): the machine probes are built
  // with its compiler, its runtime names the GPU in the results context, and "x vs C++" in
  // the report is against the cpu one. One per device.
  bool native = false;
  // The results context key holding its compiler's version line ("mojo"), "" for none (the host
  // compiler and nvcc are recorded as the toolchain's "cxx" and "nvcc").
  std::string version_key;
  // The report: the matplotlib colour map its variants are shades of.
  std::string colormap;
  // Its Runtime (harness/run/runtime*.cpp).
  std::unique_ptr<Runtime> (*make_runtime)() = nullptr;
};

// Every backend, in a fixed order: the order of `list`, of runs and of the report's tables.
const std::vector<BackendRecord>& backend_records();
// The record named `name`, or nullptr (e.g. a backend in an old results file that is gone).
const BackendRecord* find_backend(const std::string& name);
// The device of `backend`; the cpu for a name with no record.
Device device_of(const std::string& backend);
// The native record of device `d` (see BackendRecord::native).
const BackendRecord& native_backend(Device d);
// The records with a baseline, in registry order: the language comparison's other side.
std::vector<const BackendRecord*> compared_backends();

// The records as the report data's "backends" table (and `list --backends-json`): an array of
// {"name", "language", "device", "source", "timed", "simulator", "baseline", "vendor",
// "native", "version_key", "colormap"} in registry order.
nlohmann::json backends_json();

}  // namespace sb
