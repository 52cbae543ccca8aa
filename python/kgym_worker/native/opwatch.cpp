// kgym's op watch: one global RecordFunction callback (at::addGlobalCallback) that counts the
// dispatcher ops (RecordScope::FUNCTION) run on any thread of the process while the harness has
// the watch on (around every observed call of the candidate). Built and loaded by the worker
// zygote before any fork (python/kgym_worker/opwatch.py), so every worker, the candidate's and
// the reference's alike, has it from its first instruction: no call of the candidate runs
// without it and none runs with a different cost (docs/timing.md, "Op watch").
//
// Counts live in a fixed lock-free table keyed by the op name's address (the name of a
// registered operator's schema, stable for the process's life): no lock, so a fork while an op
// runs on another thread cannot leave a held mutex behind. An op that finds no free slot is
// counted as overflow, which the harness treats as compute (fail closed): a candidate that
// registered thousands of ops of its own to fill the table hid ATen's GEMM behind the overflow
// (red team rt34). The table is large enough that no honest verdict comes near it.
#include <ATen/record_function.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace {
constexpr int kSlots = 65536;  // power of two; kgym_opwatch_slots()
struct Slot {
  std::atomic<const char*> name{nullptr};
  std::atomic<long long> count{0};
};
Slot g_slots[kSlots];
std::atomic<int> g_used[kSlots];
std::atomic<int> g_n_used{0};
std::atomic<long long> g_overflow{0};
std::atomic<bool> g_on{false};
at::CallbackHandle g_handle = 0;

void count(const char* name) {
  if (name == nullptr) return;
  const auto h = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(name) >> 3) * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[(h + static_cast<std::uint64_t>(i)) & (kSlots - 1)];
    const char* cur = s.name.load(std::memory_order_acquire);
    if (cur == nullptr) {
      const char* expected = nullptr;
      if (s.name.compare_exchange_strong(expected, name, std::memory_order_acq_rel)) {
        // (slot + 1: a zero entry is one whose store has not landed yet)
        g_used[g_n_used.fetch_add(1, std::memory_order_acq_rel)].store(
            static_cast<int>((h + static_cast<std::uint64_t>(i)) & (kSlots - 1)) + 1, std::memory_order_release);
        s.count.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      cur = expected;
    }
    if (cur == name) {
      s.count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  g_overflow.fetch_add(1, std::memory_order_relaxed);
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (g_on.load(std::memory_order_relaxed)) count(fn.name());
  return nullptr;
}
}  // namespace

extern "C" {
/// Adds the global callback once; 1 when it is in place.
int kgym_opwatch_install() {
  if (g_handle == 0)
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(&on_enter).scopes({at::RecordScope::FUNCTION}));
  return g_handle != 0 ? 1 : 0;
}
/// Counts ops from now on (on != 0) or stops counting.
void kgym_opwatch_set(int on) { g_on.store(on != 0, std::memory_order_release); }
/// Writes up to `cap` (name, count) pairs with a count above zero and zeroes those counts;
/// returns how many were written. Ops that found no free slot are in kgym_opwatch_overflow.
int kgym_opwatch_take(const char** names, long long* counts, int cap) {
  int n = 0;
  const int used = g_n_used.load(std::memory_order_acquire);
  for (int u = 0; u < used && n < cap; ++u) {
    const int slot = g_used[u].load(std::memory_order_acquire) - 1;
    if (slot < 0) continue;
    Slot& s = g_slots[slot];
    const long long c = s.count.exchange(0, std::memory_order_acq_rel);
    if (c > 0) {
      names[n] = s.name.load(std::memory_order_acquire);
      counts[n] = c;
      ++n;
    }
  }
  return n;
}
/// Ops counted nowhere since the last call (the table was full), then zero.
long long kgym_opwatch_overflow() { return g_overflow.exchange(0, std::memory_order_acq_rel); }
/// The table's size: a `cap` of this many takes every entry.
int kgym_opwatch_slots() { return kSlots; }
}
