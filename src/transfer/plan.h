// A transfer plan says which stages of an n-stage butterfly are merged: a list of run lengths
// summing to n. A run of k stages is one point-to-point round in which a node talks to up to
// 2^k - 1 partners. [1,1,...,1] is the full butterfly (n rounds, one partner each); [n] is pure
// point-to-point (one round, sender straight to receiver). Seed 001, sect. 4 and Fig. 12.
// The adaptive executor also weighs MPI's own collectives against these: a collective plan is
// one negative entry naming the method (collective_plan), written "alltoallv" or "neighbor".
#pragma once
#include <string>
#include <vector>

#include "transfer/executor.h"

namespace isthmus {

using Plan = std::vector<int>;

// The plan that runs the whole exchange as one MPI collective (Method::Alltoallv or
// Method::Neighbor), and its method (Method::Auto for a butterfly plan).
Plan collective_plan(Method collective);
Method collective_of(const Plan& plan);

Plan full_butterfly_plan(int stages);
Plan p2p_plan(int stages);
// Every plan for n stages: the 2^(n-1) compositions of n (one empty plan when n == 0).
std::vector<Plan> all_plans(int stages);
// The plan with the boundary before stage `boundary` (1..n-1) removed, i.e. the two runs on
// either side of it merged. Returns the plan unchanged if that boundary is already merged.
Plan merge_at(const Plan& plan, int boundary);
// Stage index (0-based) at which each round starts, plus n at the end: {0, T_1, ..., n}.
std::vector<int> round_bounds(const Plan& plan);
// Throws Error(ISTHMUS_ERR_ARG) naming the problem if plan is not a composition of `stages`.
void validate_plan(const Plan& plan, int stages);
// "1,1,2"; "" for the empty plan; "alltoallv" or "neighbor" for a collective plan. parse_plan
// accepts exactly what plan_string writes.
std::string plan_string(const Plan& plan);
Plan parse_plan(const std::string& text);

}  // namespace isthmus
