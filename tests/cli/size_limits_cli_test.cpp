// The normlab binary with sizes it cannot hold (issue 12, finding 5): a context length of 2^61
// used to corrupt the heap (SIGABRT), a batch of 2^62 to segfault, and running out of memory to
// abort. Each is now a message naming the key, the op or the tensor, and exit code 1 (every runtime error's
// code), never a signal (which the shell reports as 128 + its number: 134, 139).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "command_util.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define NORMLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NORMLAB_ASAN 1
#endif
#endif

namespace normlab {
namespace {

struct TinyCli {
  test::ScratchDir dir;
  std::string config = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  // `normlab train` on the tiny config with overrides, after the shell prefix (environment, ulimit).
  // An AddressSanitizer build would abort on the allocations beyond 1 TiB some tests ask for.
  test::CommandResult train(const std::string& overrides, const std::string& prefix = "") const {
    return test::run_command("export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1; " +
                             prefix + test::kNormlab + " train " + config + " " + overrides + " --quiet");
  }
};

void expect_clean_error(const test::CommandResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in: " << r.output;
}

const std::string kSkip = "NORMLAB_SKIP_MEMORY_CHECK=1 ";

// KiB that the binary's shared libraries take when mapped (their file sizes): with the CUDA backend
// built, cuBLAS alone maps hundreds of MiB before main() runs.
int64_t linked_library_kib() {
  const test::CommandResult r = test::run_command("ldd " + std::string(test::kNormlab));
  std::istringstream lines(r.output);
  std::string line;
  int64_t bytes = 0;
  while (std::getline(lines, line)) {
    const size_t arrow = line.find("=> /");
    if (arrow == std::string::npos) continue;
    const std::string path = line.substr(arrow + 3, line.find(' ', arrow + 3) - (arrow + 3));
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (!error) bytes += static_cast<int64_t>(size);
  }
  return bytes / 1024;
}

TEST(SizeLimitsCli, ContextLengthOfTwoToThe61IsAnErrorNotACorruptedHeap) {
  TinyCli t;
  expect_clean_error(t.train("model.context_length=2305843009213693952"), "[train] memory estimate");
  expect_clean_error(t.train("model.context_length=2305843009213693952", kSkip),
                     "[model] context_length * d_model = 2305843009213693952 * 16 overflows int64");
  EXPECT_FALSE(std::filesystem::exists(t.dir.file("runs")));
}

TEST(SizeLimitsCli, HugeWidthVocabularyAndBatchAreErrorsNamingTheKeys) {
  TinyCli t;
  expect_clean_error(t.train("model.d_model=4611686018427387904 model.n_heads=1", kSkip),
                     "[model] vocab_size * d_model = 8 * 4611686018427387904 overflows int64");
  expect_clean_error(t.train("train.batch_size=4611686018427387904", kSkip),
                     "[train] train.batch_size * train.context = 4611686018427387904 * 8 overflows int64");
  expect_clean_error(t.train("data.copy_vocab=1099511627776"), "copy_vocab must be <= 2147483647");
  expect_clean_error(t.train("data.copy_vocab=2147483647 model.d_model=8589934592 model.n_heads=1", kSkip),
                     "[model] vocab_size * d_model = 2147483647 * 8589934592 overflows int64");
  // Countable, but 2^48 tokens a step (a PiB of ids, more than any address space): refused by the
  // estimate, or out of memory naming the batch.
  expect_clean_error(t.train("train.batch_size=35184372088832"), "[train] memory estimate");
  EXPECT_FALSE(std::filesystem::exists(t.dir.file("runs")));  // everything so far failed before the run began
  expect_clean_error(t.train("train.batch_size=35184372088832", kSkip),
                     "out of memory allocating int32 (35184372088832, 8) on cpu");
}

#ifndef NORMLAB_ASAN  // AddressSanitizer reserves terabytes of address space: ulimit -v breaks it
// Under ulimit -v (about 586 MiB beyond the mapped libraries: room for their buffers, not for the model), a model of
// 256 MiB matrices is refused by the estimate naming the limit; forced past it, the allocation
// fails naming the tensor; a data file whose tokens cannot fit names the file.
TEST(SizeLimitsCli, OutOfMemoryUnderUlimitIsACleanErrorNamingWhatWasAllocated) {
  TinyCli t;
  const std::string limited = "ulimit -v " + std::to_string(600000 + linked_library_kib()) + " && ";
  const std::string big = "model.d_model=8192 model.n_heads=8 model.d_ff=8192 model.n_layers=1";
  const auto refused = t.train(big, limited);
  expect_clean_error(refused, "[train] memory estimate");
  expect_clean_error(refused, "(ulimit -v)");
  expect_clean_error(t.train(big, limited + kSkip), "out of memory allocating float32 (8192, 8192) on cpu");

  {
    std::ofstream text(t.dir.file("big.txt"), std::ios::binary);
    const std::string line(1023, 'a');
    for (int i = 0; i < 128 * 1024; ++i) text << line << '\n';  // 128 MiB: its tokens alone take 512
  }
  expect_clean_error(t.train("data.source=" + t.dir.file("big.txt") + " train.context=8", limited),
                     "[data] out of memory loading data file '" + t.dir.file("big.txt") + "' (128.0 MiB");
}
#endif

}  // namespace
}  // namespace normlab
