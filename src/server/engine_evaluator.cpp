// The Evaluator adapter over kgym::Engine (evaluator.hpp): one engine per device.
#include "kgym/evaluator.hpp"

namespace kgym {
namespace {

class EngineEvaluator final : public Evaluator {
 public:
  explicit EngineEvaluator(EngineOptions options) : device_(options.device), engine_(std::move(options)) {}
  Verdict evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) override {
    return engine_.evaluate(task, candidate, options);  // Engine is thread-safe and blocking
  }
  std::string describe() const override { return "engine " + device_; }

 private:
  std::string device_;
  Engine engine_;
};

}  // namespace

std::unique_ptr<Evaluator> make_engine_evaluator(EngineOptions options) {
  return std::make_unique<EngineEvaluator>(std::move(options));
}

}  // namespace kgym
