// Helpers for MPI tests: rank/size of MPI_COMM_WORLD, an assertion that a condition holds on
// every rank (a per-rank EXPECT alone would let ranks disagree on what to do next), and the
// tools of the misuse tests (docs/errors.md): a watchdog that turns a hang into a failure that
// names the case, and the check that a collective call returned one code on every rank.
#pragma once
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

inline int world_rank() { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
inline int world_size() { int s; MPI_Comm_size(MPI_COMM_WORLD, &s); return s; }
inline bool all_ranks(bool ok, MPI_Comm comm = MPI_COMM_WORLD) {
  int l = ok ? 1 : 0, g = 0;
  MPI_Allreduce(&l, &g, 1, MPI_INT, MPI_MIN, comm);
  return g == 1;
}

// While alive, a thread waits `seconds`; if the scope has not ended by then, the case hung:
// it prints the case and the rank and ends the process with code 124, which ends the mpirun
// job, instead of leaving it to the ctest timeout with no word about which case hung.
class Watchdog {
 public:
  explicit Watchdog(std::string what, int seconds = 60) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "HANG: case '%s' did not return on rank %d within %d s\n",
                     what_.c_str(), world_rank(), seconds);
        std::fflush(stderr);
        std::_Exit(124);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// The codes every rank of comm returned (gathered on every rank), to assert that a collective
// call failed alike everywhere.
inline std::vector<int> codes_of_all_ranks(int rc, MPI_Comm comm = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<int> all(n);
  MPI_Allgather(&rc, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
  return all;
}
inline bool same_code_everywhere(int rc, int expected, MPI_Comm comm = MPI_COMM_WORLD) {
  for (int c : codes_of_all_ranks(rc, comm))
    if (c != expected) return false;
  return true;
}

// The ranks a misuse test puts the bad argument on: one rank (the last, so that it is not the
// rank every reduction roots at) or every rank.
enum class MisuseOn { OneRank, AllRanks };
inline bool is_misused(MisuseOn on) { return on == MisuseOn::AllRanks || world_rank() == world_size() - 1; }
inline const char* misuse_name(MisuseOn on) { return on == MisuseOn::AllRanks ? "all ranks" : "one rank"; }

// A fresh directory for one test at one rank count (several rank counts may run at once: the
// name holds both and rank 0's process id), made by rank 0 and removed when it goes.
class TempRunDir {
 public:
  explicit TempRunDir(const std::string& name) {
    int pid = static_cast<int>(getpid());
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path_ = (std::filesystem::temp_directory_path() /
             ("isthmus_" + name + "_np" + std::to_string(world_size()) + "_" + std::to_string(pid)))
                .string();
    if (world_rank() == 0) {
      std::filesystem::remove_all(path_);
      std::filesystem::create_directories(path_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~TempRunDir() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) std::filesystem::remove_all(path_);
  }
  TempRunDir(const TempRunDir&) = delete;
  TempRunDir& operator=(const TempRunDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& file) const { return path_ + "/" + file; }
  // rank 0 writes a file, every rank waits for it
  std::string write(const std::string& file, const std::string& text) const {
    if (world_rank() == 0) std::ofstream(*this / file) << text;
    MPI_Barrier(MPI_COMM_WORLD);
    return *this / file;
  }

 private:
  std::string path_;
};
