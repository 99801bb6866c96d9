// normlab gradcheck [--op NAME|all] [--seed S] [--shape 2,3,8] [--device cpu|cuda]
// Central finite differences in float64 against every registered op's analytic backward;
// prints one row per (op, input) and exits 1 on any failure. With --device cuda each op runs on the
// GPU (inputs copied there, output back: autograd/gradcheck.h on_device), still in float64.
#include <fmt/core.h>

#include <algorithm>
#include <sstream>

#include "autograd/gradcheck.h"
#include "core/backend.h"
#include "nn/model_cases.h"
#include "cli/commands.h"
#include "config/suggest.h"
#include "sweep/exit_codes.h"

namespace normlab::cli {

namespace {

Shape parse_shape(const std::string& text) {
  Shape shape;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    try {
      size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument(part);
      shape.push_back(v);
    } catch (const std::exception&) {
      usage_error("gradcheck", "--shape expects positive integers separated by commas, got '{}'", text);
    }
  }
  return shape;
}

}  // namespace

CLI::App* add_gradcheck_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("gradcheck", "Check every op's backward against finite differences (float64)");
  auto op = std::make_shared<std::string>("all");
  auto seed = std::make_shared<uint64_t>(0);
  auto shape_text = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto device_text = std::make_shared<std::string>("cpu");
  cmd->add_option("--op", *op, "op name, or 'all'")->capture_default_str()->type_name("NAME");
  cmd->add_option("--seed", *seed, "seed of the random inputs")->capture_default_str()->type_name("SEED");
  cmd->add_option("--shape", *shape_text, "shape of the first input, e.g. 4,16 (default: per op)")
      ->type_name("D1,D2,...");
  cmd->add_flag("--list", *list, "list the op names and exit");
  cmd->add_option("--device", *device_text, "cpu, cuda or cuda:N: where the ops run")
      ->capture_default_str()
      ->type_name("DEVICE");
  cmd->callback([=, &exit_code] {
    // The op registry plus the whole-model checks that nn/ adds (tiny float64 transformers).
    std::vector<OpCase> cases = op_cases();
    register_model_cases(cases);
    if (*list) {
      for (const OpCase& c : cases) fmt::print("{:<24} {}\n", c.name, c.description);
      return;
    }
    std::vector<const OpCase*> selected;
    if (*op == "all") {
      for (const OpCase& c : cases) selected.push_back(&c);
    } else if (auto it = std::find_if(cases.begin(), cases.end(), [&](const OpCase& c) { return c.name == *op; });
               it != cases.end()) {
      selected.push_back(&*it);
    } else {
      std::vector<std::string> names = {"all"};
      for (const OpCase& c : cases) names.push_back(c.name);
      usage_error("gradcheck", "unknown --op '{}'{}; `normlab gradcheck --list` lists the {} ops", *op,
                  did_you_mean(*op, names), cases.size());
    }
    const Shape shape = shape_text->empty() ? Shape{} : parse_shape(*shape_text);
    Device device;
    try {
      device = parse_device(*device_text);
    } catch (const Error& e) {
      usage_error("gradcheck", "--device: {}", e.what());
    }
    if (device.kind == DeviceKind::CUDA && !cuda_available())
      fail("gradcheck", "--device {}: no CUDA device (or normlab was built without CUDA)", device.str());
    fmt::print("{:<24} {:<8} {:>6} {:>12} {:>12} {:>10}  {}\n", "op", "input", "elems",
               "max_abs_err", "max_rel_err", "tolerance", "result");
    int failures = 0, rows = 0;
    for (const OpCase* c : selected) {
      const auto inputs = c->make_inputs(*seed, shape);
      GradcheckOptions opt = c->options;
      opt.seed = *seed;
      const GradFn fn = device == Device::cpu() ? c->fn : on_device(c->fn, device);
      std::vector<InputCheck> checks;
      try {
        checks = gradcheck(fn, inputs, c->input_names, c->differentiable, opt);
      } catch (const Error& e) {  // e.g. an op that has no kernel on this device
        ++rows;
        ++failures;
        fmt::print("{:<24} ERROR: {}\n", c->name, e.what());
      }
      for (const InputCheck& r : checks) {
        ++rows;
        failures += r.passed ? 0 : 1;
        fmt::print("{:<24} {:<8} {:>6} {:>12.3e} {:>12.3e} {:>10.1e}  {}\n", c->name, r.input,
                   r.elements, r.max_abs_error, r.max_rel_error, opt.tolerance, r.passed ? "PASS" : "FAIL");
      }
    }
    fmt::print("{} checks over {} ops: {} passed, {} failed\n", rows, selected.size(), rows - failures, failures);
    exit_code = failures == 0 ? exit_codes::kDone : exit_codes::kFailed;
  });
  return cmd;
}

}  // namespace normlab::cli
