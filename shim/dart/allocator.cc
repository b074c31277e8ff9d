// dart_allocator_*: non-collective allocations from a pool every unit of a
// team owns in one team segment (made collectively by dart_allocator_new).
// Each unit hands out blocks of its own part: first fit over a free list
// ordered by offset, neighbours merged on free, 16-byte granularity.
// dart_config: DART's runtime settings.
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "shim/dart/state.h"

struct dart_allocator_struct {
  dart_gptr_t segment = DART_GPTR_NULL;  // the pool, unit 0's part
  dart_team_t team = DART_TEAM_NULL;
  dart_team_unit_t me;
  uint64_t pool = 0;                  // bytes per unit
  std::mutex mu;                      // alloc/free are thread-safe
  std::map<uint64_t, uint64_t> free;  // offset -> bytes
  std::map<uint64_t, uint64_t> used;  // offset -> bytes
};

namespace {

constexpr uint64_t kGrain = 16;

uint64_t RoundPow2(uint64_t n) {
  uint64_t p = kGrain;
  while (p < n && p < (uint64_t{1} << 62)) p <<= 1;
  return p;
}

}  // namespace

using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_allocator_new(size_t pool_size, dart_team_t team,
                              dart_allocator_t* new_allocator) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (new_allocator == nullptr) return DART_ERR_INVAL;
  auto a = std::make_unique<dart_allocator_struct>();
  a->pool = RoundPow2(pool_size);
  a->team = team;
  if (dart_ret_t rc = dart_team_myid(team, &a->me)) return rc;
  if (dart_ret_t rc = dart_team_memalloc_aligned(team, a->pool, DART_TYPE_BYTE,
                                                 &a->segment)) {
    return rc;
  }
  a->free[0] = a->pool;
  *new_allocator = a.release();
  return DART_OK;
}

dart_ret_t dart_allocator_alloc(size_t nelem, dart_datatype_t dtype,
                                dart_gptr_t* gptr, dart_allocator_t allocator) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr || allocator == nullptr) return DART_ERR_INVAL;
  *gptr = DART_GPTR_NULL;  // also when the pool is exhausted
  TypeInfo t;
  {
    LockGuard guard;
    if (!g_dart.types.Describe(dtype, &t)) return DART_ERR_INVAL;
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(nelem),
                             static_cast<uint64_t>(t.base_size), &bytes)) {
    return DART_ERR_NOMEM;
  }
  bytes = (bytes + kGrain - 1) / kGrain * kGrain;
  if (bytes == 0) bytes = kGrain;
  std::lock_guard<std::mutex> lock(allocator->mu);
  for (auto it = allocator->free.begin(); it != allocator->free.end(); ++it) {
    if (it->second < bytes) continue;
    const uint64_t offset = it->first, left = it->second - bytes;
    allocator->free.erase(it);
    if (left > 0) allocator->free[offset + bytes] = left;
    allocator->used[offset] = bytes;
    dart_gptr_t g = allocator->segment;
    g.unitid = allocator->me.id;
    g.addr_or_offs.offset += offset;
    *gptr = g;
    return DART_OK;
  }
  return DART_ERR_NOMEM;
}

dart_ret_t dart_allocator_free(dart_gptr_t* gptr, dart_allocator_t allocator) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (gptr == nullptr || allocator == nullptr) return DART_ERR_INVAL;
  if (DART_GPTR_ISNULL(*gptr)) return DART_OK;
  if (gptr->segid != allocator->segment.segid ||
      gptr->teamid != allocator->segment.teamid ||
      gptr->unitid != allocator->me.id) {
    return DART_ERR_INVAL;
  }
  const uint64_t offset =
      gptr->addr_or_offs.offset - allocator->segment.addr_or_offs.offset;
  std::lock_guard<std::mutex> lock(allocator->mu);
  auto it = allocator->used.find(offset);
  if (it == allocator->used.end()) return DART_ERR_INVAL;
  uint64_t start = offset, bytes = it->second;
  allocator->used.erase(it);
  auto next = allocator->free.lower_bound(start);
  if (next != allocator->free.end() && start + bytes == next->first) {
    bytes += next->second;
    next = allocator->free.erase(next);
  }
  if (next != allocator->free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      bytes += prev->second;
      allocator->free.erase(prev);
    }
  }
  allocator->free[start] = bytes;
  *gptr = DART_GPTR_NULL;
  return DART_OK;
}

dart_ret_t dart_allocator_destroy(dart_allocator_t* allocator) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (allocator == nullptr || *allocator == nullptr) return DART_ERR_INVAL;
  const dart_ret_t rc = dart_team_memfree((*allocator)->segment);
  delete *allocator;
  *allocator = nullptr;
  return rc;
}

void dart_config(dart_config_t** config_out) {
  static dart_config_t config = [] {
    dart_config_t c;
    const char* log = std::getenv("DART_LOG");
    c.log_enabled = log != nullptr && std::strcmp(log, "0") != 0 ? 1 : 0;
    return c;
  }();
  if (config_out != nullptr) *config_out = &config;
}

}  // extern "C"
