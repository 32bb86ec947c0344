// Property test: seeded random scenarios (random submits, aborts and stops, deadlines, small KV
// pools that force preemption, chunked prefill on and off, both queue policies, optional
// preemption cap). After every Step and OnStepDone the scheduler's invariants hold and the plan
// respects its budgets; every submitted request finishes exactly once with a reason that fits
// its history; output never exceeds max_output_tokens; and the engine drains to idle with every
// KV block free. A failure names the seed, the step, the time and the scenario's parameters.

#include <cstdint>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "kv/block_manager.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

#if defined(__SANITIZE_ADDRESS__)
// Half the seeds under ASan (each of the two seed loops took about 30 s there with 300, the
// longest tests of the ASan suite); the release suite runs all 300.
constexpr std::uint64_t kNumSeeds = 150;
#else
constexpr std::uint64_t kNumSeeds = 300;
#endif
constexpr int kSubmitSteps = 300;      // steps during which new requests arrive
constexpr int kMaxDrainSteps = 60000;  // generous: a drain normally takes a few thousand
constexpr int kMaxPromptTokens = 600;
constexpr int kMaxOutputTokens = 200;

struct Params {
  SchedulerConfig config;
  std::int32_t block_size = 16;
  std::int32_t num_blocks = 0;
  double submit_prob = 0.2;
  double abort_prob = 0.03;
  double deadline_prob = 0.3;
  bool tight = false;  ///< some requests can never fit the pool or the budget
  /// Prefix caching on, and prompts drawn with one of a few shared segment lists.
  bool prefix_caching = false;
};

std::string Describe(const Params& p) {
  std::ostringstream os;
  os << "{chunked=" << p.config.enable_chunked_prefill
     << " policy=" << (p.config.policy == SchedulingPolicy::kFcfs ? "fcfs" : "priority")
     << " aging=" << p.config.priority_aging_s << " max_num_seqs=" << p.config.max_num_seqs
     << " budget=" << p.config.max_num_batched_tokens
     << " max_preemptions=" << p.config.max_preemptions << " blocks=" << p.num_blocks << "x"
     << p.block_size << " submit_prob=" << p.submit_prob << " tight=" << p.tight
     << " prefix_caching=" << p.prefix_caching << "}";
  return os.str();
}

class Scenario {
 public:
  /// With `check_victims`, also checks the documented preemption rule after every Step.
  explicit Scenario(std::uint64_t seed, bool check_victims = false)
      : rng_(seed),
        params_(RandomParams(rng_)),
        check_victims_(check_victims),
        prefix_rng_(seed * 7919 + 1) {
    // Every other seed caches prefixes; its own generator leaves the other draws as they were.
    params_.prefix_caching = seed % 2 == 0;
    if (params_.prefix_caching) {
      for (int k = 0; k < 4; ++k) {
        auto segments = std::make_shared<PromptSegments>();
        segments->segment_tokens = static_cast<std::int32_t>(prefix_rng_.UniformInt(1, 96));
        const auto n = prefix_rng_.UniformInt(1, 8);
        for (std::int64_t i = 0; i < n; ++i) {
          segments->ids.push_back(
              static_cast<std::uint64_t>(k * 100 + prefix_rng_.UniformInt(0, 2)));
        }
        shared_segments_.push_back(std::move(segments));
      }
    }
    blocks_ = std::make_unique<BlockManager>(params_.num_blocks, params_.block_size,
                                             params_.prefix_caching);
    sched_ = std::make_unique<Scheduler>(params_.config, blocks_.get());
  }

  const Params& params() const { return params_; }
  std::int64_t num_preemptions() const { return sched_->stats().num_preemptions_total; }
  std::int64_t prefix_cache_hits() const { return sched_->stats().prefix_cache_hits_total; }
  std::size_t num_submitted() const { return specs_.size(); }
  int num_steps() const { return step_ + 1; }
  const std::map<FinishReason, std::int64_t>& reasons() const { return reasons_; }

  /// Runs the scenario; returns "" when every property held, else the first violation.
  std::string Run() {
    int step = 0;
    int empty_streak = 0;
    for (; step < kSubmitSteps + kMaxDrainSteps; ++step) {
      step_ = step;
      const bool submitting = step < kSubmitSteps;
      // Fewer aborts while draining, so that most requests run to their natural end.
      abort_prob_ = submitting ? params_.abort_prob : params_.abort_prob / 5;
      if (!submitting && sched_->idle()) {
        break;
      }
      if (submitting) {
        RandomSubmits();
      }
      if (!RandomAborts()) {
        return error_;
      }
      if (!DoStep()) {
        return error_;
      }
      if (plan_copy_.empty()) {
        // A step may legitimately plan nothing (only preemptions happened, or the head of the
        // queue waits for blocks) but not forever.
        if (!sched_->idle() && ++empty_streak > 1000) {
          return Fail("no progress: 1000 consecutive empty plans with live requests");
        }
      } else {
        empty_streak = 0;
      }
      if (rng_.Uniform() < abort_prob_) {  // abort while the step is in flight
        if (!AbortRandomLive()) {
          return error_;
        }
      }
      if (!DoStepDone()) {
        return error_;
      }
    }
    return CheckDrained();
  }

 private:
  static Params RandomParams(Rng& rng) {
    Params p;
    SchedulerConfig& c = p.config;
    c.enable_chunked_prefill = rng.Uniform() < 0.5;
    c.policy = rng.Uniform() < 0.5 ? SchedulingPolicy::kFcfs : SchedulingPolicy::kPriority;
    c.priority_aging_s = rng.Uniform(0.0, 5.0);
    c.max_num_seqs = static_cast<std::int32_t>(rng.UniformInt(1, 32));
    static constexpr std::int32_t kCaps[] = {0, 0, 0, 1, 2, 5};
    c.max_preemptions = kCaps[rng.UniformInt(0, 5)];
    static constexpr std::int32_t kBlockSizes[] = {4, 8, 16, 32};
    p.block_size = kBlockSizes[rng.UniformInt(0, 3)];
    constexpr std::int32_t kLargest = kMaxPromptTokens + kMaxOutputTokens;
    // Most scenarios can hold the largest request (prompt + all outputs) in the KV pool and,
    // without chunking, in one step's budget. One in five is tighter: some prompts or
    // recomputes can never fit and must be finished (kRejected / kPreemptionLimit) instead of
    // wedging the queue. Pools of one to two times the minimum force preemption.
    p.tight = rng.Uniform() < 0.2;
    const std::int32_t min_tokens =
        p.tight ? static_cast<std::int32_t>(rng.UniformInt(kMaxPromptTokens / 2, kLargest))
                : kLargest;
    c.max_num_batched_tokens = c.enable_chunked_prefill
                                   ? static_cast<std::int32_t>(rng.UniformInt(8, 512))
                                   : static_cast<std::int32_t>(rng.UniformInt(min_tokens, 1500));
    const std::int32_t min_blocks = (min_tokens + p.block_size - 1) / p.block_size;
    p.num_blocks = min_blocks + static_cast<std::int32_t>(rng.UniformInt(0, min_blocks));
    if (p.tight && rng.Uniform() < 0.5) {
      p.num_blocks = min_blocks;
    }
    p.submit_prob = rng.Uniform(0.05, 0.5);
    p.abort_prob = rng.Uniform(0.0, 0.03);
    p.deadline_prob = rng.Uniform(0.0, 0.5);
    return p;
  }

  /// Whether `tokens` of context can never be scheduled on this engine (scheduler.h, step 4).
  bool NeverFits(std::int64_t tokens) const {
    const SchedulerConfig& c = params_.config;
    return (!c.enable_chunked_prefill && tokens > c.max_num_batched_tokens) ||
           blocks_->BlocksFor(tokens) > blocks_->num_total();
  }

  template <typename... Args>
  std::string Fail(const Args&... args) {
    std::ostringstream os;
    os << "step " << step_ << " t=" << now_ << ": ";
    (os << ... << args);
    os << " params " << Describe(params_);
    error_ = os.str();
    return error_;
  }

  bool CheckInvariants(const char* where) {
    std::string err;
    if (!sched_->CheckInvariants(&err)) {
      Fail("CheckInvariants failed ", where, ": ", err);
      return false;
    }
    const EngineStats s = sched_->stats();
    if (s.kv_usage < 0 || s.kv_usage > 1) {
      Fail("kv_usage out of [0, 1]: ", s.kv_usage);
      return false;
    }
    if (static_cast<std::size_t>(s.num_running + s.num_waiting) != live_.size()) {
      Fail("running (", s.num_running, ") + waiting (", s.num_waiting, ") != live (", live_.size(),
           ") ", where);
      return false;
    }
    if (s.num_running > params_.config.max_num_seqs) {
      Fail("num_running ", s.num_running, " > max_num_seqs");
      return false;
    }
    if (s.waiting_prompt_tokens < 0 || s.prefill_backlog_tokens < s.waiting_prompt_tokens) {
      Fail("bad token gauges: waiting ", s.waiting_prompt_tokens, " backlog ",
           s.prefill_backlog_tokens);
      return false;
    }
    if (s.num_free_blocks != blocks_->num_free() || s.num_total_blocks != blocks_->num_total()) {
      Fail("block gauges disagree with the block manager");
      return false;
    }
    return true;
  }

  void RandomSubmits() {
    while (rng_.Uniform() < params_.submit_prob) {
      RequestSpec spec;
      spec.id = next_id_++;
      spec.prompt_tokens = static_cast<std::int32_t>(rng_.UniformInt(1, kMaxPromptTokens));
      spec.max_output_tokens = static_cast<std::int32_t>(rng_.UniformInt(1, kMaxOutputTokens));
      spec.priority = static_cast<std::int32_t>(rng_.UniformInt(0, 2));
      spec.arrival_s = now_;
      if (rng_.Uniform() < params_.deadline_prob) {
        spec.deadline_s = now_ + rng_.Uniform(0.0, 3.0);
      }
      if (!shared_segments_.empty() && prefix_rng_.Uniform() < 0.7) {
        spec.prompt_segments = shared_segments_[static_cast<std::size_t>(
            prefix_rng_.UniformInt(0, static_cast<std::int64_t>(shared_segments_.size()) - 1))];
      }
      sched_->Submit(spec);
      specs_[spec.id] = spec;
      live_.insert(spec.id);
      if (specs_.size() > 400) {
        break;
      }
    }
  }

  bool AbortRandomLive() {
    if (live_.empty()) {
      return true;
    }
    auto it = live_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(
                         rng_.UniformInt(0, static_cast<std::int64_t>(live_.size()) - 1)));
    const RequestId id = *it;
    const FinishReason reason = rng_.Uniform() < 0.8 ? FinishReason::kAbort : FinishReason::kStop;
    const bool ok = sched_->Finish(id, reason);
    if (!finish_requested_.count(id)) {
      if (!ok) {
        Fail("Finish(", id, ") of a live request returned false");
        return false;
      }
      finish_requested_[id] = reason;
    }
    return true;
  }

  bool RandomAborts() {
    if (rng_.Uniform() < abort_prob_ && !AbortRandomLive()) {
      return false;
    }
    if (rng_.Uniform() < 0.01) {
      const RequestId unknown = 1'000'000 + static_cast<RequestId>(rng_.UniformInt(0, 1000));
      if (sched_->Abort(unknown)) {
        Fail("Abort of unknown id returned true");
        return false;
      }
    }
    if (!done_.empty() && rng_.Uniform() < 0.02) {
      const RequestId id = *done_.begin();
      if (sched_->Abort(id)) {
        Fail("Abort of finished id ", id, " returned true");
        return false;
      }
    }
    return true;
  }

  bool OnFinished(const Request& r, bool in_step_done) {
    const RequestId id = r.spec.id;
    if (!live_.count(id)) {
      Fail("request ", id, done_.count(id) ? " finished twice" : " finished but never submitted");
      return false;
    }
    live_.erase(id);
    done_.insert(id);
    if (sched_->Find(id) != nullptr) {
      Fail("finished request ", id, " is still live");
      return false;
    }
    const RequestSpec& spec = specs_[id];
    if (r.state != RequestState::kFinished || !r.blocks.empty()) {
      Fail("finished request ", id, " has state ", ToString(r.state), " or blocks");
      return false;
    }
    if (r.num_output_tokens > spec.max_output_tokens) {
      Fail("request ", id, " produced ", r.num_output_tokens, " > max ", spec.max_output_tokens);
      return false;
    }
    if (r.num_output_tokens != outputs_[id]) {
      Fail("request ", id, " has ", r.num_output_tokens, " outputs but ", outputs_[id],
           " token events");
      return false;
    }
    if (r.finished_s != now_) {
      Fail("request ", id, " finished_s ", r.finished_s, " != now");
      return false;
    }
    const std::int32_t cap = params_.config.max_preemptions;
    switch (r.finish_reason) {
      case FinishReason::kLength:
        if (r.num_output_tokens != spec.max_output_tokens || !in_step_done) {
          Fail("length finish of ", id, " with ", r.num_output_tokens, " of ",
               spec.max_output_tokens, in_step_done ? "" : " outside OnStepDone");
          return false;
        }
        break;
      case FinishReason::kAbort:
      case FinishReason::kStop: {
        const auto f = finish_requested_.find(id);
        if (f == finish_requested_.end() || f->second != r.finish_reason || in_step_done) {
          Fail("request ", id, " finished ", ToString(r.finish_reason), " unasked");
          return false;
        }
        break;
      }
      case FinishReason::kDeadline:
        if (r.ever_scheduled() || r.num_output_tokens != 0 || r.num_computed_tokens != 0 ||
            !(now_ > spec.deadline_s) || in_step_done || finish_requested_.count(id)) {
          Fail("bad deadline drop of ", id);
          return false;
        }
        break;
      case FinishReason::kPreemptionLimit: {
        const bool over_cap = cap > 0 && r.num_preemptions == cap + 1;
        const bool outgrew = r.num_preemptions > 0 && NeverFits(r.num_tokens());
        if (!(over_cap || outgrew) || in_step_done) {
          Fail("request ", id, " hit the preemption limit with ", r.num_preemptions,
               " preemptions, cap ", cap, ", ", r.num_tokens(), " tokens");
          return false;
        }
        break;
      }
      case FinishReason::kRejected:
        if (r.ever_scheduled() || r.num_preemptions != 0 || r.num_output_tokens != 0 ||
            !NeverFits(spec.prompt_tokens) || in_step_done || finish_requested_.count(id)) {
          Fail("bad rejection of ", id, " with a ", spec.prompt_tokens, "-token prompt");
          return false;
        }
        break;
      default:
        Fail("request ", id, " finished with reason ", ToString(r.finish_reason));
        return false;
    }
    if (cap > 0 && r.finish_reason != FinishReason::kPreemptionLimit && r.num_preemptions > cap) {
      Fail("request ", id, " exceeded the preemption cap without failing");
      return false;
    }
    if (r.ever_scheduled() && r.first_scheduled_s < spec.arrival_s) {
      Fail("request ", id, " scheduled before it arrived");
      return false;
    }
    if ((r.first_token_s != kNever) != (r.num_output_tokens > 0)) {
      Fail("request ", id, " first_token_s disagrees with its output count");
      return false;
    }
    if (r.num_output_tokens > 0 &&
        !(r.first_scheduled_s < r.first_token_s && r.first_token_s <= r.last_token_s &&
          r.last_token_s <= r.finished_s)) {
      Fail("request ", id, " timestamps out of order");
      return false;
    }
    if (r.finish_reason != FinishReason::kRejected && r.ever_scheduled() &&
        NeverFits(spec.prompt_tokens)) {
      Fail("request ", id, " with a prompt that can never fit was scheduled");
      return false;
    }
    preemptions_sum_ += r.num_preemptions;
    recomputed_sum_ += r.num_recomputed_tokens;
    ++reasons_[r.finish_reason];
    return true;
  }

  bool DoStep() {
    // Requests with a pending abort/stop must leave in this Step.
    std::vector<RequestId> must_leave;
    for (const auto& [id, reason] : finish_requested_) {
      if (live_.count(id)) {
        must_leave.push_back(id);
      }
    }
    std::vector<RunningBefore> running_before;
    if (check_victims_) {
      for (const RequestId id : live_) {
        const Request* r = sched_->Find(id);
        if (r != nullptr && r->state == RequestState::kRunning && !finish_requested_.count(id)) {
          running_before.push_back({r->spec, r->num_preemptions, r->num_displacements});
        }
      }
    }
    StepEvents ev;
    const StepPlan& plan = sched_->Step(now_, &ev);
    plan_copy_ = plan;
    if (check_victims_ && !CheckVictims(running_before, ev)) {
      return false;
    }
    for (const Request& r : ev.finished) {
      if (!OnFinished(r, /*in_step_done=*/false)) {
        return false;
      }
    }
    if (!CheckInvariants("after Step")) {
      return false;
    }
    if (!ev.tokens.empty()) {
      Fail("Step reported tokens");
      return false;
    }
    for (const RequestId id : must_leave) {
      if (live_.count(id)) {
        Fail("request ", id, " with a pending finish is still live after Step");
        return false;
      }
    }
    return CheckPlan();
  }

  struct RunningBefore {
    RequestSpec spec;
    std::int32_t num_preemptions = 0;
    std::int32_t num_displacements = 0;
  };

  // True when `a` is a better preemption victim than `b` under the documented rule: lower
  // priority (larger number), then later arrival (then larger id, to break exact ties).
  static bool WorseThan(const RequestSpec& a, const RequestSpec& b) {
    if (a.priority != b.priority) {
      return a.priority > b.priority;
    }
    if (a.arrival_s != b.arrival_s) {
      return a.arrival_s > b.arrival_s;
    }
    return a.id > b.id;
  }

  // scheduler.h, step 3: each victim is "the running sequence with the lowest priority, then
  // the latest arrival". Nothing is admitted in a step that preempts, so every request that
  // was running before the Step and still runs after it was a candidate when each victim was
  // chosen: each victim must be worse than each survivor.
  // Step 4, priority scheduling: a request displaced to make room for a more urgent one
  // (num_displacements grew) was, for one request newly running after the step, of a less
  // urgent class and later in queue order, and was displaced at most max_displacements times.
  bool CheckVictims(const std::vector<RunningBefore>& running_before, const StepEvents& ev) {
    std::vector<RequestSpec> victims;
    std::vector<RequestSpec> survivors;
    std::vector<const Request*> displaced;
    std::set<RequestId> was_running;
    for (const RunningBefore& before : running_before) {
      was_running.insert(before.spec.id);
      const Request* now = sched_->Find(before.spec.id);
      if (now == nullptr) {
        for (const Request& f : ev.finished) {
          if (f.spec.id == before.spec.id && f.num_preemptions > before.num_preemptions) {
            if (f.num_displacements > before.num_displacements) {
              displaced.push_back(&f);
            } else {
              victims.push_back(f.spec);
            }
          }
        }
      } else if (now->num_displacements > before.num_displacements) {
        displaced.push_back(now);
      } else if (now->num_preemptions > before.num_preemptions) {
        victims.push_back(now->spec);
      } else if (now->state == RequestState::kRunning) {
        survivors.push_back(now->spec);
      }
    }
    for (const Request* v : displaced) {
      if (v->num_displacements > params_.config.max_displacements) {
        Fail("request ", v->spec.id, " displaced ", v->num_displacements, " times");
        return false;
      }
      bool by_more_urgent = false;
      for (const RequestId id : live_) {
        const Request* a = sched_->Find(id);
        by_more_urgent =
            by_more_urgent ||
            (a != nullptr && a->state == RequestState::kRunning && !was_running.count(id) &&
             a->spec.priority < v->spec.priority && a->queue_key < v->queue_key);
      }
      if (!by_more_urgent) {
        Fail("request ", v->spec.id, " displaced without a more urgent request taking a slot");
        return false;
      }
    }
    for (const RequestSpec& v : victims) {
      for (const RequestSpec& keep : survivors) {
        if (!WorseThan(v, keep)) {
          Fail("preempted request ", v.id, " (priority ", v.priority, ", arrival ", v.arrival_s,
               ") while request ", keep.id, " (priority ", keep.priority, ", arrival ",
               keep.arrival_s, ") kept running");
          return false;
        }
      }
    }
    return true;
  }

  bool CheckPlan() {
    const StepPlan& plan = plan_copy_;
    const SchedulerConfig& c = params_.config;
    if (plan.num_tokens() > c.max_num_batched_tokens) {
      Fail("plan has ", plan.num_tokens(), " tokens > budget");
      return false;
    }
    if (plan.seqs.size() > static_cast<std::size_t>(c.max_num_seqs)) {
      Fail("plan has ", plan.seqs.size(), " seqs > max_num_seqs");
      return false;
    }
    std::set<RequestId> seen;
    std::int64_t prefill = 0;
    std::int64_t decode = 0;
    for (const ScheduledSeq& s : plan.seqs) {
      if (!seen.insert(s.id).second) {
        Fail("request ", s.id, " planned twice in one step");
        return false;
      }
      const Request* r = sched_->Find(s.id);
      if (r == nullptr || r->state != RequestState::kRunning) {
        Fail("planned request ", s.id, " is not running");
        return false;
      }
      if (s.num_new_tokens < 1 || s.num_context_tokens != r->num_computed_tokens ||
          s.num_context_tokens + s.num_new_tokens > r->num_tokens()) {
        Fail("planned request ", s.id, " has bad token counts");
        return false;
      }
      if (s.samples_token != (s.num_context_tokens + s.num_new_tokens == r->num_tokens())) {
        Fail("planned request ", s.id, " samples_token is wrong");
        return false;
      }
      if (s.is_decode && (s.num_new_tokens != 1 || r->num_output_tokens == 0)) {
        Fail("planned request ", s.id, " is a bad decode");
        return false;
      }
      // Without chunking a prefill runs whole, from the start or from its cached prefix.
      if (!s.is_decode && !c.enable_chunked_prefill &&
          (s.num_context_tokens != r->num_cached_tokens || !s.samples_token)) {
        Fail("planned request ", s.id, " is a partial prefill without chunking");
        return false;
      }
      if (r->blocks.size() <
          static_cast<std::size_t>(blocks_->BlocksFor(s.num_context_tokens + s.num_new_tokens))) {
        Fail("planned request ", s.id, " lacks KV blocks for its step");
        return false;
      }
      if (!planned_ever_.count(s.id)) {
        planned_ever_.insert(s.id);
        if (r->first_scheduled_s != now_) {
          Fail("first_scheduled_s of ", s.id, " is not its first step's time");
          return false;
        }
        if (now_ > r->spec.deadline_s) {
          Fail("request ", s.id, " first scheduled after its queue deadline");
          return false;
        }
      }
      (s.is_decode ? decode : prefill) += s.num_new_tokens;
    }
    if (prefill != plan.num_prefill_tokens || decode != plan.num_decode_tokens) {
      Fail("plan token totals disagree with its sequences");
      return false;
    }
    return true;
  }

  bool DoStepDone() {
    StepResult result;
    result.duration_s = rng_.Uniform(0.01, 0.1);
    std::map<RequestId, bool> samples;
    for (const ScheduledSeq& s : plan_copy_.seqs) {
      samples[s.id] = s.samples_token;
      if (s.samples_token) {
        result.token_ids.push_back(static_cast<std::int32_t>(rng_.UniformInt(0, 32000)));
      }
    }
    now_ += result.duration_s;
    StepEvents ev;
    sched_->OnStepDone(result, now_, &ev);
    std::size_t k = 0;
    for (const TokenEvent& t : ev.tokens) {
      const auto it = samples.find(t.id);
      if (it == samples.end() || !it->second) {
        Fail("token for request ", t.id, " that did not sample this step");
        return false;
      }
      if (t.token_id != result.token_ids[k++]) {
        Fail("token id of ", t.id, " is not the executor's, in plan order");
        return false;
      }
      if (t.index != outputs_[t.id]) {
        Fail("token index ", t.index, " of ", t.id, " != ", outputs_[t.id]);
        return false;
      }
      if (++outputs_[t.id] > specs_[t.id].max_output_tokens) {
        Fail("request ", t.id, " got more than max_output_tokens tokens");
        return false;
      }
    }
    if (k != result.token_ids.size()) {
      Fail("sampled tokens were lost");
      return false;
    }
    for (const Request& r : ev.finished) {
      if (!OnFinished(r, /*in_step_done=*/true)) {
        return false;
      }
    }
    return CheckInvariants("after OnStepDone");
  }

  std::string CheckDrained() {
    if (!sched_->idle() || !live_.empty()) {
      return Fail("engine did not drain: ", live_.size(), " live requests");
    }
    if (done_.size() != specs_.size()) {
      return Fail(done_.size(), " of ", specs_.size(), " requests finished");
    }
    if (blocks_->num_free() != blocks_->num_total()) {
      return Fail("idle engine holds ", blocks_->num_allocated(), " blocks");
    }
    const EngineStats s = sched_->stats();
    if (s.waiting_prompt_tokens != 0 || s.prefill_backlog_tokens != 0 || s.kv_usage != 0) {
      return Fail("idle engine reports backlog or KV usage");
    }
    if (s.num_preemptions_total != preemptions_sum_ ||
        s.num_recomputed_tokens_total != recomputed_sum_) {
      return Fail("preemption totals (", s.num_preemptions_total, ", ",
                  s.num_recomputed_tokens_total, ") != sums over requests (", preemptions_sum_,
                  ", ", recomputed_sum_, ")");
    }
    std::string err;
    if (!sched_->CheckInvariants(&err)) {
      return Fail("CheckInvariants on the idle engine: ", err);
    }
    return "";
  }

  Rng rng_;
  Params params_;
  bool check_victims_ = false;
  Rng prefix_rng_;
  std::vector<std::shared_ptr<const PromptSegments>> shared_segments_;
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<Scheduler> sched_;
  Seconds now_ = 0;
  int step_ = 0;
  double abort_prob_ = 0;
  RequestId next_id_ = 1;
  StepPlan plan_copy_;
  std::map<RequestId, RequestSpec> specs_;
  std::set<RequestId> live_;
  std::set<RequestId> done_;
  std::set<RequestId> planned_ever_;
  std::map<RequestId, FinishReason> finish_requested_;
  std::map<RequestId, std::int32_t> outputs_;
  std::map<FinishReason, std::int64_t> reasons_;
  std::int64_t preemptions_sum_ = 0;
  std::int64_t recomputed_sum_ = 0;
  std::string error_;
};

TEST(SchedulerPropertyTest, RandomScenariosKeepInvariantsAndDrainWithEveryRequestFinishedOnce) {
  std::int64_t total_preemptions = 0;
  std::int64_t total_steps = 0;
  std::size_t total_requests = 0;
  int seeds_with_preemption = 0;
  int seeds_with_prefix_hits = 0;
  std::map<FinishReason, std::int64_t> reasons;
  for (std::uint64_t seed = 1; seed <= kNumSeeds; ++seed) {
    Scenario scenario(seed);
    const std::string err = scenario.Run();
    ASSERT_TRUE(err.empty()) << "seed " << seed << ": " << err;
    total_preemptions += scenario.num_preemptions();
    total_requests += scenario.num_submitted();
    total_steps += scenario.num_steps();
    seeds_with_preemption += scenario.num_preemptions() > 0 ? 1 : 0;
    seeds_with_prefix_hits += scenario.prefix_cache_hits() > 0 ? 1 : 0;
    for (const auto& [reason, n] : scenario.reasons()) {
      reasons[reason] += n;
    }
  }
  std::ostringstream summary;
  summary << kNumSeeds << " seeds, " << total_steps << " steps, " << total_requests << " requests, "
          << total_preemptions << " preemptions, " << seeds_with_prefix_hits
          << " seeds with prefix-cache hits;";
  for (const auto& [reason, n] : reasons) {
    summary << " " << ToString(reason) << "=" << n;
  }
  std::cout << "[ summary  ] " << summary.str() << "\n";
  // The scenarios are meant to exercise every path; make sure they do.
  EXPECT_GT(seeds_with_preemption, static_cast<int>(kNumSeeds / 4)) << summary.str();
  EXPECT_GT(seeds_with_prefix_hits, static_cast<int>(kNumSeeds / 4)) << summary.str();
  EXPECT_GT(total_requests, kNumSeeds * 10) << summary.str();
  for (const FinishReason r :
       {FinishReason::kLength, FinishReason::kAbort, FinishReason::kStop, FinishReason::kDeadline,
        FinishReason::kRejected, FinishReason::kPreemptionLimit}) {
    EXPECT_GT(reasons[r], 0) << "no request finished with " << ToString(r) << "; " << summary.str();
  }
}

// Regression test for the victim rule in random scenarios. Commit 3a5a970's scheduler chose the
// victim only among the requester and the running requests after it, not among all running
// requests as scheduler.h (and vLLM's rule) says; it failed this test on 271 of 300 seeds. The
// deterministic reproduction is
// SchedulerPreemptionTest.VictimIsLowestPriorityEvenIfAlreadyScheduledThisStep.
TEST(SchedulerPropertyTest, PreemptionVictimIsAlwaysWorseThanEverySurvivor) {
  int failing_seeds = 0;
  std::string first_failure;
  for (std::uint64_t seed = 1; seed <= kNumSeeds; ++seed) {
    Scenario scenario(seed, /*check_victims=*/true);
    const std::string err = scenario.Run();
    if (!err.empty()) {
      if (failing_seeds++ == 0) {
        first_failure = "seed " + std::to_string(seed) + ": " + err;
      }
    }
  }
  EXPECT_EQ(failing_seeds, 0) << failing_seeds << " of " << kNumSeeds
                              << " seeds violate the victim rule; first: " << first_failure;
}

}  // namespace
}  // namespace spillway
