// The v4 pre-registration (xiong/registration.toml, xiong/registration.h): the committed file loads,
// its confirmatory seeds are disjoint from every seed that chose the design, and a registration
// with any defect is refused with the file, line and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "xiong/confirmatory.h"
#include "xiong/grids.h"
#include "xiong/registration.h"

namespace normlab::xiong {
namespace {

const std::string kRegistration = std::string(NORMLAB_SOURCE_DIR) + "/xiong/registration.toml";

// The `seed` column of a committed sweep.csv of v3 (docs/xiong/data/).
std::vector<int> seeds_in_sweep_csv(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::stringstream hs(line);
  for (std::string cell; std::getline(hs, cell, ',');) header.push_back(cell);
  const auto column = std::find(header.begin(), header.end(), "seed") - header.begin();
  EXPECT_LT(column, static_cast<long>(header.size())) << path << " has no seed column";
  std::vector<int> seeds;
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::string cell;
    for (long i = 0; i <= column; ++i) std::getline(ls, cell, ',');
    seeds.push_back(std::stoi(cell));
  }
  return seeds;
}

TEST(Registration, CommittedFileLoadsWithAFixedPaperFamily) {
  const Registration reg = load_registration(kRegistration);
  EXPECT_EQ(reg.protocol, "v4");
  EXPECT_GE(reg.family("paper").size(), 10u);
  for (const RegisteredClaim* c : reg.family("paper")) {
    EXPECT_EQ(reg.seeds_of(*c).size(), static_cast<size_t>(c->seeds)) << c->id;
    if (c->task == "copy" && c->id.rfind("E3c", 0) == 0) {
      EXPECT_GE(c->steps, 4000) << c->id;  // issue 35
    }
    if (c->task == "text") {
      EXPECT_GE(c->seeds, 8) << c->id;
    }
  }
  EXPECT_NO_THROW((void)reg.require("E3a@1e-3"));
  EXPECT_THROW((void)reg.require("E3z"), Error);
}

// Every seed that v1-v3 trained or probed (the committed sweeps and the v3 grids) is a pilot seed
// and none is confirmatory.
TEST(Registration, ConfirmatorySeedsAreDisjointFromEveryDesignSeed) {
  const Registration reg = load_registration(kRegistration);
  const std::string data = std::string(NORMLAB_SOURCE_DIR) + "/docs/xiong/data/";
  const Grids v3 = make_grids(false);
  const std::vector<std::pair<std::string, std::vector<int>>> used = {
      {"v3's copy sweep", seeds_in_sweep_csv(data + "copy_sweep.csv")},
      {"v3's text sweep", seeds_in_sweep_csv(data + "text_sweep.csv")},
      {"the v3 grid's seeds", v3.seeds},
      {"the v3 grid's equivalence seeds", v3.equivalence_seeds},
      {"the v3 grid's text seeds", v3.text_seeds}};
  const std::set<int> pilot(reg.pilot_seeds.begin(), reg.pilot_seeds.end());
  for (const auto& [what, seeds] : used) {
    EXPECT_FALSE(seeds.empty()) << what;
    EXPECT_NO_THROW(check_disjoint_from_confirmatory(reg, seeds, what));
    for (int s : seeds) EXPECT_TRUE(pilot.count(s)) << what << ": seed " << s << " is not listed as a pilot seed";
  }
  EXPECT_THROW(check_disjoint_from_confirmatory(reg, {3, reg.confirmatory_seeds[4]}, "a planted list"), Error);
}

// Every training claim's runs: its points on its first n confirmatory seeds, arm-major, paired by
// seed; and each claim's registered horizon is the length its committed v4 config trains.
TEST(Registration, TrainingClaimsRunTheirPointsOnTheirSeedsForTheirHorizon) {
  const Registration reg = load_registration(kRegistration);
  const RegisteredClaim& e3h = reg.require("E3h@3e-2");
  const std::vector<TrainPoint> runs = reg.runs_of(e3h);
  ASSERT_EQ(runs.size(), 2u * e3h.seeds);
  EXPECT_EQ(runs.front().name(), "post-layernorm-sgd-lr3e-2-w1-t3000-s1001");
  EXPECT_EQ(runs[e3h.seeds].name(), "post-layernorm-sgd-lr3e-2-w200-t3000-s1001");
  EXPECT_EQ(runs.back().seed, reg.confirmatory_seeds[e3h.seeds - 1]);
  for (const RegisteredClaim& c : reg.claims) EXPECT_EQ(c.task == "init", c.points.empty()) << c.id;
  Context ctx;
  ctx.config_dir = std::string(NORMLAB_SOURCE_DIR) + "/xiong/configs";
  EXPECT_NO_THROW(check_horizons(ctx, reg));
  Registration longer = reg;
  longer.claims[0].steps += 1;  // an init claim: no runs, nothing to compare
  for (RegisteredClaim& c : longer.claims)
    if (c.id == "E3b") c.steps = 5000;
  EXPECT_THROW(check_horizons(ctx, longer), Error);
}

TEST(Registration, PointsParseOrFailNamingTheClaim) {
  const TrainPoint p = parse_point("pre/radam/1e-3/w25/t500", "here");
  EXPECT_EQ(p.placement, "pre");
  EXPECT_EQ(p.optimizer, "radam");
  EXPECT_EQ(p.lr, "1e-3");
  EXPECT_EQ(p.warmup, 25);
  EXPECT_EQ(p.steps, 500);
  for (const std::string bad : {"pre/adam/1e-3", "pre/adam/x/w1", "pre/adam/1e-3/25", "pre/adam/1e-3/w0",
                                "pre/adam/1e-3/w1/500", "pre/adam/1e-3/w1/t5/x"}) {
    try {
      (void)parse_point(bad, "claim 'Z'");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("claim 'Z'"), std::string::npos) << e.what();
    }
  }
}

// A registration made from the committed one with `from` replaced by `to` (once).
std::string edited_registration(const std::string& from, const std::string& to) {
  std::ifstream in(kRegistration);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  const auto path = std::filesystem::temp_directory_path() / "normlab_registration_test.toml";
  std::ofstream(path) << s;
  return path.string();
}

void expect_refused(const std::string& from, const std::string& to, const std::string& message) {
  const std::string path = edited_registration(from, to);
  try {
    (void)load_registration(path);
    ADD_FAILURE() << "accepted a registration with '" << to << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Registration, RefusesDefectsNamingTheFileLineAndKey) {
  expect_refused("confirmatory_seeds = [1001,", "confirmatory_seeds = [7, 1001,", "seed 7 of registration.pilot_seeds");
  expect_refused("id = \"E3b\"", "id = \"E3a@5e-4\"", "claim 'E3a@5e-4' is registered twice");
  expect_refused("predicted = \"below\"", "predicted = \"down\"", "predicted = \"above\" or \"below\"");
  expect_refused("low = -0.05", "low = 0.05", "needs low < high");
  expect_refused("seeds = 12", "seeds = 13", "seeds must be in [2, 12]");
  expect_refused("family = \"paper\"", "family = \"confirmatory\"", "family must be");
  expect_refused("margin_reason = \"as E3c@5e-4\"", "margin_reason = \"\"", "margin_reason is empty");
  expect_refused("primary_test = \"log-rank test (two-sided)\"", "primary_tset = \"log-rank test (two-sided)\"",
                 "primary_test is missing");
  expect_refused("steps = 3000\n", "steps = 3000\nstepz = 1\n", "line ");
  expect_refused("steps = 3000\n", "steps = 3000\nstepz = 1\n", "unknown key claim 'E3h@3e-2': stepz");
  expect_refused("alpha = 0.05", "alpha = \"0.05\"", "registration.alpha must be a number");
  expect_refused("[registration]", "[registation]", "unknown table registation");
  expect_refused("points = [\"post/adam/1e-3/w25\", ", "points = [", "one point per arm");
  expect_refused("id = \"E1a\"", "id = \"E1a\"\npoints = [\"post/adam/1e-3/w1\"]", "an init-time claim has no training points");
}

}  // namespace
}  // namespace normlab::xiong
