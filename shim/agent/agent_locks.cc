// The agent's locks for remote origins (agent_locks.h has the protocol).
#include "shim/agent/agent_locks.h"

#include <algorithm>
#include <climits>

#include "shim/base/spin_wait.h"
#include "shim/windows/served_windows.h"
#include "shim/windows/window.h"

namespace rmashim {

bool AgentLocks::Request(const AgentLockRequest& r) {
  ManagedWindow& w = *r.window;
  Waiter waiter;
  waiter.request = r;
  waiter.since_ns = NowNs();
  switch (r.kind) {
    case AgentLockKind::kShared:
      waiter.steps.emplace_back(w.lock_words(r.target).lock, gate::kAUnit,
                                gate::kBMask);
      break;
    case AgentLockKind::kExclusive: {
      int& held = exclusive_held_[{r.link, r.window_id}];
      if (held++ == 0) {
        const AllShards& all = w.all_shards();
        for (int i = 0; i < all.count; ++i) {
          waiter.steps.emplace_back(all.shards[i]->all, gate::kBUnit,
                                    gate::kAMask);
        }
      }
      waiter.steps.emplace_back(w.lock_words(r.target).lock, gate::kBUnit,
                                gate::kAMask | gate::kBMask);
      break;
    }
    case AgentLockKind::kAll:
      waiter.steps.emplace_back(w.own_all_shard().all, gate::kAUnit,
                                gate::kBMask);
      break;
  }
  // Every request advances on its own: the gates' tickets order those on
  // the same gate, and one waiting on a busy gate holds up none on others
  // (which could make a cycle of waits that the application has not).
  if (Advance(waiter)) {
    held_[r.link].push_back(r);
    return true;
  }
  waiting_.push_back(std::move(waiter));
  return false;
}

bool AgentLocks::Advance(Waiter& w) {
  while (w.entered < w.steps.size()) {
    gate::PendingEntry& step = w.steps[w.entered];
    const bool in = w.started ? step.Poll() : step.Start();
    if (!in) {
      w.started = true;  // Start drew a ticket: poll it from now on
      return false;
    }
    ++w.entered;
    w.started = false;
    w.next_since_ns = 0;  // the next step's turn is counted anew
  }
  return true;
}

std::vector<int> AgentLocks::Progress() {
  std::vector<int> granted;
  poll_cap_ns_ = kMaxPollNs;
  shortest_next_ns_ = kNoneNext;
  const uint64_t now = NowNs();
  // A request's window may have been freed under it: its origin's link
  // failed silently and the origin gave up first (WindowAlive).
  std::lock_guard<std::mutex> guard(served_windows().mutex());
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (!WindowAlive(it->request)) {
      exclusive_held_.erase({it->request.link, it->request.window_id});
      it = waiting_.erase(it);
      continue;
    }
    if (Advance(*it)) {
      if (it->dropped) {  // its origin is gone: it leaves at once
        Release(it->request);
      } else {
        held_[it->request.link].push_back(it->request);
        granted.push_back(it->request.link);
      }
      it = waiting_.erase(it);
      continue;
    }
    const bool next = it->started && it->steps[it->entered].ahead() == 0;
    if (!next) {
      it->next_since_ns = 0;
    } else if (it->next_since_ns == 0) {
      it->next_since_ns = now;
    }
    const uint64_t waited = now - (next ? it->next_since_ns : it->since_ns);
    if (next) shortest_next_ns_ = std::min(shortest_next_ns_, waited);
    poll_cap_ns_ = std::min(
        poll_cap_ns_,
        std::clamp(waited / 16, next ? kNextInLinePollNs : kQueuedPollNs,
                   kMaxPollNs));
    ++it;
  }
  return granted;
}

void AgentLocks::Release(const AgentLockRequest& r) {
  if (const auto held = held_.find(r.link); held != held_.end()) {
    std::vector<AgentLockRequest>& locks = held->second;
    const auto same = std::find_if(
        locks.begin(), locks.end(), [&](const AgentLockRequest& h) {
          return h.window_id == r.window_id && h.target == r.target &&
                 h.kind == r.kind;
        });
    if (same != locks.end()) locks.erase(same);
    if (locks.empty()) held_.erase(held);
  }
  ManagedWindow& w = *r.window;
  switch (r.kind) {
    case AgentLockKind::kShared:
      gate::Leave(w.lock_words(r.target).lock, gate::kAUnit);
      break;
    case AgentLockKind::kExclusive: {
      gate::Leave(w.lock_words(r.target).lock, gate::kBUnit);
      auto held = exclusive_held_.find({r.link, r.window_id});
      if (held != exclusive_held_.end() && --held->second == 0) {
        exclusive_held_.erase(held);
        const AllShards& all = w.all_shards();
        for (int i = all.count - 1; i >= 0; --i) {
          gate::Leave(all.shards[i]->all, gate::kBUnit);
        }
      }
      break;
    }
    case AgentLockKind::kAll:
      gate::Leave(w.own_all_shard().all, gate::kAUnit);
      break;
  }
}

// A gone origin's window may be freed before its requests are dropped or
// take their turn (its process lives on and frees it with the others), or
// before the agent sees its link end (a silent failure that the origin's
// end noticed first): requests touch a window's gates only while it is
// registered, under the registry's mutex; once it is not, its gates are
// gone with it.
bool AgentLocks::WindowAlive(const AgentLockRequest& r) {
  return served_windows().Find(r.window_id) == r.window;
}

// The link's descriptor may be given to a new origin's link at once, so
// what stays of the old one (its waiting requests, and the exclusive
// counts they hold) moves to a number no descriptor has.
void AgentLocks::DropLink(int link) {
  if (const auto held = held_.find(link); held != held_.end()) {
    const std::vector<AgentLockRequest> locks = std::move(held->second);
    held_.erase(held);
    std::lock_guard<std::mutex> guard(served_windows().mutex());
    for (auto r = locks.rbegin(); r != locks.rend(); ++r) {
      if (WindowAlive(*r)) {
        Release(*r);
      } else {
        exclusive_held_.erase({link, r->window_id});
      }
    }
  }
  const int gone = next_gone_link_--;
  for (Waiter& w : waiting_) {
    if (w.request.link != link) continue;
    w.request.link = gone;
    w.dropped = true;
  }
  for (auto it = exclusive_held_.lower_bound({link, INT_MIN});
       it != exclusive_held_.end() && it->first.first == link;) {
    exclusive_held_[{gone, it->first.second}] = it->second;
    it = exclusive_held_.erase(it);
  }
}

}  // namespace rmashim
