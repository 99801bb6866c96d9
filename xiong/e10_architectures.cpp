// E10 (exploratory, issue 37): Xiong's claims in the paper's own architectures. E10a is E2 (the
// per-layer profile at initialization, Figure 3(a,b)) in an encoder-decoder of L + L layers
// (model.arch "encoder_decoder", fairseq's Transformer), both stacks reported, since the paper does
// not say which one its figure shows. It tests v3's explanation of E2b's contradiction ("a
// decoder-only stack"): were it right, Pre-LN's profile would be flat here. E10b (the warmup grid on
// synthetic translation) and E10c (section 4's BERT claim in a masked-LM encoder) follow in the same
// section: e10_translation.cpp, e10_bert.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config.h"
#include "xiong/experiments.h"
#include "xiong/probes_seq2seq.h"

namespace normlab::xiong {

namespace {

const std::vector<std::string> kPlacements = {"post", "pre"};
const std::vector<std::string> kStacks = {"encoder", "decoder"};

nlohmann::json measure(const Context& ctx, int64_t layers) {
  const Grids& g = ctx.grids;
  ModelConfig base = probe_model(ctx);
  base.arch = ModelArch::EncoderDecoder;
  nlohmann::json out;
  for (const std::string& placement : kPlacements)
    for (int seed = 1; seed <= g.e2_seeds; ++seed) {
      const ModelConfig c = probe_model(base, placement, layers, seed);
      const Seq2SeqLayerGrads r = measure_seq2seq_layer_grads(c, g.e2_probe, 2000 + static_cast<uint64_t>(seed));
      out[placement].push_back({{"encoder", {{"w1", r.encoder.w1_norm_of_mean}, {"w2", r.encoder.w2_norm_of_mean}}},
                                {"decoder", {{"w1", r.decoder.w1_norm_of_mean}, {"w2", r.decoder.w2_norm_of_mean}}}});
    }
  return out;
}

// Last / first layer of one stack and weight, geometric mean over seeds with its log-ratio t interval.
Interval stack_ratio(const nlohmann::json& seeds, const std::string& stack, const std::string& w) {
  std::vector<double> last, first;
  for (const auto& s : seeds) {
    const auto v = s[stack][w].get<std::vector<double>>();
    last.push_back(v.back());
    first.push_back(v.front());
  }
  return log_ratio(last, first);
}

// x = layer (encoder 1..L, decoder L+1..2L), Post-LN and Pre-LN, seed-mean norm of the batch-mean gradient.
std::string profile_figure(const Context& ctx, const nlohmann::json& data, int64_t layers, const std::string& w) {
  Chart chart{.title = fmt::format("{} gradient per layer at init, encoder-decoder {}+{}", w == "w1" ? "W1" : "W2",
                                   layers, layers),
              .xlabel = "layer (encoder 1.." + std::to_string(layers) + ", then decoder)",
              .ylabel = "||E[dL/dW]||_F", .log_y = true, .integer_x = true};
  for (const std::string& placement : kPlacements)
    for (size_t k = 0; k < kStacks.size(); ++k) {  // one line per stack: solid encoder, dashed decoder
      ChartSeries s{.title = placement_label(placement) + ", " + kStacks[k], .color = color_of(placement),
                    .dash = static_cast<int>(k) + 1, .markers = true};
      for (int64_t l = 0; l < layers; ++l) {
        double mean = 0.0;
        for (const auto& seed : data[placement]) mean += seed[kStacks[k]][w][static_cast<size_t>(l)].get<double>();
        mean /= static_cast<double>(data[placement].size());
        s.points.emplace_back(static_cast<double>(static_cast<int64_t>(k) * layers + l + 1), mean);
      }
      chart.series.push_back(s);
    }
  return figure(ctx, chart, "e10_" + w + "_profile");
}

}  // namespace

Section run_e10(const Context& ctx, const TrainingResults& translate, const TrainingResults& mlm) {
  const Grids& g = ctx.grids;
  const int64_t layers = g.e2_depths.front();  // the paper's 6 + 6 in the full grid
  RunConfig key_config;
  key_config.model = probe_model(ctx);
  const nlohmann::json key = {{"model", config_fingerprint_text(key_config)}, {"layers", layers}, {"seeds", g.e2_seeds},
                              {"batch", g.e2_probe.batch}, {"context", g.e2_probe.context},
                              {"batches", g.e2_probe.batches}, {"version", 1}};
  const nlohmann::json data = cached(ctx, "e10_profile", key, [&] { return measure(ctx, layers); });

  Section s{"E10", "The paper's architectures (exploratory): an encoder-decoder and a masked-LM encoder", "", {}};
  s.markdown += fmt::format(
      "### E10a: E2 in an encoder-decoder\n\n"
      "E2's probe (same base model, {} seeds x {} batches of {} x {} random tokens, sources as random as the "
      "targets) in an encoder-decoder of {} + {} layers (`model.arch = \"encoder_decoder\"`, fairseq's "
      "Transformer: bidirectional encoder, causal decoder with cross-attention). Cells: last / first layer of "
      "the stack, ||E[dL/dW]||_F, geometric mean over seeds [95% t-interval of the log ratio]; E2's decoder-only "
      "rows at the same depth are in E2's table.\n\n",
      g.e2_seeds, g.e2_probe.batches, g.e2_probe.batch, g.e2_probe.context, layers, layers);
  std::vector<std::vector<std::string>> rows;
  for (const std::string& placement : kPlacements)
    for (const std::string& stack : kStacks)
      rows.push_back({placement_label(placement), stack, interval_text(stack_ratio(data[placement], stack, "w1"), 2),
                      interval_text(stack_ratio(data[placement], stack, "w2"), 2)});
  s.markdown += md_table({"placement", "stack", "W1 last / first", "W2 last / first"}, rows) + "\n";
  s.markdown += profile_figure(ctx, data, layers, "w1") + profile_figure(ctx, data, layers, "w2") + "\n";
  const std::string where = fmt::format("last / first layer of the {{}} stack, {} + {} layers, norm of the batch-mean "
                                        "gradient (geometric mean over seeds)", layers, layers);
  for (const std::string& stack : kStacks)
    for (const std::string w : {"W1", "W2"}) {
      const std::string measure = w == std::string("W1") ? "w1" : "w2";
      const std::string quantity = fmt::format(fmt::runtime(where), stack);
      Verdict grows{"E10a." + stack + ".post." + w, "Encoder-decoder, Post-LN " + stack + ": the expected gradient "
                    "grows with the layer index (" + w + ")", "Figure 3(a): increasing", quantity,
                    stack_ratio(data["post"], stack, measure)};
      grows.decide_direction(1.0, Side::Above);
      Verdict flat{"E10a." + stack + ".pre." + w, "Encoder-decoder, Pre-LN " + stack + ": the expected gradient is "
                   "almost the same in every layer (" + w + ")", "Figure 3(b): flat", quantity,
                   stack_ratio(data["pre"], stack, measure)};
      flat.decide_within(0.8, 1.25);
      s.verdicts.insert(s.verdicts.end(), {grows, flat});
    }
  if (translate.size() > 0) append_e10b(ctx, translate, s);
  if (mlm.size() > 0) append_e10c(ctx, mlm, s);
  return s;
}

}  // namespace normlab::xiong
