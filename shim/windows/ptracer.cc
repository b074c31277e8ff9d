// The process-wide count behind CrossMemoryGrant (ptracer.h).
#include "shim/windows/ptracer.h"

#include <sys/prctl.h>

#include <mutex>

namespace rmashim {
namespace {

std::mutex g_mutex;
int g_holders = 0;

}  // namespace

void CrossMemoryGrant::Hold() {
  if (held_) return;
  held_ = true;
  std::lock_guard<std::mutex> guard(g_mutex);
  if (g_holders++ == 0) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

void CrossMemoryGrant::Drop() {
  if (!held_) return;
  held_ = false;
  std::lock_guard<std::mutex> guard(g_mutex);
  if (--g_holders == 0) prctl(PR_SET_PTRACER, 0, 0, 0, 0);
}

}  // namespace rmashim
