// normlab reproduce xiong [--quick | --confirmatory [--analyse-only [--record DIR]] | [--analyse-only] --record DIR] [--jobs N] [--out DIR] [--only E1,E3a,...] [--configs DIR]
#include <fmt/core.h>

#include "cli/commands.h"
#include "sweep/exit_codes.h"
#include "xiong/suite.h"
#include "io/atomic_file.h"
#include "xiong/v5/report_v5.h"
#include "xiong/v5/study_v5.h"

namespace normlab::cli {

namespace {

// normlab reproduce xiong-v5 [--quick] [--exploratory] [--only ARM,...] [--seeds N] [--jobs N] [--out DIR]
//                           [--record DIR | --record-only --record DIR] [--registration FILE]
// normlab reproduce xiong-v5 --analyse --record DIR [--report FILE]
void add_xiong_v5_command(CLI::App& reproduce, int& exit_code) {
  auto* v5 = reproduce.add_subcommand(
      "xiong-v5", "Xiong v5: the registered warmup study on Bible translation (xiong/registration_v5.toml), run by "
                  "one frozen build, resumable; --record writes what the analysis reads");
  auto options = std::make_shared<xiong::StudyV5Options>();
  v5->add_option("--registration", options->registration, "the registration (default xiong/registration_v5.toml)")
      ->check(CLI::ExistingFile)->type_name("FILE");
  v5->add_flag("--quick", options->quick, "every arm on a tiny model for one epoch, pilot seed 1 (runs/xiong-v5-quick)");
  v5->add_flag("--exploratory", options->exploratory, "the exploratory arms instead of the confirmatory grid");
  v5->add_option("--only", options->only, "arm ids to run (default: every arm of the role)")->delimiter(',')->type_name("ARM");
  v5->add_option("--seeds", options->seeds, "the first N confirmatory seeds (default: what the claims use)")
      ->check(CLI::PositiveNumber);
  v5->add_option("--jobs", options->jobs, "runs at a time, one thread each (default 2)")->check(CLI::PositiveNumber);
  v5->add_option("--out", options->out_dir, "the study's runs (default runs/xiong-v5)")->type_name("DIR");
  v5->add_flag("--skip-init-probe", options->skip_init_probe, "train only; do not run E2's probe");
  v5->add_option("--record", options->record_dir, "write the record here after the runs (docs/xiong/data/v5)")
      ->type_name("DIR");
  v5->add_flag("--record-only", options->record_only, "write the record from the runs in --out; train nothing");
  v5->add_flag("--quiet", options->quiet, "no progress output");
  auto analyse = std::make_shared<bool>(false);
  auto report = std::make_shared<std::string>("runs/xiong-v5/report.md");
  v5->add_flag("--analyse", *analyse, "decide the claims from the record in --record DIR and write the report; train nothing");
  v5->add_option("--report", *report, "where --analyse writes the report (default runs/xiong-v5/report.md)")
      ->type_name("FILE");
  v5->callback([options, analyse, report, &exit_code] {
    NL_CHECK(!(options->record_only || *analyse) || !options->record_dir.empty(), "reproduce",
             "--record-only and --analyse need --record DIR");
    if (*analyse) {
      const std::string md = xiong::analyse_record_v5(options->registration, options->record_dir);
      write_file_atomic(*report, md);
      fmt::print("{}", md);
    } else {
      xiong::run_study_v5(*options);
    }
    exit_code = exit_codes::kDone;
  });
}

}  // namespace

CLI::App* add_reproduce_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("reproduce", "Run a paper's experiment suite and write its report");
  cmd->require_subcommand(1);
  auto* xiong = cmd->add_subcommand(
      "xiong", "Xiong et al. 2020 (Post-LN vs Pre-LN): Theorem 1, gradient profile, warmup, lr sensitivity, "
               "amplification/DeepNorm, RMSNorm; writes DIR/report.md and figures");
  auto options = std::make_shared<xiong::SuiteOptions>();
  auto only = std::make_shared<std::vector<std::string>>();
  xiong->add_flag("--quick", options->quick, "small grid, few steps (< 5 min on 2 cores)");
  xiong->add_option("--jobs", options->jobs, "training runs at a time (each on one thread when > 1)")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  xiong->add_option("--out", options->out_dir, "output directory (default runs/xiong or runs/xiong-quick)")->type_name("DIR");
  xiong->add_option("--only", *only, "experiments (E1,E3) or claims (E3a, E3d@1e-3: their runs only, their rows rewritten in DIR's report) to run (default: all)")
      ->delimiter(',')
      ->type_name("E1,E3,...");
  xiong->add_option("--configs", options->config_dir, "directory of the suite's TOML files (default: "
                    "xiong/configs of the source tree)")
      ->type_name("DIR");
  xiong->add_flag("--quiet", options->quiet, "no progress output");
  xiong->add_flag("--confirmatory", options->confirmatory,
                  "protocol v4: train the registered confirmatory runs (xiong/registration.toml) of the --only "
                  "claims (default: all) into DIR (default runs/xiong-v4) and write DIR/confirmatory.md: run counts and "
                  "the registered analysis");
  xiong->add_flag("--analyse-only", options->analyse_only,
                  "train nothing: with --confirmatory, analyse the runs already in DIR (also while a suite trains "
                  "them) and rewrite DIR/confirmatory.md; without it, analyse a --record");
  xiong->add_option("--record", options->record_dir,
                    "the runs' record (docs/xiong/data/v4 for --confirmatory, docs/xiong/data/v4-e4 for --only E4: "
                    "validation curves, final states): with --analyse-only, analyse it instead of run directories; "
                    "without, take the runs it holds and train only the others")
      ->check(CLI::ExistingDirectory)
      ->type_name("DIR");
  xiong->callback([options, only, &exit_code] {
    options->only.clear();
    for (std::string id : *only) {
      if (!id.empty()) id[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(id[0])));  // e3a -> E3a
      options->only.insert(id);
    }
    const std::string report = xiong::run_xiong_suite(*options);
    fmt::print("{}\n", report);
    exit_code = exit_codes::kDone;
  });
  add_xiong_v5_command(*cmd, exit_code);
  return cmd;
}

}  // namespace normlab::cli
