// Shared by the redistribution tests: decompositions, reference values, field storage.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isthmus.h"
#include "mpi_test_util.h"

// Fails the test with the context's message when an isthmus call fails.
#define ISTHMUS_OK_OR_FAIL(ctx, call)                                                      \
  do {                                                                                     \
    int rc_ = (call);                                                                      \
    ASSERT_EQ(rc_, ISTHMUS_OK) << #call << ": " << isthmus_last_error(ctx);                \
  } while (0)

// [start, start + length) of part `part` of `n` split into `parts` nearly equal blocks.
inline std::pair<int64_t, int64_t> block(int64_t n, int parts, int part) {
  int64_t base = n / parts, extra = n % parts;
  int64_t start = part * base + std::min<int64_t>(part, extra);
  return {start, base + (part < extra ? 1 : 0)};
}

// The value field f, level l holds at global index g, exact in every type.
inline double ref_value(int64_t g, int f, int l) { return static_cast<double>((g * 16 + l * 4 + f) % (1 << 23)); }

struct FieldSet {
  std::vector<int> types, levels;
  std::vector<std::vector<char>> data;  // one array per field, level-major
  int64_t npts = 0;

  FieldSet(std::vector<int> t, std::vector<int> l, int64_t n) : types(t), levels(l), npts(n) {
    for (size_t f = 0; f < types.size(); ++f)
      data.emplace_back(static_cast<size_t>(levels[f] * n) * esize(types[f]), 0);
  }
  static size_t esize(int t) { return t == ISTHMUS_DOUBLE ? 8 : 4; }
  int nfields() const { return static_cast<int>(types.size()); }

  void set(int f, int64_t pos, int l, double v) {
    size_t k = static_cast<size_t>(l * npts + pos);
    char* p = data[f].data();
    if (types[f] == ISTHMUS_DOUBLE) reinterpret_cast<double*>(p)[k] = v;
    if (types[f] == ISTHMUS_FLOAT) reinterpret_cast<float*>(p)[k] = static_cast<float>(v);
    if (types[f] == ISTHMUS_INT32) reinterpret_cast<int32_t*>(p)[k] = static_cast<int32_t>(v);
  }
  double get(int f, int64_t pos, int l) const {
    size_t k = static_cast<size_t>(l * npts + pos);
    const char* p = data[f].data();
    if (types[f] == ISTHMUS_DOUBLE) return reinterpret_cast<const double*>(p)[k];
    if (types[f] == ISTHMUS_FLOAT) return reinterpret_cast<const float*>(p)[k];
    return reinterpret_cast<const int32_t*>(p)[k];
  }
  // Fills with the reference values of the given global indices (in local order).
  void fill_reference(const std::vector<int64_t>& gidx) {
    for (int f = 0; f < nfields(); ++f)
      for (int l = 0; l < levels[f]; ++l)
        for (int64_t p = 0; p < npts; ++p) set(f, p, l, ref_value(gidx[p], f, l));
  }
  void fill_constant(double v) {
    for (int f = 0; f < nfields(); ++f)
      for (int l = 0; l < levels[f]; ++l)
        for (int64_t p = 0; p < npts; ++p) set(f, p, l, v);
  }
  std::vector<const void*> in() const {
    std::vector<const void*> v;
    for (const auto& d : data) v.push_back(d.data());
    return v;
  }
  std::vector<void*> out() {
    std::vector<void*> v;
    for (auto& d : data) v.push_back(d.data());
    return v;
  }
  // Number of (field, level, point) values that differ from the reference.
  int64_t count_wrong(const std::vector<int64_t>& gidx) const {
    int64_t bad = 0;
    for (int f = 0; f < nfields(); ++f)
      for (int l = 0; l < levels[f]; ++l)
        for (int64_t p = 0; p < npts; ++p)
          if (get(f, p, l) != ref_value(gidx[p], f, l)) ++bad;
    return bad;
  }
};

inline const std::vector<int>& all_methods() {
  static const std::vector<int> m = {ISTHMUS_METHOD_AUTO,     ISTHMUS_METHOD_P2P,
                                     ISTHMUS_METHOD_ALLTOALLV, ISTHMUS_METHOD_NEIGHBOR,
                                     ISTHMUS_METHOD_BUTTERFLY, ISTHMUS_METHOD_ADAPTIVE};
  return m;
}

inline std::string method_label(int m) {
  const char* names[] = {"auto", "p2p", "alltoallv", "neighbor", "butterfly", "adaptive"};
  return m >= 0 && m < 6 ? names[m] : std::to_string(m);
}

// A context on a communicator and the decompositions made in it, destroyed together.
class Fixture {
 public:
  explicit Fixture(MPI_Comm comm) { EXPECT_EQ(isthmus_context_create(comm, &ctx), ISTHMUS_OK); }
  ~Fixture() {
    for (auto* d : decomps) isthmus_decomp_destroy(&d);
    isthmus_context_destroy(&ctx);
  }
  isthmus_decomp* decomp(int64_t n, const std::vector<int64_t>& idx) {
    isthmus_decomp* d = nullptr;
    int rc = isthmus_decomp_create_indices(ctx, n, static_cast<int64_t>(idx.size()), idx.data(), &d);
    EXPECT_EQ(rc, ISTHMUS_OK) << isthmus_last_error(ctx);
    decomps.push_back(d);
    return d;
  }
  std::string msg() const { return isthmus_last_error(ctx); }
  isthmus_context* ctx = nullptr;
  std::vector<isthmus_decomp*> decomps;
};
