// The safetensors file format (as used by Hugging Face), for checkpoints:
//   8 bytes    N, the header length, unsigned little-endian
//   N bytes    JSON: {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//                     "__metadata__": {"<key>": "<string value>", ...}}  (padded with spaces)
//   the rest   the tensors' raw little-endian bytes, row-major; offsets count from here.
// dtypes: F32, F64, F16, BF16, I32 (the dtypes normlab tensors have).
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "io/atomic_file.h"

namespace normlab {

struct SafetensorsFile {
  std::string path;
  std::vector<std::string> names;  // tensor names in the order the header lists them
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;

  bool contains(const std::string& name) const { return tensors.count(name) > 0; }
  // The tensor called `name`; throws naming the file and the tensor when it is missing.
  const Tensor& get(const std::string& name) const;
};

// Writes atomically (temporary file, fsync, rename) and returns the file's size and CRC-32.
// Tensors may live on any device and be non-contiguous; names must be unique, non-empty and not
// "__metadata__".
FileDigest save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a whole file into host tensors. A malformed file throws "[safetensors] <path>: <what is
// wrong>" (bad header length, invalid JSON, unknown dtype, offsets out of range, ...).
SafetensorsFile load_safetensors(const std::string& path);
// The same from the file's bytes already in memory (`path` names it in messages).
SafetensorsFile parse_safetensors(const std::string& path, const std::string& bytes);

// What a reader expects of one tensor.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};
// Checks that `file` holds exactly the `expected` tensors among its names that start with
// `prefix` ("" = all of them): none missing, none unexpected, each with the expected dtype and
// shape. Throws "[op] <file>: ..." naming the first tensor that differs.
void check_tensors(const SafetensorsFile& file, const std::vector<TensorSpec>& expected,
                   const std::string& prefix, const char* op);

}  // namespace normlab
