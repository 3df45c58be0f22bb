// Small text helpers for the readers of names, units and options.
#pragma once
#include <cctype>
#include <string>

namespace isthmus {

// s in lower case (ASCII).
inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// s without the characters of `space` at either end.
inline std::string trimmed(const std::string& s, const char* space = " \t\n") {
  const size_t b = s.find_first_not_of(space);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(space) - b + 1);
}

}  // namespace isthmus
