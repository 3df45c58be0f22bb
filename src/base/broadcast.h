// A string (any bytes) broadcast from one rank: its length, then its bytes; and the packing of
// words and texts into such a string, so that several values travel in one broadcast.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wait.h"

namespace isthmus {

inline void put_word(std::string& b, int64_t v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
inline void put_text(std::string& b, const std::string& t) {
  put_word(b, static_cast<int64_t>(t.size()));
  b += t;
}
inline void put_words(std::string& b, const std::vector<int64_t>& v) {
  put_word(b, static_cast<int64_t>(v.size()));
  for (int64_t x : v) put_word(b, x);
}
// Reads back, in order, what put_word / put_text / put_words appended.
struct Unpacker {
  const std::string& b;
  size_t at = 0;
  int64_t word() {
    int64_t v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string text() {
    const size_t n = static_cast<size_t>(word());
    std::string t = b.substr(at, n);
    at += n;
    return t;
  }
  std::vector<int64_t> words() {
    std::vector<int64_t> v(static_cast<size_t>(word()));
    for (int64_t& x : v) x = word();
    return v;
  }
};

// Collective over comm: every rank ends with root's s.
inline void broadcast(MPI_Comm comm, std::string& s, int root = 0) {
  int64_t n = static_cast<int64_t>(s.size());
  ISTHMUS_MPI(wmpi::Bcast(&n, 1, MPI_INT64_T, root, comm));
  s.resize(static_cast<size_t>(n));
  if (n > 0) ISTHMUS_MPI(wmpi::Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, comm));
}

}  // namespace isthmus
