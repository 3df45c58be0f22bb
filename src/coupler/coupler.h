// The coupler of one process: the component it runs, its partitions and fields, and the
// couplings of the configuration that involve it. OASIS3-MCT's model (seed 000 sect. 2.5):
// init (collective over the world, once), definitions (collective over the component), enddef
// (collective over the component: the couplings are built with the partner components'
// ranks only), then put and get, which are local calls, and terminate.
#pragma once
#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coupler/config.h"
#include "coupler/coupling.h"
#include "coupler/rank_set.h"
#include "base/error.h"
#include "index/index_list.h"
#include "transfer/redist.h"

namespace isthmus::coupler {

enum class VarDirection { In = 0, Out = 1 };  // OASIS_In, OASIS_Out

struct CouplerOptions {
  std::string run_dir = ".";       // where weights files (and restart files) are looked up
  Method method = Method::P2P;     // the only executor whose sends never wait for a receiver
  // A put or get that waits longer than this for its partner fails with ISTHMUS_ERR_TIMEOUT
  // naming the entry, the date and the ranks it waits for, instead of hanging (0: wait for
  // ever). 0 here takes the ISTHMUS_COUPLER_TIMEOUT environment variable (seconds) if set.
  double timeout_s = 0;
};

class Coupler {
 public:
  // Collective over `world`: every rank names the component it runs, or "" for a rank that
  // takes no part in coupling (it returns at once from everything but this constructor). The
  // configuration is the same on every rank (each component's first rank reads it).
  Coupler(MPI_Comm world, const std::string& component, Config config, CouplerOptions opt = {});
  // The same, reading the configuration file (a namcouple; YAML by its extension).
  Coupler(MPI_Comm world, const std::string& component, const std::string& config_path,
          CouplerOptions opt = {});
  ~Coupler();
  Coupler(const Coupler&) = delete;
  Coupler& operator=(const Coupler&) = delete;

  const std::string& component() const { return name_; }
  // The component's ranks that couple (all of them unless set_coupling_comm chose fewer);
  // MPI_COMM_NULL for a rank without component, or outside the coupling ranks.
  MPI_Comm local_comm() const { return local_; }
  // OASIS's oasis_set_couplcomm: collective over the whole component, before any definition;
  // `coupling` holds the ranks that take part in coupling (MPI_COMM_NULL on the others, which
  // then only call enddef and terminate). Definitions are made by those ranks.
  void set_coupling_comm(MPI_Comm coupling);
  const Config& config() const { return config_; }
  int component_count() const { return static_cast<int>(comps_.size()); }

  // Definitions are local, as OASIS3-MCT's (docs/errors.md, "Definitions"): each coupling rank
  // of the component makes the same ones in the same order; ids count from 0 in order of
  // definition. A bad definition throws on its rank, uses up no id, and is kept as a failed
  // definition. enddef compares the ranks' definitions, failed ones included: where they
  // differ (names, global sizes, partitions, directions, types, bundles, a failure, their
  // number), it fails on every rank of every component, naming the first definition that
  // differs and two ranks; a definition that failed alike on every rank is no error there.
  // `failure`: this rank's own reason to fail (e.g. a bad OASIS partition), kept the same way.
  // size_from_points: the global size is not given (OASIS's def_partition without isize): it
  // is one more than the largest index of any coupling rank's points, settled in enddef;
  // points->global_size() is then only a bound.
  int def_partition(const IndexList* points, const std::string& name = "",
                    const std::optional<Error>& failure = std::nullopt, bool size_from_points = false);
  int def_var(const std::string& name, int partition, VarDirection dir, DataType type,
              int bundle = 1, const std::optional<Error>& failure = std::nullopt);
  // Collective over every rank of the component (coupling or not) and, through the
  // declarations, over the world's components.
  void enddef();

  // Local calls; the return value is OASIS's info code (coupling.h). A field the configuration
  // does not couple returns kOk and moves nothing. write_restart: OASIS's optional argument of
  // oasis_put (Coupling::put says which file it writes).
  // terms: the higher-order terms (Coupling::put), Coupling::kMaxTerms arrays or NULL;
  // fracwgt: OASIS3-MCT 5.0's fraction weights (Coupling::put), or NULL
  int put(int var, int date, const void* data, bool write_restart = false,
          const void* const* terms = nullptr, const void* fracwgt = nullptr);
  int get(int var, int date, void* data);
  // Completes the sends in flight; collective over the component. With $NLOGPRT's second
  // number > 0 the component's first rank writes report() to <run_dir>/isthmus_report_<name>.txt.
  void terminate();
  // The communication report of this component's couplings (collective over the component;
  // the text on its first rank, "" elsewhere): per entry, the puts and gets, exchanges,
  // messages and bytes summed over the ranks, and the time in put, in get, waiting and mapping
  // (the slowest rank's and the mean).
  std::string report();

  // OASIS's inquiries: the number of couplings of a field (oasis_get_ncpl), their periods in
  // configuration order (oasis_get_freqs), and what a put would return (oasis_put_inquire).
  int coupling_count(int var);
  // Whether the configuration names `field` in any entry (OASIS's def_var returns
  // OASIS_Var_Uncpl otherwise); a field's local points and bundle size; this component's
  // number among the world's components, from 0, in order of their first world rank.
  bool configured(const std::string& field) const;
  int64_t local_points(int var);
  // A partition's local and global sizes (the global size -1 while it is not yet settled:
  // size_from_points, before enddef).
  std::pair<int64_t, int64_t> partition_size(int partition) const;
  // The values of a partition's points, one per local point in its order, gathered on the
  // component's first rank into `global` (global_size values: the partition's global size,
  // which every rank passes and which is checked; points no rank holds are 0), NULL
  // elsewhere: OASIS3-MCT 4.0's grid writing with partid. Collective over the component's
  // coupling ranks. A partition whose global size is left to its points (not yet settled)
  // must hold no index beyond global_size.
  void gather_partition(int partition, int64_t global_size, const double* local,
                        double* global) const;
  int bundle(int var);
  int component_index() const { return me_; }
  std::vector<int> periods(int var);
  int put_inquire(int var, int date);
  // The ranks of this component and `other` as one intracommunicator (ranks of the component
  // named first in the world first) or an intercommunicator (OASIS's oasis_get_intracomm and
  // oasis_get_intercomm): collective over both components; the caller frees it.
  MPI_Comm intracomm(const std::string& other);
  MPI_Comm intercomm(const std::string& other);
  // The ranks of several components as one intracommunicator (OASIS's
  // oasis_get_multi_intracomm): `names` lists this component and at least one other, each once;
  // blank names are skipped. The components follow in order of their number
  // (component_index), each with its coupling ranks in their local order; root_ranks[k] is the
  // new communicator's rank of names[k]'s first local rank (-1 for a blank name). Collective
  // over the listed components' coupling ranks, which all pass the same list; the caller frees it.
  MPI_Comm multi_intracomm(const std::vector<std::string>& names, std::vector<int>* root_ranks);

  // The couplings this rank takes part in, in configuration order (for reports and tests).
  const std::vector<std::unique_ptr<Coupling>>& couplings() const { return couplings_; }

 private:
  struct Var {
    std::string name;
    int partition;
    VarDirection dir;
    DataType type;
    int bundle;
    // the coupling and the position in its group, per role (a source field may feed several
    // entries; a destination field comes from one)
    std::vector<std::pair<Coupling*, int>> uses;
  };
  struct Declared {  // a field of some component, as the definition phase exchanged it
    std::string name;
    VarDirection dir;
    int64_t global_size;
    int bundle;
  };
  struct Component {
    uint64_t hash = 0;
    std::string name;             // known after enddef's exchange (this rank's from the start)
    RankSet world_ranks;     // all its ranks
    RankSet coupling_ranks;  // those that couple (known after enddef's exchange)
    std::vector<Declared> fields;
  };
  void init(MPI_Comm world, Config config);
  // meanwhile: run on every rank of the component after the first rank sent its declarations
  // and before the others' arrive (collective over the component's coupling ranks if it is)
  void exchange_declarations(Agreement& pending, const std::function<void()>& meanwhile);
  // exchange_declarations' meanwhile: Coupling::read_early for every weights file and partition
  // of an entry this component receives through a MAPPING (dst or opt), from its declarations
  void read_early_links(std::vector<Coupling::EarlyLinks>& early);
  MPI_Comm pair_comm(int a, int b);
  // the world ranks of pair_comm(a, b), in its order (a == b: the component's coupling ranks)
  RankSet pair_members(int a, int b) const;
  int component_named(const std::string& name, const char* what) const;
  // "rank r of component C (world rank w)" for the ranks of a coupling's communicator, whose
  // ranks are the world ranks `members` in order
  std::function<std::string(int)> describe_ranks(const RankSet& members) const;
  void require_defining(const char* what) const;
  Var& var_of(int var, const char* what, bool after_enddef = true);

  std::string name_;
  CouplerOptions opt_;
  double timeout_s_ = 0;           // the option, or the environment's
  Config config_;
  MPI_Comm world_ = MPI_COMM_NULL;  // the caller's: one collective, and the groups' parent
  std::vector<std::pair<int, uint64_t>> node_runs_;  // the world's nodes: (first rank, name hash)
  // Every rank that runs a component, made at init where they all meet: the components' first
  // ranks exchange their declarations on it, and a pair of components that is all of them
  // couples over it (enddef then makes no communicator for either).
  MPI_Comm all_ = MPI_COMM_NULL;
  RankSet all_ranks_;
  bool all_is_pair_ = false;        // all_ is in pair_comms_ (freed there)
  MPI_Comm full_ = MPI_COMM_NULL;   // every rank of the component
  MPI_Comm local_ = MPI_COMM_NULL;  // its coupling ranks: full_ itself, or set_coupling_comm's
  bool active() const { return local_ != MPI_COMM_NULL; }
  std::vector<Component> comps_;   // every component of the world, by first world rank
  int me_ = -1;                    // this rank's component (-1: none)
  bool defined_ = false;
  bool terminated_ = false;
  struct Partition {
    IndexList points;
    bool size_open = false;  // size_from_points, not yet settled
  };
  std::vector<Partition> partitions_;
  std::vector<Var> vars_;
  // What each definition declared or why it failed, one line each (compared between the
  // coupling ranks in enddef: its digest rides on the declarations' allgather).
  std::vector<std::string> definitions_;
  template <typename F>
  void defining(const std::string& what, F&& f);
  void settle_open_sizes(const std::vector<int64_t>& ends);
  // throws, but for digests of equal definitions that collide
  void throw_definitions_differ(int reference);
  std::map<std::pair<int, int>, MPI_Comm> pair_comms_;
  std::vector<std::unique_ptr<Coupling>> couplings_;
  std::map<const Coupling*, int> last_exchange_;  // the date each coupling last moved data here
  void check_sequence(const Coupling& c, int date, bool get) const;
};

}  // namespace isthmus::coupler
