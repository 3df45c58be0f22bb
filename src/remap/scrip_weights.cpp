#include "remap/scrip_weights.h"

#include <netcdf.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/broadcast.h"
#include "base/hash.h"
#include "base/wait.h"
#include "remap/nc_file.h"
#include "remap/nc_out.h"

namespace isthmus::remap {

namespace {

// Hyperslab reads of at most this many links: a bad link stops the reading within one chunk,
// and the addresses pass through two buffers of 32 KB, reused chunk after chunk (they stay in
// the cache and cost no fresh pages: a set-up's memory is mostly first touches).
constexpr int64_t kChunkLinks = int64_t{1} << 12;
// read_links_of_destinations declines a part that makes more than kFewRanges ranges of links
// with fewer than kLinksPerRange links each on average.
constexpr int64_t kFewRanges = 64, kLinksPerRange = 32;
// Hyperslab writes of at most this many links
constexpr int64_t kWriteChunkLinks = int64_t{1} << 20;

// The header as rank 0 read it, for one broadcast: [status, then the header or the error].
// status 0: read; 1: failed (code, message); 2: not read (rank 0's own arguments failed).
std::string pack_header(const WeightsInfo& h) {
  std::string b;
  put_word(b, 0);
  for (const std::string* t : {&h.path, &h.title, &h.map_method, &h.normalization, &h.conventions})
    put_text(b, *t);
  for (int64_t v : {h.num_links, h.src_grid_size, h.dst_grid_size, int64_t{h.num_wgts}}) put_word(b, v);
  put_words(b, h.src_grid_dims);
  put_words(b, h.dst_grid_dims);
  return b;
}

WeightsInfo unpack_header(Unpacker& u) {
  WeightsInfo h;
  for (std::string* t : {&h.path, &h.title, &h.map_method, &h.normalization, &h.conventions})
    *t = u.text();
  h.num_links = u.word();
  h.src_grid_size = u.word();
  h.dst_grid_size = u.word();
  h.num_wgts = static_cast<int>(u.word());
  h.src_grid_dims = u.words();
  h.dst_grid_dims = u.words();
  return h;
}


std::string quoted(const std::string& path) { return NcFile::named("weights", path); }

bool is_integer_type(nc_type t) {
  return t == NC_BYTE || t == NC_SHORT || t == NC_INT || t == NC_INT64 || t == NC_UBYTE ||
         t == NC_USHORT || t == NC_UINT || t == NC_UINT64;
}

// Reads the header and checks it: every rank does the same, on the same file, and so fails
// (or not) alike.
class HeaderReader {
 public:
  HeaderReader(const std::string& path, WeightsInfo& info) : path_(path), info_(info) {}

  void read(const WeightsExpect& expect) {
    file_.emplace(path_, NcFile::Mode::Read, quoted(path_));
    info_.path = path_;
    info_.title = text_attribute("title");
    info_.map_method = text_attribute("map_method");
    info_.normalization = text_attribute("normalization");
    info_.conventions = text_attribute("conventions");

    int links_dim = -1, wgts_dim = -1;
    info_.num_links = dimension("num_links", &links_dim);
    const int64_t nw = dimension("num_wgts", &wgts_dim);
    if (nw < 1 || nw > INT_MAX)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": dimension num_wgts is ", nw,
           ", expected 1 or more");
    info_.num_wgts = static_cast<int>(nw);
    grid("src", &info_.src_grid_size, &info_.src_grid_dims);
    grid("dst", &info_.dst_grid_size, &info_.dst_grid_dims);

    src_var_ = address_variable("src_address", links_dim);
    dst_var_ = address_variable("dst_address", links_dim);
    matrix_var_ = variable("remap_matrix");
    nc_type type = NC_NAT;
    nc(nc_inq_vartype(file_->id(), matrix_var_, &type), "the type of variable remap_matrix");
    if (type != NC_DOUBLE && type != NC_FLOAT)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable remap_matrix has type ", type_name(type),
           ", expected double or float");
    check_shape("remap_matrix", matrix_var_, {links_dim, wgts_dim}, "(num_links, num_wgts)");

    expect_size("src_grid_size", info_.src_grid_size, expect.src_grid_size, "source");
    expect_size("dst_grid_size", info_.dst_grid_size, expect.dst_grid_size, "destination");
  }

  int file() const { return file_->id(); }
  int src_var() const { return src_var_; }
  int dst_var() const { return dst_var_; }
  int matrix_var() const { return matrix_var_; }

 private:
  void nc(int rc, const char* what) const { file_->check(rc, std::string("read ") + what); }

  std::string text_attribute(const char* name) const {
    nc_type type = NC_NAT;
    size_t len = 0;
    if (nc_inq_att(file_->id(), NC_GLOBAL, name, &type, &len) != NC_NOERR) return "";
    if (type == NC_CHAR) {
      std::string s(len, '\0');
      nc(nc_get_att_text(file_->id(), NC_GLOBAL, name, s.data()), name);
      while (!s.empty() && s.back() == '\0') s.pop_back();
      return s;
    }
    if (type == NC_STRING && len >= 1) {
      std::vector<char*> v(len, nullptr);
      nc(nc_get_att_string(file_->id(), NC_GLOBAL, name, v.data()), name);
      std::string s = v[0] ? v[0] : "";
      nc_free_string(len, v.data());
      return s;
    }
    return "";
  }

  int64_t dimension(const char* name, int* id) const {
    if (nc_inq_dimid(file_->id(), name, id) != NC_NOERR)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": no dimension ", name);
    size_t len = 0;
    nc(nc_inq_dimlen(file_->id(), *id, &len), name);
    return static_cast<int64_t>(len);
  }

  int variable(const char* name) const {
    int id = -1;
    if (nc_inq_varid(file_->id(), name, &id) != NC_NOERR)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": no variable ", name);
    return id;
  }

  std::string dimension_list(int var) const {
    int ndims = 0;
    nc(nc_inq_varndims(file_->id(), var, &ndims), "the dimensions of a variable");
    std::vector<int> dims(static_cast<size_t>(ndims));
    nc(nc_inq_vardimid(file_->id(), var, dims.data()), "the dimensions of a variable");
    std::string s = "(";
    for (int i = 0; i < ndims; ++i) {
      char name[NC_MAX_NAME + 1] = {0};
      nc(nc_inq_dimname(file_->id(), dims[size_t(i)], name), "a dimension name");
      s += (i ? ", " : "") + std::string(name);
    }
    return s + ")";
  }

  void check_shape(const char* name, int var, const std::vector<int>& want,
                   const char* want_text) const {
    int ndims = 0;
    nc(nc_inq_varndims(file_->id(), var, &ndims), name);
    std::vector<int> dims(static_cast<size_t>(ndims));
    nc(nc_inq_vardimid(file_->id(), var, dims.data()), name);
    if (dims != want)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable ", name, " has dimensions ",
           dimension_list(var), ", expected ", want_text);
  }

  int address_variable(const char* name, int links_dim) const {
    const int var = variable(name);
    nc_type type = NC_NAT;
    nc(nc_inq_vartype(file_->id(), var, &type), name);
    if (!is_integer_type(type))
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable ", name, " has type ", type_name(type),
           ", expected an integer type");
    check_shape(name, var, {links_dim}, "(num_links)");
    return var;
  }

  static const char* type_name(nc_type t) {
    switch (t) {
      case NC_BYTE: return "byte";
      case NC_CHAR: return "char";
      case NC_SHORT: return "short";
      case NC_INT: return "int";
      case NC_FLOAT: return "float";
      case NC_DOUBLE: return "double";
      case NC_UBYTE: return "ubyte";
      case NC_USHORT: return "ushort";
      case NC_UINT: return "uint";
      case NC_INT64: return "int64";
      case NC_UINT64: return "uint64";
      case NC_STRING: return "string";
      default: return "a user-defined type";
    }
  }

  // The size of grid `side` ("src" or "dst"): the dimension <side>_grid_size, else the product
  // of the variable <side>_grid_dims; both present must agree.
  void grid(const char* side, int64_t* size, std::vector<int64_t>* dims_out) const {
    const std::string size_name = std::string(side) + "_grid_size";
    const std::string dims_name = std::string(side) + "_grid_dims";
    std::optional<int64_t> from_dim;
    int dim = -1;
    if (nc_inq_dimid(file_->id(), size_name.c_str(), &dim) == NC_NOERR) {
      size_t len = 0;
      nc(nc_inq_dimlen(file_->id(), dim, &len), size_name.c_str());
      from_dim = static_cast<int64_t>(len);
    }
    int var = -1;
    dims_out->clear();
    if (nc_inq_varid(file_->id(), dims_name.c_str(), &var) == NC_NOERR) {
      int ndims = 0;
      nc(nc_inq_varndims(file_->id(), var, &ndims), dims_name.c_str());
      nc_type type = NC_NAT;
      nc(nc_inq_vartype(file_->id(), var, &type), dims_name.c_str());
      if (ndims != 1 || !is_integer_type(type))
        fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable ", dims_name,
             " must be a one-dimensional integer variable");
      int d = -1;
      nc(nc_inq_vardimid(file_->id(), var, &d), dims_name.c_str());
      size_t rank = 0;
      nc(nc_inq_dimlen(file_->id(), d, &rank), dims_name.c_str());
      if (rank < 1 || rank > 64)
        fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable ", dims_name, " has ", rank,
             " entries, expected 1 to 64");
      std::vector<long long> v(rank);
      nc(nc_get_var_longlong(file_->id(), var, v.data()), dims_name.c_str());
      int64_t product = 1;
      for (size_t i = 0; i < rank; ++i) {
        if (v[i] < 1 || product > INT64_MAX / v[i])
          fail(ISTHMUS_ERR_FILE, quoted(path_), ": variable ", dims_name, " entry ", i + 1,
               " is ", v[i], (v[i] < 1 ? ", expected 1 or more" : ": the grid size overflows"));
        product *= v[i];
        dims_out->push_back(v[i]);
      }
      if (from_dim && *from_dim != product)
        fail(ISTHMUS_ERR_FILE, quoted(path_), ": dimension ", size_name, " is ", *from_dim,
             ", but the product of variable ", dims_name, " is ", product);
      from_dim = product;
    } else if (!from_dim) {
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": no dimension ", size_name, " and no variable ",
           dims_name);
    } else {
      dims_out->push_back(*from_dim);
    }
    if (*from_dim < 1)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": ", size_name, " is ", *from_dim,
           ", expected 1 or more");
    *size = *from_dim;
  }

  void expect_size(const char* name, int64_t in_file, int64_t expected, const char* grid) const {
    if (expected >= 0 && expected != in_file)
      fail(ISTHMUS_ERR_FILE, quoted(path_), ": ", name, " is ", in_file, ", but the ", grid,
           " grid has ", expected, " points");
  }

  const std::string& path_;
  WeightsInfo& info_;
  std::optional<NcFile> file_;  // opened by read
  int src_var_ = -1, dst_var_ = -1, matrix_var_ = -1;
};

// One link of the file, checked: false for a null link (left out; see read_scrip_weights),
// true with its 0-based addresses for a link that contributes; a bad link throws, naming it
// (link1: its 1-based number).
bool classify_link(const std::string& path, const WeightsInfo& info, int64_t link1, long long s,
                   long long d, const double* wl, size_t nw, int64_t& s0, int64_t& d0) {
  const bool zero_weights = std::all_of(wl, wl + nw, [](double x) { return x == 0.0; });
  const bool null_link = zero_weights && (s == 0 || d == 0) &&
                         (s == 0 || (s >= 1 && s <= info.src_grid_size)) &&
                         (d == 0 || (d >= 1 && d <= info.dst_grid_size));
  if (null_link) return false;
  const auto address = [&](long long a, const char* var, int64_t size, const char* dim) {
    if (a < 1 || a > size)
      fail(ISTHMUS_ERR_FILE, quoted(path), ": link ", link1, ": ", var, " is ", a, ", outside 1..",
           size, " (", dim, ")", a == 0 ? " in a link with a non-zero weight" : "");
    return static_cast<int64_t>(a - 1);  // 0-based from here on
  };
  s0 = address(s, "src_address", info.src_grid_size, "src_grid_size");
  d0 = address(d, "dst_address", info.dst_grid_size, "dst_grid_size");
  for (size_t k = 0; k < nw; ++k)
    if (!std::isfinite(wl[k]))
      fail(ISTHMUS_ERR_FILE, quoted(path), ": link ", link1, ": remap_matrix weight ", k + 1, " of ",
           nw, " is ", wl[k]);
  return true;
}

// Hyperslab reads of links [c0, c0 + cn) into the chunk buffers.
void read_chunk(const HeaderReader& h, const std::string& path, int64_t c0, int64_t cn, size_t nw,
                long long* src, long long* dst, double* w) {
  const size_t start[2] = {static_cast<size_t>(c0), 0};
  const size_t count[2] = {static_cast<size_t>(cn), nw};
  const auto read = [&](int rc, const char* var) {
    if (rc != NC_NOERR)
      fail(ISTHMUS_ERR_FILE, quoted(path), ": cannot read variable ", var, " at links ", c0 + 1,
           "..", c0 + cn, ": ", nc_strerror(rc));
  };
  read(nc_get_vara_longlong(h.file(), h.src_var(), start, count, src), "src_address");
  read(nc_get_vara_longlong(h.file(), h.dst_var(), start, count, dst), "dst_address");
  read(nc_get_vara_double(h.file(), h.matrix_var(), start, count, w), "remap_matrix");
}

// Reads links [begin, end) in chunks into slab, checking each link; stops at the first bad one.
void read_links(const HeaderReader& h, const std::string& path, const WeightsInfo& info,
                int64_t begin, int64_t end, int64_t chunk, LinkSlab& slab) {
  const int64_t n = end - begin;
  const size_t nw = static_cast<size_t>(info.num_wgts);
  slab.first_link = begin;
  slab.end_link = end;
  size_t kept = 0;
  slab.src.resize(static_cast<size_t>(n));
  slab.dst.resize(static_cast<size_t>(n));
  slab.weights.resize(static_cast<size_t>(n) * nw);
  std::vector<long long> src(static_cast<size_t>(std::min(chunk, n)));
  std::vector<long long> dst(src.size());
  for (int64_t c0 = 0; c0 < n; c0 += chunk) {
    const int64_t cn = std::min(chunk, n - c0);
    // Weights are read in place, at the chunk's position, then moved down over the null links
    // left out (kept <= c0 + i): no buffer of the chunk's weights.
    double* w = slab.weights.data() + size_t(c0) * nw;
    read_chunk(h, path, begin + c0, cn, nw, src.data(), dst.data(), w);
    for (int64_t i = 0; i < cn; ++i) {
      const double* wl = w + size_t(i) * nw;
      if (!classify_link(path, info, begin + c0 + i + 1, src[size_t(i)], dst[size_t(i)], wl, nw,
                         slab.src[kept], slab.dst[kept])) {
        ++slab.null_links;
        continue;
      }
      for (size_t k = 0; k < nw; ++k) slab.weights[kept * nw + k] = wl[k];  // kept <= c0 + i
      ++kept;
    }
  }
  slab.src.resize(kept);
  slab.dst.resize(kept);
  slab.weights.resize(kept * nw);
  // No shrink_to_fit: its copy would double the peak memory for the few null links.
}

// The file's dst_address, read through a small cache of aligned blocks: the boundaries of a
// rank's destination runs are found by galloping from the previous one, so a run's search reads
// a few blocks near it, not the variable.
class AddressBlocks {
 public:
  AddressBlocks(const HeaderReader& h, const std::string& path, int64_t num_links)
      : h_(h), path_(path), n_(num_links) {}
  long long at(int64_t i) {
    const int64_t b = i / kBlock;
    auto it = blocks_.find(b);
    if (it == blocks_.end()) {
      const size_t start = static_cast<size_t>(b * kBlock);
      const size_t count = static_cast<size_t>(std::min(kBlock, n_ - b * kBlock));
      std::vector<long long> v(count);
      const int rc = nc_get_vara_longlong(h_.file(), h_.dst_var(), &start, &count, v.data());
      if (rc != NC_NOERR)
        fail(ISTHMUS_ERR_FILE, quoted(path_), ": cannot read variable dst_address at links ",
             start + 1, "..", start + count, ": ", nc_strerror(rc));
      if (blocks_.size() >= kKept) blocks_.clear();
      it = blocks_.emplace(b, std::move(v)).first;
    }
    return it->second[static_cast<size_t>(i - b * kBlock)];
  }
  // The first link i in [from, n) whose dst_address (1-based) is at least a, if the addresses
  // are sorted (n if none): galloping from `from`, then bisection.
  int64_t first_at_least(long long a, int64_t from) {
    int64_t lo = from, step = 1;
    int64_t hi = from;
    while (hi < n_ && at(hi) < a) {
      lo = hi + 1;
      hi = std::min(n_, hi + step);
      step *= 2;
    }
    while (lo < hi) {  // at(hi) >= a or hi == n; everything before lo is below a
      const int64_t mid = lo + (hi - lo) / 2;
      if (at(mid) < a) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

 private:
  static constexpr int64_t kBlock = 1024;
  static constexpr size_t kKept = 64;
  const HeaderReader& h_;
  const std::string& path_;
  int64_t n_;
  std::unordered_map<int64_t, std::vector<long long>> blocks_;
};

// A 62-bit hash of the header values every rank must read alike.
uint64_t header_hash(const WeightsInfo& info) {
  const int64_t words[] = {info.num_links, info.num_wgts, info.src_grid_size,
                           info.dst_grid_size};
  int halves[2 * 4];
  for (int i = 0; i < 4; ++i) {
    halves[2 * i] = static_cast<int>(static_cast<uint64_t>(words[i]) & 0xffffffffu);
    halves[2 * i + 1] = static_cast<int>(static_cast<uint64_t>(words[i]) >> 32);
  }
  return hash_values(halves, 8);
}

// Failure path only. The agreement gives a rank that failed with the same code as the lowest
// failing rank its own message; for a bad link that would name a later link of the file on
// later ranks. Here every rank whose slab failed takes the lowest failing rank's message, so
// that every rank names the file's first bad link. Called by every rank (all of them have
// thrown from conclude).
[[noreturn]] void rethrow_first_bad_link(MPI_Comm comm, const Agreement& agreement,
                                         bool slab_failed_here, const Error& agreed) {
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  int lowest[2] = {agreement.failed() ? rank : INT_MAX, slab_failed_here ? rank : INT_MAX};
  ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, lowest, 2, MPI_INT, MPI_MIN, comm));
  if (lowest[1] == INT_MAX || lowest[0] == INT_MAX) throw agreed;  // no slab failed anywhere
  const int failing = lowest[0];
  int64_t head[2] = {agreed.code(), static_cast<int64_t>(std::strlen(agreed.what()))};
  ISTHMUS_MPI(wmpi::Bcast(head, 2, MPI_INT64_T, failing, comm));
  std::string message(rank == failing ? agreed.what() : std::string(size_t(head[1]), '\0'));
  ISTHMUS_MPI(wmpi::Bcast(message.data(), static_cast<int>(head[1]), MPI_CHAR, failing, comm));
  if (rank == failing || !slab_failed_here || agreed.code() != head[0]) throw agreed;
  throw Error(agreed.code(), "failed on rank " + std::to_string(failing) + ": " + message);
}

}  // namespace

int64_t slab_begin(int64_t num_links, int rank, int nranks) {
  // floor(rank * L / P) without overflow: rank * (L % P) < P^2 < 2^62.
  const int64_t q = num_links / nranks, r = num_links % nranks;
  return rank * q + (rank * r) / nranks;
}

int reader_index(int rank, int nranks, int readers) {
  if (readers <= 0 || nranks <= 0) return -1;
  // the smallest j with j * nranks / readers >= rank
  const int64_t j = (static_cast<int64_t>(rank) * readers + nranks - 1) / nranks;
  return j < readers && j * nranks / readers == rank ? static_cast<int>(j) : -1;
}

int readers_of(int64_t num_links, int nranks, int64_t min_slab_links) {
  const int64_t wanted = std::max<int64_t>(1, (num_links + min_slab_links - 1) / min_slab_links);
  return static_cast<int>(std::min<int64_t>(wanted, nranks));
}

LinkSlab read_scrip_weights(MPI_Comm comm, const std::string& path, const WeightsExpect& expect,
                            WeightsInfo* info, Agreement* pending) {
  return read_scrip_weights_chunked(comm, path, expect, info, pending, kChunkLinks);
}

LinkSlab read_scrip_weights_chunked(MPI_Comm comm, const std::string& path,
                                    const WeightsExpect& expect, WeightsInfo* info,
                                    Agreement* pending, int64_t chunk_links,
                                    int64_t min_slab_links) {
  Agreement own;
  Agreement& agreement = pending ? *pending : own;
  int rank = 0, nranks = 1;
  if (comm != MPI_COMM_NULL) {
    ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
    ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  }
  agreement.check([&] {
    if (comm == MPI_COMM_NULL) fail(ISTHMUS_ERR_ARG, "comm is MPI_COMM_NULL");
    if (!info) fail(ISTHMUS_ERR_ARG, "info is NULL");
    if (path.empty()) fail(ISTHMUS_ERR_ARG, "the path of the weights file is empty");
    if (expect.src_grid_size < -1 || expect.dst_grid_size < -1)
      fail(ISTHMUS_ERR_ARG, "expect.src_grid_size (", expect.src_grid_size,
           ") and expect.dst_grid_size (", expect.dst_grid_size, ") must be -1 (unchecked) or sizes");
    if (chunk_links < 1) fail(ISTHMUS_ERR_ARG, "chunk_links is ", chunk_links, ", expected 1 or more");
    if (min_slab_links < 1)
      fail(ISTHMUS_ERR_ARG, "min_slab_links is ", min_slab_links, ", expected 1 or more");
  });
  // Rank 0 reads the header; the others learn it, or its failure, from one broadcast. Only the
  // readers (readers_of) open the file again, for their slabs: a small file costs one netCDF
  // open, not one per rank.
  WeightsInfo header;
  LinkSlab slab;
  std::optional<HeaderReader> file;
  bool header_ok = false;
  if (comm != MPI_COMM_NULL) {
    std::string blob;
    if (rank == 0) {
      if (agreement.failed()) {
        put_word(blob, 2);
      } else {
        file.emplace(path, header);
        try {
          file->read(expect);
          blob = pack_header(header);
        } catch (const Error& e) {
          put_word(blob, 1);
          put_word(blob, e.code());
          put_text(blob, e.what());
        }
      }
    }
    broadcast(comm, blob);
    Unpacker u{blob};
    const int64_t status = u.word();
    if (status == 1) {  // every rank fails as rank 0 did (as if it had read the header itself)
      const int code = static_cast<int>(u.word());
      agreement.record(code, u.text());
    } else if (status == 0 && rank != 0) {
      header = unpack_header(u);
    }
    header_ok = status == 0 && !agreement.failed();
  }
  const int readers = readers_of(header.num_links, nranks, min_slab_links);
  const int reader = reader_index(rank, nranks, readers);  // -1: not a reader
  const std::vector<int> path_chars(path.begin(), path.end());
  agreement.match_hash("the path of the weights file",
                       hash_values(path_chars.data(), static_cast<int64_t>(path_chars.size())));
  // the other readers open the file for their slabs and read its header too: it must be rank 0's
  std::optional<uint64_t> own_hash;
  if (header_ok) own_hash = header_hash(header);
  if (header_ok && rank != 0 && reader >= 0) {
    WeightsInfo own;
    file.emplace(path, own);
    agreement.check([&] { file->read(expect); });
    own_hash = agreement.failed() ? std::nullopt : std::optional<uint64_t>(header_hash(own));
  }
  agreement.match_hash("the header of the weights file (num_links, num_wgts, grid sizes)", own_hash);
  const bool same_header = own_hash && *own_hash == header_hash(header);
  agreement.check([&] {
    if (header_ok && same_header && reader >= 0)
      read_links(*file, path, header, slab_begin(header.num_links, reader, readers),
                 slab_begin(header.num_links, reader + 1, readers), chunk_links, slab);
  });
  const bool slab_failed_here = header_ok && agreement.failed();
  try {
    agreement.conclude(comm);
  } catch (const Error& e) {
    if (comm == MPI_COMM_NULL || e.code() == ISTHMUS_ERR_MPI) throw;
    rethrow_first_bad_link(comm, agreement, slab_failed_here, e);
  }
  *info = std::move(header);
  return slab;
}

// ---- Writer ------------------------------------------------------------------------------

namespace {

const char* side_name(int side) { return side == 0 ? "src" : "dst"; }

}  // namespace

ScripWeightsWriter::ScripWeightsWriter(const std::string& path, const WeightsInfo& info,
                                       const WeightsGridVariables* grids)
    : ScripWeightsWriter(MPI_COMM_SELF, path, info, grids) {}

ScripWeightsWriter::ScripWeightsWriter(MPI_Comm comm, const std::string& path,
                                       const WeightsInfo& info, const WeightsGridVariables* grids)
    : comm_(comm), path_(path), info_(info) {
  Agreement a;
  a.check([&] {
    if (info.num_links < 0 || info.num_wgts < 1 || info.src_grid_size < 1 || info.dst_grid_size < 1)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path), ": num_links (", info.num_links,
           "), num_wgts (", info.num_wgts, ") or a grid size (", info.src_grid_size, ", ",
           info.dst_grid_size, ") is out of range");
    for (int side = 0; grids && side < 2; ++side) {
      const Grid* grid = side == 0 ? grids->src : grids->dst;
      const int64_t n = side == 0 ? info.src_grid_size : info.dst_grid_size;
      if (grid && grid->size() != n && !grids->headers_only)
        fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path), ": the ", side_name(side),
             " grid \"", grid->name, "\" has ", grid->size(), " points, the file ", n);
    }
  });
  a.conclude(comm);
  if (info_.src_grid_dims.empty()) info_.src_grid_dims = {info.src_grid_size};
  if (info_.dst_grid_dims.empty()) info_.dst_grid_dims = {info.dst_grid_size};
  // Addresses as int (what every SCRIP tool writes) unless a grid is too large for it.
  const bool wide = std::max(info.src_grid_size, info.dst_grid_size) > INT_MAX;
  const ParallelNcFile::Type address_type = wide ? ParallelNcFile::Int64 : ParallelNcFile::Int;
  file_ = std::make_unique<ParallelNcFile>(comm, path, wide);
  ParallelNcFile& f = *file_;
  const int src_size = f.def_dim("src_grid_size", info.src_grid_size);
  const int dst_size = f.def_dim("dst_grid_size", info.dst_grid_size);
  const int src_rank = f.def_dim("src_grid_rank", int64_t(info_.src_grid_dims.size()));
  const int dst_rank = f.def_dim("dst_grid_rank", int64_t(info_.dst_grid_dims.size()));
  const int links = f.def_dim("num_links", info.num_links);
  const int wgts = f.def_dim("num_wgts", info.num_wgts);
  const int src_dims_var = f.def_var("src_grid_dims", address_type, {src_rank});
  const int dst_dims_var = f.def_var("dst_grid_dims", address_type, {dst_rank});
  src_var_ = f.def_var("src_address", address_type, {links});
  dst_var_ = f.def_var("dst_address", address_type, {links});
  matrix_var_ = f.def_var("remap_matrix", ParallelNcFile::Double, {links, wgts});
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"title", &info.title},
                                    {"normalization", &info.normalization},
                                    {"map_method", &info.map_method},
                                    {"conventions", &info.conventions}})
    if (!value->empty()) f.put_att_text(-1, name, *value);
  if (grids) define_grid_variables(*grids, src_size, dst_size);
  f.enddef();
  // The grids' dims, from rank 0
  const std::vector<long long> src_dims(info_.src_grid_dims.begin(), info_.src_grid_dims.end());
  const std::vector<long long> dst_dims(info_.dst_grid_dims.begin(), info_.dst_grid_dims.end());
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  f.put_rows(src_dims_var, 0, rank == 0 ? int64_t(src_dims.size()) : 0, src_dims.data());
  f.put_rows(dst_dims_var, 0, rank == 0 ? int64_t(dst_dims.size()) : 0, dst_dims.data());
}

void ScripWeightsWriter::define_grid_variables(const WeightsGridVariables& g, int src_size,
                                               int dst_size) {
  ParallelNcFile& f = *file_;
  for (const auto& [name, value] : g.attributes) f.put_att_text(-1, name, value);
  for (const auto& [att, grid] : {std::pair<const char*, const Grid*>{"source_grid", g.src},
                                  std::pair<const char*, const Grid*>{"dest_grid", g.dst}})
    if (grid && !grid->name.empty()) f.put_att_text(-1, att, grid->name);
  const auto def = [&](const std::string& name, ParallelNcFile::Type type, std::vector<int> dims,
                       const char* units) {
    const int id = f.def_var(name, type, dims);
    if (units) f.put_att_text(id, "units", units);
    return id;
  };
  for (int side = 0; side < 2; ++side) {
    const Grid* grid = side == 0 ? g.src : g.dst;
    if (!grid) continue;
    const std::string s = side_name(side);
    const int size_dim = side == 0 ? src_size : dst_size;
    GridVars& v = grid_vars_[side];
    v.lat = def(s + "_grid_center_lat", ParallelNcFile::Double, {size_dim}, "radians");
    v.lon = def(s + "_grid_center_lon", ParallelNcFile::Double, {size_dim}, "radians");
    if (g.corners && grid->has_corners()) {
      const int corners = f.def_dim(s + "_grid_corners", grid->num_corners);
      v.corners = grid->num_corners;
      v.clat = def(s + "_grid_corner_lat", ParallelNcFile::Double, {size_dim, corners}, "radians");
      v.clon = def(s + "_grid_corner_lon", ParallelNcFile::Double, {size_dim, corners}, "radians");
    }
    v.imask = def(s + "_grid_imask", ParallelNcFile::Int, {size_dim}, "unitless");
    if (g.areas) v.area = def(s + "_grid_area", ParallelNcFile::Double, {size_dim}, "square radians");
    if (g.fractions) v.frac = def(s + "_grid_frac", ParallelNcFile::Double, {size_dim}, "unitless");
  }
  if (!g.methods.empty()) {
    method_var_ = f.def_var("dst_grid_method", ParallelNcFile::Byte, {dst_size});
    f.put_att_text(method_var_, "methods", g.methods);
    f.put_att_text(method_var_, "long_name",
                   "0-based step of the methods attribute that served the point, -1 none");
  }
}

bool ScripWeightsWriter::parallel() const { return file_ && file_->parallel(); }

void ScripWeightsWriter::write_points(int side, const Grid& g, int64_t first, int64_t begin,
                                      int64_t n) {
  // Checked with the puts' failures, agreed at close(): the ranks need not wait for each other.
  file_->check([&] {
    if (side != 0 && side != 1)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": side ", side, " is not 0 or 1");
    const GridVars& v = grid_vars_[side];
    const int64_t size = side == 0 ? info_.src_grid_size : info_.dst_grid_size;
    if (v.lat < 0)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": no ", side_name(side),
           " grid variables were defined");
    if (n < 0 || begin < first || begin + n > size || begin - first + n > g.size())
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": ", side_name(side),
           " points [", begin, ", ", begin + n, ") from a grid of points [", first, ", ",
           first + g.size(), ") out of ", size);
    if (n > 0 && v.clat >= 0 && g.num_corners != v.corners)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": a grid of ", g.num_corners,
           " corners per cell for ", v.corners);
  });
  if (file_->failed()) {  // still every put, for the ranks that write through rank 0
    side &= 1;
    n = 0;
  }
  const GridVars& v = grid_vars_[side];
  const int64_t o = begin - first;
  std::vector<int> m(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) m[size_t(i)] = g.active(o + i) ? 1 : 0;
  file_->put_rows(v.lat, begin, n, g.lat.data() + o);
  file_->put_rows(v.lon, begin, n, g.lon.data() + o);
  if (v.clat >= 0) {
    file_->put_rows(v.clat, begin, n, g.corner_lat.data() + o * v.corners);
    file_->put_rows(v.clon, begin, n, g.corner_lon.data() + o * v.corners);
  }
  file_->put_rows(v.imask, begin, n, m.data());
}

void ScripWeightsWriter::write_values(int side, int var, const char* what, int64_t begin,
                                      int64_t n, const double* values) {
  // The definitions are the same on every rank: so is this failure.
  if (var < 0)
    fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": no variable ",
         side_name(side & 1), what, " was defined");
  file_->put_rows(var, begin, n, values);
}

void ScripWeightsWriter::write_areas(int side, int64_t begin, int64_t n, const double* area) {
  write_values(side, grid_vars_[side & 1].area, "_grid_area", begin, n, area);
}

void ScripWeightsWriter::write_fractions(int side, int64_t begin, int64_t n, const double* frac) {
  write_values(side, grid_vars_[side & 1].frac, "_grid_frac", begin, n, frac);
}

void ScripWeightsWriter::write_methods(int64_t begin, int64_t n, const int8_t* method) {
  if (method_var_ < 0)
    fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": no dst_grid_method was defined");
  file_->put_rows(method_var_, begin, n, reinterpret_cast<const signed char*>(method));
}

ScripWeightsWriter::~ScripWeightsWriter() = default;

void ScripWeightsWriter::append(const int64_t* src, const int64_t* dst, const double* weights,
                                int64_t n) {
  append_links(src, dst, weights, n);
}

void ScripWeightsWriter::append(const int64_t* src, const int32_t* dst, const double* weights,
                                int64_t n) {
  append_links(src, dst, weights, n);
}

template <typename DstIndex>
void ScripWeightsWriter::append_links(const int64_t* src, const DstIndex* dst,
                                      const double* weights, int64_t n) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm_, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm_, &nranks));
  // Every rank's count: this rank's place after the lower ranks', and the number of chunks the
  // rank with the most links writes (every rank takes part in each chunk's writes).
  // (A closed file counts as INT64_MIN: every rank then names the same rank and reason.)
  std::vector<int64_t> counts(static_cast<size_t>(nranks));
  const int64_t mine = file_ ? n : INT64_MIN;
  ISTHMUS_MPI(wmpi::Allgather(&mine, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_));
  int64_t before = 0, total = 0, most = 0;
  for (int r = 0; r < nranks; ++r) {
    if (counts[size_t(r)] == INT64_MIN)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": rank ", r, " appends to a closed file");
    if (counts[size_t(r)] < 0)
      fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": rank ", r, " appends ",
           counts[size_t(r)], " links");
    if (r < rank) before += counts[size_t(r)];
    total += counts[size_t(r)];
    most = std::max(most, counts[size_t(r)]);
  }
  if (total > info_.num_links - written_)
    fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": appending ", total,
         " links to the ", written_, " written exceeds num_links ", info_.num_links);
  const size_t nw = static_cast<size_t>(info_.num_wgts);
  std::vector<long long> one_based;
  for (int64_t c0 = 0; c0 < most; c0 += kWriteChunkLinks) {
    const int64_t cn = std::max<int64_t>(0, std::min(kWriteChunkLinks, n - c0));
    const int64_t at = written_ + before + c0;
    one_based.resize(static_cast<size_t>(cn));
    for (int64_t i = 0; i < cn; ++i) one_based[size_t(i)] = src[c0 + i] + 1;
    file_->put_rows(src_var_, at, cn, one_based.data());
    for (int64_t i = 0; i < cn; ++i) one_based[size_t(i)] = dst[c0 + i] + 1;
    file_->put_rows(dst_var_, at, cn, one_based.data());
    file_->put_rows(matrix_var_, at, cn, cn > 0 ? weights + size_t(c0) * nw : weights);
  }
  written_ += total;
}

void ScripWeightsWriter::close() {
  if (!file_) return;
  std::unique_ptr<ParallelNcFile> f = std::move(file_);
  f->close();
  if (written_ != info_.num_links)
    fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path_), ": ", written_,
         " links were appended, but num_links is ", info_.num_links);
}

void write_scrip_weights(const std::string& path, const WeightsInfo& info,
                         const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                         const std::vector<double>& weights) {
  const int64_t n = static_cast<int64_t>(src.size());
  if (static_cast<int64_t>(dst.size()) != n || n != info.num_links ||
      static_cast<int64_t>(weights.size()) != n * info.num_wgts)
    fail(ISTHMUS_ERR_ARG, "cannot write the ", quoted(path), ": ", src.size(), " sources, ",
         dst.size(), " destinations and ", weights.size(), " weights for num_links ",
         info.num_links, " and num_wgts ", info.num_wgts);
  ScripWeightsWriter writer(path, info);
  writer.append(src.data(), dst.data(), weights.data(), n);
  writer.close();
}

std::optional<LinkSlab> read_links_of_destinations(MPI_Comm comm, const std::string& path,
                                                   const WeightsExpect& expect,
                                                   const IndexList* part, WeightsInfo* info) {
  int rank = 0, nranks = 1;
  ISTHMUS_MPI(MPI_Comm_rank(comm, &rank));
  ISTHMUS_MPI(MPI_Comm_size(comm, &nranks));
  WeightsInfo header;
  LinkSlab slab;
  slab.first_link = 0;
  bool usable = true;
  std::optional<uint64_t> hash;
  uint64_t sum = 0;  // + each link this rank accounts for, - its share of all links
  // false (or a throw): this rank cannot vouch for its links
  auto read_own = [&]() -> bool {
    HeaderReader h(path, header);
    h.read(expect);
    hash = header_hash(header);
    if (!part || part->global_size() != header.dst_grid_size) return false;
    const int64_t L = header.num_links;
    const size_t nw = static_cast<size_t>(header.num_wgts);
    for (int64_t i = slab_begin(L, rank, nranks), e = slab_begin(L, rank + 1, nranks); i < e; ++i)
      sum -= mix64(static_cast<uint64_t>(i));
    // this rank's destination runs, by global index, adjacent ones merged
    std::vector<Segment> runs;
    for (const Segment& g : part->segments())
      if (g.length > 0) runs.push_back(g);
    std::sort(runs.begin(), runs.end(), [](const Segment& a, const Segment& b) { return a.start < b.start; });
    std::vector<Segment> merged;
    for (const Segment& g : runs) {
      if (!merged.empty() && merged.back().start + merged.back().length == g.start) merged.back().length += g.length;
      else merged.push_back(g);
    }
    // each run's links, if the file lists its links by destination: [first, end) of the file
    AddressBlocks addresses(h, path, L);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    int64_t from = 0;
    for (const Segment& g : merged) {
      const int64_t first = addresses.first_at_least(g.start + 1, from);  // the file is 1-based
      const int64_t end = addresses.first_at_least(g.start + g.length + 1, first);
      if (end > first) {
        if (!ranges.empty() && ranges.back().second == first) ranges.back().second = end;
        else ranges.emplace_back(first, end);
      }
      from = end;
    }
    int64_t total = 0;
    for (const auto& r : ranges) total += r.second - r.first;
    // A part scattered point by point (OASIS's points partitions) makes a range of a few links
    // per point: three hyperslab reads each cost more than routing those links, so the slabs
    // and the directory take it.
    if (static_cast<int64_t>(ranges.size()) > kFewRanges && total < kLinksPerRange * static_cast<int64_t>(ranges.size()))
      return false;
    slab.src.reserve(static_cast<size_t>(total));
    slab.dst.reserve(static_cast<size_t>(total));
    slab.number.reserve(static_cast<size_t>(total));
    slab.weights.reserve(static_cast<size_t>(total) * nw);
    const int64_t chunk = std::min<int64_t>(kChunkLinks, std::max<int64_t>(total, 1));
    std::vector<long long> src(static_cast<size_t>(chunk)), dst(src.size());
    std::vector<double> w(src.size() * nw);
    const LocalPositions where(*part);
    auto holds = [&](long long d) { return where(d - 1) >= 0; };  // d: 1-based address
    const int64_t ns = header.src_grid_size, nd = header.dst_grid_size;
    for (const auto& [first, end] : ranges)
      for (int64_t c0 = first; c0 < end; c0 += chunk) {
        const int64_t cn = std::min(chunk, end - c0);
        read_chunk(h, path, c0, cn, nw, src.data(), dst.data(), w.data());
        for (int64_t i = 0; i < cn; ++i) {
          // a link is this rank's if its destination is: it accounts for it, contributing or not
          const long long sa = src[size_t(i)], da = dst[size_t(i)];
          if (!holds(da)) continue;
          sum += mix64(static_cast<uint64_t>(c0 + i));
          int64_t s0 = sa - 1, d0 = da - 1;
          const double* wl = w.data() + size_t(i) * nw;
          // the usual link (both addresses in range, finite weights) as classify_link takes it;
          // the others it classifies, or names
          bool usual = sa >= 1 && sa <= ns && da >= 1 && da <= nd;
          for (size_t k = 0; k < nw && usual; ++k) usual = std::isfinite(wl[k]);
          if (!usual && !classify_link(path, header, c0 + i + 1, sa, da, wl, nw, s0, d0)) {
            ++slab.null_links;
            continue;
          }
          slab.src.push_back(s0);
          slab.dst.push_back(d0);
          slab.number.push_back(c0 + i);
          slab.weights.insert(slab.weights.end(), wl, wl + nw);
        }
      }
    slab.end_link = L;
    return true;
  };
  try {
    usable = read_own();
  } catch (const std::exception&) {
    usable = false;  // whatever it is, the slab reading finds and names it
  }
  // One reduction: whether every rank read alike, and whether the links accounted for are every
  // link of the file once (the sum of a mixed hash of their numbers against that of 0 .. L-1;
  // a 2^-64 chance of a false match).
  Agreement a;
  const int unusable = a.maximum("a rank that cannot read its links directly", usable ? 0 : 1);
  const int hmax = a.maximum("the weights file's header hash", hash ? std::optional<int64_t>(*hash) : std::nullopt);
  const int hneg = a.maximum("the weights file's header hash (negated)",
                             hash ? std::optional<int64_t>(-static_cast<int64_t>(*hash)) : std::nullopt);
  a.use_checksum();
  a.add_to_checksum(sum);
  a.conclude(comm);
  if (a.agreed(unusable).value_or(1) != 0 || !a.agreed(hmax) || *a.agreed(hmax) != -*a.agreed(hneg) ||
      a.checksum() != 0)
    return std::nullopt;
  *info = std::move(header);
  return slab;
}

}  // namespace isthmus::remap
