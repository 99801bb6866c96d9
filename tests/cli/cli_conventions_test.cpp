// The command line's conventions, checked on the built binary: --version, a bare `normlab`, and
// the documented exit codes (README.md, `normlab --help`): 0 done, 1 an error while running,
// 2 a usage error, 3 a diverged run under train.fail_on_divergence. The codes are written here as
// numbers, not taken from sweep/exit_codes.h: they are a contract with scripts.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "command_util.h"
#include "test_util.h"

namespace normlab {
namespace {

std::string normlab(const std::string& arguments) { return test::kNormlab + " " + arguments; }

// CMAKE_BUILD_TYPE as the build directory's cache records it: what --version must report.
std::string cached_build_type() {
  std::ifstream cache(NORMLAB_BINARY_DIR "/CMakeCache.txt");
  std::string line;
  while (std::getline(cache, line))
    if (line.rfind("CMAKE_BUILD_TYPE:", 0) == 0) return line.substr(line.find('=') + 1);
  return "";
}

TEST(CliConventions, VersionNamesVersionCommitBuildTypeBlasAndCuda) {
  const auto r = test::run_command(normlab("--version"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(^normlab (\d+\.\d+\.\d+)\n)"))) << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(\ncommit +(\S+)\n)"))) << r.output;
  const std::string commit = m[1];
  if (commit != "unknown") {  // a commit of this repository (configure time's HEAD, maybe not today's)
    EXPECT_TRUE(std::regex_match(commit, std::regex("[0-9a-f]{12}"))) << commit;
    const auto known = test::run_command("git -C " NORMLAB_SOURCE_DIR " cat-file -e " + commit + "^{commit}");
    EXPECT_EQ(known.exit_code, 0) << commit << " is not a commit of " NORMLAB_SOURCE_DIR ": " << known.output;
  }
  EXPECT_NE(r.output.find("\nbuild type  " + cached_build_type() + "\n"), std::string::npos) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\nBLAS +OpenBLAS.*, kernels \S+)"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(\nCUDA +(not built|built \(CUDA [0-9.]+\), device (found|not found)))")))
      << r.output;
}

TEST(CliConventions, BareNormlabPrintsTheHelpWithTheExitCodes) {
  const auto r = test::run_command(test::kNormlab);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* part : {"Usage:", "train", "sweep", "reproduce", "--version", "Exit codes:", "\n  2 ", "\n  3 "})
    EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' not in: " << r.output;
  EXPECT_EQ(test::run_command(normlab("--help")).output, r.output);
}

TEST(CliConventions, UsageErrorsExit2WithAHint) {
  for (const std::string arguments :
       {"--no-such-flag", "frobnicate", "train --no-such-flag", "train", "sweep", "reproduce xiong --jobs 0",
        "reproduce", "gradcheck --op nope", "gradcheck --shape 2,x", "gradcheck --device tpu",
        "sample run --tokens -1", "train --resume somewhere extra.toml", "gradcheck --seed minus-one"}) {
    SCOPED_TRACE(arguments);
    const auto r = test::run_command(normlab(arguments));
    EXPECT_EQ(r.exit_code, 2) << r.output;  // never CLI11's own codes (105, 106, 109, ...)
    EXPECT_NE(r.output.find("--help"), std::string::npos) << r.output;
  }
}

TEST(CliConventions, ErrorsWhileRunningExit1NamingTheFile) {
  test::ScratchDir dir;
  const auto missing = test::run_command(normlab("train " + dir.file("missing.toml") + " --quiet"));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("error: "), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find(dir.file("missing.toml")), std::string::npos) << missing.output;
  const auto no_run = test::run_command(normlab("sample " + dir.file("no-run")));
  EXPECT_EQ(no_run.exit_code, 1) << no_run.output;
}

TEST(CliConventions, ADivergedRunExits3OnlyUnderFailOnDivergence) {
  test::ScratchDir dir;
  const std::string config = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  const std::string diverging = " optim.lr=1e4 train.divergence_loss=20 --quiet";
  const auto strict = test::run_command(normlab("train " + config + diverging + " train.fail_on_divergence=true"));
  EXPECT_EQ(strict.exit_code, 3) << strict.output;
  EXPECT_NE(strict.output.find("diverged at step"), std::string::npos) << strict.output;
  const auto lenient = test::run_command(normlab("train " + config + diverging + " train.name=lenient"));
  EXPECT_EQ(lenient.exit_code, 0) << lenient.output;  // a divergence is a result
  EXPECT_NE(lenient.output.find("diverged at step"), std::string::npos) << lenient.output;
}

TEST(CliConventions, MetavariablesNameWhatToGive) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> helps = {
      {"train", {"CONFIG", "KEY=VALUE", "RUN_DIR"}}, {"sweep", {"CONFIG", "KEY=V1,V2", "DIR", "N"}},
      {"gradcheck", {"NAME", "SEED", "DEVICE"}},     {"grads", {"CONFIG", "KEY=VALUE", "FILE"}},
      {"bench train", {"CONFIG", "N", "FILE"}},      {"reproduce xiong", {"N", "DIR"}},
      {"sample", {"RUN_DIR", "SEED"}},               {"plot", {"RUN_DIR", "FILE", "KIND"}}};
  for (const auto& [command, names] : helps) {
    SCOPED_TRACE(command);
    const auto r = test::run_command(normlab(command + " --help"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& name : names) EXPECT_NE(r.output.find(name), std::string::npos) << name << " in " << r.output;
    // CLI11's defaults; sample --prompt and plot --title are free text.
    for (const char* generic : {" INT", " UINT", " FLOAT", "TEXT:"})
      EXPECT_EQ(r.output.find(generic), std::string::npos) << generic << " in " << r.output;
    if (command != "sample" && command != "plot") {
      EXPECT_EQ(r.output.find("TEXT"), std::string::npos) << r.output;
    }
  }
}

// A sweep draws its progress line (points, rate, ETA) only when stderr is a terminal: `script`
// gives it one; through a pipe, the output has no trace of it.
TEST(CliConventions, SweepProgressLineOnlyOnATerminal) {
  test::ScratchDir dir;
  const std::string config = dir.write("tiny.toml", test::tiny_config_toml(dir.file("runs")));
  const std::string sweep = normlab("sweep " + config + " optim.lr=1e-2,2e-2 --out ");
  const auto piped = test::run_command(sweep + dir.file("piped"));
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_EQ(piped.output.find("ETA"), std::string::npos) << piped.output;
  EXPECT_EQ(piped.output.find('\r'), std::string::npos) << piped.output;
  const auto terminal = test::run_command("script -qec '" + sweep + dir.file("tty") + "' /dev/null");
  ASSERT_EQ(terminal.exit_code, 0) << terminal.output;
  EXPECT_TRUE(std::regex_search(terminal.output, std::regex(R"(sweep tty  [0-2]/2 runs  [0-2] running  [0-9.]+ runs/min  elapsed \S+  ETA \S+)")))
      << terminal.output;
}

}  // namespace
}  // namespace normlab
