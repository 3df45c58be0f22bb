// A string (any bytes) broadcast from one rank, in one broadcast when it is short; and the
// packing of words and texts into such a string, so that several values travel in one broadcast.
#pragma once
#include <mpi.h>

#include <algorithm>
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

// Bytes of a broadcast's first message: the length and, when they fit, all the bytes, so that a
// small string (a header, declarations, a configuration file) costs one broadcast, not two.
// Every broadcast is a round of latency (log P steps), and on shared cores a round in which
// each rank must be given a core. 2 KiB stay under the eager limits of shared memory and
// networks (Open MPI's shared memory: 4 KiB), so they cost about what 8 bytes cost.
constexpr int kBroadcastInline = 2048;

// Collective over comm: every rank ends with root's s. One broadcast of kBroadcastInline bytes
// (the length, then as many bytes as fit), a second one for the rest of a longer string.
inline void broadcast(MPI_Comm comm, std::string& s, int root = 0) {
  constexpr size_t head = sizeof(int64_t);
  std::vector<char> first(kBroadcastInline);
  int me = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &me));
  if (me == root) {
    const int64_t n = static_cast<int64_t>(s.size());
    std::memcpy(first.data(), &n, head);
    std::memcpy(first.data() + head, s.data(), std::min(s.size(), first.size() - head));
  }
  ISTHMUS_MPI(wmpi::Bcast(first.data(), kBroadcastInline, MPI_CHAR, root, comm));
  int64_t n = 0;
  std::memcpy(&n, first.data(), head);
  const size_t inline_bytes = std::min(static_cast<size_t>(n), first.size() - head);
  if (me != root) s.assign(first.data() + head, inline_bytes);
  if (static_cast<size_t>(n) > inline_bytes) {
    s.resize(static_cast<size_t>(n));
    ISTHMUS_MPI(wmpi::Bcast(s.data() + inline_bytes, static_cast<int>(n - static_cast<int64_t>(inline_bytes)),
                            MPI_CHAR, root, comm));
  }
}

}  // namespace isthmus
