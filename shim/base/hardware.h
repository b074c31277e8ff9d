// Where the calling process runs, from hwloc: shared by the shim's locality
// queries and DART's dart_unit_locality.
#ifndef RMASHIM_SHIM_BASE_HARDWARE_H_
#define RMASHIM_SHIM_BASE_HARDWARE_H_

namespace rmashim {

// -1 where hwloc cannot tell.
struct HardwarePlace {
  int num_cores = -1;         // cores of the machine (PUs if no cores)
  int num_numa = -1;          // NUMA domains (1 if hwloc lists none)
  int threads_per_core = -1;  // PUs per core
  int numa_domain = -1;       // NUMA domain of the CPU this process last ran on
  int core = -1;              // logical index of that CPU's core
  int cpu = -1;               // OS index of that CPU
};

HardwarePlace QueryHardwarePlace();

}  // namespace rmashim

#endif  // RMASHIM_SHIM_BASE_HARDWARE_H_
