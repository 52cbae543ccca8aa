// bench/taskgen_bench: times generating 10,000 tasks and reports, per family, the distribution of
// sizes, cost-model bytes and FLOPs, and the roofline floor on an H200, for the default training
// ranges (full variant, train seeds). Optionally decontaminates them against KernelBench.
//
//   cmake --build build --target taskgen_bench
//   build/bench/taskgen_bench [--tasks N] [--kernelbench DIR] [--json FILE] [--md FILE]
//
// H200 figures (NVIDIA H200 SXM datasheet): 4.8 TB/s HBM3e bandwidth, 67 TFLOP/s FP32 (CUDA
// cores); the floor is max(bytes / bandwidth, flops / peak), Cost::floor_ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/taskgen.hpp"

namespace tg = kgym::taskgen;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kH200BandwidthGBs = 4800;
constexpr double kH200Fp32Tflops = 67;

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

nlohmann::json dist(const std::vector<double>& v) {
  return {{"min", quantile(v, 0)}, {"p10", quantile(v, 0.1)}, {"p50", quantile(v, 0.5)},
          {"p90", quantile(v, 0.9)}, {"max", quantile(v, 1)}};
}

std::string si(double v) {
  const char* units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 4) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, units[u]);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n_tasks = 10000;
  std::string kernelbench, json_path, md_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "taskgen_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--tasks") n_tasks = std::stoul(next());
    else if (a == "--kernelbench") kernelbench = next();
    else if (a == "--json") json_path = next();
    else if (a == "--md") md_path = next();
    else {
      std::fprintf(stderr, "usage: taskgen_bench [--tasks N] [--kernelbench DIR] [--json FILE] [--md FILE]\n");
      return 2;
    }
  }
  std::vector<std::string> families;
  for (const auto* f : tg::Registry::instance().families()) families.push_back(f->name);

  // 1. Generation time: N tasks, families round-robin, train seeds 0.., full and small variants.
  auto time_generation = [&](tg::Variant v, std::vector<tg::GeneratedTask>* keep) {
    const auto t0 = Clock::now();
    std::size_t chars = 0;
    for (std::size_t i = 0; i < n_tasks; ++i) {
      auto t = tg::generate(families[i % families.size()], i / families.size(), {v, ""});
      chars += t.task.source.size() + t.solution.size();
      if (keep) keep->push_back(std::move(t));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::pair<double, std::size_t>{s, chars};
  };
  std::vector<tg::GeneratedTask> tasks;
  tasks.reserve(n_tasks);
  auto [full_s, full_chars] = time_generation(tg::Variant::full, &tasks);
  auto [small_s, small_chars] = time_generation(tg::Variant::small, nullptr);

  // 2. Decontamination time and drop rate (optional).
  double decon_s = -1;
  std::map<std::string, std::pair<std::size_t, std::size_t>> dropped;  // family -> (dropped, train)
  std::size_t decon_problems = 0;
  if (!kernelbench.empty()) {
    const auto t0 = Clock::now();
    tg::Decontaminator d(kernelbench);
    auto report = tg::decontaminate(tasks, d);
    decon_s = std::chrono::duration<double>(Clock::now() - t0).count();
    decon_problems = d.size();
    for (const auto& t : tasks) {
      auto& [dr, tr] = dropped[t.family];
      tr += t.split == tg::Split::train;
      dr += t.dropped_from_train;
    }
  }

  // 3. Distributions per family.
  struct Stats {
    std::vector<double> elements, bytes, flops, floor_us;
    std::size_t compute_bound = 0;
  };
  std::map<std::string, Stats> per;
  for (const auto& t : tasks) {
    auto& s = per[t.family];
    double largest = static_cast<double>(t.output.numel());
    for (const auto& in : t.inputs) largest = std::max(largest, static_cast<double>(in.numel()));
    s.elements.push_back(largest);
    s.bytes.push_back(t.cost.bytes);
    s.flops.push_back(t.cost.flops);
    s.floor_us.push_back(t.cost.floor_ms(kH200BandwidthGBs, kH200Fp32Tflops) * 1e3);
    s.compute_bound += t.cost.flops / (kH200Fp32Tflops * 1e12) > t.cost.bytes / (kH200BandwidthGBs * 1e9);
  }

  nlohmann::json j = {{"tasks", n_tasks},
                      {"families", families.size()},
                      {"generate_full_s", full_s},
                      {"generate_full_us_per_task", full_s * 1e6 / static_cast<double>(n_tasks)},
                      {"generate_small_s", small_s},
                      {"generate_small_us_per_task", small_s * 1e6 / static_cast<double>(n_tasks)},
                      {"source_chars_full", full_chars},
                      {"device_model", {{"name", "H200"}, {"bandwidth_GBs", kH200BandwidthGBs}, {"fp32_TFLOPs", kH200Fp32Tflops}}}};
  if (decon_s >= 0) j["decontamination"] = {{"seconds", decon_s}, {"problems", decon_problems}, {"threshold", 0.6}};
  std::string md = fmt::format(
      "# taskgen bench\n\nGenerated {} tasks ({} families round-robin, train seeds, full variant) in {:.3f} s "
      "({:.1f} us per task; small variant {:.3f} s, {:.1f} us per task).\n",
      n_tasks, families.size(), full_s, full_s * 1e6 / static_cast<double>(n_tasks), small_s,
      small_s * 1e6 / static_cast<double>(n_tasks));
  if (decon_s >= 0)
    md += fmt::format("Decontaminating them against {} KernelBench problems (token-set Jaccard > 0.6) took {:.2f} s.\n",
                      decon_problems, decon_s);
  md += fmt::format(
      "\nRoofline floor on an H200: max(bytes / {} GB/s, FLOPs / {} TFLOP/s FP32).\n\n"
      "| family | tasks | largest tensor p50 / max (elements) | bytes p10 / p50 / p90 | FLOPs p50 | floor p10 / p50 / p90 (us) | compute-bound | dropped from train |\n"
      "|---|---|---|---|---|---|---|---|\n",
      kH200BandwidthGBs, kH200Fp32Tflops);
  j["per_family"] = nlohmann::json::object();
  for (const auto& [name, s] : per) {
    auto& f = j["per_family"][name];
    f = {{"tasks", s.elements.size()}, {"largest_tensor_elements", dist(s.elements)}, {"bytes", dist(s.bytes)},
         {"flops", dist(s.flops)}, {"h200_floor_us", dist(s.floor_us)}, {"compute_bound", s.compute_bound}};
    std::string drop = "-";
    if (dropped.count(name)) {
      auto [dr, tr] = dropped.at(name);
      f["dropped_from_train"] = dr;
      f["train"] = tr;
      drop = fmt::format("{} of {} ({:.0f}%)", dr, tr, tr ? 100.0 * static_cast<double>(dr) / static_cast<double>(tr) : 0.0);
    }
    md += fmt::format("| {} | {} | {} / {} | {} / {} / {} | {} | {:.1f} / {:.1f} / {:.1f} | {} | {} |\n", name,
                      s.elements.size(), si(quantile(s.elements, 0.5)), si(quantile(s.elements, 1)),
                      si(quantile(s.bytes, 0.1)), si(quantile(s.bytes, 0.5)), si(quantile(s.bytes, 0.9)),
                      si(quantile(s.flops, 0.5)), quantile(s.floor_us, 0.1), quantile(s.floor_us, 0.5),
                      quantile(s.floor_us, 0.9), s.compute_bound, drop);
  }
  std::vector<double> all_elements;
  for (const auto& t : tasks) {
    double largest = static_cast<double>(t.output.numel());
    for (const auto& in : t.inputs) largest = std::max(largest, static_cast<double>(in.numel()));
    all_elements.push_back(largest);
  }
  j["largest_tensor_elements"] = dist(all_elements);
  md += fmt::format("\nLargest tensor over all tasks: min {}, p50 {}, max {} elements.\n", si(quantile(all_elements, 0)),
                    si(quantile(all_elements, 0.5)), si(quantile(all_elements, 1)));

  if (decon_s >= 0) {
    std::size_t dr = 0, tr = 0;
    for (const auto& [name, p] : dropped) dr += p.first, tr += p.second;
    j["decontamination"]["dropped_from_train"] = dr;
    j["decontamination"]["train"] = tr;
    md += fmt::format("Decontamination dropped {} of {} train tasks ({:.0f}%).\n", dr, tr,
                      tr ? 100.0 * static_cast<double>(dr) / static_cast<double>(tr) : 0.0);
  }
  md += "\nReproduce: `cmake --build build --target taskgen_bench && build/bench/taskgen_bench --kernelbench "
        "../shared/data/kernelbench --json bench/taskgen.json --md bench/taskgen.md` (CPU; times vary by machine).\n";
  std::printf("%s\n%s\n", md.c_str(), j.dump(2).c_str());
  if (!json_path.empty()) std::ofstream(json_path) << j.dump(2) << "\n";
  if (!md_path.empty()) std::ofstream(md_path) << md;
  return 0;
}
