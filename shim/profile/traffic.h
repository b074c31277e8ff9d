// Who talked to whom, and where each rank's time went: the job-wide views
// Profiler::Report (profile.cc) adds to its per-window records. Gathered
// so that the JSON stays small at a thousand ranks and windows: matrices
// bin consecutive world ranks (at most kMaxBins bins a side), only the
// kMatrixWindows busiest windows get a matrix of their own, and the
// busiest origin-target pairs are kept exactly (kTopPairs).
#ifndef RMASHIM_SHIM_PROFILE_TRAFFIC_H_
#define RMASHIM_SHIM_PROFILE_TRAFFIC_H_

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "shim/profile/profile.h"

namespace rmashim {

constexpr int kMaxBins = 128;
constexpr int kMatrixWindows = 16;
constexpr int kTopPairs = 32;

// A window's identity across processes: (owner, sequence).
using WindowKey = std::pair<int, int>;

// One non-empty cell of a matrix: origin and target (world ranks, or bins
// of them), operations and bytes.
struct TrafficCell {
  int origin, target;
  uint64_t ops, bytes;
};

// The job's traffic, complete on rank 0.
struct JobTraffic {
  int bin_size = 1;                 // world ranks per bin: bin b holds ranks
  int bins = 0;                     // [b * bin_size, (b + 1) * bin_size)
  std::vector<TrafficCell> matrix;  // bins, summed over all windows
  std::vector<std::pair<WindowKey, std::vector<TrafficCell>>> windows;
  std::vector<TrafficCell> top_pairs;  // world ranks, most bytes first
};

// This process's record of one window's traffic: the record, its
// by-target row (window ranks; nullptr: no operations) and the world rank
// of each window rank (empty: the same numbers).
struct TrafficSource {
  const WindowProfile* record;
  const WindowProfile::Ops* row;
  const std::vector<int>* world_of;
};

// Collective over MPI_COMM_WORLD. `chosen` (read on rank 0): the windows
// to give a matrix of their own, busiest first. Returns the job's traffic
// on rank 0, an empty one elsewhere.
JobTraffic GatherTraffic(const std::vector<TrafficSource>& mine,
                         std::vector<WindowKey> chosen);

// The document's "traffic" member, then its "per_rank" member (sums over
// windows of each world rank's records in `all`), each after ",\n ".
void WriteTrafficJson(FILE* f, const JobTraffic& traffic);
void WritePerRankJson(FILE* f, const std::vector<WindowProfile>& all,
                      int world_size);

// The text report's closing sections: the busiest pairs and the ranks
// that spent the most time synchronizing.
void PrintTraffic(FILE* out, const JobTraffic& traffic,
                  const std::vector<WindowProfile>& all, int world_size);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROFILE_TRAFFIC_H_
