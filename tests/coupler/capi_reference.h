// The coupler tests' reference: a weights file applied through the C API on this rank alone
// (whole grids on one process), which tests/remap/test_mapping_file.cpp proves equal to a
// hand-written serial sum.
#pragma once
#include <gtest/gtest.h>
#include <isthmus.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

// One mapping of the file `path` from a grid of ns points to one of nd, applied to each input
// (ns values each): the nd values each gives.
inline std::vector<std::vector<double>> apply_serially(const std::string& path, int64_t ns,
                                                       int64_t nd,
                                                       const std::vector<std::vector<double>>& inputs) {
  std::vector<std::vector<double>> out;
  isthmus_context* ctx = nullptr;
  EXPECT_EQ(isthmus_context_create(MPI_COMM_SELF, &ctx), ISTHMUS_OK);
  const int64_t zero = 0;
  isthmus_decomp *s = nullptr, *d = nullptr;
  EXPECT_EQ(isthmus_decomp_create_segments(ctx, ns, 1, &zero, &ns, &s), ISTHMUS_OK);
  EXPECT_EQ(isthmus_decomp_create_segments(ctx, nd, 1, &zero, &nd, &d), ISTHMUS_OK);
  isthmus_mapping* m = nullptr;
  const int one = 1;
  EXPECT_EQ(isthmus_mapping_create_file(ctx, path.c_str(), s, d, 1, &one, nullptr, &m), ISTHMUS_OK)
      << isthmus_last_error(ctx);
  for (const std::vector<double>& x : inputs) {
    if (!m) break;
    std::vector<double> y(static_cast<size_t>(nd), 0.0);
    const double* xp = x.data();
    double* yp = y.data();
    EXPECT_EQ(isthmus_mapping_apply(m, &xp, &yp), ISTHMUS_OK) << isthmus_last_error(ctx);
    out.push_back(std::move(y));
  }
  isthmus_mapping_destroy(&m);
  isthmus_decomp_destroy(&s);
  isthmus_decomp_destroy(&d);
  isthmus_context_destroy(&ctx);
  return out;
}
