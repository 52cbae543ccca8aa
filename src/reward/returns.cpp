// Returns over the turns of an episode and group-relative advantages (returns.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kgym/error.hpp"
#include "kgym/returns.hpp"

namespace kgym {
namespace {
void check_gamma(double gamma) {
  if (!(gamma >= 0.0 && gamma <= 1.0)) {
    throw Error(ErrorKind::usage, "discount gamma must be in [0, 1], got " + std::to_string(gamma));
  }
}
double mean_of(const std::vector<double>& xs) {
  if (xs.empty()) throw Error(ErrorKind::usage, "advantages need a non-empty group of returns");
  return std::accumulate(xs.begin(), xs.end(), 0.0) / static_cast<double>(xs.size());
}
}  // namespace

std::vector<double> discounted_sum_returns(const std::vector<double>& rewards, double gamma) {
  check_gamma(gamma);
  std::vector<double> out(rewards.size());
  double acc = 0.0;
  for (std::size_t i = rewards.size(); i-- > 0;) {
    acc = rewards[i] + gamma * acc;
    out[i] = acc;
  }
  return out;
}

std::vector<double> discounted_max_returns(const std::vector<double>& rewards, double gamma) {
  check_gamma(gamma);
  std::vector<double> out(rewards.size());
  for (std::size_t i = rewards.size(); i-- > 0;) {
    // G_t = max(r_t, gamma * G_{t+1}) unrolls to max_k gamma^(k-t) r_k.
    out[i] = i + 1 < rewards.size() ? std::max(rewards[i], gamma * out[i + 1]) : rewards[i];
  }
  return out;
}

double two_turn_return(double r1, double r2, double weight) { return r1 + weight * r2; }

std::vector<double> grpo_advantages(const std::vector<double>& returns, double eps) {
  if (eps < 0) throw Error(ErrorKind::usage, "GRPO eps must be >= 0");
  double mean = mean_of(returns);
  std::vector<double> out(returns.size(), 0.0);
  if (returns.size() < 2) return out;
  double ss = 0.0;
  for (double r : returns) ss += (r - mean) * (r - mean);
  double sd = std::sqrt(ss / static_cast<double>(returns.size() - 1));
  for (std::size_t i = 0; i < returns.size(); ++i) out[i] = (returns[i] - mean) / (sd + eps);
  return out;
}

std::vector<double> dr_grpo_advantages(const std::vector<double>& returns) {
  double mean = mean_of(returns);
  std::vector<double> out(returns.size());
  for (std::size_t i = 0; i < returns.size(); ++i) out[i] = returns[i] - mean;
  return out;
}

}  // namespace kgym
