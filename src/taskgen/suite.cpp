// Sets of generated tasks: seed ranges, the built-in default suite, export to KernelBench files,
// and the trivial candidates of the degenerate-task audit.
#include <fstream>
#include <set>

#include "kgym/error.hpp"
#include "kgym/taskgen.hpp"

namespace kgym::taskgen {

namespace fs = std::filesystem;

std::vector<GeneratedTask> generate_range(const std::vector<std::string>& families, std::uint64_t first_seed,
                                          std::uint64_t count, const GenOptions& options) {
  std::vector<std::string> names = families;
  if (names.empty())
    for (const Family* f : Registry::instance().families()) names.push_back(f->name);
  std::vector<GeneratedTask> out;
  out.reserve(names.size() * count);
  for (const auto& name : names)
    for (std::uint64_t s = first_seed; s < first_seed + count; ++s) out.push_back(generate(name, s, options));
  return out;
}

std::vector<GeneratedTask> default_suite() {
  constexpr int kPerFamily = 3;      // tasks per family
  constexpr int kSearch = 64;        // heldout seeds tried per family to find distinct ops
  std::vector<GeneratedTask> out;
  GenOptions options;
  options.variant = Variant::small;
  for (const Family* f : Registry::instance().families()) {
    std::set<std::string> ops;
    for (std::uint64_t s = kHeldoutBegin; s < kHeldoutBegin + kSearch && ops.size() < kPerFamily; ++s) {
      GeneratedTask t = generate(f->name, s, options);
      if (ops.insert(t.op).second) out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<Evaluation> default_suite_evaluations() {
  std::vector<Evaluation> out;
  for (auto& t : default_suite()) {
    Evaluation e;
    e.candidate.id = t.task.id + "#solution";
    e.candidate.task_id = t.task.id;
    e.candidate.code = t.solution;
    e.task = std::move(t.task);
    out.push_back(std::move(e));
  }
  return out;
}

static void write_file(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error(ErrorKind::input, "cannot create directory " + path.parent_path().string() + ": " + ec.message());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw Error(ErrorKind::input, "cannot write " + path.string());
}

std::vector<fs::path> export_tasks(const std::vector<GeneratedTask>& tasks, const fs::path& dir,
                                   std::string_view layout, bool with_solutions) {
  if (layout != "family" && layout != "flat")
    throw Error(ErrorKind::usage, "unknown export layout '" + std::string(layout) + "'; use 'family' or 'flat'");
  std::vector<fs::path> written;
  for (const auto& t : tasks) {
    const std::string stem = t.task.id.substr(t.task.id.rfind('/') + 1);
    fs::path ref, sol;
    if (layout == "family") {
      ref = dir / t.family / (stem + ".py");
      sol = dir / t.family / (stem + ".solution.py");
    } else {
      ref = dir / (t.family + "_" + stem + ".py");
      sol = dir / "solutions" / (t.family + "_" + stem + ".py");
    }
    write_file(ref, t.task.source);
    if (with_solutions) write_file(sol, t.solution);
    written.push_back(ref);
  }
  return written;
}

static std::string shape_tuple(const std::vector<std::int64_t>& shape) {
  if (shape.empty()) return "()";
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::vector<std::pair<std::string, std::string>> trivial_candidates(const GeneratedTask& t) {
  const std::string head = "\"\"\"Trivial answer for the degenerate-task audit of " + t.task.id +
                           ".\"\"\"\nimport torch\nimport torch.nn as nn\n\nOUT_SHAPE = " +
                           shape_tuple(t.output.shape) + "\nOUT_DTYPE = torch." + t.output.dtype +
                           "\n\n\nclass ModelNew(nn.Module):\n"
                           "    def __init__(self, *args, **kwargs):\n        super().__init__()\n\n"
                           "    def forward(self, *inputs):\n"
                           "        x = next(v for v in inputs if torch.is_tensor(v) and v.is_floating_point())\n";
  const std::string zeros = head + "        return torch.zeros(OUT_SHAPE, dtype=OUT_DTYPE, device=x.device)\n";
  const std::string constant = head + "        return torch.ones(OUT_SHAPE, dtype=OUT_DTYPE, device=x.device)\n";
  const std::string input = head +
                            "        n = 1\n        for s in OUT_SHAPE:\n            n *= s\n"
                            "        flat = x.reshape(-1)\n"
                            "        reps = -(-n // flat.numel())\n"
                            "        return flat.repeat(reps)[:n].reshape(OUT_SHAPE).to(OUT_DTYPE).clone()\n";
  const std::string mean = head +
                           "        m = x.float().mean().item()\n"
                           "        return torch.full(OUT_SHAPE, m, device=x.device).to(OUT_DTYPE)\n";
  return {{"zeros", zeros}, {"constant", constant}, {"input", input}, {"mean", mean}};
}

}  // namespace kgym::taskgen
