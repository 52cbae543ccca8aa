// The engine behind the Evaluator interface (engine.hpp): `kgym serve` holds one per device.
#include "kgym/engine.hpp"

namespace kgym {

std::unique_ptr<Evaluator> make_engine_evaluator(EngineOptions options) {
  return std::make_unique<Engine>(std::move(options));  // Engine is thread-safe and blocking
}

}  // namespace kgym
