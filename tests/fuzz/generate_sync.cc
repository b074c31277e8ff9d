// The synchronization the generator puts around a phase's operations:
// fence, PSCW and passive-target sessions, and the request waits inside
// them (the validity rules are argued in generate.cc).
#include <algorithm>

#include "tests/fuzz/phase_gen.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace gen {

void PhaseGen::WaitRequests(int o, std::vector<int>* outstanding, bool all) {
  if (outstanding->empty()) return;
  Action a;
  a.act = Act::kWaitRequests;
  a.method = static_cast<WaitMethod>(rng_.Below(6));
  rng_.Shuffle(*outstanding);
  const size_t take =
      all ? outstanding->size()
          : 1 + rng_.Below(static_cast<int>(outstanding->size()));
  a.requests.assign(outstanding->begin(), outstanding->begin() + take);
  outstanding->erase(outstanding->begin(), outstanding->begin() + take);
  plans_[o].actions.push_back(a);
}

void PhaseGen::Fence() {
  const int units = rng_.Range(1, 3);
  const bool noprecede = rng_.Percent(50);
  const bool nosucceed = rng_.Percent(70);
  for (unit_ = 0; unit_ < units; ++unit_) {
    std::vector<std::set<int>> access(n());
    std::vector<bool> active(n());
    for (int o = 0; o < n(); ++o) {
      active[o] = rng_.Percent(85);
      if (!active[o]) continue;
      for (int t = 0; t < n(); ++t) access[t].insert(o);
    }
    AssignModes(access, std::vector<std::set<int>>(n()));
    std::vector<std::vector<int>> ops(n());
    for (int o = 0; o < n(); ++o) {
      if (!active[o]) continue;
      const int m = rng_.Range(0, max_ops_);
      for (int i = 0; i < m; ++i) {
        const int index = AddOp(o, AllRanks(), {}, false);
        if (index >= 0) ops[o].push_back(index);
      }
    }
    for (int r = 0; r < n(); ++r) {
      int assert_ = 0;
      if (unit_ == 0 && noprecede) assert_ |= MPI_MODE_NOPRECEDE;
      if (rng_.Percent(30)) assert_ |= MPI_MODE_NOSTORE;
      if (!updated_[r] && rng_.Percent(60)) assert_ |= MPI_MODE_NOPUT;
      Push(r, Act::kFence, 0, assert_);
      for (int index : ops[r]) PushOp(r, index);
    }
  }
  for (int r = 0; r < n(); ++r) {
    int assert_ = nosucceed ? MPI_MODE_NOSUCCEED : 0;
    if (rng_.Percent(30)) assert_ |= MPI_MODE_NOSTORE;
    Push(r, Act::kFence, 0, assert_);
  }
}

void PhaseGen::Pscw() {
  unit_ = 0;
  const bool nocheck = rng_.Percent(25);
  std::vector<std::vector<int>> access_group(n());
  std::vector<std::set<int>> exposure(n());
  for (int o = 0; o < n(); ++o) {
    if (!rng_.Percent(80)) continue;
    for (int t = 0; t < n(); ++t) {
      if (rng_.Percent(t == o ? 35 : 60)) {
        access_group[o].push_back(t);
        exposure[t].insert(o);
      }
    }
  }
  AssignModes(exposure, std::vector<std::set<int>>(n()));
  std::vector<std::vector<int>> ops(n());
  for (int o = 0; o < n(); ++o) {
    if (access_group[o].empty()) continue;
    const int m = rng_.Range(0, max_ops_);
    for (int i = 0; i < m; ++i) {
      const int index = AddOp(o, access_group[o], {}, false);
      if (index >= 0) ops[o].push_back(index);
    }
  }
  for (int r = 0; r < n(); ++r) {
    if (!exposure[r].empty()) {
      Action post;
      post.act = Act::kPost;
      post.group.assign(exposure[r].begin(), exposure[r].end());
      rng_.Shuffle(post.group);
      if (nocheck) post.assert_ |= MPI_MODE_NOCHECK;
      if (rng_.Percent(30)) post.assert_ |= MPI_MODE_NOSTORE;
      if (!updated_[r] && rng_.Percent(60)) post.assert_ |= MPI_MODE_NOPUT;
      plans_[r].actions.push_back(post);
    }
    // NOCHECK: every post has returned before any start is called.
    if (nocheck) Push(r, Act::kCommBarrier);
    if (!access_group[r].empty()) {
      Action start;
      start.act = Act::kStart;
      start.group = access_group[r];
      rng_.Shuffle(start.group);
      if (nocheck) start.assert_ = MPI_MODE_NOCHECK;
      plans_[r].actions.push_back(start);
      for (int index : ops[r]) PushOp(r, index);
      Push(r, Act::kComplete);
    }
    if (!exposure[r].empty()) {
      const bool test_loop = rng_.Percent(30) && !options_.Excludes("win_test");
      Push(r, test_loop ? Act::kTestLoop : Act::kWait);
    }
  }
}

void PhaseGen::RunSession(int o, const Session& s) {
  outstanding_.clear();
  std::vector<int> locked;
  std::set<int> exclusive;
  auto ops_burst = [&](int max) {
    const int m = rng_.Range(0, max);
    for (int i = 0; i < m && !locked.empty(); ++i) {
      const int index = AddOp(o, locked, exclusive, true);
      if (index < 0) continue;
      PushOp(o, index);
      const Op& op = plans_[o].ops[index];
      if (op.kind == OpKind::kRmw) continue;
      const int t = rng_.Pick(locked);
      switch (rng_.Weighted({70, 10, 5, 5, 4, 3, 8})) {
        case 1:
          Push(o, Act::kFlush, t);
          ResetMarks(t);
          break;
        case 2:
          Push(o, Act::kFlushLocal, t);
          break;
        case 3:
          Push(o, Act::kFlushAll);
          ResetAllMarks();
          break;
        case 4:
          Push(o, Act::kFlushLocalAll);
          break;
        case 5:
          Push(o, Act::kSync);
          break;
        case 6:
          WaitRequests(o, &outstanding_, false);
          break;
        default:
          break;
      }
    }
  };
  if (s.all) {
    Push(o, Act::kLockAll, 0, s.all_assert);
    locked = AllRanks();
    ops_burst(max_ops_);
    WaitRequests(o, &outstanding_, true);
    Push(o, Act::kUnlockAll);
    ResetAllMarks();
    return;
  }
  const bool interleave = rng_.Percent(40);
  for (const LockReq& l : s.locks) {
    Action a;
    a.act = Act::kLock;
    a.target = l.target;
    a.lock_type = l.type;
    a.assert_ = l.assert_;
    plans_[o].actions.push_back(a);
    locked.push_back(l.target);
    if (l.type == MPI_LOCK_EXCLUSIVE) exclusive.insert(l.target);
    if (interleave) ops_burst(std::max(1, max_ops_ / 2));
  }
  if (!interleave) ops_burst(max_ops_);
  WaitRequests(o, &outstanding_, true);
  std::vector<int> order = locked;
  rng_.Shuffle(order);
  for (int t : order) {
    Push(o, Act::kUnlock, t);
    ResetMarks(t);
  }
}

void PhaseGen::Passive() {
  unit_ = 0;
  enum { kAll, kLocks, kMixed, kSolo };
  // MPICH 4.0.2 loses track of a target's lock state once NOCHECK and
  // regular locks meet on a window (a later lock or lock_all hangs, see
  // tests/fuzz/README.md), so a window uses MPI_MODE_NOCHECK for all its
  // passive-target epochs (lock_all, or one locker per target) or never.
  const bool nocheck = w_.nocheck_locks;
  const int kind =
      nocheck ? rng_.Weighted({1, 0, 0, 1}) : rng_.Weighted({3, 4, 3, 2});
  std::vector<std::vector<Session>> sessions(n());
  std::vector<bool> excl_ok(n());
  for (int t = 0; t < n(); ++t) excl_ok[t] = rng_.Percent(60);
  std::vector<int> solo_owner(n(), -1);
  for (int t = 0; t < n(); ++t) {
    if (rng_.Percent(80)) solo_owner[t] = rng_.Below(n());
  }
  auto lock_set = [&] {
    Session s;
    for (int t = 0; t < n(); ++t) {
      if (!rng_.Percent(50)) continue;
      LockReq l{t, MPI_LOCK_SHARED, 0};
      if (kind == kMixed) {
        l.type = rng_.Percent(50) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        if (l.type == MPI_LOCK_EXCLUSIVE) {
          // MPICH acquires lock_all's per-target locks in no fixed order, so
          // it may hold B while waiting for A; an origin holding A
          // exclusively must not then wait for B. One lock per session.
          s.locks = {l};
          break;
        }
      } else if (excl_ok[t] && rng_.Percent(50)) {
        l.type = MPI_LOCK_EXCLUSIVE;
      }
      s.locks.push_back(l);
    }
    return s;
  };
  for (int o = 0; o < n(); ++o) {
    if (kind == kSolo) {
      Session s;
      for (int t = 0; t < n(); ++t) {
        if (solo_owner[t] != o) continue;
        s.locks.push_back(
            {t, rng_.Percent(50) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED,
             nocheck ? MPI_MODE_NOCHECK : 0});
      }
      if (!s.locks.empty()) sessions[o].push_back(s);
      continue;
    }
    const int count = rng_.Weighted({1, 6, 3});
    for (int i = 0; i < count; ++i) {
      Session s;
      if (kind == kAll || (kind == kMixed && rng_.Percent(40))) {
        s.all = true;
        // No exclusive lock in an all-lock_all phase.
        if (nocheck) s.all_assert = MPI_MODE_NOCHECK;
      } else {
        s = lock_set();
        if (s.locks.empty()) continue;
      }
      sessions[o].push_back(s);
    }
  }
  std::vector<std::set<int>> access(n()), exclusive(n());
  for (int o = 0; o < n(); ++o) {
    for (const Session& s : sessions[o]) {
      if (s.all) {
        for (int t = 0; t < n(); ++t) access[t].insert(o);
      }
      for (const LockReq& l : s.locks) {
        access[l.target].insert(o);
        if (l.type == MPI_LOCK_EXCLUSIVE) exclusive[l.target].insert(o);
      }
    }
  }
  AssignModes(access, exclusive);
  for (int o = 0; o < n(); ++o) {
    for (const Session& s : sessions[o]) RunSession(o, s);
  }
}

}  // namespace gen
}  // namespace rma_fuzz
