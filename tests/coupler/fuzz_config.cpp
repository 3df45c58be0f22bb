// A seeded random-mutation fuzzer of the namcouple and YAML readers. Starting from the real
// configurations of tests/coupler/data (namcouples and YAML files), each input is a corpus file
// changed by a few mutations (bit flips, inserted bytes and words, deleted ranges, swapped or
// repeated lines, splices of another file), then given to both readers. The properties:
// - each reader either returns a Config or throws isthmus::Error with ISTHMUS_ERR_CONFIG whose
//   message starts "<file>:<line>:" (anything else, a crash or a hang is a failure);
// - an accepted input converts to YAML that reads back equal, and describe() works on it.
// Input i depends only on (seed, i): `--only i` replays one failure.
//
//   fuzz_config [--runs N] [--seed S] [--only I] [--verbose] DATA_DIR...
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "coupler/config.h"

using namespace isthmus::coupler;
namespace fs = std::filesystem;

namespace {

// The input being parsed, for the hang report (written from the signal handler with write()).
std::string g_current;
uint64_t g_index = 0;

void on_alarm(int) {
  const char msg[] = "fuzz_config: HANG (no answer within 10 s) on input:\n";
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, g_current.data(), g_current.size());
  _exit(3);
}

const std::vector<std::string> kWords = {
    "$NFIELDS", "$RUNTIME", "$STRINGS", "$END", "$NBMODEL", "$NLOGPRT", "$NMAPDEC", "$NWGTOPT",
    "$SEQMODE", "$NTHRESH", "LOCTRANS", "MAPPING", "SCRIPR", "CONSERV", "BLASOLD", "BLASNEW",
    "CHECKIN", "CHECKOUT", "CONSTANT", "INT=1", "LAG=", "SEQ=", "LAG=+3600", "SEQ=-1",
    "EXPORTED", "EXPOUT", "INPUT", "OUTPUT", "IGNOUT", "AUXILARY", "AVERAGE", "ONCE", "P", "R",
    "BILINEAR", "CONSERV LR SCALAR LATLON 1 FRACNNEI FIRST", "GAUSWGT", "DISTWGT", "src", "dst",
    "bfb", "sum", "opt", "0", "-1", "1", "2147483648", "99999999999999999999", "1.5", "1e999",
    "nan", "-0", "+", ":", "::", " ", "\t", "\n", "#", "- ", "-", "{", "}", "[", "]", ",", "&a",
    "*a", "!!str", "'", "\"", "|", ">", "---", "...", "? ", "~", "null", "runtime:", "entries:",
    "transformations:", "src_grid:", "overlap:", "{kind: P, points: 2}", "status:", "period:",
    "\xff", "\xc3\xa9", std::string(1, '\0')};

struct Corpus {
  std::vector<std::string> files;
};

Corpus load(const std::vector<std::string>& dirs) {
  Corpus c;
  for (const auto& d : dirs)
    for (const auto& e : fs::recursive_directory_iterator(d)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::ostringstream s;
      s << in.rdbuf();
      c.files.push_back(s.str());
    }
  return c;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char ch : s) {
    cur += ch;
    if (ch == '\n') lines.push_back(std::move(cur)), cur.clear();
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l;
  return s;
}

std::string mutate(const Corpus& corpus, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0; };
  std::string s = corpus.files[pick(corpus.files.size())];
  int n = 1 + static_cast<int>(pick(4));
  for (int m = 0; m < n; ++m) {
    switch (pick(8)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // insert a byte
        s.insert(s.begin() + pick(s.size() + 1), static_cast<char>(pick(256)));
        break;
      case 2: {  // delete a range
        if (s.empty()) break;
        size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<size_t>(40, s.size() - at)));
        break;
      }
      case 3: {  // swap two lines
        auto lines = split_lines(s);
        if (lines.size() > 1) std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
        s = join(lines);
        break;
      }
      case 4: {  // repeat or drop a line
        auto lines = split_lines(s);
        if (lines.empty()) break;
        size_t i = pick(lines.size());
        if (pick(2)) lines.insert(lines.begin() + i, lines[i]);
        else lines.erase(lines.begin() + i);
        s = join(lines);
        break;
      }
      case 5:  // splice in a keyword or a troublesome word
      case 6: {
        const std::string& w = kWords[pick(kWords.size())];
        size_t at = pick(s.size() + 1);
        if (pick(2)) {
          s.insert(at, w);
        } else {  // replace the word at `at`
          size_t b = s.find_last_of(" \t\n", at ? at - 1 : 0);
          b = b == std::string::npos ? 0 : b + 1;
          size_t e = s.find_first_of(" \t\n", b);
          if (e == std::string::npos) e = s.size();
          if (b <= e) s.replace(b, e - b, w);
        }
        break;
      }
      case 7: {  // cross-over with another corpus file, line-wise
        auto a = split_lines(s);
        auto b = split_lines(corpus.files[pick(corpus.files.size())]);
        if (a.empty() || b.empty()) break;
        size_t ia = pick(a.size()), ib = pick(b.size());
        a.erase(a.begin() + ia, a.end());
        a.insert(a.end(), b.begin() + ib, b.end());
        s = join(a);
        break;
      }
    }
  }
  return s;
}

bool names_file_and_line(const std::string& msg, const std::string& file) {
  if (msg.compare(0, file.size() + 1, file + ":") != 0) return false;
  size_t i = file.size() + 1, digits = 0;
  while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') ++i, ++digits;
  return digits > 0 && i < msg.size() && msg[i] == ':';
}

// Runs one reader on the input; returns an empty string or the failure.
template <typename Reader>
std::string check(Reader read, const std::string& input, const std::string& file) {
  Config c;
  try {
    c = read(input, file);
  } catch (const isthmus::Error& e) {
    if (e.code() != ISTHMUS_ERR_CONFIG)
      return "isthmus::Error with code " + std::to_string(e.code()) + ": " + e.what();
    if (!names_file_and_line(e.what(), file))
      return std::string("message without file and line: ") + e.what();
    return "";
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-standard exception";
  }
  try {
    (void)describe(c);
    std::string yaml = to_yaml(c);
    Config back = parse_config_yaml(yaml, "roundtrip.yaml");
    if (!(back == c)) return "accepted, but its YAML conversion reads back different:\n" + yaml;
  } catch (const std::exception& e) {
    return std::string("accepted, but converting it failed: ") + e.what();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t runs = 5000, seed = 1;
  int64_t only = -1;
  bool verbose = false;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--only" && i + 1 < argc) only = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--verbose") verbose = true;
    else dirs.push_back(a);
  }
  if (dirs.empty()) {
    std::cerr << "usage: fuzz_config [--runs N] [--seed S] [--only I] [--verbose] DATA_DIR...\n";
    return 2;
  }
  Corpus corpus = load(dirs);
  if (corpus.files.empty()) {
    std::cerr << "fuzz_config: no corpus files in the given folders\n";
    return 2;
  }
  std::signal(SIGALRM, on_alarm);
  uint64_t accepted = 0, failures = 0;
  for (uint64_t i = 0; i < runs; ++i) {
    if (only >= 0 && i != static_cast<uint64_t>(only)) continue;
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + i);
    g_current = mutate(corpus, rng);
    g_index = i;
    alarm(10);
    for (int which = 0; which < 2; ++which) {
      std::string failure =
          which == 0 ? check(parse_namcouple, g_current, "namcouple")
                     : check(parse_config_yaml, g_current, "fuzz.yaml");
      if (failure.empty()) continue;
      ++failures;
      std::cerr << "fuzz_config: input " << i << " (seed " << seed << "), "
                << (which == 0 ? "namcouple" : "YAML") << " reader: " << failure
                << "\n--- input ---\n" << g_current << "\n--- end ---\n";
    }
    alarm(0);
    // Counting the inputs some reader accepted shows the mutations keep reaching the checks.
    try {
      parse_namcouple(g_current, "n");
      ++accepted;
    } catch (...) {
    }
    if (verbose && i % 10000 == 0) std::cerr << "fuzz_config: " << i << " inputs\n";
    if (failures >= 10) break;
  }
  std::cout << "fuzz_config: " << runs << " inputs from " << corpus.files.size()
            << " corpus files, seed " << seed << ": " << accepted
            << " accepted by the namcouple reader, " << failures << " failures\n";
  return failures ? 1 : 0;
}
