// C API of the configuration files: check (what was understood) and convert (to YAML). No
// context: a command-line tool or a script checks a namcouple without starting MPI.
#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "base/error.h"
#include "coupler/config.h"
#include "capi/handles.h"
#include "isthmus.h"

namespace {

template <typename Make>
int text_call(const char* function, const char* path, char* text, int64_t size, int64_t* length,
              char* errmsg, int64_t errsize, Make make) {
  std::string msg;
  const int code = isthmus::run_caught([&] {
    if (!path) isthmus::fail(ISTHMUS_ERR_ARG, "path is NULL");
    if (size < 0) isthmus::fail(ISTHMUS_ERR_ARG, "size is ", size, "; it must not be negative");
    if (size > 0 && !text) isthmus::fail(ISTHMUS_ERR_ARG, "the text buffer is NULL but size is ", size);
    isthmus::copy_text(make(std::string(path)), text, size, length);
  }, msg);
  if (code == ISTHMUS_OK) {
    if (errmsg && errsize > 0) errmsg[0] = '\0';
    return code;
  }
  if (length) *length = 0;
  if (text && size > 0) text[0] = '\0';
  isthmus::copy_text(std::string("isthmus: ") + function + ": " + msg, errmsg, errsize);
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
