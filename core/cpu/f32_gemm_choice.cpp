// Auto's float32 kernel choice: measured by the probe, kept per machine in a small text file.
#include "core/cpu/f32_gemm_choice.h"

#include <fmt/format.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/build_info.h"
#include "core/cpu/blas_core.h"
#include "core/digest.h"

namespace normlab {

namespace {

constexpr int kProbeVersion = 2;  // bump when the probe changes: old files are then not read
constexpr int kProbeTries = 5;

// Runs fn on one thread: inside an active parallel region when OpenMP has more than one thread,
// so that OpenBLAS does not thread the call.
template <typename Fn> void on_one_thread(Fn fn) {
  if (omp_get_max_threads() == 1) return fn();
#pragma omp parallel
#pragma omp single
  fn();
}

struct ProbeProduct {
  bool trans_a, trans_b;
  int64_t m, n, k, batch;
};

// Per class, in GemmClass's order. Tiny and Small: attention's S = Q K^T, O = P V, dV = P^T dO
// over 48 heads of (64 positions, 32) and 8 heads of (256, 64). Large: Y = X W^T, dX = dY W,
// dW = dY^T X for 1024 rows, 512 in, 512 out.
const std::vector<ProbeProduct> kProbes[3] = {
    {{false, true, 64, 64, 32, 48}, {false, false, 64, 32, 64, 48}, {true, false, 64, 32, 64, 48}},
    {{false, true, 256, 256, 64, 8}, {false, false, 256, 64, 256, 8}, {true, false, 256, 64, 256, 8}},
    {{false, true, 1024, 512, 512, 1}, {false, false, 1024, 512, 512, 1}, {true, false, 512, 512, 1024, 1}}};
constexpr const char* kClassNames[3] = {"tiny", "small", "large"};

// The probe thread's wall and CPU seconds, summed over every timed batch.
struct ProbeClock {
  double wall = 0.0, cpu = 0.0;
};

double seconds_of_batch(F32GemmKernel kernel, const ProbeProduct& p, std::vector<float>& a,
                        std::vector<float>& b, std::vector<float>& c, ProbeClock& clock) {
  double wall = 0.0;
  on_one_thread([&] {
    const double cpu0 = probe_thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < p.batch; ++i) {
      SgemmPiece piece{p.trans_a, p.trans_b, p.m, p.n, p.k, p.trans_a ? p.m : p.k, p.trans_b ? p.k : p.n, p.n,
                       1.0f, 0.0f, a.data() + i * p.m * p.k, b.data() + i * p.k * p.n, c.data() + i * p.m * p.n};
      sgemm_piece_with(kernel, piece);
    }
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    clock.cpu += probe_thread_cpu_seconds() - cpu0;
  });
  clock.wall += wall;
  return wall;
}

// OpenBLAS time / oneDNN time over the products, each the best of kProbeTries alternated tries
// after one untimed call of each (oneDNN builds its kernel on the first).
double measure_speedup(const std::vector<ProbeProduct>& products, ProbeClock& clock) {
  double openblas = 0.0, onednn = 0.0;
  for (const ProbeProduct& p : products) {
    std::vector<float> a(p.batch * p.m * p.k), b(p.batch * p.k * p.n), c(p.batch * p.m * p.n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 89) / 89.0f - 0.5f;
    double best_blas = 1e30, best_dnnl = 1e30;
    seconds_of_batch(F32GemmKernel::OneDnn, p, a, b, c, clock);
    seconds_of_batch(F32GemmKernel::OpenBlas, p, a, b, c, clock);
    for (int t = 0; t < kProbeTries; ++t) {
      best_dnnl = std::min(best_dnnl, seconds_of_batch(F32GemmKernel::OneDnn, p, a, b, c, clock));
      best_blas = std::min(best_blas, seconds_of_batch(F32GemmKernel::OpenBlas, p, a, b, c, clock));
    }
    openblas += best_blas;
    onednn += best_dnnl;
  }
  return openblas / onednn;
}

bool parse_kernel(const std::string& name, F32GemmKernel& kernel) {
  if (name == "openblas") kernel = F32GemmKernel::OpenBlas;
  else if (name == "onednn") kernel = F32GemmKernel::OneDnn;
  else return false;
  return true;
}

std::optional<F32GemmChoice> read_kept(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  F32GemmChoice choice;
  if (!parse_f32_choice(text.str(), choice)) return std::nullopt;
  choice.file = file.string();
  return choice;
}

// OpenBLAS for every class, neither measured nor kept, and why.
F32GemmChoice unmeasured_choice(const std::string& why) {
  F32GemmChoice choice;
  choice.note = why + "; OpenBLAS until a process starts on an idle machine";
  return choice;
}

}  // namespace

double probe_thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

F32GemmChoice measure_f32_gemm_choice() {
  F32GemmChoice choice;
  ProbeClock clock;
  for (int cls = 0; cls < 3; ++cls) {
    // Two rounds, the smaller ratio kept: oneDNN is taken only where both rounds find it faster
    // (one busy moment of the machine can mislead a round: bench/README.md).
    choice.speedup[cls] = std::min(measure_speedup(kProbes[cls], clock), measure_speedup(kProbes[cls], clock));
    choice.kernel[cls] = choice.speedup[cls] >= kF32AutoMargin ? F32GemmKernel::OneDnn : F32GemmKernel::OpenBlas;
  }
  choice.probe_cpu_share = clock.wall > 0.0 ? clock.cpu / clock.wall : 1.0;
  choice.measured_at = utc_now();
  return choice;
}

std::string busy_machine_reason() {
  std::ifstream in("/proc/loadavg");
  double load = 0.0;
  if (!(in >> load)) return "";
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  if (load < 0.25 * threads) return "";
  return fmt::format("not measured: the machine is busy (1-minute load {:.2f} on {} hardware threads)", load, threads);
}

std::string f32_choice_file_name() {
  const std::string identity = fmt::format("{}\n{}\nprobe {}", cpu_identity(), blas_core_name(), kProbeVersion);
  return fmt::format("f32-gemm-{:016x}.txt", fnv1a_64(identity));
}

std::string format_f32_choice(const F32GemmChoice& c) {
  std::string text;
  for (int cls = 2; cls >= 0; --cls)
    text += fmt::format("{} {} {:.4f}\n", kClassNames[cls], f32_gemm_kernel_name(c.kernel[cls]), c.speedup[cls]);
  return text + fmt::format("measured {}\n", c.measured_at);
}

bool parse_f32_choice(const std::string& text, F32GemmChoice& choice) {
  std::istringstream in(text);
  F32GemmChoice parsed;
  for (int cls = 2; cls >= 0; --cls) {
    std::string key, kernel;
    if (!(in >> key >> kernel >> parsed.speedup[cls]) || key != kClassNames[cls]) return false;
    if (!parse_kernel(kernel, parsed.kernel[cls])) return false;
  }
  std::string key, end;
  if (!(in >> key >> parsed.measured_at) || key != "measured" || (in >> end)) return false;
  choice = parsed;
  return true;
}

F32GemmChoice kept_or_measured_choice(const std::filesystem::path& file, const std::function<F32GemmChoice()>& measure,
                                      const std::function<std::string()>& busy_reason) {
  if (std::optional<F32GemmChoice> kept = read_kept(file)) return *kept;
  if (const std::string busy = busy_reason(); !busy.empty()) return unmeasured_choice(busy);
  std::error_code ec;
  const bool malformed = std::filesystem::exists(file, ec);  // a writer never leaves half a file
  F32GemmChoice measured = measure();
  if (measured.probe_cpu_share < kMinProbeCpuShare)
    return unmeasured_choice(fmt::format("not kept: the probe had its core {:.0f}% of the time (the machine was busy)",
                                         100.0 * measured.probe_cpu_share));
  std::filesystem::create_directories(file.parent_path(), ec);
  const std::filesystem::path temp = file.string() + fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    out << format_f32_choice(measured);
    out.close();
    if (!out) {
      std::filesystem::remove(temp, ec);
      measured.note = fmt::format("not kept: cannot write {}", temp.string());
      return measured;
    }
  }
  // link() does not replace: of two processes that measured at once, the first one's file stays
  // and the second adopts it. A malformed file is replaced.
  if (malformed) std::filesystem::rename(temp, file, ec);
  else ::link(temp.c_str(), file.c_str());
  std::filesystem::remove(temp, ec);
  if (std::optional<F32GemmChoice> kept = read_kept(file)) return *kept;
  measured.note = fmt::format("not kept: cannot write {}", file.string());
  return measured;
}

std::string describe_f32_choice(const F32GemmChoice& c) {
  if (c.measured_at.empty()) return fmt::format("openblas ({})", c.note);
  std::string text;
  for (int cls = 2; cls >= 0; --cls)
    text += fmt::format("{}{} {} ({:.2f}x)", cls == 2 ? "" : ", ", kClassNames[cls], f32_gemm_kernel_name(c.kernel[cls]),
                        c.speedup[cls]);
  text += fmt::format("; measured {}", c.measured_at);
  text += c.file.empty() ? fmt::format(", {}", c.note) : fmt::format(", kept in {}", c.file);
  return text + fmt::format("; oneDNN taken at >= {:.2f}x OpenBLAS", kF32AutoMargin);
}

}  // namespace normlab
