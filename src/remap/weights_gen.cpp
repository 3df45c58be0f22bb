// The interpolation stack over MPI ranks (weights_gen.h): parse the stack, share the destination
// points out, run the steps, write the SCRIP file through rank 0.
#include "remap/weights_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <netcdf.h>
#include <unistd.h>

#include "base/agreement.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/text.h"
#include "collectives/alltoallv.h"
#include "remap/scrip_weights.h"
#include "remap/sphere.h"
#include "base/wait.h"

namespace isthmus::remap {

namespace {

// block: the destination points the method will be asked for (a subset, after earlier steps).
// rows: src is a window of whole rows of the source (grids read in parts), or null.
std::unique_ptr<WeightMethod> make_step(const StackStep& step, const Grid& src, const Grid& dst,
                                        const GenOptions& o, const std::vector<int64_t>& block,
                                        const SourceRows* rows = nullptr) {
  if (step.name == "nearest") return make_nearest(src, dst, o);
  if (step.name == "gaussian") return make_gaussian(src, dst, o, rows);
  if (step.name == "bilinear") return make_bilinear(src, dst, o, &block, rows);
  if (step.name == "bicubic") return make_bicubic(src, dst, o, &block, rows);
  if (step.name == "conservative") return make_conservative(src, dst, o, &block);
  fail(ISTHMUS_ERR_INTERNAL, "no method \"", step.name, "\"");
}

// Sorts the links by destination point, stably (a point's links keep their order).
void sort_by_destination(GenLinks* links) {
  const size_t n = links->src.size();
  if (std::is_sorted(links->dst.begin(), links->dst.end())) return;  // the usual case
  // A counting sort over the destination range (stable: a point's links keep their order).
  const auto [lo, hi] = std::minmax_element(links->dst.begin(), links->dst.end());
  const int64_t base = *lo;
  std::vector<size_t> start(static_cast<size_t>(*hi - base) + 2, 0);
  for (int64_t d : links->dst) ++start[size_t(d - base) + 1];
  for (size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  const size_t nw = static_cast<size_t>(links->num_wgts);
  GenLinks sorted;
  sorted.num_wgts = links->num_wgts;
  sorted.frac = std::move(links->frac);
  sorted.area = std::move(links->area);
  sorted.src.resize(n);
  sorted.dst.resize(n);
  sorted.w.resize(links->w.size());
  for (size_t i = 0; i < n; ++i) {
    const size_t to = start[size_t(links->dst[i] - base)]++;
    sorted.src[to] = links->src[i];
    sorted.dst[to] = links->dst[i];
    std::copy(links->w.begin() + long(i * nw), links->w.begin() + long((i + 1) * nw),
              sorted.w.begin() + long(to * nw));
  }
  *links = std::move(sorted);
}

// Appends `part` to `all`, widening weights to all->num_wgts with zeros.
void append_links(GenLinks&& part, GenLinks* all) {
  if (all->src.empty() && part.num_wgts == all->num_wgts) {  // the first step: no copy
    part.frac.insert(part.frac.begin(), all->frac.begin(), all->frac.end());
    part.area.insert(part.area.begin(), all->area.begin(), all->area.end());
    *all = std::move(part);
    return;
  }
  const size_t nw = static_cast<size_t>(all->num_wgts), pw = static_cast<size_t>(part.num_wgts);
  all->frac.insert(all->frac.end(), part.frac.begin(), part.frac.end());
  all->area.insert(all->area.end(), part.area.begin(), part.area.end());
  all->src.insert(all->src.end(), part.src.begin(), part.src.end());
  all->dst.insert(all->dst.end(), part.dst.begin(), part.dst.end());
  for (size_t i = 0; i < part.src.size(); ++i)
    for (size_t k = 0; k < nw; ++k) all->w.push_back(k < pw ? part.w[i * pw + k] : 0.0);
}

}  // namespace

std::vector<StackStep> parse_stack(const std::string& stack) {
  std::vector<StackStep> steps;
  size_t pos = 0;
  const std::string text = stack;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string word = trimmed(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos), " \t");
    if (word.empty())
      fail(ISTHMUS_ERR_ARG, "interpolation stack \"", stack, "\": an empty step",
           " (expected methods separated by commas, e.g. \"conservative,bilinear,nearest\")");
    if (!steps.empty() && steps.back().name == "fixed")
      fail(ISTHMUS_ERR_ARG, "interpolation stack \"", stack, "\": \"", word,
           "\" after \"fixed\", which serves every point left and ends the stack");
    StackStep step;
    const std::string w = lower(word);
    if (w == "nearest" || w == "distwgt" || w == "nn") {
      step.name = "nearest";
    } else if (w == "gaussian" || w == "gauswgt") {
      step.name = "gaussian";
    } else if (w == "bilinear" || w == "bili") {
      step.name = "bilinear";
    } else if (w == "bicubic" || w == "bicu") {
      step.name = "bicubic";
    } else if (w == "conservative" || w == "conserv" || w == "conservative1") {
      step.name = "conservative";
    } else if (w == "creep" || w.rfind("creep=", 0) == 0) {
      step.name = "creep";
      if (w.size() > 5) {
        const std::string v = word.substr(6);
        char* end = nullptr;
        const long r = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || r < 1 || r > 1000000)
          fail(ISTHMUS_ERR_ARG, "interpolation stack \"", stack, "\": \"", word,
               "\": the value after \"creep=\" is a number of rounds, 1 or more");
        step.rounds = static_cast<int>(r);
      }
    } else if (w == "fixed" || w.rfind("fixed=", 0) == 0) {
      step.name = "fixed";
      if (w.size() > 5) {
        const std::string v = word.substr(6);
        char* end = nullptr;
        step.fixed_value = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !std::isfinite(step.fixed_value))
          fail(ISTHMUS_ERR_ARG, "interpolation stack \"", stack, "\": \"", word,
               "\": the value after \"fixed=\" is not a finite number");
      }
    } else {
      fail(ISTHMUS_ERR_ARG, "interpolation stack \"", stack, "\": \"", word,
           "\" is not a method (expected nearest, gaussian, bilinear, bicubic, conservative, "
           "creep[=ROUNDS] or fixed[=VALUE])");
    }
    steps.push_back(step);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return steps;
}

GenOptions parse_gen_options(const std::string& text) {
  GenOptions o;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t b = text.find_first_not_of(" \t", pos);
    if (b == std::string::npos) break;
    const size_t e = std::min(text.find_first_of(" \t", b), text.size());
    const std::string word = text.substr(b, e - b);
    pos = e;
    const size_t eq = word.find('=');
    const std::string key = lower(word.substr(0, eq)), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const auto number = [&](double lo, double hi) {
      char* end = nullptr;
      const double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(v >= lo && v <= hi))
        fail(ISTHMUS_ERR_ARG, "weight generation option \"", word, "\": the value must be a number in [",
             lo, ", ", hi, "]");
      return v;
    };
    if (eq == std::string::npos) {
      fail(ISTHMUS_ERR_ARG, "weight generation option \"", word, "\": expected key=value");
    } else if (key == "normalization" || key == "normalisation") {
      const std::string n = lower(value);
      if (n != "destarea" && n != "fracarea" && n != "fracnnei")
        fail(ISTHMUS_ERR_ARG, "weight generation option \"", word,
             "\": the normalisation is destarea, fracarea or fracnnei");
      o.normalization = n;
    } else if (key == "neighbours" || key == "neighbors") {
      const double v = number(1, 1024);
      if (v != std::floor(v))
        fail(ISTHMUS_ERR_ARG, "weight generation option \"", word, "\": not a whole number");
      o.num_neighbours = static_cast<int>(v);
    } else if (key == "variance") {
      o.gaussian_variance = number(1e-300, 1e300);
    } else if (key == "order") {
      const double v = number(1, 2);
      if (v != 1 && v != 2)
        fail(ISTHMUS_ERR_ARG, "weight generation option \"", word, "\": the order is 1 or 2");
      o.conservative_order = static_cast<int>(v);
    } else if (key == "masks") {
      const std::string m = lower(value);
      if (m != "isthmus" && m != "oasis")
        fail(ISTHMUS_ERR_ARG, "weight generation option \"", word, "\": the masks are isthmus or oasis");
      o.oasis_masks = m == "oasis";
    } else {
      fail(ISTHMUS_ERR_ARG, "weight generation option \"", word,
           "\" is not known (expected normalization, neighbours, variance, order or masks)");
    }
  }
  return o;
}

std::string stack_string(const std::vector<StackStep>& steps) {
  std::string s;
  for (const StackStep& step : steps) {
    if (!s.empty()) s += ",";
    s += step.name;
    if (step.name == "fixed") {
      char buf[64];
      std::snprintf(buf, sizeof buf, "=%.17g", step.fixed_value);
      s += buf;
    }
    if (step.name == "creep" && step.rounds > 0) s += "=" + std::to_string(step.rounds);
  }
  return s;
}

namespace {

// The owner of destination point d: the rank whose block holds it.
int owner_of(const std::vector<int64_t>& begins, int64_t d) {
  return static_cast<int>(std::upper_bound(begins.begin(), begins.end(), d) - begins.begin()) - 1;
}

// What every rank sends every other, send[r] to rank r (any of them empty): what each rank
// sent this one, by rank. Counts first, then the data (the collectives layer's alltoallv).
template <typename T>
std::vector<std::vector<T>> exchange_lists(MPI_Comm comm, const std::vector<std::vector<T>>& send) {
  const int nranks = static_cast<int>(send.size());
  std::vector<int> scount(static_cast<size_t>(nranks)), sdispl(static_cast<size_t>(nranks)),
      rcount(static_cast<size_t>(nranks)), rdispl(static_cast<size_t>(nranks));
  std::vector<T> sbuf;
  for (int r = 0; r < nranks; ++r) {
    sdispl[size_t(r)] = static_cast<int>(sbuf.size());
    scount[size_t(r)] = static_cast<int>(send[size_t(r)].size());
    sbuf.insert(sbuf.end(), send[size_t(r)].begin(), send[size_t(r)].end());
  }
  ISTHMUS_MPI(wmpi::Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm));
  int total = 0;
  for (int r = 0; r < nranks; ++r) {
    rdispl[size_t(r)] = total;
    total += rcount[size_t(r)];
  }
  std::vector<T> rbuf(static_cast<size_t>(total));
  alltoallv(sbuf.data(), scount.data(), sdispl.data(), rbuf.data(), rcount.data(), rdispl.data(),
            static_cast<int>(sizeof(T)), comm);
  std::vector<std::vector<T>> recv(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r)
    recv[size_t(r)].assign(rbuf.begin() + rdispl[size_t(r)],
                           rbuf.begin() + rdispl[size_t(r)] + rcount[size_t(r)]);
  return recv;
}

// Every rank's "served" flags of its block, gathered on every rank (a byte per point).
std::vector<uint8_t> served_flags(MPI_Comm comm, const GeneratedWeights& w, int64_t n,
                                  const std::vector<int64_t>& begins) {
  const int nranks = static_cast<int>(begins.size());
  std::vector<uint8_t> mine(w.method_of.size()), all(static_cast<size_t>(n));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = w.method_of[i] >= 0 ? 1 : 0;
  std::vector<int> counts(static_cast<size_t>(nranks)), displs(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    displs[size_t(r)] = static_cast<int>(begins[size_t(r)]);
    counts[size_t(r)] = static_cast<int>((r + 1 < nranks ? begins[size_t(r) + 1] : n) - begins[size_t(r)]);
  }
  ISTHMUS_MPI(wmpi::Allgatherv(mine.data(), int(mine.size()), MPI_UINT8_T, all.data(), counts.data(),
                             displs.data(), MPI_UINT8_T, comm));
  return all;
}

// Creep fill (YAC's idea): in rounds, every unserved active point with served neighbours (its
// 4 nearest active destination points) takes the mean of their links — a weighted sum of
// source points again — until no point is left or `rounds` rounds (0: no limit) have run.
// Neighbours held by other ranks are fetched each round; every point's links depend only on
// the rounds, so they are the same bits at any rank count. Returns the points of this rank's
// block it served.
int64_t creep_fill(MPI_Comm comm, const Grid& dst, const std::vector<int64_t>& begins, int rounds,
                   int8_t step, GeneratedWeights* out, std::vector<int64_t>* todo) {
  const int nranks = static_cast<int>(begins.size());
  const int64_t n = dst.size();
  const int nw = out->links.num_wgts;
  const int64_t b0 = out->dst_begin;
  // The links of this block's served points, by point (out->links is sorted by destination).
  std::vector<int64_t> first(static_cast<size_t>(out->dst_end - b0) + 1, 0);
  for (int64_t d : out->links.dst) ++first[size_t(d - b0) + 1];
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  std::vector<std::vector<std::pair<int64_t, std::vector<double>>>> made(first.size() - 1);
  // A point's links, as (source, weights) pairs, when this rank holds it.
  const auto links_of_mine = [&](int64_t d, std::vector<std::pair<int64_t, std::vector<double>>>* l) {
    l->clear();
    const size_t i = size_t(d - b0);
    if (!made[i].empty()) {
      *l = made[i];
      return;
    }
    for (int64_t k = first[i]; k < first[i + 1]; ++k)
      l->emplace_back(out->links.src[size_t(k)],
                      std::vector<double>(out->links.w.begin() + k * nw, out->links.w.begin() + (k + 1) * nw));
  };
  // Neighbours: the 4 nearest active destination points.
  std::vector<Vec3> pts;
  std::vector<int64_t> ids;
  for (int64_t d = 0; d < n; ++d)
    if (dst.active(d)) {
      pts.push_back(to_xyz(dst.lon[d], dst.lat[d]));
      ids.push_back(d);
    }
  const PointIndex index(std::move(pts), std::move(ids));
  std::vector<std::vector<int64_t>> nb(todo->size());
  {
    std::vector<int64_t> found;
    std::vector<double> dist;
    for (size_t t = 0; t < todo->size(); ++t) {
      const int64_t d = (*todo)[t];
      index.nearest(to_xyz(dst.lon[d], dst.lat[d]), 5, &found, &dist);
      for (int64_t q : found)
        if (q != d && nb[t].size() < 4) nb[t].push_back(q);
    }
  }
  std::vector<uint8_t> served = served_flags(comm, *out, n, begins);
  int64_t total = 0;
  std::vector<std::pair<int64_t, std::vector<double>>> l;
  for (int round = 0; rounds == 0 || round < rounds; ++round) {
    // This round's frontier, and the neighbours other ranks hold.
    std::vector<size_t> frontier;
    std::vector<std::vector<int64_t>> want(static_cast<size_t>(nranks));
    for (size_t t = 0; t < todo->size(); ++t) {
      if (out->method_of[size_t((*todo)[t] - b0)] >= 0) continue;
      bool any = false;
      for (int64_t q : nb[t])
        if (served[size_t(q)]) {
          any = true;
          const int r = owner_of(begins, q);
          if (q < b0 || q >= out->dst_end) want[size_t(r)].push_back(q);
        }
      if (any) frontier.push_back(t);
    }
    int64_t any_frontier = frontier.empty() ? 0 : 1;
    ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, &any_frontier, 1, MPI_INT64_T, MPI_MAX, comm));
    if (!any_frontier) break;
    // Ask the owners for their points' links: ids out, (count, then source and weights per
    // link) back, as doubles.
    for (auto& v : want) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
    const std::vector<std::vector<int64_t>> asked = exchange_lists(comm, want);
    std::vector<std::vector<double>> reply(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r)
      for (int64_t q : asked[size_t(r)]) {
        links_of_mine(q, &l);
        reply[size_t(r)].push_back(double(l.size()));
        for (const auto& [src, ws] : l) {
          reply[size_t(r)].push_back(double(src));
          reply[size_t(r)].insert(reply[size_t(r)].end(), ws.begin(), ws.end());
        }
      }
    const std::vector<std::vector<double>> back = exchange_lists(comm, reply);
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, std::vector<double>>>> remote;
    for (int r = 0; r < nranks; ++r) {
      const std::vector<double>& b = back[size_t(r)];
      size_t pos = 0;
      for (int64_t q : want[size_t(r)]) {
        auto& dest = remote[q];
        const int64_t count = static_cast<int64_t>(b[pos++]);
        for (int64_t c = 0; c < count; ++c) {
          const int64_t src = static_cast<int64_t>(b[pos++]);
          dest.emplace_back(src, std::vector<double>(b.begin() + long(pos), b.begin() + long(pos) + nw));
          pos += size_t(nw);
        }
      }
    }
    // The mean of the served neighbours' links, merged by source (in neighbour order, so the
    // sums are the same at any rank count), sorted by source.
    std::vector<std::pair<size_t, std::vector<std::pair<int64_t, std::vector<double>>>>> results;
    for (size_t t : frontier) {
      const int64_t d = (*todo)[t];
      std::vector<const std::vector<std::pair<int64_t, std::vector<double>>>*> from;
      std::vector<std::vector<std::pair<int64_t, std::vector<double>>>> local;
      local.reserve(4);
      for (int64_t q : nb[t]) {
        if (!served[size_t(q)]) continue;
        if (q >= b0 && q < out->dst_end) {
          local.emplace_back();
          links_of_mine(q, &local.back());
          from.push_back(&local.back());
        } else {
          from.push_back(&remote[q]);
        }
      }
      std::map<int64_t, std::vector<double>> sum;
      const double share = 1.0 / double(from.size());
      for (const auto* f : from)
        for (const auto& [src, ws] : *f) {
          auto& acc = sum[src];
          if (acc.empty()) acc.assign(size_t(nw), 0.0);
          for (int k = 0; k < nw; ++k) acc[size_t(k)] += share * ws[size_t(k)];
        }
      std::vector<std::pair<int64_t, std::vector<double>>> merged(sum.begin(), sum.end());
      results.emplace_back(size_t(d - b0), std::move(merged));
    }
    // Applied after the round, so that a round reads only the previous rounds' points.
    for (auto& [i, links] : results) {
      made[i] = std::move(links);
      out->method_of[i] = step;
      ++total;
    }
    served = served_flags(comm, *out, n, begins);
  }
  // The new links, appended and sorted by destination with the others.
  GenLinks add;
  add.num_wgts = nw;
  for (size_t i = 0; i < made.size(); ++i)
    for (const auto& [src, ws] : made[i]) add.add(src, b0 + int64_t(i), ws.data());
  append_links(std::move(add), &out->links);
  sort_by_destination(&out->links);
  std::vector<int64_t> left;
  for (int64_t d : *todo)
    if (out->method_of[size_t(d - b0)] < 0) left.push_back(d);
  todo->swap(left);
  return total;
}

}  // namespace

const char* scrip_map_method(const std::string& method) {
  return method == "conservative" ? "Conservative remapping"
         : method == "bilinear"   ? "Bilinear remapping"
         : method == "bicubic"    ? "Bicubic remapping"
                                  : "Distance weighted avg of nearest neighbors";
}

const char* scrip_normalization(const std::string& method, const GenOptions& o) {
  // FRACNNEI is FRACAREA with the uncovered active points served by their nearest neighbour
  if (method != "conservative") return "none";
  return o.normalization == "destarea" ? "destarea" : "fracarea";
}

void check_destination_size(const std::string& name, int64_t size) {
  if (size > INT32_MAX)
    fail(ISTHMUS_ERR_ARG, "destination grid \"", name, "\" has ", size,
         " points: weight generation takes at most 2^31 - 1");
}

void check_destination_size(const Grid& dst) { check_destination_size(dst.name, dst.size()); }

bool latitude_range(const Grid& g, const std::vector<int64_t>& points, double* lo, double* hi) {
  constexpr double kHalfPi = 1.5707963267948966;
  double l = kHalfPi, h = -kHalfPi;
  bool any = false;
  for (const int64_t p : points) {
    const double la = g.lat[size_t(p)];
    if (!std::isfinite(g.lon[size_t(p)]) || !std::isfinite(la)) continue;
    if (std::fabs(la) > kHalfPi) return false;
    l = std::min(l, la);
    h = std::max(h, la);
    any = true;
  }
  *lo = l;
  *hi = h;
  return any;
}

bool stack_needs_corners(const std::string& stack) {
  for (const StackStep& s : parse_stack(stack))
    if (s.name == "conservative") return true;
  return false;
}

namespace {

// The destination shared out: every rank's block of points, as generate_weights documents.
struct Blocks {
  std::vector<int64_t> begins;  // every rank's first point (rank 0: 0)
  int64_t active_total = 0;     // active destination points
};

// The block boundaries from the rank's first point to serve (-1: none): a rank without points
// begins where the next one with points does, rank 0 at 0; every block ends where the next begins.
std::vector<int64_t> fill_begins(std::vector<int64_t> begins, int64_t n) {
  const int nranks = static_cast<int>(begins.size());
  int64_t next = n;
  for (int r = nranks - 1; r >= 0; --r) {
    if (begins[size_t(r)] < 0) begins[size_t(r)] = next;
    next = begins[size_t(r)];
  }
  begins[0] = 0;
  return begins;
}

std::vector<int64_t> agree_begins(MPI_Comm comm, int nranks, int64_t first_todo, int64_t n) {
  std::vector<int64_t> begins(static_cast<size_t>(nranks));
  ISTHMUS_MPI(wmpi::Allgather(&first_todo, 1, MPI_INT64_T, begins.data(), 1, MPI_INT64_T, comm));
  return fill_begins(std::move(begins), n);
}

// Whether every destination point is one to serve, masked or not: with OASIS's mask rules and
// a stack beginning with conservative (GenOptions::oasis_masks); else only the active ones.
bool serves_every_point(const std::vector<StackStep>& stack, const GenOptions& options) {
  return options.oasis_masks && !stack.empty() && stack[0].name == "conservative";
}

// The source rows a rank holds when the grids are read in parts, and what it knows of the
// others: the latitudes of each row's points (two numbers a row, for every row), from which it
// tells whether every source point within a distance of a destination point lies in the rows
// it holds, and which rows to read for those that do not.
class SourceWindow {
 public:
  // rows of `row` points; lat: per row the least and greatest latitude of its points with
  // finite coordinates (+inf, -inf: none).
  // periodic: whether the whole grid's rows close (bilinear_row_closes).
  // mean_distance: the whole source's mean spacing (mean_consecutive_distance, gaussian).
  SourceWindow(const GridSlabs& src, int64_t row, std::vector<double> lat, bool corners,
               bool periodic, double mean_distance)
      : src_(src), row_(row), nrows_(static_cast<int64_t>(lat.size() / 2)), lat_(std::move(lat)),
        corners_(corners), periodic_(periodic), mean_distance_(mean_distance) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    below_.assign(2 * size_t(nrows_ + 1), 0.0);
    above_.assign(2 * size_t(nrows_ + 1), 0.0);
    below_[0] = above_[2 * size_t(nrows_)] = kInf;
    below_[1] = above_[2 * size_t(nrows_) + 1] = -kInf;
    for (int64_t r = 0; r < nrows_; ++r) {
      below_[2 * size_t(r + 1)] = std::min(below_[2 * size_t(r)], lat_[2 * size_t(r)]);
      below_[2 * size_t(r + 1) + 1] = std::max(below_[2 * size_t(r) + 1], lat_[2 * size_t(r) + 1]);
    }
    for (int64_t r = nrows_ - 1; r >= 0; --r) {
      above_[2 * size_t(r)] = std::min(above_[2 * size_t(r + 1)], lat_[2 * size_t(r)]);
      above_[2 * size_t(r) + 1] = std::max(above_[2 * size_t(r + 1) + 1], lat_[2 * size_t(r) + 1]);
    }
  }
  // What rows [w0, w1) cannot tell bilinear of the whole grid.
  SourceRows rows(int64_t w0, int64_t w1) const {
    SourceRows r;
    r.periodic = periodic_;
    r.mean_distance = mean_distance_;
    r.first = w0 == 0;
    r.last = w1 == nrows_;
    return r;
  }
  // Reads rows [w0, w1) (with corners if the stack needs them) into *g, *first its first point:
  // a logically rectangular grid of nx × (w1 - w0) points for a rectangular source.
  void hold(int64_t w0, int64_t w1, Grid* g, int64_t* first) const {
    *first = w0 * row_;
    *g = src_.read(w0 * row_, std::min(src_.size(), w1 * row_), corners_);
    if (src_.header().rectangular()) g->dims = {row_, w1 - w0};
  }
  // Whether rows [w0, w1) hold every source point within r radians of a point at latitude lat
  // (the great-circle distance is at least the difference in latitude; a margin for rounding).
  bool covers(int64_t w0, int64_t w1, double lat, double r) const {
    if (!std::isfinite(lat) || !(r < 4.0)) return w0 == 0 && w1 == nrows_;
    const double m = margin(r), lo = lat - m, hi = lat + m;
    const auto meets = [&](const std::vector<double>& hull, int64_t w) {
      return hull[2 * size_t(w)] <= hi && hull[2 * size_t(w) + 1] >= lo;
    };
    return !meets(below_, w0) && !meets(above_, w1);
  }
  // A search radius with a margin for rounding: covers() and the rows widen() is asked for
  // must use the same, or a point left uncovered could ask for no new row.
  static double margin(double r) { return r * (1.0 + 1e-9) + 1e-12; }
  // The rows from the first to the last whose points meet [lo, hi] (or all with any point when
  // the range is not finite), joined to [w0, w1): [*v0, *v1).
  void widen(int64_t w0, int64_t w1, double lo, double hi, int64_t* v0, int64_t* v1) const {
    *v0 = w0;
    *v1 = w1;
    const bool all = !std::isfinite(lo) || !std::isfinite(hi);
    for (int64_t r = 0; r < nrows_; ++r) {
      const double a = lat_[2 * size_t(r)], b = lat_[2 * size_t(r) + 1];
      if (a > b || (!all && (a > hi || b < lo))) continue;
      *v0 = std::min(*v0, r);
      *v1 = std::max(*v1, r + 1);
    }
    if (*v0 >= *v1) *v0 = *v1 = 0;
  }

 private:
  const GridSlabs& src_;
  int64_t row_, nrows_;
  std::vector<double> lat_;
  std::vector<double> below_, above_;  // per w: the hull of the latitudes of rows < w, >= w
  bool corners_, periodic_;
  double mean_distance_;
};

// What run_stack needs to widen a rank's window of the source (grids read in parts).
struct Widening {
  const SourceWindow* window = nullptr;
  int64_t w0 = 0, w1 = 0;  // the rows held
};

// Keeps in *links and *left only what does not concern the (sorted) points `drop`.
void drop_points(const std::vector<int64_t>& drop, GenLinks* links, std::vector<int64_t>* left) {
  const auto dropped = [&](int64_t d) { return std::binary_search(drop.begin(), drop.end(), d); };
  const size_t nw = static_cast<size_t>(links->num_wgts);
  size_t k = 0;
  for (size_t i = 0; i < links->src.size(); ++i) {
    if (dropped(links->dst[i])) continue;
    links->src[k] = links->src[i];
    links->dst[k] = links->dst[i];
    for (size_t j = 0; j < nw; ++j) links->w[k * nw + j] = links->w[i * nw + j];
    ++k;
  }
  links->src.resize(k);
  links->dst.resize(k);
  links->w.resize(k * nw);
  for (auto* pairs : {&links->frac, &links->area, &links->reach})
    pairs->erase(std::remove_if(pairs->begin(), pairs->end(),
                                [&](const std::pair<int64_t, double>& p) { return dropped(p.first); }),
                 pairs->end());
  left->erase(std::remove_if(left->begin(), left->end(), dropped), left->end());
}

// Runs the stack on this rank's block. src holds the source points [src_first, src_first +
// src.size()), dst the destination points [dst_first, dst_first + dst.size()) (whole grids: 0,
// every point); n is the whole destination's size. todo: the block's points to serve (indices
// in the whole grid, ascending). out->stack and options are set; the links come out in the
// whole grids' indices, so they are the same whichever part of the grids a rank holds, as
// long as it holds what its methods reach. dst_centres: the destination's centres and mask
// whole, for creep fill (null without creep). widening: a window of the source (grids read in
// parts), whose nearest searches are certified against it and run again on more rows.
void run_stack(MPI_Comm comm, const Grid& src, int64_t src_first, const Grid& dst,
               int64_t dst_first, int64_t n, const Blocks& blocks, std::vector<int64_t> todo,
               const std::function<void(double)>& progress, GeneratedWeights* out,
               const Grid* dst_centres, const Widening& widening = {}) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  const std::vector<int64_t>& begins = blocks.begins;
  out->dst_begin = begins[size_t(rank)];
  out->dst_end = rank + 1 < nranks ? begins[size_t(rank) + 1] : n;
  out->method_of.assign(static_cast<size_t>(out->dst_end - out->dst_begin), int8_t{-1});
  const bool unshifted = src_first == 0 && dst_first == 0;  // indices are the whole grids'
  // A list of points in the held part's indices.
  const auto local = [&](const std::vector<int64_t>& points) {
    std::vector<int64_t> l(points);
    for (int64_t& d : l) d -= dst_first;
    return l;
  };
  // A method's links and left points (from left_from) from the held part's indices to the
  // whole grids' (the source held from source_first).
  const auto shift = [&](GenLinks* links, std::vector<int64_t>* left, size_t left_from,
                         int64_t source_first) {
    for (int64_t& s : links->src) s += source_first;
    for (int32_t& d : links->dst) d += static_cast<int32_t>(dst_first);
    for (auto* pairs : {&links->frac, &links->area, &links->reach})
      for (auto& p : *pairs) p.first += dst_first;
    for (size_t i = left_from; i < left->size(); ++i) (*left)[i] += dst_first;
  };

  // The methods, for this block (a method may prepare only what the block's points need).
  std::vector<std::unique_ptr<WeightMethod>> methods;
  Agreement made;
  made.check([&] {
    const std::vector<int64_t> block = unshifted ? std::vector<int64_t>() : local(todo);
    const SourceRows rows =
        widening.window ? widening.window->rows(widening.w0, widening.w1) : SourceRows();
    for (const StackStep& step : out->stack)
      if (step.name != "fixed" && step.name != "creep")
        methods.push_back(make_step(step, src, dst, out->options, unshifted ? todo : block,
                                    widening.window ? &rows : nullptr));
  });
  made.conclude(comm);
  int num_wgts = 1;
  for (const auto& m : methods) num_wgts = std::max(num_wgts, m->num_wgts());
  out->links.num_wgts = num_wgts;

  std::vector<int64_t> served(out->stack.size(), 0);
  std::vector<double> seconds(out->stack.size(), 0.0);
  // Every rank runs every step (creep is collective), and each step's errors are agreed before
  // the next.
  size_t m = 0;
  for (size_t s = 0; s < out->stack.size(); ++s) {
    const double t0 = MPI_Wtime();
    std::vector<int64_t> left;
    const std::string& name = out->stack[s].name;
    if (name == "creep") {
      if (!dst_centres || dst_centres->size() != n)
        fail(ISTHMUS_ERR_INTERNAL, "creep fill needs the destination's centres whole");
      sort_by_destination(&out->links);
      served[s] = creep_fill(comm, *dst_centres, begins, out->stack[s].rounds, int8_t(s), out, &todo);
      seconds[s] = MPI_Wtime() - t0;
      continue;
    }
    Agreement run;
    run.check([&] {
      if (name == "fixed") {
        for (int64_t d : todo) out->method_of[size_t(d - out->dst_begin)] = int8_t(s);
        served[s] = static_cast<int64_t>(todo.size());
        return;
      }
      GenLinks part;
      part.num_wgts = methods[m]->num_wgts();
      // A method's links for `asked`, in the whole grids' indices. With a window of the
      // source, the points whose search reached beyond the rows held are searched again, on
      // rows widened to hold every point their radius reaches (the same answer as the source
      // held whole), until none is left.
      const auto compute = [&](const std::vector<int64_t>& asked, GenLinks* into,
                               std::vector<int64_t>* unserved) {
        const size_t left_from = unserved->size();
        into->want_reach = widening.window != nullptr;
        methods[m]->compute(unshifted ? asked : local(asked), into, unserved);
        if (!unshifted) shift(into, unserved, left_from, src_first);
        if (!widening.window) return;
        int64_t w0 = widening.w0, w1 = widening.w1;
        std::vector<std::pair<int64_t, double>> reach;
        reach.swap(into->reach);
        while (!reach.empty()) {
          std::vector<int64_t> redo;
          double lo = std::numeric_limits<double>::infinity(), hi = -lo;
          for (const auto& [d, r] : reach) {
            const double lat = dst.lat[size_t(d - dst_first)];
            if (widening.window->covers(w0, w1, lat, r)) continue;
            redo.push_back(d);
            const double mr = SourceWindow::margin(r);
            lo = std::min(lo, lat - mr);
            hi = std::max(hi, lat + mr);
          }
          reach.clear();
          if (redo.empty()) break;
          std::sort(redo.begin(), redo.end());
          drop_points(redo, into, unserved);
          widening.window->widen(w0, w1, lo, hi, &w0, &w1);
          Grid wide;
          int64_t wide_first = 0;
          widening.window->hold(w0, w1, &wide, &wide_first);
          const std::vector<int64_t> redo_local = local(redo);
          const SourceRows wide_rows = widening.window->rows(w0, w1);
          const auto again = make_step(out->stack[s], wide, dst, out->options, redo_local, &wide_rows);
          GenLinks more;
          more.num_wgts = into->num_wgts;
          more.want_reach = true;
          std::vector<int64_t> more_left;
          again->compute(redo_local, &more, &more_left);
          shift(&more, &more_left, 0, wide_first);
          reach.swap(more.reach);
          append_links(std::move(more), into);
          unserved->insert(unserved->end(), more_left.begin(), more_left.end());
          std::sort(unserved->begin() + long(left_from), unserved->end());
        }
      };
      if (!progress) {
        compute(todo, &part, &left);
      } else {
        // In batches for the progress bar (a method's links do not depend on the batch), each
        // computed apart and appended to the step's links, which grow by their projected total:
        // a method reserves what its batch needs, which, in one array for all batches, copied
        // the links once per batch (nearest at a terminal took twice as long as with --quiet).
        const size_t batch = std::max<size_t>(4096, todo.size() / 64 + 1);
        std::vector<int64_t> chunk;
        for (size_t b = 0; b < todo.size(); b += batch) {
          chunk.assign(todo.begin() + long(b), todo.begin() + long(std::min(todo.size(), b + batch)));
          GenLinks piece;
          piece.num_wgts = part.num_wgts;
          compute(chunk, &piece, &left);
          part.reserve_projected(piece.size(), int64_t(b + chunk.size()), int64_t(todo.size()));
          append_links(std::move(piece), &part);
          const double done_steps = static_cast<double>(s) + double(b + chunk.size()) / double(todo.size());
          progress(std::min(1.0, done_steps / double(out->stack.size())));
        }
      }
      for (int64_t d : part.dst)
        if (d < out->dst_begin || d >= out->dst_end)
          fail(ISTHMUS_ERR_INTERNAL, "method ", name, " returned a link to ",
               "destination point ", d, " outside the block asked for");
      for (double w : part.w)
        if (!std::isfinite(w))
          fail(ISTHMUS_ERR_INTERNAL, "method ", name, " returned a non-finite weight");
      for (int64_t d : part.dst) out->method_of[size_t(d - out->dst_begin)] = int8_t(s);
      served[s] = static_cast<int64_t>(todo.size() - left.size());
      append_links(std::move(part), &out->links);
      todo.swap(left);
    });
    run.conclude(comm);
    if (name != "fixed") ++m;
    else todo.clear();
    seconds[s] = MPI_Wtime() - t0;
  }
  sort_by_destination(&out->links);

  // Totals.
  std::vector<int64_t> counts(served);
  counts.push_back(static_cast<int64_t>(todo.size()));
  counts.push_back(out->links.size());
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, counts.data(), int(counts.size()), MPI_INT64_T,
                            MPI_SUM, comm));
  out->served_per_step.assign(counts.begin(), counts.begin() + long(served.size()));
  out->unserved = counts[served.size()];
  out->total_links = counts[served.size() + 1];
  out->masked = n - blocks.active_total;
  out->seconds_per_step = seconds;
  if (!seconds.empty())
    ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, out->seconds_per_step.data(), int(seconds.size()),
                              MPI_DOUBLE, MPI_MAX, comm));
}

// The stack parsed and the grids' sizes checked, agreed on every rank (both drivers).
GeneratedWeights start_generation(MPI_Comm comm, const std::string& stack,
                                  const GenOptions& options, const std::string& src_name,
                                  int64_t src_size, const std::string& dst_name,
                                  int64_t dst_size) {
  GeneratedWeights out;
  out.options = options;
  Agreement a;
  a.check([&] {
    out.stack = parse_stack(stack);
    if (src_size < 1 || dst_size < 1)
      fail(ISTHMUS_ERR_ARG, "weight generation from \"", src_name, "\" (", src_size,
           " points) to \"", dst_name, "\" (", dst_size, " points): a grid has no point");
    check_destination_size(dst_name, dst_size);
  });
  a.match("source grid size", src_size);
  a.match("destination grid size", dst_size);
  a.conclude(comm);
  return out;
}

}  // namespace

GeneratedWeights generate_weights(MPI_Comm comm, const Grid& src, const Grid& dst,
                                  const std::string& stack, const GenOptions& options,
                                  const std::function<void(double)>& progress) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  GeneratedWeights out = start_generation(comm, stack, options, src.name, src.size(), dst.name,
                                          dst.size());

  // The block of this rank: equal numbers of points to serve, in index order. Masked points
  // belong to the block their index falls in.
  const bool all_points = serves_every_point(out.stack, options);
  const auto target = [&](int64_t d) { return all_points || dst.active(d); };
  const int64_t n = dst.size();
  Blocks blocks;
  int64_t target_total = 0;
  for (int64_t d = 0; d < n; ++d) {
    blocks.active_total += dst.active(d) ? 1 : 0;
    target_total += target(d) ? 1 : 0;
  }
  const int64_t first_target = target_total * rank / nranks;
  const int64_t end_target = target_total * (rank + 1) / nranks;
  std::vector<int64_t> todo;
  int64_t seen = 0;
  for (int64_t d = 0; d < n && seen < end_target; ++d) {
    if (!target(d)) continue;
    if (seen >= first_target) todo.push_back(d);
    ++seen;
  }
  blocks.begins = agree_begins(comm, nranks, todo.empty() ? -1 : todo.front(), n);
  run_stack(comm, src, 0, dst, 0, n, blocks, std::move(todo), progress, &out, &dst);
  return out;
}

double cell_area(const Grid& g, int64_t c, TrigCache* trig) {
  if (!g.has_corners()) return 0.0;
  Vec3 small[64];
  std::vector<Vec3> large;  // cells of more than 64 corners
  if (g.num_corners > 64) large.resize(static_cast<size_t>(g.num_corners));
  Vec3* v = g.num_corners > 64 ? large.data() : small;
  int k = 0;
  for (int j = 0; j < g.num_corners; ++j) {
    const size_t i = static_cast<size_t>(c * g.num_corners + j);
    const Vec3 p = trig ? trig->xyz(g.corner_lon[i], g.corner_lat[i])
                        : to_xyz(g.corner_lon[i], g.corner_lat[i]);
    if (k > 0 && dot(p - v[k - 1], p - v[k - 1]) < 1e-30) continue;  // repeated corner
    v[k++] = p;
  }
  return spherical_polygon_area(v, k);
}

std::vector<double> cell_areas(const Grid& g, MPI_Comm comm) {
  std::vector<double> area(static_cast<size_t>(g.size()), 0.0);
  if (!g.has_corners()) return area;
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  const auto begin = [&](int r) { return g.size() * r / nranks; };
  TrigCache trig;
  for (int64_t c = begin(rank); c < begin(rank + 1); ++c) area[size_t(c)] = cell_area(g, c, &trig);
  std::vector<int> counts(static_cast<size_t>(nranks)), displs(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    displs[size_t(r)] = static_cast<int>(begin(r));
    counts[size_t(r)] = static_cast<int>(begin(r + 1) - begin(r));
  }
  ISTHMUS_MPI(wmpi::Allgatherv(MPI_IN_PLACE, 0, MPI_DOUBLE, area.data(), counts.data(),
                             displs.data(), MPI_DOUBLE, comm));
  return area;
}

void write_weights_file(MPI_Comm comm, const std::string& path, const WeightsInfo& info,
                        const WeightsGridVariables& vars, const GenLinks& links,
                        const std::function<void(ScripWeightsWriter&)>& grid_values) {
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  // The temporary name: path + ".tmp." + rank 0's process id, the same on every rank.
  long long pid = static_cast<long long>(getpid());
  ISTHMUS_MPI(wmpi::Bcast(&pid, 1, MPI_LONG_LONG, 0, comm));
  const std::string tmp = path + ".tmp." + std::to_string(pid);
  try {
    ScripWeightsWriter writer(comm, tmp, info, &vars);
    grid_values(writer);
    writer.append(links.src.data(), links.dst.data(), links.w.data(), links.size());
    writer.close();
    Agreement a;
    if (rank == 0)
      a.check([&] {
        if (std::rename(tmp.c_str(), path.c_str()) != 0)
          fail(ISTHMUS_ERR_FILE, "cannot rename \"", tmp, "\" to \"", path, "\": ", std::strerror(errno));
      });
    a.conclude(comm);
  } catch (...) {  // every failure above is agreed: every rank is here
    if (rank == 0) std::remove(tmp.c_str());
    throw;
  }
}

namespace {

// write_generated_weights, the grids' points read from sg (the source points [sg_first,
// sg_first + sg.size()), at least this rank's share [n r / P, n (r + 1) / P)) and dg (the
// destination points from dg_first, at least this rank's block); src and dst name the grids
// (with their points when headers_only is false).
void write_generated(MPI_Comm comm, const std::string& path, const Grid& src, int64_t src_size,
                     const Grid& dst, int64_t dst_size, bool headers_only, const Grid& sg,
                     int64_t sg_first, const Grid& dg, int64_t dg_first, const GeneratedWeights& w,
                     const std::string& key) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  const int nw = w.links.num_wgts;
  const bool conservative = w.stack.front().name == "conservative";
  WeightsInfo info;
  info.num_links = w.total_links;
  info.num_wgts = nw;
  info.src_grid_size = src_size;
  info.dst_grid_size = dst_size;
  info.src_grid_dims = src.dims;
  info.dst_grid_dims = dst.dims;
  // SCRIP's words for the first (main) step; isthmus_normalization keeps the option.
  const StackStep& first = w.stack.front();
  info.map_method = scrip_map_method(first.name);
  info.normalization = scrip_normalization(first.name, w.options);
  info.title = src.name + " to " + dst.name + " " + stack_string(w.stack) + " (isthmus)";
  info.conventions = "SCRIP";
  WeightsGridVariables vars;
  if (conservative) vars.attributes.emplace_back("isthmus_normalization", w.options.normalization);
  vars.src = &src;
  vars.dst = &dst;
  vars.headers_only = headers_only;
  // Corners and areas for conservative weights only, as CDO writes its files (they are large,
  // and only conservative weights depend on them).
  vars.corners = conservative;
  vars.areas = conservative;
  vars.fractions = true;
  vars.methods = stack_string(w.stack);
  if (!key.empty()) vars.attributes.emplace_back("isthmus_weights_key", key);

  // Every rank writes the file's values for its block of the destination points (those of its
  // links) and for its share of the source points.
  const int64_t mine = w.dst_end - w.dst_begin, n = src_size;
  const int64_t sb = n * rank / nranks, se = n * (rank + 1) / nranks;
  // SCRIP's destination fraction: the covered fraction where the method knows it
  // (conservative), 1 for other served points, 0 for points without links.
  std::vector<double> frac(static_cast<size_t>(mine), 0.0);
  for (size_t i = 0; i < frac.size(); ++i)
    if (w.method_of[i] >= 0 && w.stack[size_t(w.method_of[i])].name != "fixed") frac[i] = 1.0;
  for (const auto& [d, f] : w.links.frac) frac[size_t(d - w.dst_begin)] = f;
  write_weights_file(comm, path, info, vars, w.links, [&](ScripWeightsWriter& writer) {
    writer.write_points(1, dg, dg_first, w.dst_begin, mine);
    writer.write_methods(w.dst_begin, mine, w.method_of.data());
    writer.write_fractions(1, w.dst_begin, mine, frac.data());
    writer.write_points(0, sg, sg_first, sb, se - sb);
    std::vector<double> src_frac(static_cast<size_t>(se - sb), 0.0);
    if (!conservative) {  // SCRIP's source fraction of other methods: 1 on active points
      for (int64_t s = sb; s < se; ++s) src_frac[size_t(s - sb)] = sg.active(s - sg_first) ? 1.0 : 0.0;
    } else {
      // Areas of this rank's cells. SCRIP's source fraction: the part of each source cell the
      // active destination cells take, the sum over its links of w · A_dst (· dst fraction for
      // FRACAREA) / A_src, summed over ranks (the file's only value whose last bits may depend
      // on the rank count; the links never do).
      // Destination areas: those the method normalised its weights by, the others computed.
      TrigCache trig;
      std::vector<double> dst_area(static_cast<size_t>(mine), -1.0);
      for (const auto& [d, a] : w.links.area) dst_area[size_t(d - w.dst_begin)] = a;
      for (int64_t d = w.dst_begin; d < w.dst_end; ++d)
        if (dst_area[size_t(d - w.dst_begin)] < 0)
          dst_area[size_t(d - w.dst_begin)] = cell_area(dg, d - dg_first, &trig);
      writer.write_areas(1, w.dst_begin, mine, dst_area.data());
      std::vector<double> src_area(static_cast<size_t>(se - sb));
      for (int64_t c = sb; c < se; ++c) src_area[size_t(c - sb)] = cell_area(sg, c - sg_first, &trig);
      writer.write_areas(0, sb, se - sb, src_area.data());
      std::vector<double> covered(static_cast<size_t>(n), 0.0);
      const bool fracarea = w.options.normalization != "destarea";
      for (int64_t i = 0; i < w.links.size(); ++i) {
        const int64_t d = w.links.dst[size_t(i)] - w.dst_begin, s = w.links.src[size_t(i)];
        double x = w.links.w[size_t(i * nw)] * dst_area[size_t(d)];
        if (fracarea) x *= frac[size_t(d)];
        covered[size_t(s)] += x;
      }
      std::vector<int> counts(static_cast<size_t>(nranks));
      for (int r = 0; r < nranks; ++r)
        counts[size_t(r)] = static_cast<int>(n * (r + 1) / nranks - n * r / nranks);
      ISTHMUS_MPI(wmpi::Reduce_scatter(covered.data(), src_frac.data(), counts.data(), MPI_DOUBLE,
                                       MPI_SUM, comm));
      for (int64_t s = sb; s < se; ++s) {
        double& f = src_frac[size_t(s - sb)];
        f = src_area[size_t(s - sb)] > 0 ? f / src_area[size_t(s - sb)] : 0.0;
      }
    }
    writer.write_fractions(0, sb, se - sb, src_frac.data());
  });
}

}  // namespace

void write_generated_weights(MPI_Comm comm, const std::string& path, const Grid& src,
                             const Grid& dst, const GeneratedWeights& w, const std::string& key) {
  write_generated(comm, path, src, src.size(), dst, dst.size(), false, src, 0, dst, 0, w, key);
}

GeneratedWeights generate_weights_in_parts(MPI_Comm comm, const GridSlabs& src,
                                           const GridSlabs& dst, const std::string& stack,
                                           const GenOptions& options, GridParts* parts,
                                           const std::function<void(double)>& progress) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  GeneratedWeights out = start_generation(comm, stack, options, src.header().name, src.size(),
                                          dst.header().name, dst.size());
  parts->src_header = src.header();
  parts->dst_header = dst.header();
  parts->src_size = src.size();
  parts->dst_size = dst.size();
  const auto share = [&](int64_t size, int r) { return size * r / nranks; };

  // 1. The blocks, as generate_weights makes them: each rank reads an even share of the
  // destination's points (without corners) and counts those to serve; the rank holding the
  // first point to serve of a block names its index.
  const bool all_points = serves_every_point(out.stack, options);
  const int64_t n = dst.size();
  Blocks blocks;
  {
    const int64_t b = share(n, rank), e = share(n, rank + 1);
    Grid mine;
    Agreement read;
    read.check([&] { mine = dst.read(b, e, false); });
    read.conclude(comm);
    const auto target = [&](int64_t i) { return all_points || mine.active(i); };
    int64_t counts[2] = {0, 0};  // points to serve, active points
    for (int64_t i = 0; i < e - b; ++i) {
      counts[0] += target(i) ? 1 : 0;
      counts[1] += mine.active(i) ? 1 : 0;
    }
    std::vector<int64_t> all(2 * size_t(nranks));
    ISTHMUS_MPI(wmpi::Allgather(counts, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm));
    int64_t before = 0, total = 0;
    for (int r = 0; r < nranks; ++r) {
      if (r < rank) before += all[2 * size_t(r)];
      total += all[2 * size_t(r)];
      blocks.active_total += all[2 * size_t(r) + 1];
    }
    std::vector<int64_t> begins(static_cast<size_t>(nranks), -1);
    for (int q = 0; q < nranks; ++q) {
      const int64_t first = total * q / nranks, end = total * (q + 1) / nranks;
      if (first >= end || first < before || first >= before + counts[0]) continue;
      int64_t seen = before;
      for (int64_t i = 0; i < e - b; ++i)
        if (target(i) && seen++ == first) {
          begins[size_t(q)] = b + i;
          break;
        }
    }
    ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, begins.data(), nranks, MPI_INT64_T, MPI_MAX, comm));
    blocks.begins = fill_begins(std::move(begins), n);
  }

  // 2. This rank's block (with its corners if a step needs them), and its points to serve.
  const bool corners = stack_needs_corners(stack);
  const int64_t db = blocks.begins[size_t(rank)];
  const int64_t de = rank + 1 < nranks ? blocks.begins[size_t(rank) + 1] : n;
  std::vector<int64_t> todo, todo_local;
  double band_lo = 0, band_hi = 0;
  bool banded = false;
  {
    Agreement read;
    read.check([&] {
      parts->dst = dst.read(db, de, corners);
      parts->dst_first = db;
      for (int64_t i = 0; i < de - db; ++i)
        if (all_points || parts->dst.active(i)) todo_local.push_back(i);
      banded = corners && conservative_band(parts->dst, todo_local, &band_lo, &band_hi);
    });
    read.conclude(comm);
    todo = todo_local;
    for (int64_t& d : todo) d += db;
  }

  // 3. What each source row reaches (rows of nx points of a logically rectangular source, else
  // runs of 4096): the latitudes of its points, and those its active cells' caps can reach
  // (conservative: the method's own bound; a cell it cannot bound reaches everywhere); each
  // rank those of an even share of the rows, read in slabs, then gathered.
  const Grid& sh = src.header();
  const int64_t row = sh.rectangular() && sh.nx() > 0 ? sh.nx() : 4096;
  const int64_t nrows = (src.size() + row - 1) / row;
  // Per row: its points' least and greatest latitude, its cells' reach, and (bilinear,
  // bicubic) the widest quad between it and the next row (bilinear_quad_reach).
  constexpr size_t kPer = 5;
  const auto has_step = [&](std::initializer_list<const char*> names) {
    for (const StackStep& step : out.stack)
      for (const char* name : names)
        if (step.name == name) return true;
    return false;
  };
  const bool quads = has_step({"bilinear", "bicubic"}) && sh.rectangular() && nrows >= 2;
  std::vector<double> reach(kPer * static_cast<size_t>(nrows));
  {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    constexpr double kHalfPi = 1.5707963267948966;
    const int64_t rb = share(nrows, rank), re = share(nrows, rank + 1);
    const int64_t slab_rows = std::max<int64_t>(1, (int64_t(1) << 20) / row);
    std::vector<double> mine(kPer * size_t(re - rb));
    Agreement read;
    read.check([&] {
      for (int64_t r0 = rb; r0 < re; r0 += slab_rows) {
        const int64_t r1 = std::min(re, r0 + slab_rows);
        // (and the next row, for the quads between the slab's last row and it)
        const int64_t read_end = quads ? std::min(nrows, r1 + 1) : r1;
        const Grid g = src.read(r0 * row, std::min(src.size(), read_end * row), corners);
        std::vector<Vec3> xyz;  // the rows' unit vectors, for the quads' reach
        if (quads) {
          xyz.resize(g.lon.size());
          for (size_t c = 0; c < xyz.size(); ++c) xyz[c] = to_xyz(g.lon[c], g.lat[c]);
        }
        for (int64_t r = r0; r < r1; ++r) {
          double plo = kInf, phi = -kInf, lo = kInf, hi = -kInf, clo = 0, chi = 0;
          for (int64_t c = (r - r0) * row; c < std::min(g.size(), (r - r0 + 1) * row); ++c) {
            if (std::isfinite(g.lon[size_t(c)]) && std::isfinite(g.lat[size_t(c)])) {
              // the latitude of the point on the sphere, whatever the file says beyond a pole
              double la = g.lat[size_t(c)];
              if (std::fabs(la) > kHalfPi) la = std::asin(std::sin(la));
              plo = std::min(plo, la);
              phi = std::max(phi, la);
            }
            if (!corners || !g.active(c)) continue;
            if (!conservative_reach(g, c, &clo, &chi)) {
              clo = -kInf;
              chi = kInf;
            }
            lo = std::min(lo, clo);
            hi = std::max(hi, chi);
          }
          double* out_row = &mine[kPer * size_t(r - rb)];
          out_row[4] = quads && r + 1 < nrows
                           ? bilinear_quad_reach(&xyz[size_t((r - r0) * row)],
                                                 &xyz[size_t((r - r0 + 1) * row)], row)
                           : 0.0;
          out_row[0] = plo;
          out_row[1] = phi;
          out_row[2] = lo;
          out_row[3] = hi;
        }
      }
    });
    read.conclude(comm);
    std::vector<int> counts(static_cast<size_t>(nranks)), displs(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
      displs[size_t(r)] = static_cast<int>(kPer * share(nrows, r));
      counts[size_t(r)] = static_cast<int>(kPer * (share(nrows, r + 1) - share(nrows, r)));
    }
    ISTHMUS_MPI(wmpi::Allgatherv(mine.data(), int(mine.size()), MPI_DOUBLE, reach.data(),
                                 counts.data(), displs.data(), MPI_DOUBLE, comm));
  }
  std::vector<double> point_lat(2 * static_cast<size_t>(nrows));
  for (int64_t r = 0; r < nrows; ++r) {
    point_lat[2 * size_t(r)] = reach[kPer * size_t(r)];
    point_lat[2 * size_t(r) + 1] = reach[kPer * size_t(r) + 1];
  }
  // Bilinear's verdict on the whole grid's periodicity, from its rows ny/4, ny/2, 3ny/4.
  bool periodic = true;
  if (quads) {
    Agreement read;
    read.check([&] {
      for (const int64_t j : {nrows / 4, nrows / 2, (3 * nrows) / 4}) {
        const Grid g = src.read(j * row, (j + 1) * row, false);
        periodic = periodic && bilinear_row_closes(g, 0, row);
      }
    });
    read.conclude(comm);
  }
  // Gaussian's scale: the whole source's mean spacing, summed by the ranks in turn.
  const double mean_distance =
      has_step({"gaussian"}) ? mean_consecutive_distance(comm, src, int64_t(1) << 20) : 0.0;
  const SourceWindow window(src, row, std::move(point_lat), corners, periodic, mean_distance);

  // 4. The window: the rows from the first to the last that a step may need — a
  // conservative step's cells reaching the block's band; for a nearest step, the points within
  // a few rows' spacing of the block's latitudes (points whose neighbours lie farther are
  // searched again on more rows: run_stack).
  int64_t w0 = nrows, w1 = 0;
  const auto take = [&](int64_t r) {
    w0 = std::min(w0, r);
    w1 = std::max(w1, r + 1);
  };
  const bool nearest = has_step({"nearest", "gaussian"});
  if (!todo.empty() && corners) {
    for (int64_t r = 0; r < nrows; ++r) {
      const double lo = reach[kPer * size_t(r) + 2], hi = reach[kPer * size_t(r) + 3];
      if (lo > hi) continue;  // no active cell
      if (banded && (hi < band_lo || lo > band_hi)) continue;
      take(r);
    }
  }
  double lat_lo = 0, lat_hi = 0;  // the block's latitudes
  const bool ranged = !todo.empty() && latitude_range(parts->dst, todo_local, &lat_lo, &lat_hi);
  if (nearest && ranged) {
    // a margin of 4 times the median spacing between consecutive rows' mean latitudes
    std::vector<double> gaps;
    for (int64_t r = 0; r + 1 < nrows; ++r) {
      const double* a = &reach[kPer * size_t(r)];
      const double* b = &reach[kPer * size_t(r + 1)];
      if (a[0] <= a[1] && b[0] <= b[1]) gaps.push_back(std::fabs((b[0] + b[1]) - (a[0] + a[1])) / 2);
    }
    double margin = 0;
    if (!gaps.empty()) {
      std::nth_element(gaps.begin(), gaps.begin() + long(gaps.size() / 2), gaps.end());
      margin = 4.0 * gaps[gaps.size() / 2];
    }
    for (int64_t r = 0; r < nrows; ++r) {
      const double lo = reach[kPer * size_t(r)], hi = reach[kPer * size_t(r) + 1];
      if (lo <= hi && hi >= lat_lo - margin && lo <= lat_hi + margin) take(r);
    }
  } else if (!todo.empty() && nearest) {
    w0 = 0;  // no finite latitude to go by
    w1 = nrows;
  }
  if (!todo.empty() && quads) {
    // The rows of every quad that may hold a point of the block: a point inside a quad lies
    // within the quad's widest corner distance of each corner; the first and last pairs of
    // rows also hold the pole quads over the caps beyond them.
    constexpr double kHalfPi = 1.5707963267948966;
    if (ranged) {
      for (int64_t r = 0; r + 1 < nrows; ++r) {
        const double* a = &reach[kPer * size_t(r)];
        const double* b = &reach[kPer * size_t(r + 1)];
        double lo = std::min(a[0], b[0]) - a[4], hi = std::max(a[1], b[1]) + a[4];
        if (!(lo <= hi)) continue;  // no point with finite coordinates
        const bool north = lo + hi > 0;
        if (r == 0 || r + 2 == nrows) (north ? hi : lo) = north ? kHalfPi : -kHalfPi;
        if (hi >= lat_lo && lo <= lat_hi) {
          take(r);
          take(r + 1);
        }
      }
    } else {
      w0 = 0;
      w1 = nrows;
    }
  }
  if (quads && w1 - w0 < 2) {  // a quad needs two rows (a block without points too)
    if (w1 <= w0) {
      w0 = 0;
      w1 = 2;
    } else if (w1 < nrows) {
      ++w1;
    } else {
      --w0;
    }
  }
  if (w0 >= w1) w0 = w1 = 0;
  Grid held;  // the window, freed on return: the writer reads its share of the source apart
  {
    Agreement read;
    read.check([&] { window.hold(w0, w1, &held, &parts->src_first); });
    read.conclude(comm);
    parts->src_points = held.size();
  }
  Widening widening;
  widening.window = &window;
  widening.w0 = w0;
  widening.w1 = w1;
  // Creep fill spreads values between destination points of any block: it takes the 4
  // nearest active ones of every point from the destination's centres and mask, read whole.
  Grid dst_centres;
  const bool creep = has_step({"creep"});
  if (creep) {
    Agreement read;
    read.check([&] { dst_centres = dst.read(0, n, false); });
    read.conclude(comm);
  }
  run_stack(comm, held, parts->src_first, parts->dst, parts->dst_first, n, blocks,
            std::move(todo), progress, &out, creep ? &dst_centres : nullptr, widening);
  return out;
}

void write_weights_in_parts(MPI_Comm comm, const std::string& path, const GridSlabs& src,
                            const GridParts& parts, const GeneratedWeights& w,
                            const std::string& key) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  // The source's variables are written by every rank for an even share of its points, which
  // its window need not hold: read apart.
  const int64_t sb = src.size() * rank / nranks, se = src.size() * (rank + 1) / nranks;
  Grid share;
  Agreement read;
  read.check([&] { share = src.read(sb, se, w.stack.front().name == "conservative"); });
  read.conclude(comm);
  write_generated(comm, path, parts.src_header, parts.src_size, parts.dst_header, parts.dst_size,
                  true, share, sb, parts.dst, parts.dst_first, w, key);
}


namespace {

uint64_t hash_doubles(uint64_t h, const std::vector<double>& v) {
  h = mix64(h ^ v.size());
  for (double x : v) {
    uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    h = mix64(h ^ bits);
  }
  return h;
}

uint64_t hash_grid(uint64_t h, const Grid& g) {
  for (int64_t d : g.dims) h = mix64(h ^ static_cast<uint64_t>(d));
  h = hash_doubles(h, g.lon);
  h = hash_doubles(h, g.lat);
  h = mix64(h ^ static_cast<uint64_t>(g.num_corners));
  h = hash_doubles(h, g.corner_lon);
  h = hash_doubles(h, g.corner_lat);
  for (int64_t c = 0; c < g.size(); ++c) h = mix64(h ^ (g.active(c) ? 1u : 2u));
  return h;
}

uint64_t hash_text(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = mix64(h ^ c);
  return mix64(h ^ s.size());
}

}  // namespace

std::string weights_key(const Grid& src, const Grid& dst, const std::string& stack,
                        const GenOptions& o) {
  uint64_t h = hash_grid(0x69737468, src);
  h = hash_grid(h, dst);
  h = hash_text(h, stack_string(parse_stack(stack)));
  h = mix64(h ^ static_cast<uint64_t>(o.num_neighbours));
  h = hash_doubles(h, {o.gaussian_variance});
  h = hash_text(h, o.normalization);
  h = mix64(h ^ static_cast<uint64_t>(o.conservative_order));
  if (o.oasis_masks) h = mix64(h ^ 0x6f61736973ull);  // keys made before the option stay valid
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

CachedWeights cached_weights(const std::string& path, std::string* key) {
  int ncid = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &ncid) != NC_NOERR) return CachedWeights::Missing;
  size_t len = 0;
  CachedWeights state = CachedWeights::Foreign;
  if (nc_inq_attlen(ncid, NC_GLOBAL, "isthmus_weights_key", &len) == NC_NOERR) {
    std::string k(len, '\0');
    if (nc_get_att_text(ncid, NC_GLOBAL, "isthmus_weights_key", k.data()) == NC_NOERR) {
      state = CachedWeights::Ours;
      if (key) *key = k;
    }
  }
  nc_close(ncid);
  return state;
}

GridSlabs open_grid_slabs(MPI_Comm comm, const std::string& spec) {
  std::optional<GridSlabs> slabs;
  Agreement a;
  a.check([&] { slabs.emplace(spec); });
  a.conclude(comm);
  return std::move(*slabs);
}

bool ensure_weights_file(MPI_Comm comm, const std::string& path, const std::string& src_spec,
                         const std::string& dst_spec, const std::string& stack,
                         const GenOptions& options,
                         const std::function<void(const std::exception&)>& explain) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  // Rank 0 looks; every rank learns what it found.
  std::string key;
  int state = 0;
  if (rank == 0) state = static_cast<int>(cached_weights(path, &key));
  ISTHMUS_MPI(wmpi::Bcast(&state, 1, MPI_INT, 0, comm));
  if (static_cast<CachedWeights>(state) == CachedWeights::Foreign) return false;
  // The key: rank 0 reads the grids whole (they are hashed in order) and compares it with the
  // file's; every rank writes it (the file's header is one).
  std::optional<Grid> src, dst;
  char want[17] = {0};
  Agreement a;
  if (rank == 0)
    a.check([&] {
      const bool corners = stack_needs_corners(stack);
      try {
        src = read_grid(src_spec, corners);
        dst = read_grid(dst_spec, corners);
      } catch (const std::exception& e) {
        if (explain) explain(e);
        throw;
      }
      std::snprintf(want, sizeof want, "%s", weights_key(*src, *dst, stack, options).c_str());
    });
  a.conclude(comm);
  ISTHMUS_MPI(wmpi::Bcast(want, sizeof want, MPI_CHAR, 0, comm));
  int same = rank == 0 && static_cast<CachedWeights>(state) == CachedWeights::Ours && key == want;
  ISTHMUS_MPI(wmpi::Bcast(&same, 1, MPI_INT, 0, comm));
  if (same) return false;
  if (nranks == 1) {
    const GeneratedWeights w = generate_weights(comm, *src, *dst, stack, options);
    write_generated_weights(comm, path, *src, *dst, w, want);
    return true;
  }
  src.reset();
  dst.reset();
  const GridSlabs src_slabs = open_grid_slabs(comm, src_spec);
  const GridSlabs dst_slabs = open_grid_slabs(comm, dst_spec);
  GridParts parts;
  const GeneratedWeights w =
      generate_weights_in_parts(comm, src_slabs, dst_slabs, stack, options, &parts);
  write_weights_in_parts(comm, path, src_slabs, parts, w, want);
  return true;
}

}  // namespace isthmus::remap
