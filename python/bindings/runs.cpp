// Runs from Python: config/config.h's load_config (the same checks and messages: a config error is
// normlab.Error naming file:line and key), train/trainer.h's train, and the run files' names and
// readers (train/run_dir.h), so that Python reads metrics.jsonl, grad_norms.csv and dynamics.csv
// by the rules C++ reads them with. The rest of normlab.Config, normlab.train and normlab.Run is
// Python: python/normlab/runs.py.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>
#include <vector>

#include "autograd/tape.h"
#include "bindings/bindings.h"
#include "config/config.h"
#include "core/error.h"
#include "train/run_dir.h"
#include "train/trainer.h"

namespace normlab::python {

using namespace nb::literals;

namespace {

// The trainer runs on the calling thread, whose tape may hold nodes a Python forward pass
// recorded and has not differentiated yet: set them aside while it trains (its backward would
// otherwise replay them) and put them back afterwards, also when training throws.
class SetAsideTape {
 public:
  SetAsideTape() { std::swap(saved_, Tape::current().nodes()); }
  ~SetAsideTape() {
    Tape::current().clear();
    std::swap(saved_, Tape::current().nodes());
  }
  SetAsideTape(const SetAsideTape&) = delete;
  SetAsideTape& operator=(const SetAsideTape&) = delete;

 private:
  std::vector<Node> saved_;
};

nb::dict result_dict(const TrainResult& r) {
  nb::dict d;
  d["run_dir"] = r.run_dir;
  d["status"] = std::string(enum_name(r.status));
  d["stop_signal"] = r.stop_signal;
  d["steps_done"] = r.steps_done;
  d["reason"] = r.reason;
  return d;
}

}  // namespace

void bind_run_files(nb::module_& m) {
  nb::dict names;
  names["config"] = run_files::kConfig;
  names["metrics"] = run_files::kMetrics;
  names["grad_norms"] = run_files::kGradNorms;
  names["dynamics"] = run_files::kDynamics;
  names["summary"] = run_files::kSummary;
  names["fingerprint"] = run_files::kFingerprint;
  names["provenance"] = run_files::kProvenance;
  m.attr("run_files") = names;
  m.def(
      "_read_metrics",
      [](const std::string& path) {
        std::vector<std::string> records;
        for (const nlohmann::json& record : read_metrics(path)) records.push_back(record.dump());
        return records;
      },
      "path"_a, "train/run_dir.h's read_metrics: metrics.jsonl's records, each as its JSON text.");
  m.def(
      "_read_step_csv",
      [](const std::string& path) {
        CsvTable table = read_step_csv(path);
        return std::make_pair(std::move(table.columns), std::move(table.rows));
      },
      "path"_a, "train/run_dir.h's read_step_csv: (column names, rows of numbers) of grad_norms.csv or dynamics.csv.");
}

void bind_runs(nb::module_& m) {
  bind_run_files(m);
  nb::class_<RunConfig>(m, "RunConfig",
                        "config/run_config.h's RunConfig, as load_config resolved it. Python code uses "
                        "normlab.Config, which wraps one.")
      .def("to_toml", &config_to_toml,
           "The resolved configuration as TOML with every key written (what a run stores as config.toml); "
           "load_config of the text gives back an equal config.")
      .def("fingerprint", &config_fingerprint,
           "The 16-hex-digit hash of what a run with this config computes (fingerprint.txt).");
  m.def("load_run_config", &load_config, "path"_a, "overrides"_a = std::vector<std::string>{},
        "config/config.h's load_config: the TOML file at `path` (\"\": none, the defaults), then the overrides "
        "\"section.key=value\" in order, with every check. Raises normlab.Error naming file:line and the key.");
  m.def(
      "train_run",
      [](const RunConfig& config, bool quiet, const std::string& resume_dir, bool overwrite, int64_t stop_after,
         int64_t extend_to_steps, int64_t extend_to_epochs, bool allow_schedule_change) {
        if (!grad_enabled())
          fail("train", "called inside normlab.no_grad(): training records its forward pass on the tape; "
                        "call train() outside the no_grad block");
        TrainOptions options;
        options.quiet = quiet;
        options.resume_dir = resume_dir;
        options.overwrite = overwrite;
        options.stop_after = stop_after;
        options.extend_to_steps = extend_to_steps;
        options.extend_to_epochs = extend_to_epochs;
        options.allow_schedule_change = allow_schedule_change;
        TrainResult result;
        {
          // Other Python threads run while it trains; the trainer touches no Python object.
          nb::gil_scoped_release release;
          const SetAsideTape set_aside;
          result = train(config, options);
        }
        return result_dict(result);
      },
      "config"_a, "quiet"_a = true, "resume_dir"_a = "", "overwrite"_a = false, "stop_after"_a = -1,
      "extend_to_steps"_a = 0, "extend_to_epochs"_a = 0, "allow_schedule_change"_a = false,
      "train/trainer.h's train(config, options), with the GIL released while it trains. While it runs, the "
      "first SIGINT or SIGTERM stops it after the current step with a checkpoint and status \"interrupted\" "
      "(train/stop_signals.h). Returns a dict: run_dir, status, stop_signal, steps_done, reason.");
}

}  // namespace normlab::python
