#include "backends/backend_record.h"

#include "run/runtime.h"
#include "support/diag.h"

namespace sb {

const char* device_name(Device d) {
  switch (d) {
    case Device::Cpu:
      return "cpu";
    case Device::Gpu:
      return "gpu";
  }
  return "cpu";
}

namespace {

BackendRecord record(std::string name, std::string language, Device device,
                     std::unique_ptr<Runtime> (*make)()) {
  BackendRecord r;
  r.source = name;
  r.name = std::move(name);
  r.language = std::move(language);
  r.device = device;
  r.make_runtime = make;
  return r;
}

std::vector<BackendRecord> make_records() {
  std::vector<BackendRecord> v;
  // One registration per backend. The order is that of `list`, runs and the report.
  {
    BackendRecord r = record("cpu", "C++", Device::Cpu, make_cpu_runtime);
    r.native = true;
    r.colormap = "Blues";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r = record("cuda", "CUDA", Device::Gpu, make_cuda_runtime);
    r.native = true;
    r.simulator = "cudasim";
    r.colormap = "Reds";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r = record("cudasim", "CUDA (simulated)", Device::Gpu, make_cudasim_runtime);
    r.source = "cuda";
    r.timed = false;
    r.colormap = "Greys";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r = record("mojo", "Mojo", Device::Cpu, make_mojo_runtime);
    r.baseline = "cpu";
    r.version_key = "mojo";
    r.colormap = "Oranges";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r =
        record("vendor_cpu", "C++ with OpenBLAS", Device::Cpu, make_vendor_cpu_runtime);
    r.vendor = true;
    r.colormap = "Purples";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r =
        record("vendor_cuda", "CUDA with cuBLAS", Device::Gpu, make_vendor_cuda_runtime);
    r.vendor = true;
    r.colormap = "RdPu";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r = record("mojo_gpu", "Mojo (GPU)", Device::Gpu, make_mojo_gpu_runtime);
    r.simulator = "mojo_gpusim";
    r.baseline = "cuda";
    r.version_key = "mojo";
    r.colormap = "YlOrBr";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r =
        record("mojo_gpusim", "Mojo GPU (simulated)", Device::Gpu, make_mojo_gpusim_runtime);
    r.source = "mojo_gpu";
    r.timed = false;
    r.colormap = "Greys";
    v.push_back(std::move(r));
  }
  {
    BackendRecord r = record("mlir", "MLIR", Device::Cpu, make_mlir_runtime);
    r.baseline = "cpu";
    r.colormap = "Greens";
    v.push_back(std::move(r));
  }
  return v;
}

}  // namespace

const std::vector<BackendRecord>& backend_records() {
  static const std::vector<BackendRecord> records = make_records();
  return records;
}

const BackendRecord* find_backend(const std::string& name) {
  for (const BackendRecord& r : backend_records())
    if (r.name == name) return &r;
  return nullptr;
}

Device device_of(const std::string& backend) {
  const BackendRecord* r = find_backend(backend);
  return r ? r->device : Device::Cpu;
}

const BackendRecord& native_backend(Device d) {
  for (const BackendRecord& r : backend_records())
    if (r.native && r.device == d) return r;
  SB_ASSERT(false, std::string("no native backend for ") + device_name(d));
  return backend_records().front();
}

std::vector<const BackendRecord*> compared_backends() {
  std::vector<const BackendRecord*> v;
  for (const BackendRecord& r : backend_records())
    if (!r.baseline.empty()) v.push_back(&r);
  return v;
}

nlohmann::json backends_json() {
  nlohmann::json a = nlohmann::json::array();
  for (const BackendRecord& r : backend_records())
    a.push_back({{"name", r.name},
                 {"language", r.language},
                 {"device", device_name(r.device)},
                 {"source", r.source},
                 {"timed", r.timed},
                 {"simulator", r.simulator},
                 {"baseline", r.baseline},
                 {"vendor", r.vendor},
                 {"native", r.native},
                 {"version_key", r.version_key},
                 {"colormap", r.colormap}});
  return a;
}

}  // namespace sb
