// What the shim decided about one call on a managed window, in one value
// type, for data movement and synchronization alike:
//  - served: the shim did it (or it was a legal no-op);
//  - an error class the shim found, to raise on the window's handler;
//  - raised: a call of the shim's to MPI on the application's window
//    failed, and MPI has run the window's handler already (the class is
//    returned as it is, not raised again);
//  - passed to MPI with the reason, which is known where the decision is
//    made (profile.h's Fallback), never guessed afterwards from the window
//    (data movement only: a managed window's synchronization is always the
//    shim's, calling MPI's where MPI must take part).
// Put, get and the accumulate family return it from their full paths
// (move/transfer.h, move/accumulate.h) and FinishCall ends them;
// locks, flushes, fence and PSCW return it to FinishSync (both in
// intercept/finish_call.h), which turns it into the call's return value.
#ifndef RMASHIM_SHIM_WINDOWS_VERDICT_H_
#define RMASHIM_SHIM_WINDOWS_VERDICT_H_

#include <mpi.h>

#include <cstdint>

#include "shim/profile/profile.h"

namespace rmashim {

class [[nodiscard]] Verdict {
 public:
  // Done by the shim. An error class other than MPI_SUCCESS is the call's
  // error (the shim found it; nothing was moved).
  static constexpr Verdict Served() { return Verdict(MPI_SUCCESS, false); }
  static constexpr Verdict Error(int error_class) {
    return Verdict(error_class, false);
  }
  // What a call to MPI on the application's window returned: served when
  // MPI_SUCCESS, else an error MPI has raised already.
  static constexpr Verdict Raised(int rc) { return Verdict(rc, true); }
  // MPI moves it (on the window's MPI window, finish_call.h); `why` for
  // the profile when the target is node-local.
  static constexpr Verdict PassThrough(Fallback why) { return Verdict(why); }

  constexpr bool passes_through() const { return passes_through_; }
  constexpr bool ok() const { return !passes_through_ && rc_ == MPI_SUCCESS; }
  // Whether the window's handler has run for the error already.
  constexpr bool raised() const { return raised_; }
  // MPI_SUCCESS or the error class (when not passed through).
  constexpr int rc() const { return rc_; }
  constexpr Fallback why() const { return why_; }

 private:
  constexpr Verdict(int rc, bool raised)
      : rc_(rc), raised_(raised && rc != MPI_SUCCESS) {}
  constexpr explicit Verdict(Fallback why) : why_(why), passes_through_(true) {}

  int rc_ = MPI_SUCCESS;
  Fallback why_ = Fallback::kCount;
  bool raised_ = false;
  bool passes_through_ = false;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_VERDICT_H_
