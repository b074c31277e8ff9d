// The job-wide views of the profile (traffic.h): each process bins its
// own rows before sending, so rank 0 receives at most a few hundred cells
// per process however many windows and ranks the job has.
#include "shim/profile/traffic.h"

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <map>
#include <type_traits>

#include "shim/profile/gather.h"
#include "shim/profile/json.h"

namespace rmashim {
namespace {

// What a process sends rank 0: slot kJob (the job's matrix, target a
// bin), kPair (one of its busiest pairs, target a world rank) or the
// index of a chosen window (target a bin); the origin is the sender.
struct Entry {
  int32_t slot, origin, target, unused;
  uint64_t ops, bytes;
};
constexpr int32_t kJob = -1;
constexpr int32_t kPair = -2;

using Ops = WindowProfile::Ops;

bool Empty(const Ops& o) { return o.count == 0 && o.bytes == 0; }

// Most bytes first, then most operations, then lowest ranks.
bool Busier(const TrafficCell& a, const TrafficCell& b) {
  if (a.bytes != b.bytes) return a.bytes > b.bytes;
  if (a.ops != b.ops) return a.ops > b.ops;
  return std::pair(a.origin, a.target) < std::pair(b.origin, b.target);
}

// This process's entries: its rows summed over windows into bins, per
// chosen window into bins, and its kTopPairs busiest targets.
std::vector<Entry> OwnEntries(const std::vector<TrafficSource>& mine,
                              const std::vector<WindowKey>& chosen,
                              int world_rank, int world_size, int bin_size,
                              int bins) {
  std::vector<Ops> job(bins), by_rank(world_size);
  std::vector<std::vector<Ops>> windows(chosen.size());
  for (const TrafficSource& s : mine) {
    if (s.row == nullptr) continue;
    const WindowKey key{s.record->owner, s.record->sequence};
    const auto at = std::find(chosen.begin(), chosen.end(), key);
    std::vector<Ops>* window = nullptr;
    if (at != chosen.end()) {
      window = &windows[at - chosen.begin()];
      window->resize(bins);
    }
    for (int t = 0; t < s.record->ranks; ++t) {
      const Ops& o = s.row[t];
      if (Empty(o)) continue;
      const int w = s.world_of->empty() ? t : (*s.world_of)[t];
      for (Ops* cell : {&job[w / bin_size], &by_rank[w],
                        window ? &(*window)[w / bin_size] : nullptr}) {
        if (cell == nullptr) continue;
        cell->count += o.count;
        cell->bytes += o.bytes;
      }
    }
  }
  std::vector<Entry> out;
  auto emit = [&](int32_t slot, const std::vector<Ops>& row) {
    for (size_t t = 0; t < row.size(); ++t) {
      if (!Empty(row[t])) {
        out.push_back(
            {slot, world_rank, int32_t(t), 0, row[t].count, row[t].bytes});
      }
    }
  };
  emit(kJob, job);
  for (size_t i = 0; i < windows.size(); ++i) emit(int32_t(i), windows[i]);
  std::vector<TrafficCell> pairs;
  for (int t = 0; t < world_size; ++t) {
    if (!Empty(by_rank[t])) {
      pairs.push_back({world_rank, t, by_rank[t].count, by_rank[t].bytes});
    }
  }
  const size_t keep = std::min(pairs.size(), size_t(kTopPairs));
  std::partial_sort(pairs.begin(), pairs.begin() + keep, pairs.end(), Busier);
  for (size_t i = 0; i < keep; ++i) {
    out.push_back(
        {kPair, world_rank, pairs[i].target, 0, pairs[i].ops, pairs[i].bytes});
  }
  return out;
}

// Sums `cells` by (origin, target), in that order.
std::vector<TrafficCell> Summed(const std::vector<TrafficCell>& cells) {
  std::map<std::pair<int, int>, Ops> sum;
  for (const TrafficCell& c : cells) {
    Ops& o = sum[{c.origin, c.target}];
    o.count += c.ops;
    o.bytes += c.bytes;
  }
  std::vector<TrafficCell> out;
  out.reserve(sum.size());
  for (const auto& [key, o] : sum) {
    out.push_back({key.first, key.second, o.count, o.bytes});
  }
  return out;
}

void WriteCells(FILE* f, const std::vector<TrafficCell>& cells) {
  std::fputc('[', f);
  for (size_t i = 0; i < cells.size(); ++i) {
    const TrafficCell& c = cells[i];
    std::fprintf(f, "%s[%d, %d, %llu, %llu]", i ? ", " : "", c.origin, c.target,
                 static_cast<unsigned long long>(c.ops),
                 static_cast<unsigned long long>(c.bytes));
  }
  std::fputc(']', f);
}

// Each world rank's sums over the windows of `all`.
struct RankTotals {
  std::vector<uint64_t> ops, bytes, lock_waits;
  std::vector<double> lock_wait_seconds, sync_seconds;  // rank-major
};

RankTotals TotalsByRank(const std::vector<WindowProfile>& all, int world_size) {
  constexpr int kSyncs = int(SyncKind::kCount);
  RankTotals t{
      std::vector<uint64_t>(world_size), std::vector<uint64_t>(world_size),
      std::vector<uint64_t>(world_size), std::vector<double>(world_size),
      std::vector<double>(size_t(world_size) * kSyncs)};
  for (const WindowProfile& p : all) {
    const int r = p.world_rank;
    if (r < 0 || r >= world_size) continue;
    for (const auto& by_reach : p.ops) {
      for (const Ops& o : by_reach) {
        t.ops[r] += o.count;
        t.bytes[r] += o.bytes;
      }
    }
    for (int s = 0; s < kSyncs; ++s) {
      t.sync_seconds[size_t(r) * kSyncs + s] += p.sync[s].seconds;
    }
    t.lock_waits[r] += p.contended_locks;
    t.lock_wait_seconds[r] += p.contended_seconds;
  }
  return t;
}

template <class T>
void WriteList(FILE* f, const char* key, const std::vector<T>& values,
               size_t first = 0, size_t stride = 1) {
  std::fprintf(f, "\"%s\": [", key);
  for (size_t i = first, n = 0; i < values.size(); i += stride, ++n) {
    if (n) std::fputs(", ", f);
    if constexpr (std::is_floating_point_v<T>) {
      JsonNumber(f, values[i]);
    } else {
      std::fprintf(f, "%llu", static_cast<unsigned long long>(values[i]));
    }
  }
  std::fputc(']', f);
}

}  // namespace

JobTraffic GatherTraffic(const std::vector<TrafficSource>& mine,
                         std::vector<WindowKey> chosen) {
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = int(chosen.size());
  PMPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  chosen.resize(n);
  PMPI_Bcast(chosen.data(), 2 * n, MPI_INT, 0, MPI_COMM_WORLD);
  JobTraffic traffic;
  traffic.bin_size = (size + kMaxBins - 1) / kMaxBins;
  traffic.bins = (size + traffic.bin_size - 1) / traffic.bin_size;
  const std::vector<Entry> own =
      OwnEntries(mine, chosen, rank, size, traffic.bin_size, traffic.bins);

  const std::vector<Entry> all = GatherOnRankZero(own);
  if (rank != 0) return {};

  std::vector<TrafficCell> job;
  std::vector<std::vector<TrafficCell>> windows(n);
  for (const Entry& e : all) {
    const TrafficCell binned{e.origin / traffic.bin_size, e.target, e.ops,
                             e.bytes};
    if (e.slot == kJob) {
      job.push_back(binned);
    } else if (e.slot == kPair) {
      traffic.top_pairs.push_back({e.origin, e.target, e.ops, e.bytes});
    } else if (e.slot >= 0 && e.slot < n) {
      windows[e.slot].push_back(binned);
    }
  }
  traffic.matrix = Summed(job);
  for (int i = 0; i < n; ++i) {
    traffic.windows.emplace_back(chosen[i], Summed(windows[i]));
  }
  std::vector<TrafficCell>& pairs = traffic.top_pairs;
  std::sort(pairs.begin(), pairs.end(), Busier);
  if (pairs.size() > size_t(kTopPairs)) pairs.resize(kTopPairs);
  return traffic;
}

void WriteTrafficJson(FILE* f, const JobTraffic& traffic) {
  std::fprintf(f,
               ",\n \"traffic\": {\"ranks\": \"world\", \"bin_size\": %d, "
               "\"bins\": %d,\n  \"matrix\": ",
               traffic.bin_size, traffic.bins);
  WriteCells(f, traffic.matrix);
  std::fputs(",\n  \"windows\": {", f);
  for (size_t i = 0; i < traffic.windows.size(); ++i) {
    const auto& [key, cells] = traffic.windows[i];
    std::fprintf(f, "%s\n   \"%d.%d\": ", i ? "," : "", key.first, key.second);
    WriteCells(f, cells);
  }
  std::fputs("},\n  \"top_pairs\": ", f);
  WriteCells(f, traffic.top_pairs);
  std::fputs("}", f);
}

void WritePerRankJson(FILE* f, const std::vector<WindowProfile>& all,
                      int world_size) {
  const RankTotals t = TotalsByRank(all, world_size);
  std::fputs(",\n \"per_rank\": {", f);
  WriteList(f, "ops", t.ops);
  std::fputs(",\n  ", f);
  WriteList(f, "bytes", t.bytes);
  std::fputs(",\n  ", f);
  WriteList(f, "lock_waits", t.lock_waits);
  std::fputs(",\n  ", f);
  WriteList(f, "lock_wait_seconds", t.lock_wait_seconds);
  std::fputs(",\n  \"sync_seconds\": {", f);
  constexpr int kSyncs = int(SyncKind::kCount);
  for (int s = 0; s < kSyncs; ++s) {
    std::fputs(s ? ",\n   " : "\n   ", f);
    WriteList(f, Name(SyncKind(s)), t.sync_seconds, s, kSyncs);
  }
  std::fputs("}}", f);
}

void PrintTraffic(FILE* out, const JobTraffic& traffic,
                  const std::vector<WindowProfile>& all, int world_size) {
  constexpr size_t kShown = 8;
  if (!traffic.top_pairs.empty()) {
    std::fprintf(out,
                 "\n== who talks to whom (world ranks, busiest pairs) ==\n");
    for (size_t i = 0; i < std::min(kShown, traffic.top_pairs.size()); ++i) {
      const TrafficCell& c = traffic.top_pairs[i];
      std::fprintf(out, "  rank %d -> rank %d: %llu ops, %llu bytes\n",
                   c.origin, c.target, static_cast<unsigned long long>(c.ops),
                   static_cast<unsigned long long>(c.bytes));
    }
  }
  const RankTotals t = TotalsByRank(all, world_size);
  constexpr int kSyncs = int(SyncKind::kCount);
  std::vector<std::pair<double, int>> busiest;
  for (int r = 0; r < world_size; ++r) {
    double sum = 0;
    for (int s = 0; s < kSyncs; ++s)
      sum += t.sync_seconds[size_t(r) * kSyncs + s];
    if (sum > 0) busiest.emplace_back(sum, r);
  }
  if (busiest.empty()) return;
  std::sort(busiest.begin(), busiest.end(), std::greater<>());
  std::fprintf(out, "\n== synchronization time by rank (most first) ==\n");
  for (size_t i = 0; i < std::min(kShown, busiest.size()); ++i) {
    const int r = busiest[i].second;
    std::fprintf(out,
                 "  rank %d: %.3f ms synchronizing, %.3f ms waiting for "
                 "locks (%llu waits)\n",
                 r, busiest[i].first * 1e3, t.lock_wait_seconds[r] * 1e3,
                 static_cast<unsigned long long>(t.lock_waits[r]));
  }
}

}  // namespace rmashim
