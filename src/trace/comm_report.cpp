#include "trace/comm_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/wait.h"

namespace isthmus::trace {

int CommReport::site(const std::string& name, Kind kind, int arrays, bool three_d,
                     int64_t largest_halo) {
  for (size_t s = 0; s < sites_.size(); ++s)
    if (sites_[s].name == name) return static_cast<int>(s);
  Site s;
  s.name = name;
  s.kind = kind;
  s.arrays = arrays;
  s.three_d = three_d;
  s.largest_halo = largest_halo;
  sites_.push_back(s);
  return static_cast<int>(sites_.size()) - 1;
}

void CommReport::begin_step() {
  if (in_step_)
    fail(ISTHMUS_ERR_ARG, "communication report: begin_step() twice without end_step()");
  in_step_ = true;
  current_.wait = current_.gwait = 0;
  current_.calls.assign(sites_.size(), 0);
  current_.seconds.assign(sites_.size(), 0.0);
  current_.start = MPI_Wtime();
}

void CommReport::add(int site, double seconds) {
  if (site < 0 || site >= static_cast<int>(sites_.size()))
    fail(ISTHMUS_ERR_ARG, "communication report: unknown call site ", site);
  if (!in_step_) return;  // outside time steps (initialisation): not counted
  if (current_.calls.size() < sites_.size()) {
    current_.calls.resize(sites_.size(), 0);
    current_.seconds.resize(sites_.size(), 0.0);
  }
  current_.calls[site] += 1;
  current_.seconds[site] += seconds;
  if (sites_[site].kind == Kind::Halo) current_.wait += seconds;
  else current_.gwait += seconds;
}

void CommReport::end_step() {
  if (!in_step_) fail(ISTHMUS_ERR_ARG, "communication report: end_step() without begin_step()");
  in_step_ = false;
  current_.total = MPI_Wtime() - current_.start;
  if (has_pending_ && finished_steps_ >= 2) {
    // pending_ is neither the first step nor (now) the last one.
    wait_ += pending_.wait;
    gwait_ += pending_.gwait;
    total_ += pending_.total;
    for (size_t s = 0; s < pending_.calls.size(); ++s) {
      sites_[s].calls += pending_.calls[s];
      sites_[s].seconds += pending_.seconds[s];
    }
    ++counted_steps_;
  }
  pending_ = current_;
  has_pending_ = true;
  ++finished_steps_;
}

std::string CommReport::summarize(std::string* json) {
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm_, &size));
  const double mine[4] = {wait_, gwait_, total_ - wait_ - gwait_, total_};
  std::vector<double> all(rank == 0 ? 4 * size : 4);
  ISTHMUS_MPI(wmpi::Gather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, comm_));
  // Call counts and largest halo over ranks (a rank on land-free edges may differ).
  std::vector<int64_t> calls(sites_.size()), gcalls(sites_.size()), halo(sites_.size()),
      ghalo(sites_.size());
  // Time per site: mean and max over ranks (which exchange the waiting is spent in).
  std::vector<double> secs(sites_.size()), gsum(sites_.size()), gmax(sites_.size());
  for (size_t s = 0; s < sites_.size(); ++s) {
    calls[s] = sites_[s].calls;
    halo[s] = sites_[s].largest_halo;
    secs[s] = sites_[s].seconds;
  }
  if (!sites_.empty()) {
    ISTHMUS_MPI(wmpi::Reduce(secs.data(), gsum.data(), static_cast<int>(sites_.size()), MPI_DOUBLE,
                           MPI_SUM, 0, comm_));
    ISTHMUS_MPI(wmpi::Reduce(secs.data(), gmax.data(), static_cast<int>(sites_.size()), MPI_DOUBLE,
                           MPI_MAX, 0, comm_));
    ISTHMUS_MPI(wmpi::Reduce(calls.data(), gcalls.data(), static_cast<int>(sites_.size()),
                           MPI_INT64_T, MPI_MAX, 0, comm_));
    ISTHMUS_MPI(wmpi::Reduce(halo.data(), ghalo.data(), static_cast<int>(sites_.size()),
                           MPI_INT64_T, MPI_MAX, 0, comm_));
  }
  if (rank != 0) return "";
  const int steps = counted_steps_;
  const char* names[4] = {"waiting", "waiting_global", "computing", "total"};
  double mn[4], mx[4], mean[4];
  int argmax[4] = {0, 0, 0, 0};
  for (int q = 0; q < 4; ++q) {
    mn[q] = mx[q] = all[q];
    mean[q] = 0;
    for (int r = 0; r < size; ++r) {
      double v = all[4 * r + q];
      if (v < mn[q]) mn[q] = v;
      if (v > mx[q]) { mx[q] = v; argmax[q] = r; }
      mean[q] += v / size;
    }
  }
  double halo_per_step = 0, coll_per_step = 0, halo3d_per_step = 0;
  int64_t largest = 0;
  for (size_t s = 0; s < sites_.size(); ++s) {
    double per = steps ? static_cast<double>(gcalls[s]) / steps : 0;
    if (sites_[s].kind == Kind::Halo) {
      halo_per_step += per;
      if (sites_[s].three_d) halo3d_per_step += per;
      if (ghalo[s] > largest) largest = ghalo[s];
    } else {
      coll_per_step += per;
    }
  }
  std::ostringstream t;
  char line[512];
  t << "isthmus communication report (NEMO style, seed 004 sect. 2.3)\n";
  t << "ranks " << size << ", time steps counted " << steps << " (first and last excluded)\n\n";
  std::snprintf(line, sizeof line,
                "halo exchanges per step: %.2f (3-D: %.2f), largest halo: %lld points\n"
                "global collectives per step: %.2f\n\n",
                halo_per_step, halo3d_per_step, static_cast<long long>(largest), coll_per_step);
  t << line;
  std::snprintf(line, sizeof line, "%-32s %-10s %10s %7s %5s %13s %12s %12s\n", "call site",
                "kind", "per step", "arrays", "dims", "largest halo", "mean s/step",
                "max s/step");
  t << line;
  for (size_t s = 0; s < sites_.size(); ++s) {
    const Site& x = sites_[s];
    std::snprintf(line, sizeof line, "%-32s %-10s %10.2f %7d %5s %13lld %12.3e %12.3e\n",
                  x.name.c_str(), x.kind == Kind::Halo ? "halo" : "collective",
                  steps ? static_cast<double>(gcalls[s]) / steps : 0.0, x.arrays,
                  x.kind == Kind::Halo ? (x.three_d ? "3-D" : "2-D") : "-",
                  static_cast<long long>(ghalo[s]), steps ? gsum[s] / size / steps : 0.0,
                  steps ? gmax[s] / steps : 0.0);
    t << line;
  }
  t << "\nper rank, seconds over the counted steps\n";
  std::snprintf(line, sizeof line, "%-16s %12s %12s %12s %10s %9s\n", "", "min", "mean", "max",
                "max rank", "% total");
  t << line;
  for (int q = 0; q < 4; ++q) {
    std::snprintf(line, sizeof line, "%-16s %12.6f %12.6f %12.6f %10d %8.1f%%\n", names[q], mn[q],
                  mean[q], mx[q], argmax[q], mean[3] > 0 ? 100.0 * mean[q] / mean[3] : 0.0);
    t << line;
  }
  if (json) {
    std::ostringstream j;
    j << "{\"ranks\": " << size << ", \"steps_counted\": " << steps
      << ", \"halo_exchanges_per_step\": " << halo_per_step
      << ", \"halo_exchanges_3d_per_step\": " << halo3d_per_step
      << ", \"collectives_per_step\": " << coll_per_step << ", \"largest_halo\": " << largest
      << ", \"sites\": [";
    for (size_t s = 0; s < sites_.size(); ++s) {
      const Site& x = sites_[s];
      j << (s ? ", " : "") << "{\"name\": \"" << x.name << "\", \"kind\": \""
        << (x.kind == Kind::Halo ? "halo" : "collective") << "\", \"per_step\": "
        << (steps ? static_cast<double>(gcalls[s]) / steps : 0.0) << ", \"arrays\": " << x.arrays
        << ", \"three_d\": " << (x.three_d ? "true" : "false") << ", \"largest_halo\": " << ghalo[s]
        << ", \"seconds_per_step_mean\": " << (steps ? gsum[s] / size / steps : 0.0)
        << ", \"seconds_per_step_max\": " << (steps ? gmax[s] / steps : 0.0) << "}";
    }
    j << "], \"per_rank\": {";
    for (int q = 0; q < 4; ++q) {
      j << (q ? ", " : "") << "\"" << names[q] << "\": [";
      for (int r = 0; r < size; ++r) j << (r ? ", " : "") << all[4 * r + q];
      j << "]";
    }
    j << "}}\n";
    *json = j.str();
  }
  return t.str();
}

std::string CommReport::write(const std::string& prefix) {
  std::string json;
  std::string text = summarize(&json);
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &rank));
  int ok = 1;
  if (rank == 0) {
    std::ofstream t(prefix + ".txt"), j(prefix + ".json");
    t << text;
    j << json;
    ok = t.good() && j.good();
  }
  ISTHMUS_MPI(wmpi::Bcast(&ok, 1, MPI_INT, 0, comm_));
  if (!ok) fail(ISTHMUS_ERR_FILE, "communication report: cannot write ", prefix, ".txt/.json");
  return text;
}

}  // namespace isthmus::trace
