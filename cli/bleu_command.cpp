// normlab bleu HYP REF [REF ...] [--json] [--against HYP2 [--resamples N] [--seed S]]
// Corpus BLEU, chrF and chrF++ of a file of hypotheses against one or more files of references,
// one segment per line (line i of every file is segment i), as sacreBLEU 2.6.0 computes them with
// its defaults (data/bleu.h, data/chrf.h; the files are read as data/segment_file.h says), each
// printed with its sacreBLEU-style signature:
//   BLEU 31.20 (nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:normlab-sacrebleu-2.6.0)  55.0/...
//   chrF2 54.32 (nrefs:2|case:mixed|eff:yes|nc:6|nw:0|space:no|version:normlab-sacrebleu-2.6.0)
//   chrF2++ 52.10 (nrefs:2|case:mixed|eff:yes|nc:6|nw:2|space:no|version:normlab-sacrebleu-2.6.0)
// --json prints the same as a JSON array (full-precision scores, BLEU's statistics). A file that
// cannot be read, invalid UTF-8 (named file:line), an empty hypothesis file or a reference file with
// another number of lines than the hypotheses is an error (exit 1). --against HYP2 adds a paired
// bootstrap of BLEU(HYP) - BLEU(HYP2) on the same segments (data/bleu_bootstrap.h):
//   paired bootstrap against b.txt (1000 resamples, seed 12345): BLEU 20.33 - 18.79 = +1.54, 95% interval
//   [+0.41, +2.70]; not better in 0.6% of resamples

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "data/bleu.h"
#include "data/bleu_bootstrap.h"
#include "data/chrf.h"
#include "data/segment_file.h"

namespace normlab::cli {

namespace {

struct Corpus {
  std::vector<std::string> hypotheses;
  std::vector<std::vector<std::string>> references;  // [stream][segment]
};

Corpus read_corpus(const std::string& hypothesis_file, const std::vector<std::string>& reference_files) {
  Corpus corpus;
  corpus.hypotheses = read_segment_file(hypothesis_file, "bleu");
  NL_CHECK(!corpus.hypotheses.empty(), "bleu", "{} has no lines: nothing to score", hypothesis_file);
  for (const std::string& file : reference_files) {
    corpus.references.push_back(read_segment_file(file, "bleu"));
    NL_CHECK(corpus.references.back().size() == corpus.hypotheses.size(), "bleu",
             "{} has {} lines but {} has {}: a reference file needs one line per hypothesis", file,
             corpus.references.back().size(), hypothesis_file, corpus.hypotheses.size());
  }
  return corpus;
}

nlohmann::json bleu_json(const BleuScore& s) {
  return {{"name", "BLEU"},       {"score", s.score},        {"signature", s.signature},
          {"verbose_score", s.verbose()},
          {"counts", s.correct},   {"totals", s.total},       {"precisions", s.precisions},
          {"bp", s.brevity_penalty}, {"hyp_len", s.hyp_len}, {"ref_len", s.ref_len}};
}

nlohmann::json chrf_json(const ChrfScore& s) {
  return {{"name", s.name}, {"score", s.score}, {"signature", s.signature}};
}

// Options of --against: the other system's hypotheses, resamples and seed.
struct Against {
  std::string file;
  int64_t resamples = 1000;
  uint64_t seed = 12345;
};

PairedBootstrap compare(const Corpus& corpus, const Against& against, const std::vector<std::string>& reference_files) {
  const Corpus other = read_corpus(against.file, reference_files);
  NL_CHECK(other.hypotheses.size() == corpus.hypotheses.size(), "bleu", "{} has {} lines but the hypotheses have {}",
           against.file, other.hypotheses.size(), corpus.hypotheses.size());
  return paired_bootstrap_bleu(segment_bleu_stats(corpus.hypotheses, corpus.references),
                               segment_bleu_stats(other.hypotheses, other.references),
                               static_cast<int64_t>(corpus.references.size()), against.resamples, against.seed);
}

nlohmann::json bootstrap_json(const PairedBootstrap& b, const std::string& against) {
  return {{"name", "paired_bootstrap"}, {"against", against},       {"bleu", b.bleu_a},
          {"bleu_against", b.bleu_b},   {"difference", b.difference}, {"low", b.low},
          {"high", b.high},             {"share_not_better", b.share_not_better},
          {"resamples", b.resamples},   {"seed", b.seed}};
}

std::string bootstrap_text(const PairedBootstrap& b, const std::string& against) {
  return fmt::format("paired bootstrap against {} ({} resamples, seed {}): BLEU {:.2f} - {:.2f} = {:+.2f}, 95% "
                     "interval [{:+.2f}, {:+.2f}]; not better in {:.1f}% of resamples",
                     against, b.resamples, b.seed, b.bleu_a, b.bleu_b, b.difference, b.low, b.high,
                     100.0 * b.share_not_better);
}

}  // namespace

CLI::App* add_bleu_command(CLI::App& app, int& /*exit_code*/) {
  auto* cmd = app.add_subcommand("bleu", "Corpus BLEU, chrF and chrF++ of a hypothesis file against reference files "
                                         "(sacreBLEU's defaults, one segment per line)");
  auto hypotheses = std::make_shared<std::string>();
  auto references = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("hypotheses", *hypotheses, "the hypotheses, one segment per line")->required()->type_name("HYP");
  cmd->add_option("references", *references, "one or more reference files, each with a line per hypothesis")
      ->required()
      ->type_name("REF");
  auto against = std::make_shared<Against>();
  cmd->add_flag("--json", *json, "print the scores as a JSON array");
  cmd->add_option("--against", against->file, "another system's hypotheses: paired bootstrap of the BLEU difference "
                  "(Koehn 2004), a 95% percentile interval and the share of resamples where HYP is not better")
      ->type_name("HYP2");
  cmd->add_option("--resamples", against->resamples, "with --against: bootstrap resamples")->capture_default_str();
  cmd->add_option("--seed", against->seed, "with --against: the resampling seed")->capture_default_str();
  cmd->callback([=] {
    const Corpus corpus = read_corpus(*hypotheses, *references);
    const BleuScore bleu = corpus_bleu_score(corpus.hypotheses, corpus.references);
    const ChrfScore chrf = corpus_chrf(corpus.hypotheses, corpus.references);
    const ChrfScore chrf_plus_plus = corpus_chrf(corpus.hypotheses, corpus.references, {.word_order = 2});
    const bool paired = !against->file.empty();
    const PairedBootstrap difference = paired ? compare(corpus, *against, *references) : PairedBootstrap{};
    if (*json) {
      nlohmann::json scores = {bleu_json(bleu), chrf_json(chrf), chrf_json(chrf_plus_plus)};
      if (paired) scores.push_back(bootstrap_json(difference, against->file));
      fmt::print("{}\n", scores.dump(1));
    } else {
      fmt::print("{}  {}\n{}\n{}\n", bleu.format(), bleu.verbose(), chrf.format(), chrf_plus_plus.format());
      if (paired) fmt::print("{}\n", bootstrap_text(difference, against->file));
    }
  });
  return cmd;
}

}  // namespace normlab::cli
