// Shared by every benchmark: field buffers that SMPI can share between simulated ranks, timing
// statistics (median, min, max over repetitions) and one JSON object per case on stdout.
#pragma once
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"

#ifdef ISTHMUS_SMPI
#include <smpi/smpi.h>
#endif

namespace bench {

// The first lines of every benchmark: MPI_Init, then MPI_COMM_WORLD with this rank and the size.
//   auto [comm, rank, size] = bench::init(argc, argv);
struct World {
  MPI_Comm comm;
  int rank;
  int size;
};
inline World init(int& argc, char**& argv) {
  MPI_Init(&argc, &argv);
  World w{MPI_COMM_WORLD, 0, 1};
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);
  return w;
}

// Field buffers: under SimGrid SMPI every simulated rank's buffer is one shared mapping, so
// 10^4+ ranks fit in memory (their contents are then meaningless; data checks are for real MPI).
// Set ISTHMUS_BENCH_PRIVATE_BUFFERS=1 to allocate real memory under SMPI (small runs that
// compare data with a real-MPI run).
inline void* alloc_field(size_t bytes) {
#ifdef ISTHMUS_SMPI
  const char* priv = std::getenv("ISTHMUS_BENCH_PRIVATE_BUFFERS");
  if (!(priv && priv[0] == '1')) return SMPI_SHARED_MALLOC(bytes ? bytes : 1);
#endif
  return std::calloc(bytes ? bytes : 1, 1);
}
inline void free_field(void* p) {
#ifdef ISTHMUS_SMPI
  const char* priv = std::getenv("ISTHMUS_BENCH_PRIVATE_BUFFERS");
  if (!(priv && priv[0] == '1')) {
    SMPI_SHARED_FREE(p);
    return;
  }
#endif
  std::free(p);
}
inline bool buffers_are_shared() {
#ifdef ISTHMUS_SMPI
  const char* priv = std::getenv("ISTHMUS_BENCH_PRIVATE_BUFFERS");
  return !(priv && priv[0] == '1');
#else
  return false;
#endif
}

struct Stats {
  double median = 0, min = 0, max = 0, mean = 0;
  int reps = 0;
};

inline Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.reps = static_cast<int>(v.size());
  s.min = v.front();
  s.max = v.back();
  size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / n;
  return s;
}

// CPU time of the calling thread (a simulated rank is a thread under SMPI): what a loaded or
// oversubscribed machine does not inflate.
inline double thread_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Timing {
  Stats wall;  // per repetition: from the last rank's start to the last rank's end
  Stats cpu;   // per repetition: the largest CPU time of a rank
};

// Times fn() reps times, each after barrier(). A sample runs from the moment the LAST rank
// starts to the moment the last rank finishes: a barrier releases ranks at different times
// (SMPI's linear barrier skews them by O(P) message overheads), and a rank's own clock would count
// its wait for later starters as cost. The ranks' times are read on one clock (GlobalClock:
// MPI_Wtime counts from each process's own start under Open MPI, even on one node).
template <typename Fn, typename Barrier>
Timing time_collective_with(MPI_Comm comm, int reps, Fn&& fn, Barrier&& barrier) {
  std::vector<double> wall, cpu;
  const isthmus::GlobalClock& clock = isthmus::GlobalClock::of(comm);
  for (int r = 0; r < reps; ++r) {
    barrier();
    double t0 = clock.now(), c0 = thread_cpu_seconds();
    fn();
    double local[3] = {t0, clock.now(), thread_cpu_seconds() - c0}, last[3];
    MPI_Allreduce(local, last, 3, MPI_DOUBLE, MPI_MAX, comm);
    wall.push_back(last[1] - last[0]);
    cpu.push_back(last[2]);
  }
  return {stats(wall), stats(cpu)};
}

template <typename Fn>
Stats time_collective(MPI_Comm comm, int reps, Fn&& fn) {
  return time_collective_with(comm, reps, fn, [comm] { MPI_Barrier(comm); }).wall;
}

// One JSON object, built field by field, printed on one line.
class Json {
 public:
  Json& str(const std::string& k, const std::string& v) { return raw(k, "\"" + escape(v) + "\""); }
  Json& num(const std::string& k, double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return raw(k, b);
  }
  Json& integer(const std::string& k, long long v) { return raw(k, std::to_string(v)); }
  Json& boolean(const std::string& k, bool v) { return raw(k, v ? "true" : "false"); }
  Json& stats(const std::string& prefix, const Stats& s) {
    num(prefix + "median_s", s.median);
    num(prefix + "min_s", s.min);
    num(prefix + "max_s", s.max);
    num(prefix + "mean_s", s.mean);
    return integer(prefix + "reps", s.reps);
  }
  Json& raw(const std::string& k, const std::string& v) {
    parts_.push_back("\"" + escape(k) + "\": " + v);
    return *this;
  }
  std::string text() const {
    std::string s = "{";
    for (size_t i = 0; i < parts_.size(); ++i) s += (i ? ", " : "") + parts_[i];
    return s + "}";
  }
  void print() const {
    std::printf("%s\n", text().c_str());
    std::fflush(stdout);
  }

 private:
  static std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\') o += '\\';
      o += c;
    }
    return o;
  }
  std::vector<std::string> parts_;
};

// Minimal --key value argument reading for benchmark programs.
class Args {
 public:
  Args(int argc, char** argv) : v_(argv + 1, argv + argc) {}
  std::string get(const std::string& key, const std::string& def) const {
    for (size_t i = 0; i + 1 < v_.size(); ++i)
      if (v_[i] == "--" + key) return v_[i + 1];
    return def;
  }
  long long integer(const std::string& key, long long def) const {
    std::string s = get(key, "");
    return s.empty() ? def : std::stoll(s);
  }
  // A comma-separated list, e.g. --methods p2p,butterfly (empty items dropped).
  std::vector<std::string> list(const std::string& key, const std::string& def) const {
    return split(get(key, def));
  }
  static std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> v;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(',', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) v.push_back(s.substr(start, end - start));
      start = end + 1;
    }
    return v;
  }
  bool flag(const std::string& key) const {
    for (const auto& a : v_)
      if (a == "--" + key) return true;
    return false;
  }

 private:
  std::vector<std::string> v_;
};

}  // namespace bench
