#include "coupler/coupler.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/comm.h"
#include "base/agreement.h"
#include "base/broadcast.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/nodes.h"
#include "base/wait.h"

namespace isthmus::coupler {

namespace {

constexpr int kTagDeclarations = 17;
constexpr int kTagGroupLocal = 18;
constexpr int kTagGroupMulti = 19;
constexpr int kTagGroupPair = 100;  // + the pair's number
constexpr int kTagGroupAll = 20;

// (never 0: 0 means "no component")
uint64_t hash_of(const std::string& s, uint64_t seed) { return hash_text(s, seed); }

const char* direction_name(VarDirection d) { return d == VarDirection::In ? "in" : "out"; }

// The place of `e`, from 1, among the entries sorted by SEQ (a stable sort, an entry without
// SEQ counting as 1), which OASIS3-MCT 4 and 5 put in the names of EXPOUT and OUTPUT files
// (mod_oasis_namcouple's sort by SEQ; the namcouple's own order where no SEQ is given).
int output_number(const std::vector<Entry>& entries, const Entry& e) {
  auto seq = [](const Entry& x) { return x.seq > 0 ? x.seq : 1; };
  int before = 0;
  for (const Entry& x : entries)
    if (seq(x) < seq(e) || (seq(x) == seq(e) && &x < &e)) ++before;
  return before + 1;
}

// The communicator of some ranks of `world` (in the order given), made by them alone — never a
// collective over the world — with MPI errors returned, and the nodes of its ranks attached
// (node_runs: the world's ranks' nodes, as runs of consecutive ranks (first rank, node)), so that
// no mapping built over it asks MPI again.
// When they are the whole world in order (two components on all ranks), world's own group
// serves: no O(P) group is built per rank.
MPI_Comm comm_of(MPI_Comm world, const RankSet& ranks, int tag,
                 const std::vector<std::pair<int, uint64_t>>& node_runs) {
  MPI_Group world_group, group;
  ISTHMUS_MPI(MPI_Comm_group(world, &world_group));
  int size = 0;
  ISTHMUS_MPI(MPI_Comm_size(world, &size));
  if (ranks.size() == size) {
    group = world_group;
  } else {
    std::vector<std::array<int, 3>> ranges;
    for (const RankSet::Run& r : ranks.runs()) ranges.push_back({r.first, r.last, 1});
    ISTHMUS_MPI(MPI_Group_range_incl(world_group, static_cast<int>(ranges.size()),
                                     reinterpret_cast<int(*)[3]>(ranges.data()), &group));
  }
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(world, group, tag, &comm);
  if (group != world_group) MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  ISTHMUS_MPI(rc);
  ISTHMUS_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  // the members' nodes as runs of the new communicator's ranks: O(rank runs + node runs)
  std::vector<std::pair<int, uint64_t>> runs;
  int at = 0;  // the new communicator's rank of r.first
  for (const RankSet::Run& r : ranks.runs()) {
    auto n = std::prev(std::upper_bound(node_runs.begin(), node_runs.end(), r.first,
                                        [](int x, const std::pair<int, uint64_t>& v) { return x < v.first; }));
    for (int w = r.first; w <= r.last;) {
      if (runs.empty() || runs.back().second != n->second) runs.push_back({at + (w - r.first), n->second});
      const int end = std::next(n) == node_runs.end() ? r.last + 1 : std::min(r.last + 1, std::next(n)->first);
      w = end;
      ++n;
    }
    at += r.last - r.first + 1;
  }
  Nodes::attach_runs(comm, runs);
  return comm;
}

}  // namespace

Coupler::Coupler(MPI_Comm world, const std::string& component, Config config, CouplerOptions opt)
    : name_(component), opt_(std::move(opt)) {
  init(world, std::move(config));
}

Coupler::Coupler(MPI_Comm world, const std::string& component, const std::string& config_path,
                 CouplerOptions opt)
    : name_(component), opt_(std::move(opt)) {
  init(world, Config{});
  if (me_ < 0) return;
  // the component's first rank reads the file; every rank parses the same text, so every
  // rank fails alike on a bad configuration
  // (one broadcast: whether it could be read, then the text)
  std::string text;
  int rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(local_, &rank));
  if (rank == 0) {
    std::ifstream in(config_path, std::ios::binary);
    const bool readable = static_cast<bool>(in);
    std::ostringstream os;
    if (readable && in.peek() != std::ifstream::traits_type::eof()) os << in.rdbuf();
    text = (readable ? "1" : "0") + os.str();
  }
  broadcast(local_, text);
  if (text.empty() || text[0] != '1')
    fail(ISTHMUS_ERR_CONFIG, "the configuration file ", config_path, " cannot be read (component ",
         name_, ")");
  text.erase(0, 1);
  config_ = parse_config(text, config_path);
}

void Coupler::init(MPI_Comm world, Config config) {
  config_ = std::move(config);
  timeout_s_ = opt_.timeout_s;
  if (timeout_s_ <= 0)
    if (const char* env = std::getenv("ISTHMUS_COUPLER_TIMEOUT")) timeout_s_ = std::atof(env);
  // The caller's communicator, used for one collective (below) and as the parent of the
  // groups' communicators; the coupler's own messages travel only on communicators it creates
  // (never on the caller's, where a model's wildcard receive could take them).
  world_ = world;
  int size = 0, rank = 0;
  ISTHMUS_MPI(MPI_Comm_size(world_, &size));
  ISTHMUS_MPI(MPI_Comm_rank(world_, &rank));
  // The one collective over the whole world: who runs which component and on which node (24
  // bytes per rank: the name's hash, the node's name's hash, and a second hash of the name, so
  // that two names with one hash, which would make one component of two, show on every rank).
  constexpr int kWords = 3;  // per rank: name hash, node hash, second name hash
  const uint64_t mine[kWords] = {name_.empty() ? 0 : hash_of(name_, 1), node_name_hash(),
                                 name_.empty() ? 0 : hash_of(name_, 2)};
  std::vector<uint64_t> all(kWords * static_cast<size_t>(size));
  ISTHMUS_MPI(wmpi::Allgather(mine, kWords, MPI_UINT64_T, all.data(), kWords, MPI_UINT64_T, world_));
  auto word = [&](int r, int k) { return all[kWords * static_cast<size_t>(r) + static_cast<size_t>(k)]; };
  // the nodes as runs of consecutive ranks (O(nodes), not O(P), kept: a simulation holds every
  // rank's copy in one process)
  for (int r = 0; r < size; ++r) {
    const uint64_t node = word(r, 1);
    if (node_runs_.empty() || node_runs_.back().second != node) node_runs_.push_back({r, node});
  }
  std::vector<uint64_t> second;  // per component: its first rank's second hash
  for (int r = 0; r < size; ++r) {
    const uint64_t h = word(r, 0), h2 = word(r, 2);
    if (h == 0) continue;
    auto it = std::find_if(comps_.begin(), comps_.end(), [&](const Component& c) { return c.hash == h; });
    if (it == comps_.end()) {
      comps_.push_back({h, "", {}, {}, {}});
      second.push_back(h2);
      it = comps_.end() - 1;
    }
    if (second[static_cast<size_t>(it - comps_.begin())] != h2)  // every rank sees it alike
      fail(ISTHMUS_ERR_ARG, "the component names of world ranks ", it->world_ranks.front(), " and ", r,
           " differ but share a hash (two component names collide); rename one");
    it->world_ranks.push_back(r);
    if (r == rank) me_ = static_cast<int>(it - comps_.begin());
  }
  if (me_ < 0) return;
  comps_[me_].name = name_;
  for (int r = 0; r < size; ++r)
    if (word(r, 0) != 0) all_ranks_.push_back(r);
  if (comps_.size() > 1)  // one component alone neither swaps declarations nor pairs
    all_ = comm_of(world_, all_ranks_, kTagGroupAll, node_runs_);
  full_ = comm_of(world_, comps_[me_].world_ranks, kTagGroupLocal, node_runs_);
  local_ = full_;
}

Coupler::~Coupler() {
  couplings_.clear();  // their redistributions free their own communicators first
  for (auto& [pair, comm] : pair_comms_) MPI_Comm_free(&comm);
  if (all_ != MPI_COMM_NULL && !all_is_pair_) MPI_Comm_free(&all_);
  if (local_ != MPI_COMM_NULL && local_ != full_) MPI_Comm_free(&local_);
  if (full_ != MPI_COMM_NULL) MPI_Comm_free(&full_);
}

void Coupler::set_coupling_comm(MPI_Comm coupling) {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, "set_couplcomm: this rank runs no component");
  Agreement a;
  a.check([&] {
    if (defined_ || !definitions_.empty())
      fail(ISTHMUS_ERR_ARG, "set_couplcomm after a definition (component ", name_, ")");
  });
  a.conclude(full_);
  // the coupling ranks must be the component's ranks in coupling: each names whether it is
  int in = coupling != MPI_COMM_NULL, count = 0, size = 0;
  ISTHMUS_MPI(wmpi::Allreduce(&in, &count, 1, MPI_INT, MPI_SUM, full_));
  if (in) ISTHMUS_MPI(MPI_Comm_size(coupling, &size));
  Agreement b;
  b.check([&] {
    if (in && size != count)
      fail(ISTHMUS_ERR_ARG, "set_couplcomm: the coupling communicator has ", size, " ranks but ",
           count, " ranks of component ", name_, " pass one");
  });
  b.conclude(full_);
  if (local_ != full_ && local_ != MPI_COMM_NULL) MPI_Comm_free(&local_);
  local_ = MPI_COMM_NULL;
  if (in) {
    local_ = duplicate(coupling);
    ISTHMUS_MPI(MPI_Comm_set_errhandler(local_, MPI_ERRORS_RETURN));
  }
}

void Coupler::require_defining(const char* what) const {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, what, ": this rank runs no component");
  if (defined_) fail(ISTHMUS_ERR_ARG, what, " after enddef (component ", name_, ")");
}

template <typename F>
void Coupler::defining(const std::string& what, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    // compared in enddef as any definition: where not every rank failed alike, enddef fails
    std::string why = e.what();
    std::replace(why.begin(), why.end(), '\n', ' ');  // one line per definition
    definitions_.push_back(what + ": failed: " + why);
    throw;
  }
}

int Coupler::def_partition(const IndexList* points, const std::string& name,
                           const std::optional<Error>& failure, bool size_from_points) {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, "def_partition: this rank runs no component");
  if (!active())
    fail(ISTHMUS_ERR_ARG, "def_partition: this rank of ", name_, " is not in its coupling communicator");
  defining("def_partition \"" + name + "\"", [&] {
    require_defining("def_partition");
    if (failure) throw *failure;
    if (!points) fail(ISTHMUS_ERR_ARG, "def_partition ", name, ": the points are NULL");
  });
  const int id = static_cast<int>(partitions_.size());
  partitions_.push_back({*points, size_from_points});
  std::ostringstream d;
  d << "def_partition " << id << " \"" << name << "\": global size ";
  if (size_from_points) d << "from the points";
  else d << points->global_size();
  definitions_.push_back(d.str());
  return id;
}

int Coupler::def_var(const std::string& name, int partition, VarDirection dir, DataType type,
                     int bundle, const std::optional<Error>& failure) {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, "def_var: this rank runs no component");
  if (!active())
    fail(ISTHMUS_ERR_ARG, "def_var: this rank of ", name_, " is not in its coupling communicator");
  defining("def_var \"" + name + "\"", [&] {
    require_defining("def_var");
    if (failure) throw *failure;
    if (name.empty()) fail(ISTHMUS_ERR_ARG, "def_var: empty field name (component ", name_, ")");
    if (dir != VarDirection::In && dir != VarDirection::Out)
      fail(ISTHMUS_ERR_ARG, "def_var ", name, ": direction ", static_cast<int>(dir),
           " (0 in, 1 out)");
    if (partition < 0 || partition >= static_cast<int>(partitions_.size()))
      fail(ISTHMUS_ERR_ARG, "def_var ", name, ": partition ", partition, " is not defined (",
           partitions_.size(), " partitions in component ", name_, ")");
    if (bundle < 1) fail(ISTHMUS_ERR_ARG, "def_var ", name, ": bundle size ", bundle, " < 1");
    if (type != DataType::Double && type != DataType::Float)
      fail(ISTHMUS_ERR_ARG, "def_var ", name, ": fields are double or float");
    for (const Var& v : vars_)
      if (v.name == name) fail(ISTHMUS_ERR_ARG, "def_var ", name, ": defined twice in component ", name_);
  });
  vars_.push_back({name, partition, dir, type, bundle, {}});
  std::ostringstream d;
  d << "def_var \"" << name << "\": partition " << partition << ", " << direction_name(dir) << ", "
    << (type == DataType::Double ? "double" : "float") << ", bundle " << bundle;
  definitions_.push_back(d.str());
  return static_cast<int>(vars_.size()) - 1;
}

void Coupler::settle_open_sizes(const std::vector<int64_t>& ends) {
  size_t k = 0;
  for (Partition& p : partitions_)
    if (p.size_open) {
      p.points = p.points.with_global_size(ends.at(k++));
      p.size_open = false;
    }
}

// Failure path of enddef (every rank of the component takes it, having seen the coupling
// ranks' digests differ): the first definition that differs from the reference rank's, and
// the lowest rank where it does.
void Coupler::throw_definitions_differ(int reference) {
  int rank = 0, n = 1;
  ISTHMUS_MPI(MPI_Comm_rank(full_, &rank));
  ISTHMUS_MPI(MPI_Comm_size(full_, &n));
  std::string ref;
  if (rank == reference)
    for (const std::string& d : definitions_) ref += d + '\n';
  broadcast(full_, ref, reference);
  std::vector<std::string> lines;
  for (std::istringstream in(ref); std::getline(in, ref);) lines.push_back(ref);
  long long mine = LLONG_MAX;  // (definition, rank) of this rank's first difference
  if (active()) {
    const size_t m = std::max(lines.size(), definitions_.size());
    for (size_t k = 0; k < m && mine == LLONG_MAX; ++k)
      if (k >= lines.size() || k >= definitions_.size() || lines[k] != definitions_[k])
        mine = static_cast<long long>(k) * n + rank;
  }
  long long first = LLONG_MAX;
  ISTHMUS_MPI(wmpi::Allreduce(&mine, &first, 1, MPI_LONG_LONG, MPI_MIN, full_));
  if (first == LLONG_MAX) return;  // the digests of equal definitions collided: they agree
  const size_t k = static_cast<size_t>(first / n);
  const int other = static_cast<int>(first % n);
  std::string theirs;
  if (rank == other && k < definitions_.size()) theirs = definitions_[k];
  broadcast(full_, theirs, other);
  auto said = [&](const std::string& d) { return d.empty() ? std::string("no definition") : "\"" + d + "\""; };
  fail(ISTHMUS_ERR_ARG, "enddef: the coupling ranks of component ", name_,
       " made different definitions: definition ", k + 1, " is ",
       said(k < lines.size() ? lines[k] : ""), " on rank ", reference, " but ", said(theirs),
       " on rank ", other, " (every coupling rank makes the same definitions in the same order)");
}

// Each component's first rank sends its declarations to the other components' first ranks
// (point to point: a few messages, never a collective over the world), then broadcasts what
// it received within its component.
void Coupler::exchange_declarations(Agreement& pending, const std::function<void()>& meanwhile) {
  // Within the component: which ranks couple, and the declarations of its first coupling rank
  // (all coupling ranks declared the same, agreed), so that its first rank, coupling or not,
  // can speak for it. The caller's pending agreement rides on the same allgather: only where a
  // rank failed does it take a reduction of its own. A failure is then sent to the other
  // components in place of the declarations, and enddef fails on every rank of every one.
  // The definitions were made locally: their digest rides on it too, and so do the largest
  // indices of the partitions whose global size is left to the points (the first kOpenSizes of
  // them; more take a reduction of their own).
  constexpr int kOpenSizes = 4, kWords = 3 + kOpenSizes;
  int nfull = 0, rank = 0;
  ISTHMUS_MPI(MPI_Comm_size(full_, &nfull));
  ISTHMUS_MPI(MPI_Comm_rank(full_, &rank));
  int64_t in[kWords] = {active() ? 1 : 0, pending.failed() ? 1 : 0, 0};
  std::string all_definitions;
  for (const std::string& d : definitions_) all_definitions += d + '\n';
  in[2] = static_cast<int64_t>(hash_of(all_definitions, 5));
  std::vector<int64_t> ends;  // of the open partitions, this rank's, then the component's
  for (const Partition& p : partitions_)
    if (p.size_open) ends.push_back(p.points.end());
  for (size_t k = 0; k < ends.size() && k < kOpenSizes; ++k) in[3 + k] = ends[k];
  std::vector<int64_t> flags(kWords * static_cast<size_t>(nfull));
  ISTHMUS_MPI(wmpi::Allgather(in, kWords, MPI_INT64_T, flags.data(), kWords, MPI_INT64_T, full_));
  auto word = [&](int r, int k) { return flags[kWords * static_cast<size_t>(r) + k]; };
  bool any_failed = false;
  for (int r = 0; r < nfull; ++r) any_failed = any_failed || word(r, 1);
  const RankSet& everyone = comps_[me_].world_ranks;  // full_ rank i is everyone.at(i)
  RankSet coupling;
  int first_active = -1;
  bool differ = false;
  for (int r = 0; r < nfull; ++r)
    if (word(r, 0)) {
      coupling.push_back(everyone.at(r));
      if (first_active < 0) first_active = r;
      differ = differ || word(r, 2) != word(first_active, 2);
    }
  std::optional<Error> failure;  // this component's, the same on each of its ranks
  try {
    if (any_failed) pending.conclude(full_);  // throws on every rank, naming the failure
    if (differ) throw_definitions_differ(first_active);
  } catch (const Error& e) {
    failure = e;
  }
  if (active() && !failure) {
    for (size_t k = 0; k < ends.size() && k < kOpenSizes; ++k)
      for (int r = 0; r < nfull; ++r) ends[k] = std::max(ends[k], word(r, 3 + static_cast<int>(k)));
    if (ends.size() > kOpenSizes)
      ISTHMUS_MPI(wmpi::Allreduce(MPI_IN_PLACE, ends.data() + kOpenSizes,
                                  static_cast<int>(ends.size()) - kOpenSizes, MPI_INT64_T, MPI_MAX, local_));
    settle_open_sizes(ends);
  }
  flags = {};
  std::ostringstream os;
  os << name_ << "\nranks " << coupling.text() << '\n';
  std::string fields;
  if (failure) {  // "!code" and the message in place of the ranks and the fields
    os.str("");
    os << name_ << "\n!" << failure->code() << '\n' << failure->what();
  } else if (rank == first_active) {
    std::ostringstream fs;
    for (const Var& v : vars_)
      fs << v.name << ' ' << static_cast<int>(v.dir) << ' ' << partitions_[v.partition].points.global_size()
         << ' ' << v.bundle << '\n';
    fields = fs.str();
  }
  if (first_active > 0 && !failure) broadcast(full_, fields, first_active);  // the first rank does not couple
  const std::string own = os.str() + fields;
  std::vector<std::string> texts(comps_.size());
  texts[me_] = own;
  // the components' first ranks, point to point on the communicator of every component's
  // ranks (made at init: no communicator is made here, and never a collective over the world)
  auto first_of = [&](size_t c) { return static_cast<int>(all_ranks_.index_of(comps_[c].world_ranks.front())); };
  std::vector<MPI_Request> reqs;
  if (rank == 0) {
    for (size_t c = 0; c < comps_.size(); ++c) {
      if (static_cast<int>(c) == me_) continue;
      reqs.emplace_back();
      ISTHMUS_MPI(MPI_Isend(own.data(), static_cast<int>(own.size()), MPI_CHAR, first_of(c),
                            kTagDeclarations, all_, &reqs.back()));
    }
  }
  if (meanwhile && !failure) meanwhile();  // while the other components' declarations come
  if (rank == 0) {
    for (size_t c = 0; c < comps_.size(); ++c) {
      if (static_cast<int>(c) == me_) continue;
      MPI_Status st;
      ISTHMUS_MPI(wmpi::Probe(first_of(c), kTagDeclarations, all_, &st));
      int n = 0;
      ISTHMUS_MPI(MPI_Get_count(&st, MPI_CHAR, &n));
      texts[c].resize(n);
      ISTHMUS_MPI(wmpi::Recv(texts[c].data(), n, MPI_CHAR, first_of(c), kTagDeclarations, all_,
                           MPI_STATUS_IGNORE));
    }
    ISTHMUS_MPI(wmpi::Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  }
  // every component's text in one broadcast (two collectives, not two per component: on shared
  // cores each collective round waits for its ranks to be given a core)
  std::string all;
  if (rank == 0)
    for (const std::string& t : texts) put_text(all, t);
  broadcast(full_, all);
  Unpacker u{all};
  for (std::string& t : texts) t = u.text();
  if (failure) throw *failure;
  for (const std::string& t : texts) {
    const size_t line = t.find('\n');
    if (line == std::string::npos || t.compare(line + 1, 1, "!") != 0) continue;
    const size_t end = t.find('\n', line + 1);
    throw Error(std::atoi(t.c_str() + line + 2), "enddef of component " + t.substr(0, line) +
                                                     " failed: " + t.substr(end + 1));
  }
  // from now on a component is its coupling ranks (pair communicators, messages)
  for (size_t c = 0; c < comps_.size(); ++c) {
    std::istringstream in(texts[c]);
    std::getline(in, comps_[c].name);
    std::string line;
    std::getline(in, line);
    comps_[c].coupling_ranks = RankSet::parse(line.substr(line.find(' ') + 1));  // "ranks ..."
    comps_[c].fields.clear();
    Declared d;
    int dir = 0;
    while (in >> d.name >> dir >> d.global_size >> d.bundle) {
      d.dir = static_cast<VarDirection>(dir);
      comps_[c].fields.push_back(d);
    }
  }
}

void Coupler::read_early_links(std::vector<Coupling::EarlyLinks>& early) {
  if (!active()) return;
  // From this rank's own declarations only (the same on every coupling rank of the component):
  // the exported MAPPING entries (dst or opt) whose destination fields this component receives,
  // all on one partition, and none of whose source fields it sends (another component's).
  auto var_of_name = [&](const std::string& name) -> const Var* {
    for (const Var& v : vars_)
      if (v.name == name) return &v;
    return nullptr;
  };
  for (const Entry& e : config_.entries) {
    if (!(e.status == FieldStatus::Exported || e.status == FieldStatus::Expout) || !e.mapping ||
        e.mapping->side == MapSide::Src)
      continue;
    int partition = -1;
    bool ok = true;
    for (const std::string& f : e.dst_names) {
      const Var* v = var_of_name(f);
      if (!v || v->dir != VarDirection::In || (partition >= 0 && v->partition != partition)) ok = false;
      else partition = v->partition;
    }
    for (const std::string& f : e.src_names)
      if (const Var* v = var_of_name(f); v && v->dir == VarDirection::Out) ok = false;
    if (!ok || partition < 0) continue;
    const std::string path = Coupling::weights_path(e, opt_.run_dir);
    bool seen = false;
    for (const Coupling::EarlyLinks& x : early) seen = seen || (x.path == path && x.partition == partition);
    if (!seen) early.push_back(Coupling::read_early(local_, path, partition, partitions_[partition].points));
  }
}

RankSet Coupler::pair_members(int a, int b) const {
  return a == b ? comps_[a].coupling_ranks
                : RankSet::merged(comps_[a].coupling_ranks, comps_[b].coupling_ranks);
}

MPI_Comm Coupler::pair_comm(int a, int b) {
  if (a > b) std::swap(a, b);
  auto it = pair_comms_.find({a, b});
  if (it != pair_comms_.end()) return it->second;
  MPI_Comm comm = MPI_COMM_NULL;
  if (a == b) {
    comm = duplicate(local_);
    attach<Nodes>(comm, Nodes::of(local_));  // the same ranks' nodes (attached to full_ at its making)
  } else if (!all_is_pair_ && pair_members(a, b) == all_ranks_) {
    comm = all_;  // the two components are all there are, and all their ranks couple
    all_is_pair_ = true;
  } else {
    // only the two components' ranks take part (every rank creates its pairs in the
    // configuration's order, so no two ranks wait for each other in opposite orders)
    comm = comm_of(world_, pair_members(a, b),
                   kTagGroupPair + (a * static_cast<int>(comps_.size()) + b) % 30000, node_runs_);
  }
  pair_comms_[{a, b}] = comm;
  return comm;
}

void Coupler::enddef() {
  if (me_ < 0) return;  // a rank without component has nothing to couple
  Agreement a;
  a.check([&] { require_defining("enddef"); });
  // every rank of the component, coupling or not (as OASIS's enddef), in the declarations' first
  // collective; meanwhile the coupling ranks read the links of their own points of the weights
  // files of the entries this component receives (Coupling::read_early)
  std::vector<Coupling::EarlyLinks> early_links;
  exchange_declarations(a, [&] { read_early_links(early_links); });
  // Every rank of every component resolves the configuration from the same declarations, so
  // an error here is raised on every rank alike.
  std::string components;
  for (const Component& c : comps_) components += (components.empty() ? "" : ", ") + c.name;
  auto find = [&](const Entry& e, const std::string& field, VarDirection dir, const char* role) {
    int found = -1;
    for (size_t c = 0; c < comps_.size(); ++c)
      for (const Declared& d : comps_[c].fields)
        if (d.name == field && d.dir == dir) {
          if (found >= 0)
            fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": field ", field, " (", role,
                 " of entry ", colon_group(e.src_names), ") is declared ", direction_name(dir),
                 " by two components, ", comps_[found].name, " and ", comps_[c].name);
          found = static_cast<int>(c);
        }
    if (found < 0)
      fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": field ", field, " (", role,
           " of entry ", colon_group(e.src_names), ") is declared ", direction_name(dir),
           " by no component (components: ", components, ")");
    return found;
  };
  auto declared = [&](int c, const std::string& field) -> const Declared& {
    for (const Declared& d : comps_[c].fields)
      if (d.name == field) return d;
    fail(ISTHMUS_ERR_INTERNAL, "field ", field, " vanished from component ", comps_[c].name);
  };
  auto local_var = [&](const std::string& field) {
    for (size_t v = 0; v < vars_.size(); ++v)
      if (vars_[v].name == field) return static_cast<int>(v);
    fail(ISTHMUS_ERR_INTERNAL, "field ", field, " is not this rank's");
  };
  struct Pending {
    CouplingEnds ends;
    int sc, dc;  // the source and destination components (one of them this rank's)
    bool pair;   // false: a one-sided entry exchanges nothing, over the component's comm
    int src_partition = -1, dst_partition = -1;  // this rank's, where it has that side
  };
  std::vector<Pending> pending;
  for (const Entry& e : config_.entries) {
    // an OUTPUT entry has only a source (it writes what is put), an INPUT entry only a
    // destination (its get reads a file); the one component then plays both roles below
    const bool has_src = e.status != FieldStatus::Input;
    const bool has_dst = e.status != FieldStatus::Output;
    int sc = -1, dc = -1;
    for (const std::string& f : e.src_names) {
      if (!has_src) break;
      const int c = find(e, f, VarDirection::Out, "source");
      if (sc >= 0 && c != sc)
        fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": the source fields of entry ",
             colon_group(e.src_names), " belong to different components (", comps_[sc].name, ", ",
             comps_[c].name, ")");
      sc = c;
    }
    for (const std::string& f : e.dst_names) {
      if (!has_dst) break;
      const int c = find(e, f, VarDirection::In, "destination");
      if (dc >= 0 && c != dc)
        fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": the destination fields of entry ",
             colon_group(e.src_names), " belong to different components (", comps_[dc].name, ", ",
             comps_[c].name, ")");
      dc = c;
    }
    if (!has_src) sc = dc;
    if (!has_dst) dc = sc;
    CouplingEnds ends;
    ends.entry = &e;
    ends.number = static_cast<int>(&e - config_.entries.data()) + 1;
    ends.output_number = output_number(config_.entries, e);
    ends.local = local_;
    ends.allow_no_restart = config_.nnorest.value_or(false);
    ends.src_component = comps_[sc].name;
    ends.dst_component = comps_[dc].name;
    for (size_t k = 0; k < e.src_names.size(); ++k) {
      const Declared& s = declared(sc, e.src_names[k]);
      const Declared& d = declared(dc, e.dst_names[k]);
      if (k > 0 && (s.global_size != ends.src_grid_size || d.global_size != ends.dst_grid_size))
        fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": the fields of entry ",
             colon_group(e.src_names), " are not all on grids of the same size");
      if (s.bundle != d.bundle)
        fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": field ", s.name, " of ",
             comps_[sc].name, " has bundle size ", s.bundle, " but ", d.name, " of ",
             comps_[dc].name, " has ", d.bundle);
      ends.src_grid_size = s.global_size;
      ends.dst_grid_size = d.global_size;
      ends.levels.push_back(s.bundle);
    }
    if (e.src_nx > 0 && e.src_ny > 0 && e.src_nx * e.src_ny != ends.src_grid_size)
      fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": entry ", colon_group(e.src_names),
           " gives the source grid ", e.src_grid, " as ", e.src_nx, " x ", e.src_ny, " = ",
           e.src_nx * e.src_ny, " points, but ", comps_[sc].name, " defines ", e.src_names[0],
           " on a partition of ", ends.src_grid_size, " points");
    if (e.dst_nx > 0 && e.dst_ny > 0 && e.dst_nx * e.dst_ny != ends.dst_grid_size)
      fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": entry ", colon_group(e.src_names),
           " gives the destination grid ", e.dst_grid, " as ", e.dst_nx, " x ", e.dst_ny, " = ",
           e.dst_nx * e.dst_ny, " points, but ", comps_[dc].name, " defines ", e.dst_names[0],
           " on a partition of ", ends.dst_grid_size, " points");
    if ((me_ != sc && me_ != dc) || !active()) continue;
    // the group's fields share one partition on each side (one exchange moves them all)
    auto partition_of = [&](const std::vector<std::string>& names) {
      const int p = vars_[local_var(names[0])].partition;
      for (const std::string& n : names)
        if (vars_[local_var(n)].partition != p)
          fail(ISTHMUS_ERR_CONFIG, config_.file, ":", e.line, ": the fields of entry ",
               colon_group(e.src_names), " are defined on different partitions in ", name_);
      return p;
    };
    ends.src = me_ == sc && has_src;
    ends.dst = me_ == dc && has_dst;
    const int sp = ends.src ? partition_of(e.src_names) : -1;
    const int dp = ends.dst ? partition_of(e.dst_names) : -1;
    if (ends.src) ends.src_points = partitions_[sp].points;
    if (ends.dst) ends.dst_points = partitions_[dp].points;
    if (e.src_nx > 0 && e.src_ny > 0) ends.src_nx = e.src_nx, ends.src_ny = e.src_ny;
    if (e.dst_nx > 0 && e.dst_ny > 0) ends.dst_nx = e.dst_nx, ends.dst_ny = e.dst_ny;
    // a one-sided entry exchanges nothing: no pair communicator is made for it
    pending.push_back({std::move(ends), sc, dc, has_src && has_dst, sp, dp});
  }
  // OASIS keeps a grid's 2-D shape per partition, from the first entry that gives one: an
  // entry whose line gives none (an OUTPUT entry names only its grids) takes it from another
  // entry on the same partition of this component.
  auto shape_of_partition = [&](int partition, int64_t& nx, int64_t& ny) {
    for (const Pending& q : pending) {
      if (q.ends.src && q.src_partition == partition && q.ends.src_nx > 0) {
        nx = q.ends.src_nx, ny = q.ends.src_ny;
        return;
      }
      if (q.ends.dst && q.dst_partition == partition && q.ends.dst_nx > 0) {
        nx = q.ends.dst_nx, ny = q.ends.dst_ny;
        return;
      }
    }
  };
  for (Pending& p : pending) {
    if (p.ends.src && p.ends.src_nx == 0) shape_of_partition(p.src_partition, p.ends.src_nx, p.ends.src_ny);
    if (p.ends.dst && p.ends.dst_nx == 0) shape_of_partition(p.dst_partition, p.ends.dst_nx, p.ends.dst_ny);
  }
  // Two phases: first each component reads and routes the weights of the entries it multiplies
  // (over its own ranks: both components at the same time, with no communication between
  // them), then the pairs' communicators are made and the entries' exchanges built over them,
  // in configuration order.
  // Entries that name the same weights file, side and partitions share its prepared links (the
  // first entry reads and routes them, the others copy them), as OASIS reads a mapping once for
  // all the entries that use it.
  auto same_weights = [](const Pending& a, const Pending& b) {
    const Entry& x = *a.ends.entry;
    const Entry& y = *b.ends.entry;
    return Coupling::prepared_weights(a.ends) && Coupling::prepared_weights(b.ends) &&
           x.mapping->file == y.mapping->file && x.mapping->side == y.mapping->side &&
           a.sc == b.sc && a.dc == b.dc && a.src_partition == b.src_partition &&
           a.dst_partition == b.dst_partition && a.ends.src_grid_size == b.ends.src_grid_size &&
           a.ends.dst_grid_size == b.ends.dst_grid_size;
  };
  for (size_t i = 0; i < pending.size(); ++i) {
    size_t j = 0;
    while (j < i && !same_weights(pending[j], pending[i])) ++j;
    if (j < i) {
      pending[i].ends.weights = pending[j].ends.weights;
      continue;
    }
    const Coupling::EarlyLinks* read = nullptr;
    const Pending& p = pending[i];
    if (p.ends.dst && Coupling::prepared_weights(p.ends))
      for (const Coupling::EarlyLinks& x : early_links)
        if (x.partition == p.dst_partition && x.path == Coupling::weights_path(*p.ends.entry, opt_.run_dir) &&
            x.dst_grid_size == p.ends.dst_grid_size && p.sc != p.dc &&
            p.ends.entry->mapping->side != MapSide::Src)
          read = &x;
    Coupling::prepare_weights(pending[i].ends, opt_.run_dir, read);
  }
  // The mapped entries of a pair are built together (one reduction, one directory for all
  // their mappings), where the first of them comes in the configuration's order: every rank
  // builds in the same order, so no two wait for each other in opposite orders.
  std::vector<std::unique_ptr<Coupling>> early(pending.size());
  auto joins = [&](const Pending& p) { return p.pair && Coupling::joins(p.ends); };
  for (size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    const MPI_Comm comm = p.pair ? pair_comm(p.sc, p.dc) : local_;
    if (!early[i] && joins(p)) {  // the first of its pair's mapped entries
      std::vector<Coupling*> group;
      for (size_t j = i; j < pending.size(); ++j) {
        Pending& q = pending[j];
        if (!joins(q) || std::minmax(q.sc, q.dc) != std::minmax(p.sc, p.dc)) continue;
        early[j] = std::make_unique<Coupling>(Coupling::Deferred{}, std::move(q.ends), config_.runtime,
                                              opt_.run_dir, opt_.method);
        group.push_back(early[j].get());
      }
      Coupling::build_together(comm, group);
    }
    auto c = early[i] ? std::move(early[i])
                      : std::make_unique<Coupling>(comm, std::move(p.ends), config_.runtime, opt_.run_dir,
                                                   opt_.method);
    const Entry& e = c->entry();
    const bool src = c->ends().src, dst = c->ends().dst;
    for (size_t k = 0; k < e.src_names.size(); ++k) {
      if (src) vars_[local_var(e.src_names[k])].uses.push_back({c.get(), static_cast<int>(k)});
      if (dst) vars_[local_var(e.dst_names[k])].uses.push_back({c.get(), static_cast<int>(k)});
    }
    if (timeout_s_ > 0)
      c->set_wait_timeout(timeout_s_, describe_ranks(p.pair ? pair_members(p.sc, p.dc)
                                                            : comps_[me_].coupling_ranks));
    couplings_.push_back(std::move(c));
  }
  defined_ = true;
}

std::function<std::string(int)> Coupler::describe_ranks(const RankSet& members) const {
  // when asked (a timeout's message): comm rank r is world rank members.at(r); then its
  // component and rank in it (O(runs) kept, not a word per rank)
  std::vector<std::pair<std::string, RankSet>> comps;
  for (const Component& c : comps_) comps.emplace_back(c.name, c.coupling_ranks);
  return [members, comps](int r) {
    if (r < 0 || r >= members.size()) return "rank " + std::to_string(r);
    const int w = members.at(r);
    for (const auto& [name, ranks] : comps)
      if (const int64_t i = ranks.index_of(w); i >= 0)
        return "rank " + std::to_string(i) + " of component " + name + " (world rank " + std::to_string(w) + ")";
    return "rank " + std::to_string(r);
  };
}

Coupler::Var& Coupler::var_of(int var, const char* what, bool after_enddef) {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, what, ": this rank runs no component");
  if (after_enddef && !defined_) fail(ISTHMUS_ERR_ARG, what, " before enddef (component ", name_, ")");
  if (!active())
    fail(ISTHMUS_ERR_ARG, what, ": this rank of ", name_, " is not in its coupling communicator");
  if (terminated_) fail(ISTHMUS_ERR_ARG, what, " after terminate (component ", name_, ")");
  if (var < 0 || var >= static_cast<int>(vars_.size()))
    fail(ISTHMUS_ERR_ARG, what, ": field id ", var, " is not defined (", vars_.size(),
         " fields in component ", name_, ")");
  return vars_[var];
}

namespace {
// the put or get acted at a coupling date (sent, received, written to a restart or output file)
bool at_coupling_date(int info) { return info != kOk && info != kLocTrans && info != kWaitgroup; }
}  // namespace

int Coupler::put(int var, int date, const void* data, bool write_restart, const void* const* terms,
                 const void* fracwgt) {
  Var& v = var_of(var, "put");
  if (v.dir != VarDirection::Out)
    fail(ISTHMUS_ERR_ARG, "put of ", v.name, ": the field is declared in (OASIS_In) by ", name_);
  int info = kOk;
  for (auto& [c, k] : v.uses) {
    check_sequence(*c, date, false);
    info = c->put(k, date, data, v.type, write_restart, terms, fracwgt);
    if (at_coupling_date(info)) last_exchange_[c] = date;
  }
  return info;
}

int Coupler::get(int var, int date, void* data) {
  Var& v = var_of(var, "get");
  if (v.dir != VarDirection::In)
    fail(ISTHMUS_ERR_ARG, "get of ", v.name, ": the field is declared out (OASIS_Out) by ", name_);
  int info = kOk;
  for (auto& [c, k] : v.uses) {
    check_sequence(*c, date, true);
    info = c->get(k, date, data, v.type);
    if (at_coupling_date(info)) last_exchange_[c] = date;
  }
  return info;
}

// OASIS's deadlock traps (oasis_advance_run), before a put or get of `c` at `date`: a coupling
// of this rank that missed a coupling date (the model's time step does not reach it), and a get
// that comes before a coupling of a lower SEQ that is due (the order the partners wait in).
void Coupler::check_sequence(const Coupling& c, int date, bool get) const {
  for (const auto& [n, last] : last_exchange_) {
    const Entry& e = n->entry();
    if (date > last + e.period)
      fail(ISTHMUS_ERR_ARG, "component ", name_, " at date ", date, ": the coupling of ",
           colon_group(e.src_names), " (line ", e.line, ", period ", e.period, ") last exchanged at ",
           last, " and skipped date ", last + e.period,
           ": the model's time step does not reach every coupling date (a partner would wait for "
           "it for ever)");
    if (get && n != &c && c.entry().seq > e.seq && e.seq > 0 && date >= last + e.period)
      fail(ISTHMUS_ERR_ARG, "component ", name_, " at date ", date, ": get of ",
           colon_group(c.entry().dst_names), " (line ", c.entry().line, ", SEQ=", c.entry().seq,
           ") before the coupling of ", colon_group(e.src_names), " (line ", e.line, ", SEQ=", e.seq,
           ") due at date ", last + e.period, ": the configuration's sequence says that one comes "
           "first (a partner waiting in that order would wait for ever)");
  }
}

bool Coupler::configured(const std::string& field) const {
  for (const Entry& e : config_.entries)
    for (const auto* names : {&e.src_names, &e.dst_names})
      if (std::find(names->begin(), names->end(), field) != names->end()) return true;
  return false;
}

int64_t Coupler::local_points(int var) {
  return partitions_[var_of(var, "local_points", false).partition].points.size();
}

std::pair<int64_t, int64_t> Coupler::partition_size(int partition) const {
  if (partition < 0 || partition >= static_cast<int>(partitions_.size()))
    fail(ISTHMUS_ERR_ARG, "partition ", partition, " of component ", name_, " does not exist (",
         partitions_.size(), " defined)");
  const Partition& p = partitions_[partition];
  return {p.points.size(), p.size_open ? -1 : p.points.global_size()};
}

void Coupler::gather_partition(int partition, int64_t global_size, const double* local,
                               double* global) const {
  if (!active()) fail(ISTHMUS_ERR_ARG, "gather: this rank of ", name_, " is not in its coupling communicator");
  int me = 0, n = 1;
  ISTHMUS_MPI(MPI_Comm_rank(local_, &me));
  ISTHMUS_MPI(MPI_Comm_size(local_, &n));
  // every rank takes part, also one whose arguments are wrong (its failure is agreed on)
  Agreement a;
  a.check([&] {
    partition_size(partition);
    const Partition& p = partitions_[partition];
    if (!p.size_open && p.points.global_size() != global_size)
      fail(ISTHMUS_ERR_ARG, "gather of partition ", partition, ": its grid has ",
           p.points.global_size(), " points but the caller's ", global_size);
    if (p.size_open && p.points.end() > global_size)  // its size is settled in enddef
      fail(ISTHMUS_ERR_ARG, "gather of partition ", partition, ": it holds index ", p.points.end() - 1,
           " but the caller's grid has ", global_size, " points");
    if (!local && p.points.size() > 0)
      fail(ISTHMUS_ERR_ARG, "gather of partition ", partition, ": the local values are NULL but this "
           "rank holds ", p.points.size(), " points");
    if (me == 0 && !global) fail(ISTHMUS_ERR_ARG, "gather of partition ", partition, ": the global array is NULL on the first rank");
  });
  a.match("the grid's size", global_size);
  a.conclude(local_);
  const IndexList& p = partitions_[partition].points;
  const std::vector<int64_t> idx = p.indices();
  const int count = static_cast<int>(idx.size());
  std::vector<int> counts(me == 0 ? n : 0), offsets(me == 0 ? n : 0);
  ISTHMUS_MPI(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, local_));
  int64_t total = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    offsets[r] = static_cast<int>(total);
    total += counts[r];
  }
  std::vector<int64_t> all_idx(static_cast<size_t>(total));
  std::vector<double> all_val(static_cast<size_t>(total));
  ISTHMUS_MPI(MPI_Gatherv(idx.data(), count, MPI_INT64_T, all_idx.data(), counts.data(),
                          offsets.data(), MPI_INT64_T, 0, local_));
  ISTHMUS_MPI(MPI_Gatherv(local, count, MPI_DOUBLE, all_val.data(), counts.data(), offsets.data(),
                          MPI_DOUBLE, 0, local_));
  if (me != 0) return;
  std::fill(global, global + global_size, 0.0);
  for (int64_t k = 0; k < total; ++k) global[all_idx[k]] = all_val[k];
}

int Coupler::bundle(int var) { return var_of(var, "bundle", false).bundle; }

int Coupler::coupling_count(int var) { return static_cast<int>(var_of(var, "get_ncpl", false).uses.size()); }

std::vector<int> Coupler::periods(int var) {
  std::vector<int> p;
  for (auto& [c, k] : var_of(var, "get_freqs", false).uses) p.push_back(c->entry().period);
  return p;
}

int Coupler::put_inquire(int var, int date) {
  Var& v = var_of(var, "put_inquire");
  if (v.dir != VarDirection::Out)
    fail(ISTHMUS_ERR_ARG, "put_inquire of ", v.name, ": the field is declared in (OASIS_In) by ", name_);
  int info = kOk;
  for (auto& [c, k] : v.uses) info = c->put_inquire(k, date);
  return info;
}

int Coupler::component_named(const std::string& name, const char* what) const {
  if (me_ < 0) fail(ISTHMUS_ERR_ARG, what, ": this rank runs no component");
  if (!defined_) fail(ISTHMUS_ERR_ARG, what, " before enddef (component ", name_, ")");
  if (!active())
    fail(ISTHMUS_ERR_ARG, what, ": this rank of ", name_, " is not in its coupling communicator");
  for (size_t c = 0; c < comps_.size(); ++c)
    if (comps_[c].name == name) return static_cast<int>(c);
  std::string names;
  for (const Component& c : comps_) names += (names.empty() ? "" : ", ") + (c.name.empty() ? "?" : c.name);
  fail(ISTHMUS_ERR_ARG, what, ": no component is named \"", name, "\" (components: ", names, ")");
}

MPI_Comm Coupler::intracomm(const std::string& other) {
  const int o = component_named(other, "get_intracomm");
  MPI_Comm c = MPI_COMM_NULL;
  c = duplicate(pair_comm(me_, o));
  return c;
}

MPI_Comm Coupler::intercomm(const std::string& other) {
  const int o = component_named(other, "get_intercomm");
  if (o == me_) fail(ISTHMUS_ERR_ARG, "get_intercomm: ", other, " is this rank's own component");
  MPI_Comm c = MPI_COMM_NULL;
  // Each side's leader is its component's lowest world rank, which both sides know: a coupling
  // communicator's rank 0 is not (set_couplcomm may order its ranks any way), and leaders the
  // two sides disagree on never meet. The local leader as a rank of local_, the remote one as a
  // rank of the pair's communicator (ordered by world rank).
  const MPI_Comm pair = pair_comm(me_, o);
  MPI_Group pg, wg, lg;
  ISTHMUS_MPI(MPI_Comm_group(pair, &pg));
  ISTHMUS_MPI(MPI_Comm_group(world_, &wg));
  ISTHMUS_MPI(MPI_Comm_group(local_, &lg));
  int leader = -1, local_leader = -1;
  const int first = comps_[o].coupling_ranks.front(), mine = comps_[me_].coupling_ranks.front();
  ISTHMUS_MPI(MPI_Group_translate_ranks(wg, 1, &first, pg, &leader));
  ISTHMUS_MPI(MPI_Group_translate_ranks(wg, 1, &mine, lg, &local_leader));
  MPI_Group_free(&pg);
  MPI_Group_free(&wg);
  MPI_Group_free(&lg);
  ISTHMUS_MPI(MPI_Intercomm_create(local_, local_leader, pair, leader, 77, &c));
  return c;
}

MPI_Comm Coupler::multi_intracomm(const std::vector<std::string>& names,
                                   std::vector<int>* root_ranks) {
  const char* what = "get_multi_intracomm";
  // checked before any collective: every rank given the same list fails the same way
  std::vector<int> ids(names.size(), -1), listed;
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k].find_first_not_of(' ') == std::string::npos) continue;  // blank: skipped
    ids[k] = component_named(names[k], what);
    if (std::find(listed.begin(), listed.end(), ids[k]) != listed.end())
      fail(ISTHMUS_ERR_ARG, what, ": component \"", names[k], "\" is listed twice (entry ", k + 1, ")");
    listed.push_back(ids[k]);
  }
  if (std::find(listed.begin(), listed.end(), me_) == listed.end())
    fail(ISTHMUS_ERR_ARG, what, ": the list must name this rank's own component, ", name_);
  if (listed.size() < 2)
    fail(ISTHMUS_ERR_ARG, what, ": the list must name at least two components (it names ",
         listed.size(), ")");
  std::sort(listed.begin(), listed.end());
  // each component's first rank in the new communicator: the sizes of those before it
  std::vector<int> offset(comps_.size(), -1);
  RankSet members;
  int at = 0;
  for (int c : listed) {
    offset[c] = at;
    at += static_cast<int>(comps_[c].coupling_ranks.size());
    members = members.empty() ? comps_[c].coupling_ranks : RankSet::merged(members, comps_[c].coupling_ranks);
  }
  // the listed ranks in world order, then in the order promised (a component's ranks in the
  // order of its coupling communicator, which the user may have permuted)
  MPI_Comm all = comm_of(world_, members, kTagGroupMulti, node_runs_);
  int local_rank = 0;
  ISTHMUS_MPI(MPI_Comm_rank(local_, &local_rank));
  MPI_Comm c = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(all, 0, offset[me_] + local_rank, &c);
  MPI_Comm_free(&all);
  ISTHMUS_MPI(rc);
  if (root_ranks) {
    root_ranks->assign(names.size(), -1);
    for (size_t k = 0; k < names.size(); ++k)
      if (ids[k] >= 0) (*root_ranks)[k] = offset[ids[k]];
  }
  return c;
}

std::string Coupler::report() {
  if (me_ < 0 || !active()) return "";
  // per coupling: counts summed, times as sum (for the mean) and max
  constexpr int kCounts = 8, kTimes = 4;
  const size_t n = couplings_.size();
  std::vector<long long> counts(n * kCounts), count_sum(n * kCounts);
  std::vector<double> times(n * kTimes), time_sum(n * kTimes), time_max(n * kTimes);
  for (size_t i = 0; i < n; ++i) {
    const CouplingStats s = couplings_[i]->stats();
    const long long c[kCounts] = {s.puts, s.gets, s.sends, s.receives, s.messages_sent,
                                  s.messages_received, s.bytes_sent, s.bytes_received};
    const double t[kTimes] = {s.put_seconds, s.get_seconds, s.wait_seconds, s.map_seconds};
    std::copy(c, c + kCounts, counts.begin() + i * kCounts);
    std::copy(t, t + kTimes, times.begin() + i * kTimes);
  }
  ISTHMUS_MPI(wmpi::Reduce(counts.data(), count_sum.data(), static_cast<int>(counts.size()),
                         MPI_LONG_LONG, MPI_SUM, 0, local_));
  ISTHMUS_MPI(wmpi::Reduce(times.data(), time_sum.data(), static_cast<int>(times.size()), MPI_DOUBLE,
                         MPI_SUM, 0, local_));
  ISTHMUS_MPI(wmpi::Reduce(times.data(), time_max.data(), static_cast<int>(times.size()), MPI_DOUBLE,
                         MPI_MAX, 0, local_));
  int rank = 0, size = 1;
  ISTHMUS_MPI(MPI_Comm_rank(local_, &rank));
  ISTHMUS_MPI(MPI_Comm_size(local_, &size));
  if (rank != 0) return "";
  std::ostringstream os;
  os << "isthmus communication report: component " << name_ << ", " << size << " ranks, "
     << n << " couplings\n";
  os << "times in ms: max over the ranks / mean; counts summed over the ranks\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-4s %6s %6s %6s %6s %9s %11s %15s %15s %15s %15s\n",
                "entry", "side", "puts", "gets", "sent", "recvd", "messages", "MB", "put ms",
                "get ms", "wait ms", "mapping ms");
  os << line;
  for (size_t i = 0; i < n; ++i) {
    const Coupling& c = *couplings_[i];
    const Entry& e = c.entry();
    const long long* k = count_sum.data() + i * kCounts;
    auto t = [&](int j) {
      char b[32];
      std::snprintf(b, sizeof b, "%.3f/%.3f", 1e3 * time_max[i * kTimes + j],
                    1e3 * time_sum[i * kTimes + j] / size);
      return std::string(b);
    };
    std::string entry = colon_group(e.src_names) + ">" + colon_group(e.dst_names);
    if (entry.size() > 28) entry = entry.substr(0, 25) + "...";
    const char* side = c.ends().src && c.ends().dst ? "both" : c.ends().src ? "put" : "get";
    std::snprintf(line, sizeof line, "%-28s %-4s %6lld %6lld %6lld %6lld %9lld %11.3f %15s %15s %15s %15s\n",
                  entry.c_str(), side, k[0], k[1], k[2], k[3], k[4] + k[5], 1e-6 * (k[6] + k[7]),
                  t(0).c_str(), t(1).c_str(), t(2).c_str(), t(3).c_str());
    os << line;
  }
  return os.str();
}

void Coupler::terminate() {
  if (me_ < 0 || terminated_) return;
  for (auto& c : couplings_) c->complete();
  terminated_ = true;
  // OASIS writes its timers when $NLOGPRT's second number asks for them: so do we
  if (config_.tlogprt > 0) {
    const std::string text = report();
    if (!text.empty()) {
      const std::string path = opt_.run_dir + "/isthmus_report_" + name_ + ".txt";
      std::ofstream out(path);
      out << text;
      if (!out) fail(ISTHMUS_ERR_FILE, "terminate: cannot write the communication report ", path);
    }
  }
}

}  // namespace isthmus::coupler
