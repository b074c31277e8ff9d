// The profile's records (profile.h): counted by the data paths, gathered
// on rank 0 at MPI_Finalize, printed and written as JSON.
#include "shim/profile/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <utility>

#include "shim/process/runtime.h"
#include "shim/profile/gather.h"
#include "shim/profile/json.h"
#include "shim/profile/traffic.h"
#include "shim/types/datatype.h"

namespace rmashim {

Profiler g_profiler;

const char* Name(OpKind k) {
  static const char* const kNames[] = {"put",          "get",
                                       "accumulate",   "get_accumulate",
                                       "fetch_and_op", "compare_and_swap",
                                       "rput",         "rget",
                                       "raccumulate",  "rget_accumulate"};
  return kNames[int(k)];
}
const char* Name(Reach r) {
  static const char* const kNames[] = {"self", "node", "remote"};
  return kNames[int(r)];
}
const char* Name(SyncKind k) {
  static const char* const kNames[] = {
      "lock",        "unlock",    "lock_all",        "unlock_all", "flush",
      "flush_local", "flush_all", "flush_local_all", "sync",       "fence",
      "post",        "start",     "complete",        "wait",       "test"};
  return kNames[int(k)];
}
// Each fallback's JSON key and report text.
struct FallbackNames {
  const char* key;
  const char* text;
};
constexpr FallbackNames kFallbackNames[] = {
    {"unmanaged_flavor", "unmanaged flavor (dynamic window)"},
    {"opted_out", "opted out (info key or RMASHIM_DISABLE)"},
    {"no_shared_memory",
     "no node-shared memory (/dev/shm full, attach refused)"},
    {"shim_setup_failed", "shim's window setup failed (table full, ...)"},
    {"multi_node_window", "window spans nodes (accumulate/PSCW rule)"},
    {"create_accumulate", "accumulate on MPI_Win_create memory"},
    {"datatype", "datatype not flattened"},
    {"large_count", "count beyond int (MPI-4 _c call)"}};
static_assert(std::size(kFallbackNames) == size_t(Fallback::kCount));

const char* Name(Fallback f) { return kFallbackNames[int(f)].text; }

uint64_t PayloadBytes(MPI_Count count, MPI_Datatype type) {
  if (count <= 0) return 0;
  if (IsBuiltinType(type)) return uint64_t(count) * BuiltinTypeSize(type);
  int size = 0;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) {
    return 0;
  }
  return uint64_t(count) * uint64_t(size);
}

void RecordUnmanagedOp(MPI_Win win, OpKind kind, int target, MPI_Count count,
                       MPI_Datatype type) {
  WindowProfile* p = UnmanagedProfile(win);
  if (p == nullptr || target == MPI_PROC_NULL) return;
  const Reach reach = g_profiler.ReachOf(win, target);
  CountOp(p, kind, reach, target, count, type);
  if (reach != Reach::kRemote) {
    CountFallback(p, p->unmanaged_why);
  } else {
    CountRemoteToMpi(p);
  }
}

void Profiler::Start(bool thread_multiple) {
  const char* value = std::getenv("RMASHIM_PROFILE");
  on_ = value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  thread_multiple_ = thread_multiple;
  if (on_ && std::strcmp(value, "1") != 0) json_path_ = value;
}

WindowProfile* Profiler::OpenManaged(MPI_Win win, MPI_Comm comm,
                                     const char* flavor) {
  return Open(win, comm, flavor, true, Fallback::kOptedOut);
}

WindowProfile* Profiler::OpenUnmanaged(MPI_Win win, MPI_Comm comm,
                                       const char* flavor,
                                       Fallback unmanaged_why) {
  return Open(win, comm, flavor, false, unmanaged_why);
}

WindowProfile* Profiler::Open(MPI_Win win, MPI_Comm comm, const char* flavor,
                              bool managed, Fallback unmanaged_why) {
  if (!on_) return nullptr;
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  // The world rank of each window rank, for the traffic matrix.
  std::vector<int> world_of(size), ranks(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  PMPI_Group_translate_ranks(group, size, ranks.data(), world, world_of.data());
  const int owner = world_of[0];
  if (world_of == ranks) world_of.clear();  // the world's numbering
  // Which window ranks share this node (for unmanaged windows' reach).
  const std::vector<int> in_node = NodeIndexOf(comm);
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  // The owner (window rank 0) numbers its windows: (owner, sequence) is
  // unique even when threads create windows on several communicators.
  int sequence = 0;
  if (rank == 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    sequence = next_sequence_++;
  }
  PMPI_Bcast(&sequence, 1, MPI_INT, 0, comm);

  std::lock_guard<std::mutex> lock(mutex_);
  WindowProfile& p = records_.emplace_back();
  p.owner = owner;
  p.sequence = sequence;
  p.ranks = size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &p.world_rank);
  std::snprintf(p.flavor, sizeof(p.flavor), "%s", flavor);
  p.managed = managed;
  p.unmanaged_why = unmanaged_why;
  Live live{&p, std::vector<uint8_t>(size), rank};
  for (int r = 0; r < size; ++r)
    live.node_local[r] = in_node[r] != MPI_UNDEFINED;
  live_[win] = std::move(live);
  targets_[&p].world_of = std::move(world_of);
  return &p;
}

WindowProfile::Ops* Profiler::TargetRow(WindowProfile* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::atomic_ref<WindowProfile::Ops*> row(p->by_target);
  if (row.load(std::memory_order_relaxed) == nullptr) {
    std::vector<WindowProfile::Ops>& storage = targets_[p].row;
    storage.resize(size_t(p->ranks));
    row.store(storage.data(), std::memory_order_release);
  }
  return row.load(std::memory_order_relaxed);
}

WindowProfile* Profiler::Find(MPI_Win win) {
  if (!on_) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(win);
  return it == live_.end() ? nullptr : it->second.record;
}

Reach Profiler::ReachOf(MPI_Win win, int target) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(win);
  if (it == live_.end() || target < 0 ||
      target >= int(it->second.node_local.size())) {
    return Reach::kRemote;
  }
  if (target == it->second.rank) return Reach::kSelf;
  return it->second.node_local[target] ? Reach::kNode : Reach::kRemote;
}

void Profiler::Close(MPI_Win win) {
  if (!on_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(win);
}

namespace {

constexpr size_t kReportColumns = 100;  // what the report must fit

struct Stat {
  double sum = 0, min = 0, max = 0;
  void Add(double v, bool first) {
    sum += v;
    min = first ? v : std::min(min, v);
    max = first ? v : std::max(max, v);
  }
};

// One window, merged over the ranks that took part.
struct Merged {
  const WindowProfile* meta = nullptr;
  int ranks_seen = 0;
  Stat ops[int(OpKind::kCount)][int(Reach::kCount)][2];  // count, bytes
  Stat sync_calls[int(SyncKind::kCount)], sync_seconds[int(SyncKind::kCount)];
  Stat contended, contended_seconds;
  Stat fallbacks[int(Fallback::kCount)];
  Stat remote_to_mpi;
  int busiest_rank = -1;
  uint64_t busiest_ops = 0;

  void Add(const WindowProfile& p) {
    const bool first = ranks_seen++ == 0;
    if (first) meta = &p;
    uint64_t total = 0;
    for (int k = 0; k < int(OpKind::kCount); ++k) {
      for (int r = 0; r < int(Reach::kCount); ++r) {
        ops[k][r][0].Add(double(p.ops[k][r].count), first);
        ops[k][r][1].Add(double(p.ops[k][r].bytes), first);
        total += p.ops[k][r].count;
      }
    }
    for (int s = 0; s < int(SyncKind::kCount); ++s) {
      sync_calls[s].Add(double(p.sync[s].calls), first);
      sync_seconds[s].Add(p.sync[s].seconds, first);
    }
    contended.Add(double(p.contended_locks), first);
    contended_seconds.Add(p.contended_seconds, first);
    for (int f = 0; f < int(Fallback::kCount); ++f) {
      fallbacks[f].Add(double(p.fallbacks[f]), first);
    }
    remote_to_mpi.Add(double(p.remote_to_mpi), first);
    if (busiest_rank < 0 || total > busiest_ops) {
      busiest_rank = p.world_rank;
      busiest_ops = total;
    }
  }
  // "window 0.3 "name" (allocate, managed, 4 ranks)", the name cut short
  // ("...") where the line would not fit kReportColumns.
  std::string Title() const {
    char head[32], tail[64];
    std::snprintf(head, sizeof(head), "window %d.%d", meta->owner,
                  meta->sequence);
    std::snprintf(tail, sizeof(tail), " (%s, %s, %d ranks)", meta->flavor,
                  meta->managed ? "managed" : "passed to MPI", meta->ranks);
    std::string name = meta->name;
    if (name.empty()) return std::string(head) + tail;
    const size_t room = kReportColumns - std::strlen(head) - std::strlen(tail) -
                        3;  // space and quotes
    if (name.size() > room) name = name.substr(0, room - 3) + "...";
    return std::string(head) + " \"" + name + "\"" + tail;
  }
};

std::string Human(double v) {
  char buf[32];
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 10000 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::snprintf(buf, sizeof(buf), u ? "%.1f%s" : "%.0f%s", v, units[u]);
  return buf;
}

void PrintText(const std::vector<Merged>& windows, int world_size) {
  FILE* out = stderr;
  std::fprintf(out,
               "== rmashim profile: %zu windows, %d ranks "
               "(counts summed over ranks) ==\n",
               windows.size(), world_size);
  for (const Merged& m : windows) {
    std::fprintf(out, "\n%s\n", m.Title().c_str());
    std::fprintf(out, "  %-17s %10s %9s %10s %9s %10s %9s\n", "operation",
                 "self ops", "bytes", "node ops", "bytes", "remote ops",
                 "bytes");
    for (int k = 0; k < int(OpKind::kCount); ++k) {
      double any = 0;
      for (int r = 0; r < int(Reach::kCount); ++r) any += m.ops[k][r][0].sum;
      if (any == 0) continue;
      std::fprintf(out, "  %-17s", Name(OpKind(k)));
      for (int r = 0; r < int(Reach::kCount); ++r) {
        std::fprintf(out, " %10s %9s", Human(m.ops[k][r][0].sum).c_str(),
                     Human(m.ops[k][r][1].sum).c_str());
      }
      std::fprintf(out, "\n");
    }
    std::fprintf(out, "  %-17s %10s %12s %14s %14s\n", "synchronization",
                 "calls", "total ms", "max rank ms", "mean us/call");
    for (int s = 0; s < int(SyncKind::kCount); ++s) {
      const double calls = m.sync_calls[s].sum;
      if (calls == 0) continue;
      std::fprintf(out, "  %-17s %10s %12.3f %14.3f %14.3f\n",
                   Name(SyncKind(s)), Human(calls).c_str(),
                   m.sync_seconds[s].sum * 1e3, m.sync_seconds[s].max * 1e3,
                   m.sync_seconds[s].sum * 1e6 / calls);
    }
    if (m.contended.sum > 0) {
      std::fprintf(
          out,
          "  lock acquisitions that waited: %s, %.3f ms in all"
          " (one rank at most: %s, %.3f ms)\n",
          Human(m.contended.sum).c_str(), m.contended_seconds.sum * 1e3,
          Human(m.contended.max).c_str(), m.contended_seconds.max * 1e3);
    }
    double remote = 0;
    for (int k = 0; k < int(OpKind::kCount); ++k) {
      remote += m.ops[k][int(Reach::kRemote)][0].sum;
    }
    if (remote > 0) {
      std::fprintf(out,
                   "  remote ops: %s through the targets' agents, %s to MPI\n",
                   Human(remote - m.remote_to_mpi.sum).c_str(),
                   Human(m.remote_to_mpi.sum).c_str());
    }
    for (int f = 0; f < int(Fallback::kCount); ++f) {
      if (m.fallbacks[f].sum == 0) continue;
      std::fprintf(out, "  fell back to MPI: %-42s %s ops\n", Name(Fallback(f)),
                   Human(m.fallbacks[f].sum).c_str());
    }
    std::fprintf(out, "  busiest rank: %d (%s ops)\n", m.busiest_rank,
                 Human(double(m.busiest_ops)).c_str());
  }
}

void JsonStat(FILE* f, const char* key, const Stat& s, bool last = false) {
  std::fprintf(f, "\"%s\": {\"sum\": ", key);
  JsonNumber(f, s.sum);
  std::fputs(", \"min\": ", f);
  JsonNumber(f, s.min);
  std::fputs(", \"max\": ", f);
  JsonNumber(f, s.max);
  std::fputs(last ? "}" : "}, ", f);
}

void WriteJson(const std::string& path, const std::vector<Merged>& windows,
               int world_size, const JobTraffic& traffic,
               const std::vector<WindowProfile>& all) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "rmashim: cannot write profile to %s\n", path.c_str());
    return;
  }
  std::fprintf(
      f, "{\"schema\": \"rmashim-profile-2\", \"ranks\": %d, \"windows\": [",
      world_size);
  for (size_t i = 0; i < windows.size(); ++i) {
    const Merged& m = windows[i];
    std::fprintf(f, "%s\n {\"id\": \"%d.%d\", \"name\": ", i ? "," : "",
                 m.meta->owner, m.meta->sequence);
    JsonString(f, m.meta->name);
    std::fprintf(f, ", \"flavor\": \"%s\", \"managed\": %s, \"ranks\": %d,",
                 m.meta->flavor, m.meta->managed ? "true" : "false",
                 m.meta->ranks);
    std::fprintf(f, "\n  \"ops\": {");
    for (int k = 0; k < int(OpKind::kCount); ++k) {
      std::fprintf(f, "%s\"%s\": {", k ? ", " : "", Name(OpKind(k)));
      for (int r = 0; r < int(Reach::kCount); ++r) {
        std::fprintf(f, "%s\"%s\": {", r ? ", " : "", Name(Reach(r)));
        JsonStat(f, "count", m.ops[k][r][0]);
        JsonStat(f, "bytes", m.ops[k][r][1], true);
        std::fprintf(f, "}");
      }
      std::fprintf(f, "}");
    }
    std::fprintf(f, "},\n  \"sync\": {");
    for (int s = 0; s < int(SyncKind::kCount); ++s) {
      std::fprintf(f, "%s\"%s\": {", s ? ", " : "", Name(SyncKind(s)));
      JsonStat(f, "calls", m.sync_calls[s]);
      JsonStat(f, "seconds", m.sync_seconds[s], true);
      std::fprintf(f, "}");
    }
    std::fprintf(f, "},\n  ");
    JsonStat(f, "contended_locks", m.contended);
    JsonStat(f, "contended_seconds", m.contended_seconds);
    JsonStat(f, "remote_to_mpi", m.remote_to_mpi);
    std::fprintf(f, "\"fallbacks\": {");
    for (int b = 0; b < int(Fallback::kCount); ++b) {
      JsonStat(f, kFallbackNames[b].key, m.fallbacks[b],
               b + 1 == int(Fallback::kCount));
    }
    std::fprintf(f, "},\n  \"busiest_rank\": %d, \"busiest_rank_ops\": %llu}",
                 m.busiest_rank,
                 static_cast<unsigned long long>(m.busiest_ops));
  }
  std::fprintf(f, "\n]");
  WriteTrafficJson(f, traffic);
  WritePerRankJson(f, all, world_size);
  std::fprintf(f, "}\n");
  std::fclose(f);
}

// The windows with the most operations (none without), busiest first, at
// most kMatrixWindows.
std::vector<WindowKey> Busiest(const std::vector<Merged>& windows) {
  std::vector<std::pair<double, WindowKey>> by_ops;
  for (const Merged& m : windows) {
    double ops = 0;
    for (const auto& by_reach : m.ops) {
      for (const auto& stats : by_reach) ops += stats[0].sum;
    }
    if (ops > 0) by_ops.push_back({-ops, {m.meta->owner, m.meta->sequence}});
  }
  std::sort(by_ops.begin(), by_ops.end());
  std::vector<WindowKey> out;
  for (size_t i = 0; i < by_ops.size() && i < size_t(kMatrixWindows); ++i) {
    out.push_back(by_ops[i].second);
  }
  return out;
}

}  // namespace

void Profiler::Report() {
  if (!on_) return;
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::vector<WindowProfile> all = GatherOnRankZero(
      std::vector<WindowProfile>(records_.begin(), records_.end()));
  std::vector<Merged> windows;
  if (rank == 0) {
    std::map<std::pair<int, int>, Merged> by_window;
    for (const WindowProfile& p : all) by_window[{p.owner, p.sequence}].Add(p);
    windows.reserve(by_window.size());
    for (auto& [key, merged] : by_window) windows.push_back(merged);
  }
  std::vector<TrafficSource> sources;
  for (const WindowProfile& p : records_) {
    const Targets& t = targets_[&p];
    sources.push_back({&p, p.by_target, &t.world_of});
  }
  const JobTraffic traffic = GatherTraffic(sources, Busiest(windows));
  if (rank != 0) return;
  PrintText(windows, size);
  PrintTraffic(stderr, traffic, all, size);
  if (!json_path_.empty()) WriteJson(json_path_, windows, size, traffic, all);
}

}  // namespace rmashim
