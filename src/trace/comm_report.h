// NEMO's communication report (seed 004 sect. 2.3): which call sites exchange halos or do
// global collectives and how often per time step, and per rank the time spent waiting in
// point-to-point exchanges, waiting in global collectives, and computing. The first and last
// time steps are excluded so that initialisation and finalisation do not count.
//
// Usage: one report per model (no global state). Register call sites once, bracket each time
// step with begin_step()/end_step(), and add the duration of each exchange or collective at
// its site. write() is collective and rank 0 writes communication_report.txt and .json.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace isthmus::trace {

class CommReport {
 public:
  enum class Kind { Halo = 0, Collective = 1 };
  struct Site {
    std::string name;
    Kind kind = Kind::Halo;
    int arrays = 1;             // arrays per exchange
    bool three_d = false;       // any array with more than one level
    int64_t largest_halo = 0;   // halo cells received per exchange on the busiest rank (points)
    int64_t calls = 0;          // exchanges in the counted steps
    double seconds = 0;         // this rank's time in them (counted steps)
  };

  explicit CommReport(MPI_Comm comm) : comm_(comm) {}

  // Registers a call site (or returns the existing one of that name).
  int site(const std::string& name, Kind kind, int arrays = 1, bool three_d = false,
           int64_t largest_halo = 0);
  void begin_step();
  void end_step();
  // One exchange (Halo site) or collective (Collective site) of the current step took seconds.
  void add(int site, double seconds);

  int counted_steps() const { return counted_steps_; }
  double wait_seconds() const { return wait_; }
  double global_wait_seconds() const { return gwait_; }
  double compute_seconds() const { return total_ - wait_ - gwait_; }
  double total_seconds() const { return total_; }
  const std::vector<Site>& sites() const { return sites_; }

  // Collective over the communicator. Rank 0 writes <prefix>.txt and <prefix>.json (prefix
  // "communication_report" by default); returns the text on rank 0, "" elsewhere.
  std::string write(const std::string& prefix = "communication_report");
  // The report without writing files (collective; text on rank 0).
  std::string summarize(std::string* json);

 private:
  MPI_Comm comm_;
  std::vector<Site> sites_;
  // The step in progress and the last finished one (committed only when another ends, so the
  // last step never counts; the first is dropped).
  struct Step {
    double start = 0, wait = 0, gwait = 0, total = 0;
    std::vector<int64_t> calls;
    std::vector<double> seconds;
  };
  Step current_, pending_;
  bool has_pending_ = false, in_step_ = false;
  int finished_steps_ = 0, counted_steps_ = 0;
  double wait_ = 0, gwait_ = 0, total_ = 0;
};

}  // namespace isthmus::trace
