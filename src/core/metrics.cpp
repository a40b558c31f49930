#include "core/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace posthorn::metrics {
namespace {

constexpr std::size_t kShards = 16;

std::atomic<bool> g_enabled{true};

// Each thread takes the next shard when it first counts; threads beyond kShards share.
std::size_t this_shard() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shard;
}

struct Registry {
    std::mutex mutex;
    std::vector<const Family*> families;
};

Registry& registry() {
    static Registry r;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
    return r;
}

std::string format_value(double v) {
    if (v == static_cast<double>(static_cast<std::int64_t>(v)) && v < 9.0e15 && v > -9.0e15)
        return fmt::format("{}", static_cast<std::int64_t>(v));
    return fmt::format("{}", v);
}

}  // namespace

bool enabled() noexcept { return g_enabled.load(std::memory_order_relaxed); }
void set_enabled(bool on) noexcept { g_enabled.store(on, std::memory_order_relaxed); }

namespace detail {

ShardedCounts::ShardedCounts(std::size_t n)
    : n_(n),
      lines_per_shard_((n + 7) / 8),
      lines_(std::make_unique<Line[]>(kShards * lines_per_shard_)) {
    for (std::size_t l = 0; l < kShards * lines_per_shard_; ++l)
        for (auto& v : lines_[l].v) v.store(0, std::memory_order_relaxed);
}

void ShardedCounts::add(std::size_t i, std::uint64_t v) noexcept {
    if (i >= n_) return;
    lines_[this_shard() * lines_per_shard_ + i / 8].v[i % 8].fetch_add(v,
                                                                       std::memory_order_relaxed);
}

std::uint64_t ShardedCounts::sum(std::size_t i) const noexcept {
    if (i >= n_) return 0;
    std::uint64_t total = 0;
    for (std::size_t s = 0; s < kShards; ++s)
        total += lines_[s * lines_per_shard_ + i / 8].v[i % 8].load(std::memory_order_relaxed);
    return total;
}

}  // namespace detail

Family::Family(std::string name, std::string help)
    : name_(std::move(name)), help_(std::move(help)) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.families.push_back(this);
}

Family::~Family() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    std::erase(r.families, this);
}

Counter::Counter(std::string name, std::string help, std::vector<std::string> series)
    : Family(std::move(name), std::move(help)),
      series_(std::move(series)),
      counts_(std::max<std::size_t>(1, series_.size())) {}

void Counter::render(std::string& out) const {
    append_header(out, name_, help_, "counter");
    if (series_.empty()) {
        append_sample(out, name_, "", static_cast<double>(counts_.sum(0)));
        return;
    }
    for (std::size_t i = 0; i < series_.size(); ++i)
        append_sample(out, name_, series_[i], static_cast<double>(counts_.sum(i)));
}

std::vector<std::string> one_label(std::string_view name,
                                   const std::vector<std::string_view>& values) {
    std::vector<std::string> series;
    series.reserve(values.size());
    for (auto v : values) series.push_back(fmt::format("{}=\"{}\"", name, escape_label(v)));
    return series;
}

NumberedCounter::NumberedCounter(std::string name, std::string help, std::size_t size,
                                 std::function<std::string(std::size_t)> labels)
    : Family(std::move(name), std::move(help)), labels_(std::move(labels)), counts_(size) {}

void NumberedCounter::render(std::string& out) const {
    append_header(out, name_, help_, "counter");
    for (std::size_t i = 0; i < counts_.size(); ++i)
        if (const auto n = counts_.sum(i); n > 0)
            append_sample(out, name_, labels_(i), static_cast<double>(n));
}

Histogram::Histogram(std::string name, std::string help, std::vector<double> bounds_s)
    : Family(std::move(name), std::move(help)),
      bounds_s_(std::move(bounds_s)),
      counts_(bounds_s_.size() + 2) {
    std::sort(bounds_s_.begin(), bounds_s_.end());
    for (double b : bounds_s_) bounds_ns_.push_back(static_cast<std::int64_t>(b * 1e9));
}

void Histogram::observe(std::chrono::nanoseconds d) noexcept {
    if (!enabled()) return;
    const auto ns = std::max<std::int64_t>(0, d.count());
    std::size_t b = 0;
    while (b < bounds_ns_.size() && ns > bounds_ns_[b]) ++b;
    counts_.add(b, 1);
    counts_.add(bounds_ns_.size() + 1, static_cast<std::uint64_t>(ns));
}

std::uint64_t Histogram::count() const noexcept {
    std::uint64_t n = 0;
    for (std::size_t b = 0; b <= bounds_ns_.size(); ++b) n += counts_.sum(b);
    return n;
}

double Histogram::sum_seconds() const noexcept {
    return static_cast<double>(counts_.sum(bounds_ns_.size() + 1)) / 1e9;
}

void Histogram::render(std::string& out) const {
    append_header(out, name_, help_, "histogram");
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < bounds_s_.size(); ++b) {
        cumulative += counts_.sum(b);
        append_sample(out, name_ + "_bucket", "le=\"" + format_value(bounds_s_[b]) + "\"",
                      static_cast<double>(cumulative));
    }
    cumulative += counts_.sum(bounds_s_.size());
    append_sample(out, name_ + "_bucket", "le=\"+Inf\"", static_cast<double>(cumulative));
    append_sample(out, name_ + "_sum", "", sum_seconds());
    append_sample(out, name_ + "_count", "", static_cast<double>(cumulative));
}

std::vector<double> latency_bounds() {
    return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

void render_all(std::string& out) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    for (const auto* f : r.families) f->render(out);
}

void append_header(std::string& out, std::string_view name, std::string_view help,
                   std::string_view type) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void append_sample(std::string& out, std::string_view name, std::string_view labels, double value) {
    out += name;
    if (!labels.empty()) {
        out += '{';
        out += labels;
        out += '}';
    }
    out += ' ';
    out += format_value(value);
    out += '\n';
}

std::string escape_label(std::string_view value) {
    std::string s;
    s.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            s += "\\\\";
        else if (c == '"')
            s += "\\\"";
        else if (c == '\n')
            s += "\\n";
        else
            s += c;
    }
    return s;
}

}  // namespace posthorn::metrics
