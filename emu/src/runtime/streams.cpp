// Asynchronous streams (see streams.h): queued operations, the order in which they run, and the
// check that what two unordered operations do to the same bytes cannot depend on their order.
#include "runtime/streams.h"

#include <cxxabi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <unordered_map>

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "exec/machine.h"
#include "exec/sanitizer.h"

namespace emu::runtime {
std::recursive_mutex& api_lock();
cudaError_t sticky_error();
void set_sticky(cudaError_t e);
}  // namespace emu::runtime

namespace emu::streams {

// ---------------------------------------------------------------------------------------------
// Footprints
Footprint* g_recording = nullptr;

namespace {
constexpr size_t kMaxRanges = 1u << 16;  // per class; past it, ranges are widened (coarsen)
}

void Footprint::add(uint64_t lo, uint64_t hi, int cls) {
  if (hi <= lo) return;
  if (grain_ > 1) {
    lo = lo / grain_ * grain_;
    hi = (hi + grain_ - 1) / grain_ * grain_;
  }
  auto& m = r_[cls];
  auto it = m.upper_bound(lo);
  if (it != m.begin()) {
    auto p = std::prev(it);
    if (p->second >= lo && (it == m.end() || it->first > hi)) {  // inside or extending one range
      p->second = std::max(p->second, hi);
      have_last_[cls] = true;
      last_[cls] = p;
      last_lo_[cls] = p->first;
      last_hi_[cls] = p->second;
      next_lo_[cls] = it == m.end() ? ~uint64_t(0) : it->first;
      return;
    }
    if (p->second >= lo) {
      lo = p->first;
      hi = std::max(hi, p->second);
      it = m.erase(p);
    }
  }
  while (it != m.end() && it->first <= hi) {
    hi = std::max(hi, it->second);
    it = m.erase(it);
  }
  have_last_[cls] = true;
  last_[cls] = m.emplace_hint(it, lo, hi);
  last_lo_[cls] = lo;
  last_hi_[cls] = hi;
  next_lo_[cls] = it == m.end() ? ~uint64_t(0) : it->first;
  if (m.size() > kMaxRanges) coarsen(cls);
}

// Too many separate ranges (a scattered access pattern): widen every range to a coarser grain,
// which can only add conflicts, never hide one.
void Footprint::coarsen(int) {
  grain_ *= 64;
  for (int c = 0; c < kClasses; ++c) {
    std::map<uint64_t, uint64_t> old;
    old.swap(r_[c]);
    have_last_[c] = false;
    for (const auto& [lo, hi] : old) add(lo, hi, c);
  }
}

void Footprint::merge(const Footprint& o) {
  for (int c = 0; c < kClasses; ++c)
    for (const auto& [lo, hi] : o.r_[c]) add(lo, hi, c);
}

bool Footprint::empty() const {
  for (const auto& m : r_)
    if (!m.empty()) return false;
  return true;
}

namespace {
// The first overlap of two sorted, disjoint range lists.
bool overlap(const std::map<uint64_t, uint64_t>& a, const std::map<uint64_t, uint64_t>& b, uint64_t* lo,
             uint64_t* hi) {
  auto i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end()) {
    const uint64_t l = std::max(i->first, j->first), h = std::min(i->second, j->second);
    if (l < h) {
      *lo = l;
      *hi = h;
      return true;
    }
    if (i->second <= j->second) ++i;
    else ++j;
  }
  return false;
}
}  // namespace

bool Footprint::conflict(const Footprint& o, uint64_t* lo, uint64_t* hi, int* mine, int* theirs) const {
  // A write conflicts with any access, unless both are strong.
  static const int pairs[][2] = {{kWr, kRd},       {kWr, kWr},       {kWr, kStrongRd}, {kWr, kStrongWr},
                                 {kRd, kWr},       {kStrongRd, kWr}, {kStrongWr, kWr}, {kStrongWr, kRd},
                                 {kRd, kStrongWr}};
  for (const auto& p : pairs)
    if (overlap(r_[p[0]], o.r_[p[1]], lo, hi)) {
      *mine = p[0];
      *theirs = p[1];
      return true;
    }
  return false;
}

static_assert(san::kRead == 1u && san::kWrite == 2u && san::kStrong == (1u << 24),
              "note_access (streams.h) reads the sanitizer's access bits");

bool checking() { return san::g_checks & san::kRace; }

// ---------------------------------------------------------------------------------------------
// Streams and operations
namespace {
using VC = std::vector<uint64_t>;  // per stream index: the last operation (its seq) ordered before

void join(VC& a, const VC& b) {
  if (a.size() < b.size()) a.resize(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i) a[i] = std::max(a[i], b[i]);
}
inline uint64_t at(const VC& v, size_t i) { return i < v.size() ? v[i] : 0; }

struct Queued {
  uint64_t id = 0;
  Stream* stream = nullptr;
  uint64_t seq = 0;                 // its place in its stream (1, 2, ...)
  VC vc;                            // what is ordered before it, itself included
  std::vector<uint64_t> preds;      // operations that must run first (not yet run when issued)
  Op op;
};

struct Record {  // one cudaEventRecord
  uint64_t op = 0;                  // the operation that completes it
  bool done = false;
  double ms = 0;
  VC vc;
};

}  // namespace

struct Stream {
  size_t index = 0;
  unsigned flags = 0;
  bool blocking = true;             // synchronizes with the legacy default stream
  bool is_legacy = false, destroyed = false;
  std::string name;
  std::deque<std::unique_ptr<Queued>> queue;
  uint64_t seq = 0;                 // operations issued
  uint64_t last_id = 0;             // the last operation issued (0: none)
  VC last_vc;
};

namespace {

struct Done {  // an operation that ran, kept while a later unordered one may still conflict
  uint64_t id;
  size_t stream;
  uint64_t seq;
  std::string what;
  Footprint fp;
};

struct State {
  std::vector<std::unique_ptr<Stream>> streams;  // index 0: the legacy default stream
  std::unordered_map<uint64_t, Queued*> pending;
  std::unordered_map<const void*, std::shared_ptr<Record>> events;    // latest record of each
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<Record>>> completes;  // op -> records
  std::vector<Done> history;
  size_t history_pruned_at = 64;
  uint64_t next_id = 1;
  size_t per_thread_count = 0, created = 0;
  VC host;                          // what the host has waited for
  std::mt19937_64 rng;
  bool random = false;
  std::set<std::string> reported;
  State() {
    auto s = std::make_unique<Stream>();
    s->is_legacy = true;
    s->name = "the legacy default stream";
    streams.push_back(std::move(s));
    random = device_config().random_schedule;
    rng.seed(device_config().schedule_seed * 0x9E3779B97F4A7C15ull + 17);
  }
};
State& S() {
  static State s;
  return s;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

const char* class_verb(int cls) {
  switch (cls) {
    case kRd: return "reads";
    case kWr: return "writes";
    case kStrongRd: return "reads (strong)";
    default: return "writes (atomic or strong)";
  }
}

std::string where(uint64_t lo) {
  const Allocation* a = memory().find(lo, 1);
  if (!a) return "host memory";
  return std::to_string(lo - a->base) + " bytes into " + a->what + " of " + std::to_string(a->bytes) +
         " bytes at " + hex(a->base);
}

// One line per pair of operations (by what they are), then the program fails as on a race.
void report(const std::string& first, int first_cls, const std::string& second, int second_cls,
            uint64_t lo, uint64_t hi, const std::string& why) {
  const std::string key = first + "\n" + second;
  if (!S().reported.insert(key).second) return;
  std::fprintf(stderr,
               "gpu100 emulator: unordered stream work on the same memory: %s %s %llu bytes at %s (%s), and "
               "%s %s them; %s\n",
               first.c_str(), class_verb(first_cls), (unsigned long long)(hi - lo), hex(lo).c_str(),
               where(lo).c_str(), second.c_str(), class_verb(second_cls), why.c_str());
  runtime::set_sticky(cudaErrorLaunchFailure);
}

const char* kWhyStreams =
    "nothing orders the two (no event wait, stream or device synchronization, or legacy default stream "
    "ordering between them), so on a GPU they may run in either order or at once";

bool ordered_before(const Done& a, const VC& b) { return at(b, a.stream) >= a.seq; }

void prune() {
  State& s = S();
  if (s.history.size() < s.history_pruned_at) return;
  // An operation the host waited for, and that every queued operation is ordered after, cannot
  // conflict with anything still to run.
  auto settled = [&](const Done& d) {
    if (!ordered_before(d, s.host)) return false;
    for (const auto& [id, q] : s.pending)
      if (!ordered_before(d, q->vc)) return false;
    return true;
  };
  s.history.erase(std::remove_if(s.history.begin(), s.history.end(), settled), s.history.end());
  s.history_pruned_at = std::max<size_t>(64, 2 * s.history.size());
}

void check_against_history(const Queued& q) {
  if (!checking() || q.op.footprint.empty()) return;
  for (const Done& d : S().history) {
    if (ordered_before(d, q.vc)) continue;
    uint64_t lo, hi;
    int a, b;
    if (d.fp.conflict(q.op.footprint, &lo, &hi, &a, &b))
      report(d.what, a, q.op.what + " in " + q.stream->name, b, lo, hi, kWhyStreams);
  }
}

// ---------------------------------------------------------------------------------------------
// Pinned host memory that queued work writes (or reads): its pages are protected until the work
// has run, so that host code touching it first faults, is reported, and goes on (the page is
// opened; the program fails at its next runtime call, as on a race). Page by page: an access to
// other bytes of a guarded page opens the page without a report.
struct Guard {
  uint64_t lo, hi;
  bool write;          // the queued operation writes the bytes (else reads them)
  uint64_t op;
  std::string text;    // what and where, for the report
};
struct Guards {
  std::multimap<uint64_t, Guard> by_page;  // page -> the guards on it
  std::set<uint64_t> open;                 // pages opened by a fault until their work runs
  bool installed = false, suspended = false;
  struct sigaction previous {};
};
Guards& GD() {
  static Guards g;
  return g;
}
constexpr uint64_t kPage = 4096;

int protection(uint64_t page) {
  Guards& g = GD();
  int prot = PROT_READ | PROT_WRITE;
  if (!g.suspended && !g.open.count(page)) {
    auto [b, e] = g.by_page.equal_range(page);
    for (auto it = b; it != e; ++it) prot = it->second.write ? PROT_NONE : prot == PROT_NONE ? PROT_NONE : PROT_READ;
  }
  return prot;
}
// Sets the protection of each page (sorted, unique), one call per run of pages that get the same.
void protect_pages(const std::vector<uint64_t>& pages) {
  size_t i = 0;
  while (i < pages.size()) {
    const int prot = protection(pages[i]);
    size_t j = i + 1;
    while (j < pages.size() && pages[j] == pages[j - 1] + kPage && protection(pages[j]) == prot) ++j;
    mprotect(reinterpret_cast<void*>(pages[i]), (j - i) * kPage, prot);
    i = j;
  }
}

void on_fault(int sig, siginfo_t* info, void* ctx) {
  Guards& g = GD();
  const uint64_t a = reinterpret_cast<uint64_t>(info->si_addr), page = a / kPage * kPage;
  if (!g.by_page.count(page) || g.suspended) {  // not ours: the previous disposition
    sigaction(SIGSEGV, &g.previous, nullptr);
    if (g.previous.sa_flags & SA_SIGINFO && g.previous.sa_sigaction) g.previous.sa_sigaction(sig, info, ctx);
    else if (g.previous.sa_handler != SIG_DFL && g.previous.sa_handler != SIG_IGN) g.previous.sa_handler(sig);
    return;  // SIG_DFL: the access faults again and the program dies as it would have
  }
  bool host_writes = true;
#if defined(__x86_64__)
  host_writes = (static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
  auto [b, e] = g.by_page.equal_range(page);
  for (auto it = b; it != e; ++it) {
    const Guard& gd = it->second;
    if (a < gd.lo || a >= gd.hi || (!gd.write && !host_writes)) continue;
    char buf[1024];
    const int n = std::snprintf(buf, sizeof buf,
                                "gpu100 emulator: the host %s pinned host memory at 0x%llx that %s, queued and not yet run, "
                                "%s: synchronize with its stream (or an event recorded after it) first, as on a GPU the "
                                "work may run at any time before that\n",
                                host_writes ? "writes" : "reads", (unsigned long long)a, gd.text.c_str(),
                                gd.write ? "writes" : "reads");
    if (n > 0) (void)!write(2, buf, size_t(std::min(n, int(sizeof buf) - 1)));
    runtime::set_sticky(cudaErrorLaunchFailure);
    break;
  }
  g.open.insert(page);
  mprotect(reinterpret_cast<void*>(page), kPage, PROT_READ | PROT_WRITE);
}

void guard(const Queued& q) {
  if (q.op.pinned_writes.empty() && q.op.pinned_reads.empty()) return;
  Guards& g = GD();
  if (!g.installed) {
    g.installed = true;
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g.previous);
  }
  const std::string text = q.op.what + " in " + q.stream->name;
  std::set<uint64_t> pages;
  auto add = [&](const std::pair<uint64_t, uint64_t>& r, bool write) {
    for (uint64_t p = r.first / kPage * kPage; p < r.second; p += kPage) {
      g.by_page.emplace(p, Guard{r.first, r.second, write, q.id, text});
      pages.insert(p);
    }
  };
  for (const auto& r : q.op.pinned_writes) add(r, true);
  for (const auto& r : q.op.pinned_reads) add(r, false);
  protect_pages(std::vector<uint64_t>(pages.begin(), pages.end()));
}
void unguard(uint64_t op) {
  Guards& g = GD();
  if (g.by_page.empty()) return;
  std::set<uint64_t> pages;
  for (auto it = g.by_page.begin(); it != g.by_page.end();) {
    if (it->second.op == op) {
      pages.insert(it->first);
      it = g.by_page.erase(it);
    } else {
      ++it;
    }
  }
  for (uint64_t p : pages)
    if (!g.by_page.count(p)) g.open.erase(p);
  protect_pages(std::vector<uint64_t>(pages.begin(), pages.end()));
}
// While queued work runs, it may touch any guarded page (a copy out of a page a later copy writes).
void suspend_guards(bool on) {
  Guards& g = GD();
  if (g.by_page.empty() || g.suspended == on) return;
  g.suspended = on;
  std::vector<uint64_t> pages;
  for (const auto& [p, gd] : g.by_page)
    if (pages.empty() || pages.back() != p) pages.push_back(p);
  protect_pages(pages);
}

bool ready(const Queued& q) {
  for (uint64_t p : q.preds)
    if (S().pending.count(p)) return false;
  return true;
}

// Runs one queued operation that is ready: the earliest issued, or a random one.
// Returns the error the operation returned.
cudaError_t run_one(bool* ran) {
  State& s = S();
  *ran = false;
  std::vector<Stream*> heads;
  for (auto& st : s.streams)
    if (!st->queue.empty() && ready(*st->queue.front())) heads.push_back(st.get());
  if (heads.empty()) return cudaSuccess;
  Stream* chosen = heads.front();
  if (s.random) {
    chosen = heads[size_t(s.rng() % heads.size())];
  } else {
    for (Stream* h : heads)
      if (h->queue.front()->id < chosen->queue.front()->id) chosen = h;
  }
  std::unique_ptr<Queued> q = std::move(chosen->queue.front());
  chosen->queue.pop_front();
  *ran = true;
  cudaError_t e = cudaSuccess;
  unguard(q->id);
  if (runtime::sticky_error() == cudaSuccess) {
    Footprint* saved = g_recording;
    g_recording = checking() ? &q->op.footprint : nullptr;
    suspend_guards(true);
    e = q->op.run(q->op);
    suspend_guards(false);
    g_recording = saved;
  }
  s.pending.erase(q->id);
  if (auto it = s.completes.find(q->id); it != s.completes.end()) {
    const double t = now_ms();
    for (auto& r : it->second) {
      r->done = true;
      r->ms = t;
    }
    s.completes.erase(it);
  }
  if (runtime::sticky_error() == cudaSuccess) check_against_history(*q);
  if (checking() && !q->op.footprint.empty())
    s.history.push_back(Done{q->id, q->stream->index, q->seq, q->op.what + " in " + q->stream->name,
                             std::move(q->op.footprint)});
  prune();
  return e;
}

// Runs queued work until `done()` holds; the first error of the work run.
template <class Pred>
cudaError_t run_until(Pred done) {
  cudaError_t first = cudaSuccess;
  while (!done()) {
    bool ran = false;
    cudaError_t e = run_one(&ran);
    if (e != cudaSuccess && first == cudaSuccess) first = e;
    if (!ran) break;  // nothing ready: cannot happen (every wait names earlier work)
  }
  // A fault stops the device: the work still queued never runs.
  if (runtime::sticky_error() != cudaSuccess) {
    for (auto& st : S().streams) st->queue.clear();
    S().pending.clear();
    S().completes.clear();
    for (auto it = GD().by_page.begin(); it != GD().by_page.end(); it = GD().by_page.begin()) unguard(it->second.op);
  }
  return first != cudaSuccess ? first : runtime::sticky_error();
}

void forget_destroyed() {
  auto& v = S().streams;
  // Destroyed streams stay until their work has run (their index keeps its meaning in clocks).
  (void)v;
}

std::string demangled(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

}  // namespace

Stream* legacy() { return S().streams[0].get(); }

Stream* per_thread() {
  thread_local Stream* mine = nullptr;
  if (!mine) {
    State& s = S();
    auto st = std::make_unique<Stream>();
    st->index = s.streams.size();
    st->name = "the per-thread default stream of host thread " + std::to_string(++s.per_thread_count);
    mine = st.get();
    s.streams.push_back(std::move(st));
  }
  return mine;
}

Stream* create(unsigned flags) {
  State& s = S();
  auto st = std::make_unique<Stream>();
  st->index = s.streams.size();
  st->flags = flags;
  st->blocking = !(flags & cudaStreamNonBlocking);
  st->name = "stream " + std::to_string(++s.created) + (st->blocking ? "" : " (non-blocking)");
  Stream* p = st.get();
  s.streams.push_back(std::move(st));
  return p;
}

void destroy(Stream* s) {
  if (s && !s->is_legacy) s->destroyed = true;
  forget_destroyed();
}

cudaError_t enqueue(Stream* st, Op op, uint64_t* id_out) {
  State& s = S();
  auto q = std::make_unique<Queued>();
  q->id = s.next_id++;
  q->stream = st;
  q->vc = s.host;
  auto after = [&](uint64_t id, const VC& vc) {
    join(q->vc, vc);
    if (id && s.pending.count(id)) q->preds.push_back(id);
  };
  after(st->last_id, st->last_vc);
  // The legacy default stream waits for the blocking streams' earlier work, and they wait for it.
  if (st->is_legacy) {
    for (auto& o : s.streams)
      if (o.get() != st && o->blocking) after(o->last_id, o->last_vc);
  } else if (st->blocking) {
    after(s.streams[0]->last_id, s.streams[0]->last_vc);
  }
  for (const void* e : op.waits) {
    auto it = s.events.find(e);
    if (it == s.events.end()) continue;  // never recorded: the wait is satisfied
    after(it->second->done ? 0 : it->second->op, it->second->vc);
  }
  q->seq = ++st->seq;
  if (q->vc.size() <= st->index) q->vc.resize(st->index + 1, 0);
  q->vc[st->index] = q->seq;
  st->last_id = q->id;
  st->last_vc = q->vc;
  for (const void* e : op.records) {
    auto r = std::make_shared<Record>();
    r->op = q->id;
    r->vc = q->vc;
    s.events[e] = r;
    s.completes[q->id].push_back(r);
  }
  const bool host_sync = op.host_sync;
  q->op = std::move(op);
  const uint64_t id = q->id;
  if (id_out) *id_out = id;
  s.pending[id] = q.get();
  if (!host_sync && checking()) guard(*q);
  st->queue.push_back(std::move(q));
  if (host_sync) {
    const VC vc = st->last_vc;
    cudaError_t e = run_until([&] { return !s.pending.count(id); });
    join(s.host, vc);
    return e;
  }
  // A bound on the queue: past it, the oldest work runs now.
  if (s.pending.size() > 65536) {
    const uint64_t oldest = id - 32768;
    return run_until([&] { return std::none_of(s.pending.begin(), s.pending.end(),
                                               [&](const auto& p) { return p.first <= oldest; }); });
  }
  return cudaSuccess;
}

cudaError_t sync_stream(Stream* st) {
  if (st->is_legacy) {  // waits for the blocking streams too: a marker in the legacy stream
    Op marker;
    marker.what = "cudaStreamSynchronize";
    marker.run = [](Op&) { return cudaSuccess; };
    marker.host_sync = true;
    return enqueue(st, std::move(marker));
  }
  const uint64_t last = st->last_id;
  const VC vc = st->last_vc;
  cudaError_t e = run_until([&] { return !S().pending.count(last); });
  join(S().host, vc);
  return e;
}

cudaError_t sync_all() {
  State& s = S();
  cudaError_t e = run_until([&] { return s.pending.empty(); });
  for (auto& st : s.streams) join(s.host, st->last_vc);
  return e;
}

cudaError_t sync_event(const void* event) {
  State& s = S();
  auto it = s.events.find(event);
  if (it == s.events.end()) return runtime::sticky_error();
  std::shared_ptr<Record> r = it->second;
  cudaError_t e = run_until([&] { return r->done; });
  join(s.host, r->vc);
  return e;
}

cudaError_t query_stream(Stream* st) { return sync_stream(st); }
cudaError_t query_event(const void* event) { return sync_event(event); }

cudaError_t record(const void* event, Stream* st) {
  Op op;
  op.what = "cudaEventRecord";
  op.run = [](Op&) { return cudaSuccess; };
  op.records.push_back(event);
  return enqueue(st, std::move(op));
}

cudaError_t wait(Stream* st, const void* event) {
  Op op;
  op.what = "cudaStreamWaitEvent";
  op.run = [](Op&) { return cudaSuccess; };
  op.waits.push_back(event);
  return enqueue(st, std::move(op));
}

bool event_time(const void* event, double* ms) {
  State& s = S();
  auto it = s.events.find(event);
  if (it == s.events.end()) return false;
  std::shared_ptr<Record> r = it->second;
  run_until([&] { return r->done; });  // timing only: the host is not ordered after it
  if (!r->done) return false;
  *ms = r->ms;
  return true;
}

void forget_event(const void* event) { S().events.erase(event); }

void check_graph(const std::vector<std::string>& what, const std::vector<Footprint>& fp,
                 const std::vector<std::vector<bool>>& reach, const std::string& launch) {
  if (!checking()) return;
  for (size_t i = 0; i < fp.size(); ++i)
    for (size_t j = i + 1; j < fp.size(); ++j) {
      if (reach[i][j] || reach[j][i]) continue;
      uint64_t lo, hi;
      int a, b;
      if (fp[i].conflict(fp[j], &lo, &hi, &a, &b))
        report(what[i] + " (graph node " + std::to_string(i + 1) + ")", a,
               what[j] + " (graph node " + std::to_string(j + 1) + ") of the same " + launch, b, lo, hi,
               "no path of graph edges orders the two nodes, so on a GPU they may run in either order or at once");
    }
}

size_t pick(size_t n) {
  if (n <= 1 || !S().random) return 0;
  return size_t(S().rng() % n);
}

// The name of a kernel for the reports: demangled, with its launch number.
std::string kernel_label(const std::string& mangled, uint64_t launch) {
  return "kernel " + demangled(mangled) + " (launch " + std::to_string(launch) + ")";
}

}  // namespace emu::streams
