// Errors: every message starts with the op (or component) name in brackets, e.g.
//   [rms_norm] eps must be > 0, got 0
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>
#include <string>

namespace normlab {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device (host or GPU) could not supply the memory asked for. Backends throw it from allocate();
// Tensor::empty rethrows it naming the tensor's dtype, shape and size.
struct OutOfMemory : Error {
  using Error::Error;
};

template <typename... Args>
[[noreturn]] void fail(std::string_view op, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format("[{}] {}", op, fmt::format(format, std::forward<Args>(args)...)));
}

}  // namespace normlab

// NL_CHECK(cond, "op", "message {}", value): throws normlab::Error("[op] message value") when cond is false.
#define NL_CHECK(cond, op, ...)                 \
  do {                                          \
    if (!(cond)) ::normlab::fail(op, __VA_ARGS__); \
  } while (0)
