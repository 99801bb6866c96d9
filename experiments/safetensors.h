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

// Writes atomically (temporary file, fsync, rename). Tensors may live on any device and be
// non-contiguous; names must be unique, non-empty and not "__metadata__".
void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a whole file into host tensors. A malformed file throws "[safetensors] <path>: <what is
// wrong>" (bad header length, invalid JSON, unknown dtype, offsets out of range, ...).
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace normlab
