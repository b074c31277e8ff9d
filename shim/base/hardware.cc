#include "shim/base/hardware.h"

#include <hwloc.h>

namespace rmashim {
namespace {

// Fills the parts that depend on where the process runs now.
void FindPlace(hwloc_topology_t topology, HardwarePlace& place) {
  hwloc_cpuset_t cpus = hwloc_bitmap_alloc();
  if (hwloc_get_last_cpu_location(topology, cpus, HWLOC_CPUBIND_PROCESS) == 0) {
    const int first = hwloc_bitmap_first(cpus);
    hwloc_obj_t pu = first < 0 ? nullptr
                               : hwloc_get_pu_obj_by_os_index(
                                     topology, static_cast<unsigned>(first));
    if (pu != nullptr) {
      place.cpu = static_cast<int>(pu->os_index);
      hwloc_obj_t core =
          hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu);
      place.core = static_cast<int>(core != nullptr ? core->logical_index
                                                    : pu->logical_index);
    }
    hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
    hwloc_cpuset_to_nodeset(topology, cpus, nodes);
    place.numa_domain = hwloc_bitmap_first(nodes);
    hwloc_bitmap_free(nodes);
  }
  hwloc_bitmap_free(cpus);
}

}  // namespace

HardwarePlace QueryHardwarePlace() {
  HardwarePlace place;
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return place;
  if (hwloc_topology_load(topology) == 0) {
    const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    const int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    const int numas = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    place.num_cores = cores > 0 ? cores : pus;
    place.num_numa = numas > 0 ? numas : 1;
    place.threads_per_core = cores > 0 ? pus / cores : 1;
    FindPlace(topology, place);
  }
  hwloc_topology_destroy(topology);
  return place;
}

}  // namespace rmashim
