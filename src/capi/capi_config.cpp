// C API of the configuration files: check (what was understood) and convert (to YAML). No
// context: a command-line tool or a script checks a namcouple without starting MPI.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "base/error.h"
#include "coupler/config.h"
#include "isthmus.h"

namespace {

// snprintf's contract: as much as fits, always NUL-terminated, the full length reported.
void copy_out(const std::string& s, char* out, int64_t size, int64_t* length) {
  if (length) *length = static_cast<int64_t>(s.size());
  if (!out || size <= 0) return;
  size_t n = std::min(s.size(), static_cast<size_t>(size - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

template <typename Make>
int text_call(const char* function, const char* path, char* text, int64_t size, int64_t* length,
              char* errmsg, int64_t errsize, Make make) {
  int code = ISTHMUS_OK;
  std::string msg;
  try {
    if (!path) isthmus::fail(ISTHMUS_ERR_ARG, "path is NULL");
    if (size < 0) isthmus::fail(ISTHMUS_ERR_ARG, "size is ", size, "; it must not be negative");
    if (size > 0 && !text) isthmus::fail(ISTHMUS_ERR_ARG, "the text buffer is NULL but size is ", size);
    copy_out(make(std::string(path)), text, size, length);
    if (errmsg && errsize > 0) errmsg[0] = '\0';
    return ISTHMUS_OK;
  } catch (const isthmus::Error& e) {
    code = e.code();
    msg = e.what();
  } catch (const std::bad_alloc&) {
    code = ISTHMUS_ERR_NOMEM;
    msg = "out of memory";
  } catch (const std::exception& e) {
    code = ISTHMUS_ERR_INTERNAL;
    msg = e.what();
  }
  if (length) *length = 0;
  if (text && size > 0) text[0] = '\0';
  copy_out(std::string("isthmus: ") + function + ": " + msg, errmsg, errsize, nullptr);
  return code;
}

}  // namespace

extern "C" {

int isthmus_config_check(const char* path, char* text, int64_t size, int64_t* length,
                         char* errmsg, int64_t errsize) {
  return text_call(__func__, path, text, size, length, errmsg, errsize, [](const std::string& p) {
    return isthmus::coupler::describe(isthmus::coupler::read_config(p));
  });
}

int isthmus_config_convert(const char* path, char* yaml, int64_t size, int64_t* length,
                           char* errmsg, int64_t errsize) {
  return text_call(__func__, path, yaml, size, length, errmsg, errsize, [](const std::string& p) {
    return isthmus::coupler::to_yaml(isthmus::coupler::read_config(p));
  });
}

}  // extern "C"
