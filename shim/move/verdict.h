// What the shim decided about one data-movement call on a managed window,
// in one value type: served (the operation happened, or was a legal no-op),
// an MPI error class to raise on the window's handler, or passed to MPI
// with the reason, which is known where the decision is made
// (profile.h's Fallback), never guessed afterwards from the window. Put,
// get and the accumulate family return it from their full paths
// (wrap_rma.cc's MoveDirect, accumulate.h), and FinishCall
// (finish_call.h) turns it into the call's return value.
#ifndef RMASHIM_SHIM_MOVE_VERDICT_H_
#define RMASHIM_SHIM_MOVE_VERDICT_H_

#include <mpi.h>

#include <cstdint>

#include "shim/profile/profile.h"

namespace rmashim {

class [[nodiscard]] Verdict {
 public:
  // Done by the shim. An error class other than MPI_SUCCESS is the call's
  // error (the shim found it; nothing was moved).
  static constexpr Verdict Served() { return Verdict(MPI_SUCCESS); }
  static constexpr Verdict Error(int error_class) {
    return Verdict(error_class);
  }
  // MPI moves it (on the window's MPI window, finish_call.h); `why` for
  // the profile when the target is node-local.
  static constexpr Verdict PassThrough(Fallback why) { return Verdict(why); }

  constexpr bool passes_through() const { return passes_through_; }
  // MPI_SUCCESS or the error class (when not passed through).
  constexpr int rc() const { return rc_; }
  constexpr Fallback why() const { return why_; }

 private:
  constexpr explicit Verdict(int rc) : rc_(rc) {}
  constexpr explicit Verdict(Fallback why) : why_(why), passes_through_(true) {}

  int rc_ = MPI_SUCCESS;
  Fallback why_ = Fallback::kCount;
  bool passes_through_ = false;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_VERDICT_H_
