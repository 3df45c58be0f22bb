// For tests of the library's internals (which see src/): the code and message a call threw.
#pragma once
#include <string>
#include <utility>

#include "base/error.h"

// The code and message f threw (ISTHMUS_OK and "" when none).
template <typename F>
std::pair<int, std::string> outcome(F&& f) {
  try {
    f();
  } catch (const isthmus::Error& e) {
    return {e.code(), e.what()};
  }
  return {ISTHMUS_OK, ""};
}
