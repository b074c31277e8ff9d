// The accumulate stripes (window.h, kStripes) held around an update: one
// page's (StripeGuard: striped_apply.h's runs, page by page), or several at
// once (StripeSet) for read-modify-writes that cannot be split page by page:
// accumulates on MPI_Win_create memory of another process go through
// cross-memory attach, one read and one write for the whole update.
#ifndef RMASHIM_SHIM_ATOMICS_STRIPES_H_
#define RMASHIM_SHIM_ATOMICS_STRIPES_H_

#include <mpi.h>

#include <bitset>

#include "shim/sync/shm_lock.h"
#include "shim/windows/window.h"

namespace rmashim {

// Holds the stripe of the page containing a target offset (see kStripes).
class StripeGuard {
 public:
  StripeGuard(SegmentHeader& header, MPI_Aint offset, bool exclusive)
      : word_(header.stripes[(offset >> kStripePageShift) % kStripes]),
        exclusive_(exclusive) {
    exclusive ? AcquireStripeExclusive(word_) : AcquireStripeShared(word_);
  }
  ~StripeGuard() {
    exclusive_ ? ReleaseStripeExclusive(word_) : ReleaseStripeShared(word_);
  }
  StripeGuard(const StripeGuard&) = delete;
  StripeGuard& operator=(const StripeGuard&) = delete;

 private:
  StripeWord& word_;
  bool exclusive_;
};

// Holds exclusively the stripe of every page that the byte ranges
// [offset, offset + bytes) of a target touch. Stripes are taken in ascending
// index order, so holders of several cannot deadlock one another; holders of
// one (ApplyRun, ApplyCompareSwap) never wait while holding it.
class StripeSet {
 public:
  explicit StripeSet(SegmentHeader& header) : header_(header) {}
  ~StripeSet() {
    for (int s = 0; s < kStripes; ++s) {
      if (held_[s]) ReleaseStripeExclusive(header_.stripes[s]);
    }
  }
  StripeSet(const StripeSet&) = delete;
  StripeSet& operator=(const StripeSet&) = delete;

  // Marks the stripes of [offset, offset + bytes); call before Acquire.
  void Cover(MPI_Aint offset, MPI_Aint bytes) {
    if (bytes <= 0) return;
    const MPI_Aint first = offset >> kStripePageShift;
    const MPI_Aint last = (offset + bytes - 1) >> kStripePageShift;
    for (MPI_Aint p = first; p <= last && wanted_.count() < kStripes; ++p) {
      wanted_.set(static_cast<size_t>(p % kStripes));
    }
  }
  void Acquire() {
    for (int s = 0; s < kStripes; ++s) {
      if (!wanted_[s]) continue;
      AcquireStripeExclusive(header_.stripes[s]);
      held_.set(s);
    }
  }

 private:
  SegmentHeader& header_;
  std::bitset<kStripes> wanted_, held_;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_ATOMICS_STRIPES_H_
