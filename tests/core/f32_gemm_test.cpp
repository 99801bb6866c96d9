// The float32 kernel choice (core/cpu/f32_gemm.h): each kernel against a float64 reference, through
// the backend's spreads and oneDNN's pieces; oneDNN's bits at 1 and 2 threads; the kept file.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/backend.h"
#include "core/cpu/f32_gemm.h"
#include "core/cpu/env_choice.h"
#include "core/cpu/f32_gemm_choice.h"
#include "core/random.h"

namespace normlab {
namespace {

// Restores the kernel and the thread count a test changed.
class KernelGuard {
 public:
  explicit KernelGuard(F32GemmKernel kernel) : threads_(num_threads()) { set_f32_gemm_kernel(kernel); }
  ~KernelGuard() {
    set_f32_gemm_kernel(F32GemmKernel::Auto);
    set_num_threads(threads_);
  }

 private:
  int threads_;
};

struct Product {
  int64_t batch, m, n, k;
  bool trans_a, trans_b;
  double alpha, beta;
};

// C = alpha op(A) op(B) + beta C0 through the CPU backend, float32, on `threads` threads.
std::vector<double> backend_product(const Product& p, const Tensor& a, const Tensor& b, const Tensor& c0,
                                    int threads) {
  set_num_threads(threads);
  GemmArgs g;
  g.trans_a = p.trans_a, g.trans_b = p.trans_b, g.batch = p.batch, g.m = p.m, g.n = p.n, g.k = p.k;
  g.stride_a = p.m * p.k, g.stride_b = p.k * p.n, g.stride_c = p.m * p.n, g.alpha = p.alpha, g.beta = p.beta;
  Tensor c = c0.clone();
  cpu_backend().gemm(g, a, b, c);
  return c.to_vector();
}

struct Operands {
  Tensor a, b, c0;
};
Operands operands_of(const Product& p, Generator& gen) {
  return {Tensor::randn({p.batch, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k}, gen),
          Tensor::randn({p.batch, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n}, gen),
          Tensor::randn({p.batch, p.m, p.n}, gen)};
}

// The same product in float64 (OpenBLAS's dgemm), the reference.
std::vector<double> reference_product(const Product& p, const Operands& o) {
  GemmArgs g;
  g.trans_a = p.trans_a, g.trans_b = p.trans_b, g.batch = p.batch, g.m = p.m, g.n = p.n, g.k = p.k;
  g.stride_a = p.m * p.k, g.stride_b = p.k * p.n, g.stride_c = p.m * p.n, g.alpha = p.alpha, g.beta = p.beta;
  Tensor c = o.c0.to(DType::F64);
  cpu_backend().gemm(g, o.a.to(DType::F64), o.b.to(DType::F64), c);
  return c.to_vector();
}

// Tiny, small and large products; the large ones are cut into oneDNN pieces (rows when C is
// taller, columns when wider) and into OpenBLAS's thread pieces; uneven sides leave remainders.
std::vector<Product> products() {
  std::vector<Product> out;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      out.push_back({6, 64, 64, 32, ta, tb, 1.0, 0.0});
      out.push_back({3, 256, 64, 256, ta, tb, 0.125, 0.0});
      out.push_back({1, 1030, 301, 128, ta, tb, 1.0, 1.0});
      out.push_back({1, 130, 1030, 160, ta, tb, 2.0, 0.5});
    }
  return out;
}

void expect_kernel_matches_reference(F32GemmKernel kernel) {
  const KernelGuard guard(kernel);
  Generator gen(11);
  for (const Product& p : products()) {
    const Operands o = operands_of(p, gen);
    const std::vector<double> want = reference_product(p, o);
    for (const int threads : {1, 2}) {
      const std::vector<double> got = backend_product(p, o.a, o.b, o.c0, threads);
      double worst = 0.0;
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
      EXPECT_LT(worst, 2e-5 * std::sqrt(static_cast<double>(p.k)))
          << f32_gemm_kernel_name(kernel) << " (" << p.batch << ", " << p.m << ", " << p.n << ", " << p.k
          << ") trans " << p.trans_a << p.trans_b << " at " << threads << " threads";
    }
  }
}

TEST(F32Gemm, OpenBlasMatchesFloat64) { expect_kernel_matches_reference(F32GemmKernel::OpenBlas); }

TEST(F32Gemm, OneDnnMatchesFloat64) {
  if (!onednn_f32_available()) GTEST_SKIP() << "built without oneDNN";
  expect_kernel_matches_reference(F32GemmKernel::OneDnn);
}

// oneDNN's pieces depend on the shape only, so its products are bitwise the same at every thread
// count, under any OpenBLAS core (a piece is not summed as the same rows of the whole: cutting
// by the thread count changed the bits of (128, 512, 768) and of every transposed-A row split).
TEST(F32Gemm, OneDnnGivesTheSameBitsAtOneAndTwoThreads) {
  if (!onednn_f32_available()) GTEST_SKIP() << "built without oneDNN";
  const KernelGuard guard(F32GemmKernel::OneDnn);
  Generator gen(5);
  std::vector<Product> shapes = products();
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const Product s : {Product{1, 128, 512, 768}, Product{1, 512, 128, 768}, Product{1, 2048, 512, 512},
                              Product{2, 768, 128, 128}, Product{1, 96, 128, 768}})
        shapes.push_back({s.batch, s.m, s.n, s.k, ta, tb, 1.0, 0.0});
  for (const Product& p : shapes) {
    const Operands o = operands_of(p, gen);
    EXPECT_EQ(backend_product(p, o.a, o.b, o.c0, 2), backend_product(p, o.a, o.b, o.c0, 1))
        << "(" << p.batch << ", " << p.m << ", " << p.n << ", " << p.k << ") trans " << p.trans_a << p.trans_b;
  }
}

TEST(F32Gemm, TheEnvironmentNamesAKernelOrIsRefused) {
  const char* var = "NORMLAB_TEST_F32_CHOICE";
  const auto read = [&] {
    return choice_from_environment(var, {F32GemmKernel::Auto, F32GemmKernel::OpenBlas, F32GemmKernel::OneDnn},
                                   f32_gemm_kernel_name);
  };
  ::unsetenv(var);
  EXPECT_EQ(read(), F32GemmKernel::Auto);
  ::setenv(var, "onednn", 1);
  EXPECT_EQ(read(), F32GemmKernel::OneDnn);
  ::setenv(var, "mkl", 1);
  try {
    read();
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[gemm] NORMLAB_TEST_F32_CHOICE must be auto, openblas or onednn, got 'mkl'");
  }
  ::unsetenv(var);
}

TEST(F32Gemm, ClassesFollowTheProductSize) {
  EXPECT_EQ(gemm_class_of(64, 64, 32), GemmClass::Tiny);
  EXPECT_EQ(gemm_class_of(128, 128, 128), GemmClass::Small);  // 2^21
  EXPECT_EQ(gemm_class_of(256, 256, 64), GemmClass::Small);
  EXPECT_EQ(gemm_class_of(256, 256, 256), GemmClass::Large);  // 2^24
  EXPECT_EQ(gemm_class_of(127, 128, 128), GemmClass::Tiny);
}

// ---- the kept choice ----

class KeptChoice : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("normlab-f32-choice-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    file_ = dir_ / "sub" / f32_choice_file_name();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A measured choice: large oneDNN at `large`, the others OpenBLAS.
  static F32GemmChoice choice_with_large(double large) {
    F32GemmChoice c;
    c.kernel[2] = large >= kF32AutoMargin ? F32GemmKernel::OneDnn : F32GemmKernel::OpenBlas;
    c.speedup[0] = 0.9, c.speedup[1] = 1.0, c.speedup[2] = large;
    c.measured_at = "2026-12-05T00:00:00Z";
    return c;
  }

  static std::string idle() { return ""; }
  std::filesystem::path dir_, file_;
};

TEST_F(KeptChoice, ABusyMachineMeasuresNothingAndKeepsNothing) {
  int measured = 0;
  const auto measure = [&] { return ++measured, choice_with_large(1.5); };
  const F32GemmChoice busy = kept_or_measured_choice(file_, measure, [] { return std::string("the machine is busy"); });
  EXPECT_EQ(measured, 0);
  EXPECT_FALSE(std::filesystem::exists(file_));
  for (const F32GemmKernel k : busy.kernel) EXPECT_EQ(k, F32GemmKernel::OpenBlas);
  EXPECT_NE(describe_f32_choice(busy).find("the machine is busy"), std::string::npos) << describe_f32_choice(busy);
  // A probe that lost its core is not kept either; the next idle process measures and keeps.
  const F32GemmChoice preempted = kept_or_measured_choice(file_, [&] {
    F32GemmChoice c = measure();
    c.probe_cpu_share = 0.6;
    return c;
  }, idle);
  EXPECT_EQ(measured, 1);
  EXPECT_FALSE(std::filesystem::exists(file_));
  EXPECT_EQ(preempted.kernel[2], F32GemmKernel::OpenBlas);
  EXPECT_NE(preempted.note.find("the probe had its core 60% of the time"), std::string::npos) << preempted.note;
  EXPECT_EQ(kept_or_measured_choice(file_, measure, idle).kernel[2], F32GemmKernel::OneDnn);
  EXPECT_TRUE(std::filesystem::exists(file_));
  EXPECT_EQ(kept_or_measured_choice(file_, measure, [] { return std::string("busy"); }).kernel[2],
            F32GemmKernel::OneDnn) << "a kept choice is read whatever the load";
}

// The probe's clock counts its own thread only: while this thread waits for a spinner to use
// 50 ms of CPU, its clock does not move (a process clock would move by the spinner's 50 ms).
TEST(F32GemmProbe, ItsClockCountsItsOwnThreadOnly) {
  const double before = probe_thread_cpu_seconds();
  std::thread spinner([] {
    const double start = probe_thread_cpu_seconds();
    while (probe_thread_cpu_seconds() - start < 0.05) {
    }
  });
  spinner.join();
  EXPECT_LT(probe_thread_cpu_seconds() - before, 0.01);
}

// The process held to one CPU with a thread spinning beside the probe: the probe sees that it
// did not have its core to itself, so the choice it made would not be kept. At one OpenMP thread
// the probe runs on the calling thread: with more, a pool thread started before the CPU was
// fixed could run it on another CPU.
TEST(F32GemmProbe, SeesANeighbourOnItsCore) {
  if (!onednn_f32_available()) GTEST_SKIP() << "built without oneDNN";
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof all, &all), 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // threads started from here on inherit it
  std::atomic<bool> started{false}, stop{false};
  std::thread spinner([&] {
    started = true;
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (!started) std::this_thread::yield();
  const F32GemmChoice loaded = measure_f32_gemm_choice();
  stop = true;
  spinner.join();
  sched_setaffinity(0, sizeof all, &all);
  omp_set_num_threads(threads);
  EXPECT_LT(loaded.probe_cpu_share, kMinProbeCpuShare);
  EXPECT_GT(loaded.probe_cpu_share, 0.0);
}

TEST_F(KeptChoice, MeasuredOnceThenReadFromTheFile) {
  int measured = 0;
  const auto measure = [&] { return ++measured, choice_with_large(1.2); };
  const F32GemmChoice first = kept_or_measured_choice(file_, measure, idle);
  EXPECT_EQ(measured, 1);
  EXPECT_EQ(first.kernel[2], F32GemmKernel::OneDnn);
  EXPECT_EQ(first.file, file_.string());
  const F32GemmChoice second = kept_or_measured_choice(file_, measure, idle);
  EXPECT_EQ(measured, 1) << "the kept file must be read, not measured again";
  EXPECT_EQ(second.kernel[2], F32GemmKernel::OneDnn);
  EXPECT_DOUBLE_EQ(second.speedup[2], 1.2);
  EXPECT_EQ(second.measured_at, "2026-12-05T00:00:00Z");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(file_.parent_path()), {}), 1) << "no temporary left";
}

// Another process wrote its choice between this one's reading and writing: both use the first.
TEST_F(KeptChoice, AProcessThatMeasuredSecondAdoptsTheFirstOnesFile) {
  const auto measure = [&] {
    std::filesystem::create_directories(file_.parent_path());
    std::ofstream(file_) << format_f32_choice(choice_with_large(0.8));  // the other process, first
    return choice_with_large(1.3);
  };
  const F32GemmChoice c = kept_or_measured_choice(file_, measure, idle);
  EXPECT_EQ(c.kernel[2], F32GemmKernel::OpenBlas);
  EXPECT_DOUBLE_EQ(c.speedup[2], 0.8);
}

TEST_F(KeptChoice, AMalformedFileIsReplacedByTheMeasuredChoice) {
  std::filesystem::create_directories(file_.parent_path());
  std::ofstream(file_) << "large onednn\n";  // cut short
  const F32GemmChoice c = kept_or_measured_choice(file_, [] { return choice_with_large(1.5); }, idle);
  EXPECT_EQ(c.kernel[2], F32GemmKernel::OneDnn);
  EXPECT_EQ(c.file, file_.string()) << c.note;
  F32GemmChoice reread;
  std::ifstream in(file_);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(parse_f32_choice(text, reread)) << text;
}

TEST_F(KeptChoice, AnUnwritableDirectoryLeavesTheMeasuredChoiceWithANote) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "sub") << "a file where the directory should be";
  const F32GemmChoice c = kept_or_measured_choice(file_, [] { return choice_with_large(1.5); }, idle);
  EXPECT_EQ(c.kernel[2], F32GemmKernel::OneDnn);
  EXPECT_TRUE(c.file.empty());
  EXPECT_NE(c.note.find("not kept"), std::string::npos) << c.note;
  EXPECT_NE(describe_f32_choice(c).find("not kept"), std::string::npos);
}

TEST(F32GemmChoiceText, RoundTripsAndRejectsMalformedText) {
  F32GemmChoice c;
  c.kernel[0] = F32GemmKernel::OpenBlas, c.kernel[1] = F32GemmKernel::OneDnn, c.kernel[2] = F32GemmKernel::OneDnn;
  c.speedup[0] = 0.91, c.speedup[1] = 1.12, c.speedup[2] = 1.07;
  c.measured_at = "2026-12-05T02:01:26Z";
  F32GemmChoice back;
  ASSERT_TRUE(parse_f32_choice(format_f32_choice(c), back));
  for (int cls = 0; cls < 3; ++cls) {
    EXPECT_EQ(back.kernel[cls], c.kernel[cls]) << cls;
    EXPECT_NEAR(back.speedup[cls], c.speedup[cls], 1e-4) << cls;
  }
  EXPECT_EQ(back.measured_at, c.measured_at);
  const std::string good = format_f32_choice(c);
  for (const std::string& bad : {std::string(""), good + "extra\n", "large mkl 1.0\n" + good.substr(good.find('\n') + 1),
                                good.substr(0, good.rfind("measured")), "small" + good.substr(5)})
    EXPECT_FALSE(parse_f32_choice(bad, back)) << bad;
  EXPECT_NE(describe_f32_choice(c).find("large onednn (1.07x), small onednn (1.12x), tiny openblas (0.91x)"),
            std::string::npos)
      << describe_f32_choice(c);
}

}  // namespace
}  // namespace normlab
