// The hook callbacks: the hot path (Note [Record buffers]). Each checks the session state, finds
// this thread's state and stores one entry, filled in place; pairing, interning and writing wait
// for the drain thread. Callbacks never throw, never block, and only read the data they are given.
#include "hook_callbacks.h"

#include "entries.h"
#include "npuscope/runtime_hooks/hook_api.h"
#include "session.h"

namespace npuscope::inject {
namespace {

using hooks::MarkerRecord;
using hooks::TaskRecord;
using hooks::TensorRecord;

// One hook call on a producer thread: this thread's state while the call stores its records, null
// when they are not to be stored (counted). See Note [Stopping without a grace period].
class HookCall {
 public:
  explicit HookCall(Session& s) noexcept : t_(s.enter_hook()) {}
  ~HookCall() {
    if (t_ != nullptr) Session::leave_hook(*t_);
  }
  HookCall(const HookCall&) = delete;
  HookCall& operator=(const HookCall&) = delete;
  ThreadState* thread() const noexcept { return t_; }

 private:
  ThreadState* const t_;
};

// Stores record `r` as its entry, filled in place (Note [Record buffers]).
template <class Record>
inline void store(ThreadBuffer& q, const Record& r) noexcept {
  using E = EntryOf<Record>;
  if (E* e = q.template begin_push<E>()) [[likely]] {
    e->r = r;
    q.template end_push<E>();
  }
}

// The callback of a record kind: most are stored as they come; the specializations below do more.
template <class Record>
void on_record(void* user, const Record& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  const HookCall call(s);
  if (ThreadState* t = call.thread()) [[likely]]
    store(t->queue, r);
}

void on_task_end(Session& s, ThreadState& t, const TaskRecord& r) noexcept {
  if (s.config().dump != DumpMode::kNone) {
    LaunchTable::Info info;
    if (!s.launches().get(r.task_id, &info)) [[unlikely]]
      s.count_launch_info_lost();
    t.capture.on_task_end(s.capture(), r, t.queue);
  }
  store(t.queue, r);
}

// Only kEnd is stored; kQueued feeds the launch table.
template <>
void on_record(void* user, const TaskRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  const HookCall call(s);
  ThreadState* t = call.thread();
  if (t == nullptr) [[unlikely]]
    return;
  switch (r.phase) {
    case hooks::TaskPhase::kQueued:  // on the launching thread, only when dumping: see Note [Launch table]
      s.launches().put(r.task_id, {s.launch_step(*t), r.name});
      return;
    case hooks::TaskPhase::kBegin: return;  // kEnd repeats everything kBegin says
    case hooks::TaskPhase::kEnd: return on_task_end(s, *t, r);
  }
}

// Steps are followed on the hot path for the dump filters.
template <>
void on_record(void* user, const MarkerRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  const HookCall call(s);
  ThreadState* t = call.thread();
  if (t == nullptr) [[unlikely]]
    return;
  if (r.kind == hooks::MarkerEvent::kStepBegin) {
    t->step = r.step;
    s.set_global_step(r.step);
  } else if (r.kind == hooks::MarkerEvent::kStepEnd) {
    t->step = -1;
    s.set_global_step(-1);
  }
  store(t->queue, r);
}

// Statistics and dumps are made on the producing thread.
template <>
void on_record(void* user, const TensorRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  const HookCall call(s);
  if (ThreadState* t = call.thread()) [[likely]]
    t->capture.on_tensor(s.capture(), r);
}

// A collective and its links: one entry each, so that the links need no memory of their own.
template <>
void on_record(void* user, const hooks::CollectiveRecord& r) noexcept {
  auto& s = *static_cast<Session*>(user);
  const HookCall call(s);
  ThreadState* t = call.thread();
  if (t == nullptr) [[unlikely]]
    return;
  using E = EntryOf<hooks::CollectiveRecord>;
  if (E* e = t->queue.begin_push<E>()) [[likely]] {
    e->r = r;
    e->r.links = nullptr;
    t->queue.end_push<E>();
  }
  for (std::uint32_t i = 0; i < r.num_links; ++i) {
    if (CommLinkEntry* e = t->queue.begin_push<CommLinkEntry>()) [[likely]] {
      e->task_id = r.task_id;
      e->r = r.links[i];
      t->queue.end_push<CommLinkEntry>();
    }
  }
}

void on_shutdown(void* user) noexcept { static_cast<Session*>(user)->shutdown(); }

}  // namespace

void fill_subscriber_table(hooks::SubscriberTable& table, Session& session) {
  table = hooks::SubscriberTable{};
  table.user = &session;
  table.wants_tensors = session.config().dump != DumpMode::kNone;
  table.wants_api_enter = false;   // the exit record carries the start: one record per call
  table.wants_task_begin = false;  // on_task ignores it: kEnd says it all
  table.wants_gradients = session.config().grad_probe;
  table.wants_op_checks = session.config().check_ops;
  table.wants_pipe_instructions = session.config().pipe_trace;
  table.kernels_keep_going = session.config().keep_going;
  // kQueued only feeds the dump filters (the step a task was launched in, Note [Launch table]).
  table.wants_task_queued = table.wants_tensors;
#define NPUSCOPE_ON_RECORD(Record, name, Kind, lost) table.on_##name = on_record<hooks::Record>;
  NPUSCOPE_HOOK_RECORDS(NPUSCOPE_ON_RECORD)  // Note [Record kinds] in hook_api.h
#undef NPUSCOPE_ON_RECORD
  table.on_shutdown = on_shutdown;
}

}  // namespace npuscope::inject
