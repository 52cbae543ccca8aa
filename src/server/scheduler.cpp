// The fair evaluation queue and device workers (scheduler.hpp).
#include <algorithm>
#include <cmath>

#include "kgym/episode.hpp"
#include "kgym/hash.hpp"
#include "kgym/histogram.hpp"
#include "kgym/scheduler.hpp"

namespace kgym {
namespace {


}  // namespace

LatencySummary summarize_latencies(std::vector<double> samples) {
  LatencySummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double q) {
    std::size_t r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
    return samples[std::clamp<std::size_t>(r, 1, samples.size()) - 1];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = samples.back();
  return s;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Scheduler::Scheduler(std::vector<Device> devices, int workers_per_device)
    : devices_(std::move(devices)), workers_per_device_(workers_per_device) {
  if (devices_.empty()) throw Error(ErrorKind::usage, "the scheduler needs at least one device");
  if (workers_per_device < 1) {
    throw Error(ErrorKind::usage, "--workers-per-device must be >= 1, got " + std::to_string(workers_per_device));
  }
  device_busy_.assign(devices_.size(), 0);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    for (int k = 0; k < workers_per_device; ++k) threads_.emplace_back([this, d] { work(d); });
  }
}

Scheduler::~Scheduler() {
  std::vector<std::shared_ptr<EvaluationTicket>> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [owner, queue] : queues_) {
      for (auto& t : queue) dropped.push_back(t);
    }
    queues_.clear();
    rotation_.clear();
    queued_ = 0;
  }
  for (auto& t : dropped) {
    t->status_ = EvaluationTicket::Status::finished;
    t->promise_.set_exception(std::make_exception_ptr(
        RequestError(RequestProblem::cancelled, "the server is shutting down; the evaluation was cancelled")));
  }
  cv_.notify_all();
  for (auto& th : threads_) th.join();
}

std::shared_ptr<EvaluationTicket> Scheduler::submit(const std::string& owner, Task task, Candidate candidate,
                                                    EvalOptions options) {
  auto t = std::make_shared<EvaluationTicket>();
  t->owner_ = owner;
  t->task_ = std::move(task);
  t->candidate_ = std::move(candidate);
  t->options_ = std::move(options);
  t->submitted_at_ = std::chrono::steady_clock::now();
  t->future_ = t->promise_.get_future().share();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw RequestError(RequestProblem::cancelled, "the server is shutting down");
    auto& queue = queues_[owner];
    if (queue.empty()) rotation_.push_back(owner);
    queue.push_back(t);
    ++queued_;
    ++submitted_;
  }
  cv_.notify_one();
  return t;
}

std::shared_ptr<EvaluationTicket> Scheduler::take_locked() {
  std::string owner = rotation_.front();
  rotation_.pop_front();
  auto& queue = queues_[owner];
  auto t = queue.front();
  queue.pop_front();
  if (queue.empty()) {
    queues_.erase(owner);
  } else {
    rotation_.push_back(owner);  // round-robin: the owner's next job waits for the others' turns
  }
  --queued_;
  return t;
}

void Scheduler::remove_locked(const std::shared_ptr<EvaluationTicket>& ticket) {
  auto it = queues_.find(ticket->owner_);
  if (it == queues_.end()) return;
  auto& queue = it->second;
  queue.erase(std::remove(queue.begin(), queue.end(), ticket), queue.end());
  --queued_;
  if (queue.empty()) {
    queues_.erase(it);
    rotation_.erase(std::remove(rotation_.begin(), rotation_.end(), ticket->owner_), rotation_.end());
  }
}

bool Scheduler::cancel(const std::shared_ptr<EvaluationTicket>& ticket) {
  {
    std::lock_guard lock(mutex_);
    if (ticket->status_ != EvaluationTicket::Status::queued || stopping_) return false;
    remove_locked(ticket);
    ticket->status_ = EvaluationTicket::Status::finished;
    ++cancelled_;
  }
  ticket->promise_.set_exception(std::make_exception_ptr(
      RequestError(RequestProblem::cancelled, "the evaluation was cancelled before it started")));
  return true;
}

std::size_t Scheduler::cancel_owner(const std::string& owner) {
  std::vector<std::shared_ptr<EvaluationTicket>> queued;
  {
    std::lock_guard lock(mutex_);
    auto it = queues_.find(owner);
    if (it == queues_.end()) return 0;
    queued.assign(it->second.begin(), it->second.end());
  }
  std::size_t n = 0;
  for (auto& t : queued) n += cancel(t) ? 1 : 0;
  return n;
}

void Scheduler::work(std::size_t device_index) {
  Evaluator& evaluator = *devices_[device_index].evaluator;
  for (;;) {
    std::shared_ptr<EvaluationTicket> t;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || queued_ > 0; });
      if (queued_ == 0) return;  // stopping with nothing left
      t = take_locked();
      t->status_ = EvaluationTicket::Status::running;
      ++busy_;
      ++device_busy_[device_index];
      add_sample(wait_samples_, wait_next_, ms_since(t->submitted_at_));
      wait_hist_.observe(ms_since(t->submitted_at_) / 1e3);
      ++(sources_.insert(sha256_hex(t->candidate_.code)).second ? builds_cold_ : builds_cached_);
    }
    auto started = std::chrono::steady_clock::now();
    std::optional<Verdict> verdict;
    std::exception_ptr error;
    try {
      verdict = evaluator.evaluate(t->task_, t->candidate_, t->options_);
    } catch (...) {
      error = std::current_exception();
    }
    {
      // Count first, then publish: whoever sees the result also sees it in the metrics.
      std::lock_guard lock(mutex_);
      t->status_ = EvaluationTicket::Status::finished;
      --busy_;
      --device_busy_[device_index];
      ++(error ? failed_ : completed_);
      add_sample(eval_samples_, eval_next_, ms_since(started));
      eval_hist_.observe(ms_since(started) / 1e3);
      if (verdict) ++outcomes_[std::string(to_string(verdict->outcome))];
    }
    if (error) {
      t->promise_.set_exception(error);
    } else {
      t->promise_.set_value(std::move(*verdict));
    }
  }
}

SchedulerMetrics Scheduler::metrics() const {
  std::lock_guard lock(mutex_);
  SchedulerMetrics m;
  m.queue_length = queued_;
  m.workers = static_cast<int>(threads_.size());
  m.busy_workers = busy_;
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    m.devices.push_back({devices_[d].name, workers_per_device_, device_busy_[d]});
  }
  m.submitted = submitted_;
  m.completed = completed_;
  m.failed = failed_;
  m.cancelled = cancelled_;
  m.eval_ms = summarize_latencies(eval_samples_);
  m.wait_ms = summarize_latencies(wait_samples_);
  m.eval_seconds = eval_hist_;
  m.wait_seconds = wait_hist_;
  m.outcomes = outcomes_;
  m.builds_cached = builds_cached_;
  m.builds_cold = builds_cold_;
  return m;
}

std::vector<std::string> Scheduler::describe() const {
  std::vector<std::string> out;
  for (const auto& d : devices_) out.push_back(d.name + ": " + d.evaluator->describe());
  return out;
}

}  // namespace kgym
