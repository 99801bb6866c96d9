#include "io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "core/device.h"
#include "core/files.h"
#include "io/atomic_file.h"

namespace normlab {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts would need byte swapping");

namespace {

using ordered_json = nlohmann::ordered_json;

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the reference implementation's limit

std::string dtype_code(DType dtype) {
  switch (dtype) {
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I32: return "I32";
  }
  return "?";
}

bool parse_dtype_code(const std::string& code, DType& dtype) {
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32}) {
    if (dtype_code(d) == code) {
      dtype = d;
      return true;
    }
  }
  return false;
}

template <typename... Args>
[[noreturn]] void malformed(const std::string& path, fmt::format_string<Args...> format, Args&&... args) {
  fail("safetensors", "{}: {}", path, fmt::format(format, std::forward<Args>(args)...));
}

// One tensor entry of the header, checked against the data buffer of `data_bytes` bytes.
Tensor read_tensor(const std::string& path, const std::string& name, const ordered_json& entry,
                   const char* data, uint64_t data_bytes, std::pair<uint64_t, uint64_t>& range) {
  if (!entry.is_object()) malformed(path, "tensor '{}': header entry is not a JSON object", name);
  if (!entry.contains("dtype") || !entry["dtype"].is_string())
    malformed(path, "tensor '{}': missing or non-string \"dtype\"", name);
  DType dtype;
  const std::string code = entry["dtype"].get<std::string>();
  if (!parse_dtype_code(code, dtype))
    malformed(path, "tensor '{}': unknown dtype '{}' (normlab reads F32, F64, F16, BF16, I32)", name, code);

  if (!entry.contains("shape") || !entry["shape"].is_array())
    malformed(path, "tensor '{}': missing or non-array \"shape\"", name);
  Shape shape;
  // extent multiplies the dimensions counting a 0 as 1: an empty tensor of shape (0, 2^62, 2^62)
  // has numel 0 but strides that overflow int64, so it is as "too large" as its extent.
  uint64_t numel = 1, extent = 1;
  for (const auto& dim : entry["shape"]) {
    if (!dim.is_number_unsigned())
      malformed(path, "tensor '{}': shape {} has a dimension that is not a non-negative integer", name,
                entry["shape"].dump());
    const uint64_t d = dim.get<uint64_t>();
    if (__builtin_mul_overflow(extent, std::max<uint64_t>(d, 1), &extent) || extent > (uint64_t(1) << 48))
      malformed(path, "tensor '{}': shape {} is too large", name, entry["shape"].dump());
    numel *= d;  // <= extent
    shape.push_back(static_cast<int64_t>(d));
  }

  const auto& offsets = entry.contains("data_offsets") ? entry["data_offsets"] : ordered_json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    malformed(path, "tensor '{}': \"data_offsets\" must be [begin, end] with non-negative integers", name);
  const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
  if (begin > end || end > data_bytes)
    malformed(path, "tensor '{}': data_offsets [{}, {}] out of range (the data section has {} bytes)",
              name, begin, end, data_bytes);
  const uint64_t expected = numel * dtype_size(dtype);
  if (end - begin != expected)
    malformed(path, "tensor '{}': data_offsets [{}, {}] hold {} bytes, but {} {} needs {}", name, begin,
              end, end - begin, code, shape_str(shape), expected);
  range = {begin, end};

  Tensor tensor = Tensor::empty(shape, dtype);
  if (expected > 0) std::memcpy(tensor.raw_data(), data + begin, expected);
  return tensor;
}

}  // namespace

const Tensor& SafetensorsFile::get(const std::string& name) const {
  auto it = tensors.find(name);
  NL_CHECK(it != tensors.end(), "safetensors", "{}: no tensor named '{}' ({} tensors in the file)", path,
           name, tensors.size());
  return it->second;
}

FileDigest save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                            const std::map<std::string, std::string>& metadata) {
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json meta = ordered_json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    header["__metadata__"] = meta;
  }
  std::vector<Tensor> host;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    NL_CHECK(!name.empty() && name != "__metadata__", "safetensors",
             "{}: invalid tensor name '{}'", path, name);
    NL_CHECK(seen.insert(name).second, "safetensors", "{}: tensor name '{}' given twice", path, name);
    NL_CHECK(tensor.defined(), "safetensors", "{}: tensor '{}' is undefined", path, name);
    Tensor t = tensor.to(Device::cpu()).contiguous();
    const uint64_t bytes = t.nbytes();
    header[name] = {{"dtype", dtype_code(t.dtype())},
                    {"shape", t.shape()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    host.push_back(std::move(t));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data section 8-byte aligned
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * i));

  AtomicFile file(path);
  file.write(length, sizeof(length));
  file.write(text);
  for (const Tensor& t : host)
    if (t.nbytes() > 0) file.write(t.raw_data(), t.nbytes());
  return file.commit();
}

SafetensorsFile load_safetensors(const std::string& path) {
  return parse_safetensors(path, read_whole_file(path, "safetensors"));
}

SafetensorsFile parse_safetensors(const std::string& path, const std::string& bytes) {
  if (bytes.size() < 8)
    malformed(path, "file is {} bytes, too short for the 8-byte header length", bytes.size());
  uint64_t header_bytes = 0;
  for (int i = 0; i < 8; ++i) header_bytes |= uint64_t(static_cast<uint8_t>(bytes[i])) << (8 * i);
  if (header_bytes > bytes.size() - 8)
    malformed(path, "header length {} is larger than the rest of the file ({} bytes): truncated or "
              "not a safetensors file", header_bytes, bytes.size() - 8);
  if (header_bytes > kMaxHeaderBytes)
    malformed(path, "header length {} exceeds the {}-byte limit", header_bytes, kMaxHeaderBytes);

  ordered_json header;
  try {
    header = ordered_json::parse(bytes.begin() + 8, bytes.begin() + 8 + header_bytes);
  } catch (const nlohmann::json::exception& e) {
    malformed(path, "header is not valid JSON: {}", e.what());
  }
  if (!header.is_object()) malformed(path, "header is not a JSON object");

  SafetensorsFile file;
  file.path = path;
  const char* data = bytes.data() + 8 + header_bytes;
  const uint64_t data_bytes = bytes.size() - 8 - header_bytes;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) malformed(path, "\"__metadata__\" is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) malformed(path, "metadata '{}' is not a string", key);
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    std::pair<uint64_t, uint64_t> range;
    file.tensors[name] = read_tensor(path, name, entry, data, data_bytes, range);
    file.names.push_back(name);
    ranges.push_back(range);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      malformed(path, "tensors overlap in the data section (bytes {} to {})", ranges[i].first,
                ranges[i - 1].second);
  return file;
}

void check_tensors(const SafetensorsFile& file, const std::vector<TensorSpec>& expected,
                   const std::string& prefix, const char* op) {
  std::set<std::string> wanted;
  for (const TensorSpec& spec : expected) {
    wanted.insert(spec.name);
    NL_CHECK(file.contains(spec.name), op, "{}: tensor '{}' is missing ({} tensors in the file)",
             file.path, spec.name, file.tensors.size());
    const Tensor& saved = file.tensors.at(spec.name);
    NL_CHECK(saved.dtype() == spec.dtype, op, "{}: tensor '{}' is {} but {} is expected", file.path,
             spec.name, dtype_name(saved.dtype()), dtype_name(spec.dtype));
    NL_CHECK(saved.shape() == spec.shape, op, "{}: tensor '{}' has shape {} but {} is expected",
             file.path, spec.name, shape_str(saved.shape()), shape_str(spec.shape));
  }
  for (const std::string& name : file.names)
    NL_CHECK(!name.starts_with(prefix) || wanted.count(name) > 0, op,
             "{}: unexpected tensor '{}' (not part of this model)", file.path, name);
}

}  // namespace normlab
