// Shared pieces of the Xiong et al. 2020 reproduction report: the suite's context, sections with
// their verdicts (xiong/verdict.h; intervals in stats/stats.h), markdown tables, figures (SVG + PNG via gnuplot) and the JSON cache
// of init-time probes. Each experiment (e1_*.cpp ... e6_*.cpp) returns a Section built from these.
#pragma once
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plot/gnuplot.h"
#include "xiong/grids.h"
#include "xiong/verdict.h"

namespace normlab::xiong {

struct Context {
  Grids grids;
  std::filesystem::path out_dir;      // everything goes under here
  std::filesystem::path config_dir;   // out_dir/configs: the TOML files the suite used (copied)
  std::filesystem::path figures_dir;  // out_dir/figures
  std::filesystem::path source_dir;   // the normlab source tree (bench/torch_probe.py)
  // Non-empty: training runs are read from this record (xiong/run_record.h); with train_absent,
  // the points it lacks (or holds made with another config) are trained, otherwise none is.
  std::filesystem::path record_dir;
  bool train_absent = false;
  int jobs = 1;
  std::string normlab_binary;         // for sweeps; empty = this executable
  bool quiet = false;
  void log(const std::string& message) const;  // progress line on stdout unless quiet
  std::string config_path(const std::string& file) const { return (config_dir / file).string(); }
};

struct Section {
  std::string id, title;  // "E1", "Theorem 1: ..."
  std::string markdown;   // body (without the heading)
  std::vector<Verdict> verdicts;
};

// The local time as "2026-12-04 14:50 UTC" (report headers).
std::string now_text();

// Significant-digit formatting; "-" for non-finite.
std::string num(double v, int digits = 3);
// A mean with its 95% t interval over seeds: "0.123 [0.101, 0.145]"; "-" when empty.
std::string mean_ci_text(const std::vector<double>& values, int digits = 3);

// The first sentence of "Where we differ from the paper", from the sections' verdicts: "No claim is
// decided in this report." when there is none (an exploratory experiment alone), "Every claim
// above is reproduced." when all are, else "Not reproduced: E2b.W1 (contradicted), ...".
std::string not_reproduced_sentence(const std::vector<Section>& sections);

// A markdown table. Cells are escaped ('|' becomes '\|'), so every row has the header's cell count;
// a row of another length is an error.
std::string md_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Renders `chart` to figures_dir/<stem>.svg and .png and returns the markdown that shows the SVG
// and links the PNG. A failure to draw is reported in the markdown (the report still gets
// written) and on stderr.
std::string figure(const Context& ctx, const Chart& chart, const std::string& stem);

// The JSON stored in out_dir/cache/<name>.json if its "key" equals `key`; otherwise runs
// compute(), stores {"key": key, "value": result} atomically and returns the result. Keys hold a
// config as config_fingerprint_text (what it computes), so that a config key added later with an
// "off" default keeps stored values valid (docs/xiong/data/v4/init_probes.json among them).
nlohmann::json cached(const Context& ctx, const std::string& name, const nlohmann::json& key,
                      const std::function<nlohmann::json()>& compute);

// Colour index of a placement / norm in every figure (post 1, pre 2, deepnorm 3, sandwich 4, ...).
int color_of(const std::string& placement);
// "Post-LN", "Pre-LN", "DeepNorm", "Sandwich" (others as given).
std::string placement_label(const std::string& placement);

}  // namespace normlab::xiong
