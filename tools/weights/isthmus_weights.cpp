// isthmus_weights: generates remapping weights in SCRIP format on the ranks of MPI_COMM_WORLD
// (docs/weights.md). Normally started by `isthmus weights`, which passes its options through:
//
//   isthmus_weights --src GRID --dst GRID --method STACK --out FILE
//                   [--normalization destarea|fracarea|fracnnei] [--neighbours N]
//                   [--variance V] [--order 1|2] [--masks isthmus|oasis] [--quiet]
//                   [--stream-source | --no-stream-source] [--slab-points N]
//                   [--grids parts|whole]
//   isthmus_weights --namcouple FILE [--run-dir DIR] [--quiet]
//
// A source of more than 2^23 points with --method conservative, nearest or gaussian is
// streamed from its file in slabs of --slab-points points (default 2^20) instead of held whole
// (weights_gen.h). Otherwise, on more than one rank, the grids are read in parts, each rank
// its block of the destination and the source rows that block can reach (--grids whole:
// every rank reads both grids whole).
//
// GRID: a SCRIP grid file, a CF file with lon/lat bounds, the shared data's grid_*.nc, or OASIS's
// grids.nc as DIR/grids.nc:NAME (remap::read_grid). Prints what it did (rank 0) and one JSON line
// with the figures; exit code 0, or 1 with the error on stderr.
//
// --namcouple: ahead of a coupled run, the weights file of every SCRIPR entry of an OASIS
// namcouple (or isthmus YAML configuration), as the coupler makes it at its start
// (coupler/scripr.h: the same names, grids from DIR's grids.nc, masks.nc and areas.nc, stacks,
// options and cache key, so that the coupler then takes them): DIR is the run directory,
// by default the configuration file's. A file there already is kept as the coupler keeps it.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "base/error.h"
#include "coupler/config.h"
#include "coupler/scripr.h"
#include "remap/grid.h"
#include "remap/nc_out.h"
#include "remap/weights_gen.h"

using namespace isthmus;
using namespace isthmus::remap;

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "isthmus_weights: %s\n"
               "usage: isthmus_weights --src GRID --dst GRID --method STACK --out FILE "
               "[--normalization N] [--neighbours N] [--variance V] [--order 1|2] "
               "[--masks isthmus|oasis] [--stream-source] [--slab-points N] "
               "[--grids parts|whole] [--quiet]\n"
               "       isthmus_weights --namcouple FILE [--run-dir DIR] [--quiet]\n",
               why);
  std::exit(2);
}

long peak_rss_kib() {
  long kib = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
    std::fclose(f);
  }
  return kib;
}

// Whether to stream the source: --stream-source (1), --no-stream-source (0), or by default (-1)
// a source of more than 2^23 points, for the stack "conservative", "nearest" or "gaussian"
// alone.
// (Not by default with OASIS's mask rules, which only the held path follows; asked for, the
// generator says so.)
bool streams(int stream, const std::string& stack, const std::string& src_spec, bool oasis_masks) {
  const std::vector<StackStep> steps = parse_stack(stack);
  if (stream == 0 || steps.size() != 1 ||
      (steps[0].name != "conservative" && steps[0].name != "nearest" && steps[0].name != "gaussian"))
    return false;
  if (stream < 0 && oasis_masks) return false;
  if (stream == 1) return true;
  try {
    return GridSlabs(src_spec).size() > (int64_t(1) << 23);
  } catch (const Error&) {
    return false;  // the held path's reader says what is wrong with it
  }
}

// A process started without a launcher is an MPI singleton: it talks to no other process, so
// Open MPI's search for a network at start-up (its cm PML opening libfabric and PSM, 0.2 s
// here) and its runtime daemon buy it nothing. Open MPI then starts in 0.02 s instead of 0.3 s.
// Only Open MPI reads these variables; a setting of the user's own wins.
void start_singletons_quickly() {
  for (const char* launched : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                               "SLURM_PROCID"})
    if (std::getenv(launched)) return;
  setenv("OMPI_MCA_pml", "ob1", 0);
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
}

// --namcouple: every SCRIPR weights file of the configuration, each made once (entries may
// share one), in the configuration's order. Collective.
int precompute(const std::string& config_path, std::string run_dir, bool quiet, int rank) {
  using namespace isthmus::coupler;
  const Config config = read_config(config_path);
  if (run_dir.empty()) {
    const size_t slash = config_path.rfind('/');
    run_dir = slash == std::string::npos ? "." : config_path.substr(0, slash);
  }
  std::vector<std::string> done;
  std::string json;
  const double t0 = MPI_Wtime();
  for (const Entry& e : config.entries) {
    if (!maps_with_scripr(e)) continue;
    const std::string file = scripr_file_name(e);
    if (std::find(done.begin(), done.end(), file) != done.end()) continue;
    done.push_back(file);
    const double t = MPI_Wtime();
    bool made = false;
    const std::string path = ensure_scripr_weights(MPI_COMM_WORLD, e, run_dir, &made);
    const double seconds = MPI_Wtime() - t;
    if (rank == 0 && !quiet)
      std::printf("isthmus weights: %-48s %s (%s -> %s, line %d) in %.3f s\n", path.c_str(),
                  made ? "made" : "kept", e.src_grid.c_str(), e.dst_grid.c_str(), e.line, seconds);
    // (a path of any length: a fixed buffer would cut it and the JSON line with it)
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.6f", seconds);
    json += std::string(json.empty() ? "" : ", ") + "{\"file\": \"" + path + "\", \"generated\": " +
            (made ? "true" : "false") + ", \"seconds\": " + secs + "}";
  }
  if (rank == 0) {
    if (!quiet && done.empty())
      std::printf("isthmus weights: %s has no SCRIPR entry to make weights for\n", config_path.c_str());
    std::printf("{\"tool\": \"isthmus\", \"namcouple\": \"%s\", \"seconds\": %.6f, \"files\": [%s]}\n",
                config_path.c_str(), MPI_Wtime() - t0, json.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  start_singletons_quickly();
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::string src_spec, dst_spec, stack, out, namcouple, run_dir;
  GenOptions o;
  bool quiet = false;
  int stream = -1;  // -1: stream a SCRIP source of more than 2^23 points for "conservative"
  int64_t slab_points = int64_t(1) << 20;
  std::string grids;  // "parts", "whole", or by default parts on more than one rank
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--src") src_spec = value();
    else if (a == "--dst") dst_spec = value();
    else if (a == "--method") stack = value();
    else if (a == "--out") out = value();
    else if (a == "--normalization") o.normalization = value();
    else if (a == "--neighbours" || a == "--neighbors") o.num_neighbours = std::atoi(value().c_str());
    else if (a == "--variance") o.gaussian_variance = std::atof(value().c_str());
    else if (a == "--order") o.conservative_order = std::atoi(value().c_str());
    else if (a == "--masks") {
      try {  // one rule for the option's values: the options text's
        o.oasis_masks = parse_gen_options("masks=" + value()).oasis_masks;
      } catch (const Error& e) {
        usage(e.what());
      }
    }
    else if (a == "--quiet") quiet = true;
    else if (a == "--namcouple") namcouple = value();
    else if (a == "--run-dir") run_dir = value();
    else if (a == "--stream-source") stream = 1;
    else if (a == "--no-stream-source") stream = 0;
    else if (a == "--slab-points") slab_points = std::atoll(value().c_str());
    else if (a == "--grids") {
      grids = value();
      if (grids != "parts" && grids != "whole") usage("--grids takes parts or whole");
    }
    else usage(("unknown option " + a).c_str());
  }
  if (!namcouple.empty()) {
    if (!src_spec.empty() || !dst_spec.empty() || !stack.empty() || !out.empty())
      usage("--namcouple makes the files its SCRIPR entries name: not with --src, --dst, --method, --out");
    int code = 1;
    try {
      code = precompute(namcouple, run_dir, quiet, rank);
    } catch (const Error& e) {
      if (rank == 0) std::fprintf(stderr, "isthmus weights: %s\n", e.what());
    }
    MPI_Finalize();
    return code;
  }
  if (!run_dir.empty()) usage("--run-dir goes with --namcouple");
  if (src_spec.empty() || dst_spec.empty() || stack.empty() || out.empty())
    usage("--src, --dst, --method and --out are required (or --namcouple)");
  try {
    const double t0 = MPI_Wtime();
    // A progress bar on rank 0's terminal (its share stands for all: shares are equal).
    const bool bar = rank == 0 && !quiet && isatty(fileno(stderr));
    int last = -1;
    const auto draw = [&](double f) {
      const int pct = static_cast<int>(f * 100.0);
      if (pct == last) return;
      last = pct;
      const int filled = pct / 4;
      std::fprintf(stderr, "\r  weights [%.*s%*s] %3d%%", filled, "#########################",
                   25 - filled, "", pct);
      if (pct >= 100) std::fprintf(stderr, "\n");
      std::fflush(stderr);
    };
    const std::function<void(double)> progress = bar ? std::function<void(double)>(draw) : nullptr;
    const auto end_bar = [&] {
      if (bar && last < 100) std::fprintf(stderr, "\n");
    };
    const auto max_peak_rss_kib = [] {
      long rss = peak_rss_kib(), max_rss = 0;
      MPI_Reduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
      return max_rss;
    };
    // Who writes the file: every rank its part (PnetCDF), or rank 0 all of it (netCDF-C).
    const char* writer =
        isthmus::remap::ParallelNcFile::parallel_by_default() ? "pnetcdf" : "netcdf-c";
    if (streams(stream, stack, src_spec, o.oasis_masks)) {
      // A source too large to hold: streamed from its SCRIP grid file (weights_gen.h).
      const GridSlabs src = open_grid_slabs(MPI_COMM_WORLD, src_spec);
      const Grid dst = read_grid(dst_spec);
      const double t_read = MPI_Wtime() - t0;
      const std::string method = parse_stack(stack)[0].name;
      const bool nearest = method != "conservative";
      const StreamedWeights w =
          nearest ? generate_streamed_neighbours(MPI_COMM_WORLD, src, dst, method, o, slab_points, progress)
                  : generate_streamed_conservative(MPI_COMM_WORLD, src, dst, o, slab_points, progress);
      end_bar();
      const double t_gen = MPI_Wtime() - t0 - t_read;
      write_streamed_weights(MPI_COMM_WORLD, out, src, dst, w, slab_points);
      const double t_all = MPI_Wtime() - t0;
      const long max_rss = max_peak_rss_kib();
      if (rank == 0) {
        if (!quiet)
          std::printf("isthmus weights: %s (%lld points, streamed in slabs of %lld) -> %s (%lld "
                      "points), %s %s, %d rank%s\n  served %lld, by the nearest "
                      "neighbour %lld, unserved %lld active destination points (%lld masked)\n"
                      "  %lld links -> %s; weights %.3f s, total %.3f s, peak %.1f MiB per rank\n",
                      src_spec.c_str(), (long long)src.size(), (long long)slab_points,
                      dst.source.c_str(), (long long)dst.size(), w.method.c_str(),
                      nearest ? ("n=" + std::to_string(o.num_neighbours)).c_str()
                              : o.normalization.c_str(),
                      nranks,
                      nranks == 1 ? "" : "s", (long long)w.served, (long long)w.nearest_filled,
                      (long long)w.unserved, (long long)w.masked, (long long)w.total_links,
                      out.c_str(), t_gen, t_all, max_rss / 1024.0);
        std::printf("{\"tool\": \"isthmus\", \"method\": \"%s\", \"streamed\": true, "
                    "\"ranks\": %d, \"seconds\": %.6f, \"seconds_weights\": %.6f, "
                    "\"peak_rss_bytes\": %ld, \"links\": %lld, \"unserved\": %lld, \"writer\": \"%s\", \"out\": \"%s\"}\n",
                    w.method.c_str(), nranks, t_all, t_gen, max_rss * 1024, (long long)w.total_links,
                    (long long)w.unserved, writer, out.c_str());
      }
    } else {
      // Grids read in parts (each rank its block of the destination and the source rows it
      // can reach) when there is more than one rank to share them; else held whole, with
      // corners only for the methods that use them (conservative): the others' files carry
      // none, and reading them was a fifth of a nearest or bilinear run on 1 M points.
      const bool in_parts = grids == "parts" || (grids.empty() && nranks > 1);
      GeneratedWeights w;
      std::string src_name, dst_name;
      int64_t src_size = 0, dst_size = 0, held_most = 0;
      double t_read = 0, t_gen = 0;
      if (in_parts) {
        const GridSlabs src = open_grid_slabs(MPI_COMM_WORLD, src_spec);
        const GridSlabs dst = open_grid_slabs(MPI_COMM_WORLD, dst_spec);
        t_read = MPI_Wtime() - t0;
        GridParts parts;
        w = generate_weights_in_parts(MPI_COMM_WORLD, src, dst, stack, o, &parts, progress);
        end_bar();
        t_gen = MPI_Wtime() - t0 - t_read;
        held_most = parts.src_points;
        MPI_Allreduce(MPI_IN_PLACE, &held_most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        write_weights_in_parts(MPI_COMM_WORLD, out, src, parts, w);
        src_name = src.header().source;
        dst_name = dst.header().source;
        src_size = src.size();
        dst_size = dst.size();
      } else {
        const bool corners = stack_needs_corners(stack);
        const Grid src = read_grid(src_spec, corners);
        const Grid dst = read_grid(dst_spec, corners);
        t_read = MPI_Wtime() - t0;
        w = generate_weights(MPI_COMM_WORLD, src, dst, stack, o, progress);
        end_bar();
        t_gen = MPI_Wtime() - t0 - t_read;
        write_generated_weights(MPI_COMM_WORLD, out, src, dst, w);
        src_name = src.source;
        dst_name = dst.source;
        src_size = held_most = src.size();
        dst_size = dst.size();
      }
      const double t_all = MPI_Wtime() - t0;
      const long max_rss = max_peak_rss_kib();
      if (rank == 0) {
        if (!quiet) {
          std::printf("isthmus weights: %s (%lld points) -> %s (%lld points), %s, %d rank%s\n",
                      src_name.c_str(), (long long)src_size, dst_name.c_str(),
                      (long long)dst_size, stack_string(w.stack).c_str(), nranks,
                      nranks == 1 ? "" : "s");
          if (in_parts)
            std::printf("  grids read in parts: each rank its block of the destination and at "
                        "most %lld source points\n", (long long)held_most);
          for (size_t s = 0; s < w.stack.size(); ++s)
            std::printf("  %-13s served %10lld destination points in %.3f s\n",
                        w.stack[s].name.c_str(), (long long)w.served_per_step[s],
                        w.seconds_per_step[s]);
          std::printf("  %-13s        %10lld active destination points (%lld masked)\n",
                      "unserved", (long long)w.unserved, (long long)w.masked);
          std::printf("  %lld links -> %s; read %.3f s, weights %.3f s, total %.3f s, peak %.1f "
                      "MiB per rank\n",
                      (long long)w.total_links, out.c_str(), t_read, t_gen, t_all, max_rss / 1024.0);
        }
        std::printf("{\"tool\": \"isthmus\", \"method\": \"%s\", \"ranks\": %d, \"seconds\": %.6f, "
                    "\"seconds_read\": %.6f, \"seconds_weights\": %.6f, \"peak_rss_bytes\": %ld, "
                    "\"links\": %lld, \"unserved\": %lld, \"grids\": \"%s\", "
                    "\"src_points_held\": %lld, \"writer\": \"%s\", \"out\": \"%s\"}\n",
                    stack_string(w.stack).c_str(), nranks, t_all, t_read, t_gen, max_rss * 1024,
                    (long long)w.total_links, (long long)w.unserved, in_parts ? "parts" : "whole",
                    (long long)held_most, writer, out.c_str());
      }
    }
  } catch (const Error& e) {
    if (rank == 0) std::fprintf(stderr, "isthmus weights: %s\n", e.what());
    MPI_Finalize();
    return 1;
  }
  MPI_Finalize();
  return 0;
}
