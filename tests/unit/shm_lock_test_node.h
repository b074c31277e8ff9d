// A node's lock words for the gate tests (shm_lock_announce_test,
// shm_lock_bias_test): threads of one process stand in for the node's
// processes (the words are plain atomics, so threads see what processes
// see).
#ifndef RMASHIM_TESTS_SHM_LOCK_TEST_NODE_H_
#define RMASHIM_TESTS_SHM_LOCK_TEST_NODE_H_

#include <atomic>
#include <vector>

#include "shim/sync/shm_lock.h"

namespace rmashim {

// A node of `ranks` ranks with `shards` shards of the `all` gate, and with
// `biased` the lock_all bias and every rank's visibility word.
struct Node {
  Node(int ranks, int shards, bool biased = false)
      : shard_words(shards), announced(ranks), visible(ranks), biased(biased) {
    for (LockWords& w : shard_words) shard_pointers.push_back(&w);
    for (AnnounceWord& a : announced) announced_pointers.push_back(&a);
    for (VisibleWord& v : visible) visible_pointers.push_back(&v);
  }
  AllShards view() const {
    return {shard_pointers.data(),
            static_cast<int>(shard_pointers.size()),
            announced_pointers.data(),
            static_cast<int>(announced_pointers.size()),
            biased ? const_cast<LockAllBias*>(&bias) : nullptr,
            visible_pointers.data()};
  }
  // The ExclusiveShare of `rank` as a single-threaded process (with the
  // single shard's word on a node of one shard, as windows do).
  void Join(ExclusiveShare& share, int rank) {
    share.set_announcement(
        &announced[rank],
        shard_words.size() == 1 ? &shard_words[0].all : nullptr,
        biased ? &bias : nullptr);
  }
  std::vector<LockWords> shard_words;
  std::vector<AnnounceWord> announced;
  std::vector<VisibleWord> visible;
  LockAllBias bias;
  bool biased;
  std::vector<LockWords*> shard_pointers;
  std::vector<AnnounceWord*> announced_pointers;
  std::vector<VisibleWord*> visible_pointers;
};

inline uint64_t ShardHolders(const Node& node) {
  uint64_t n = 0;
  for (const LockWords& w : node.shard_words) {
    n += GateAHolders(w.all.load()) + GateBHolders(w.all.load());
  }
  return n;
}

// Stays a while in a critical section, noting in `overlap` any holder of
// the other kind (`others`) seen meanwhile.
inline void Watch(const std::atomic<int>& others, std::atomic<bool>& overlap) {
  for (int k = 0; k < 64; ++k) {
    if (others.load() != 0) overlap = true;
    CpuRelax();
  }
}

}  // namespace rmashim

#endif  // RMASHIM_TESTS_SHM_LOCK_TEST_NODE_H_
