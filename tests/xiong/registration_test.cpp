// The v4 pre-registration (xiong/registration.toml, xiong/registration.h): the committed file loads,
// its confirmatory seeds are disjoint from every seed that chose the design, and a registration
// with any defect is refused with the file, line and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
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
    if (c->task == "copy" && c->id.rfind("E3c", 0) == 0) EXPECT_GE(c->steps, 4000) << c->id;  // issue 35
    if (c->task == "text") EXPECT_GE(c->seeds, 8) << c->id;
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
}

}  // namespace
}  // namespace normlab::xiong
