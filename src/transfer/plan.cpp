#include "transfer/plan.h"

#include <sstream>

#include "base/error.h"

namespace isthmus {

Plan collective_plan(Method collective) {
  if (collective != Method::Alltoallv && collective != Method::Neighbor)
    fail(ISTHMUS_ERR_INTERNAL, "a collective plan is alltoallv or neighbor, not ", method_name(collective));
  return Plan{-static_cast<int>(collective)};
}

Method collective_of(const Plan& plan) {
  if (plan.size() == 1 && (plan[0] == -static_cast<int>(Method::Alltoallv) ||
                           plan[0] == -static_cast<int>(Method::Neighbor)))
    return static_cast<Method>(-plan[0]);
  return Method::Auto;
}

Plan full_butterfly_plan(int stages) { return Plan(stages > 0 ? stages : 0, 1); }

Plan p2p_plan(int stages) { return stages > 0 ? Plan{stages} : Plan{}; }

std::vector<Plan> all_plans(int stages) {
  if (stages <= 0) return {Plan{}};
  std::vector<Plan> out;
  // Bit b of mask set: the boundary before stage b+1 is kept.
  for (unsigned mask = 0; mask < (1u << (stages - 1)); ++mask) {
    Plan p;
    int run = 1;
    for (int b = 0; b < stages - 1; ++b) {
      if (mask & (1u << b)) {
        p.push_back(run);
        run = 1;
      } else {
        ++run;
      }
    }
    p.push_back(run);
    out.push_back(p);
  }
  return out;
}

std::vector<int> round_bounds(const Plan& plan) {
  std::vector<int> b{0};
  for (int k : plan) b.push_back(b.back() + k);
  return b;
}

Plan merge_at(const Plan& plan, int boundary) {
  std::vector<int> b = round_bounds(plan);
  for (size_t j = 1; j + 1 < b.size(); ++j) {
    if (b[j] == boundary) {
      Plan p(plan.begin(), plan.begin() + (j - 1));
      p.push_back(plan[j - 1] + plan[j]);
      p.insert(p.end(), plan.begin() + (j + 1), plan.end());
      return p;
    }
  }
  return plan;
}

void validate_plan(const Plan& plan, int stages) {
  int sum = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i] < 1)
      fail(ISTHMUS_ERR_ARG, "transfer plan '", plan_string(plan), "': run ", i, " has length ",
           plan[i], "; every run merges at least 1 stage");
    sum += plan[i];
  }
  if (sum != stages)
    fail(ISTHMUS_ERR_ARG, "transfer plan '", plan_string(plan), "' covers ", sum,
         " stages but the butterfly has ", stages);
}

std::string plan_string(const Plan& plan) {
  if (const Method m = collective_of(plan); m != Method::Auto) return method_name(m);
  std::string s;
  for (size_t i = 0; i < plan.size(); ++i) s += (i ? "," : "") + std::to_string(plan[i]);
  return s;
}

Plan parse_plan(const std::string& text) {
  Plan p;
  if (text.empty()) return p;
  for (Method m : {Method::Alltoallv, Method::Neighbor})
    if (text == method_name(m)) return collective_plan(m);
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1)
      fail(ISTHMUS_ERR_ARG, "transfer plan '", text, "': '", item,
           "' is not a positive run length (expected e.g. \"1,2,1\")");
    p.push_back(v);
  }
  if (!text.empty() && text.back() == ',')
    fail(ISTHMUS_ERR_ARG, "transfer plan '", text, "' ends with a comma");
  return p;
}

}  // namespace isthmus
