// The candidate-format seam (format.hpp): the registry, its error text, and a JSONL row's format.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "kgym/candidate.hpp"
#include "kgym/error.hpp"
#include "kgym/format.hpp"

namespace kgym {
namespace {

const char* kRelu =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
    "        return torch.relu(x)\n\ndef get_inputs():\n    return [torch.randn(4, 4)]\n\n"
    "def get_init_inputs():\n    return []\n";

TEST(Format, RegistryHoldsTheKernelBenchModule) {
  ASSERT_EQ(candidate_formats().size(), 1u);
  EXPECT_EQ(candidate_formats()[0].name, kKernelBenchModule);
  EXPECT_EQ(Candidate{}.format, kKernelBenchModule);  // the default of every candidate
  const CandidateFormat& f = find_format("kernelbench_module");
  // Its policy check is the Python gate: a fallback to the reference op is rejected under strict,
  // a plain module accepted under off, and code that does not parse reported as such.
  policy::PolicyContext strict{policy::Profile::strict, "float32", kRelu};
  const std::string plain = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                            "        return torch.relu(x)\n";
  const auto rejected = f.policy_check(plain, strict);
  EXPECT_TRUE(rejected.parsed);
  EXPECT_TRUE(std::any_of(rejected.findings.begin(), rejected.findings.end(),
                          [](const policy::Finding& x) { return x.severity == policy::Severity::reject; }));
  policy::PolicyContext off{policy::Profile::off, "float32", kRelu};
  const auto accepted = f.policy_check(plain, off);
  EXPECT_TRUE(accepted.parsed);
  EXPECT_TRUE(std::none_of(accepted.findings.begin(), accepted.findings.end(),
                           [](const policy::Finding& x) { return x.severity == policy::Severity::reject; }));
  EXPECT_FALSE(f.policy_check("class ModelNew(:\n", off).parsed);
}

TEST(Format, UnknownFormatIsAClearError) {
  try {
    find_format("cuda_native");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()), "unknown candidate format 'cuda_native'; known: kernelbench_module");
  }
}

TEST(Format, JsonlRowCarriesItsFormat) {
  const auto dir = std::filesystem::temp_directory_path() / ("kgym-format-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const nlohmann::json good = {{"task_id", "relu"}, {"ref_code", kRelu}, {"code", "x = 1\n"},
                               {"format", "kernelbench_module"}};
  const nlohmann::json plain = {{"task_id", "relu"}, {"ref_code", kRelu}, {"code", "x = 1\n"}};
  std::ofstream(dir / "good.jsonl") << good.dump() << "\n" << plain.dump() << "\n";
  auto evals = load_evaluations((dir / "good.jsonl").string(), nullptr, {});
  ASSERT_EQ(evals.size(), 2u);
  EXPECT_EQ(evals[0].candidate.format, "kernelbench_module");
  EXPECT_EQ(evals[1].candidate.format, "kernelbench_module");
  EXPECT_FALSE(evals[0].candidate.extra.contains("format"));
  nlohmann::json bad = good;
  bad["format"] = "cuda_native";
  std::ofstream(dir / "bad.jsonl") << bad.dump() << "\n";
  try {
    load_evaluations((dir / "bad.jsonl").string(), nullptr, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("unknown candidate format 'cuda_native'; known: kernelbench_module"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kgym
