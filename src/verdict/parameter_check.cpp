#include "kgym/parameter_check.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace kgym {

namespace {
struct Param {
  std::string name;
  std::vector<std::int64_t> shape;
  double checksum = 0;
};

std::vector<Param> read(const nlohmann::json& list) {
  std::vector<Param> out;
  if (!list.is_array()) return out;
  for (const auto& e : list) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_string() || !e[1].is_array() || !e[2].is_number()) continue;
    Param p;
    p.name = e[0].get<std::string>();
    for (const auto& s : e[1])
      if (s.is_number_integer()) p.shape.push_back(s.get<std::int64_t>());
    p.checksum = e[2].get<double>();
    out.push_back(std::move(p));
  }
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }
std::string named(const Param& p) { return fmt::format("`{}` {}", p.name, shape_text(p.shape)); }
}  // namespace

std::optional<std::string> parameter_difference(const nlohmann::json& reference, const nlohmann::json& candidate) {
  const auto ref = read(reference), cand = read(candidate);
  if (ref.empty()) return std::nullopt;
  if (cand.empty())
    return fmt::format("the candidate has no parameters; the reference has {} (the first: {}), made under the same init seed",
                       ref.size(), named(ref.front()));
  const std::size_t n = std::min(ref.size(), cand.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (ref[i].shape == cand[i].shape) continue;
    // A layer left out: the rest of the reference's list lines up with the candidate's from here.
    for (std::size_t skip = 1; i + skip < ref.size() && skip <= 8; ++skip) {
      bool lines_up = true;
      for (std::size_t j = i; j < cand.size() && j + skip < ref.size() && j < i + 4; ++j)
        lines_up &= ref[j + skip].shape == cand[j].shape;
      if (lines_up)
        return fmt::format("the candidate skips the reference's parameter {}{} (a layer left out?): parameter {} of the "
                           "candidate, {}, matches the reference's {}",
                           named(ref[i]), skip > 1 ? fmt::format(" and {} more after it", skip - 1) : std::string(),
                           i + 1, named(cand[i]), named(ref[i + skip]));
    }
    return fmt::format("the candidate's parameter {} has shape {} where the reference's {} has shape {} "
                       "(parameter {} of {} in both, same init seed)",
                       cand[i].name, shape_text(cand[i].shape), ref[i].name, shape_text(ref[i].shape), i + 1, ref.size());
  }
  if (cand.size() < ref.size())
    return fmt::format("the candidate has {} parameters, the reference {}: the reference's {} has no counterpart "
                       "(a layer left out?)", cand.size(), ref.size(), named(ref[cand.size()]));
  if (cand.size() > ref.size())
    return fmt::format("the candidate has {} parameters, the reference {}: the candidate's {} is extra",
                       cand.size(), ref.size(), named(cand[ref.size()]));
  for (std::size_t i = 0; i < n; ++i) {
    const double a = ref[i].checksum, b = cand[i].checksum;
    if (std::fabs(a - b) > 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)}))
      return fmt::format("the candidate's parameter {} holds other values than the reference's {} under the same init "
                         "seed (made in another order, or initialised differently)", named(cand[i]), named(ref[i]));
  }
  return std::nullopt;
}

}  // namespace kgym
