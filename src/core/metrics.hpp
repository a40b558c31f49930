// core/metrics.hpp — counters and histograms for GET /metrics (the Prometheus text format).
//
// A family is defined where it is counted, as a static of that module (like the log facade,
// one process-wide registry: app/ renders it). Counting is cheap on every path: each
// thread adds to a shard of its own (its own cache lines: no lock, no line shared with
// another thread's counts, a relaxed add); a scrape sums the shards. The series of a
// family are fixed when it is made (their label values known up front: `result` is one of
// four words), or numbered by the caller with a function that names them (an HTTP method
// and status code); a series never counted is not shown, unless the family lists it.
//
// set_enabled(false) (metrics.enabled = false) turns every count into a load and a branch.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace posthorn::metrics {

bool enabled() noexcept;
void set_enabled(bool on) noexcept;

namespace detail {

// `n` counters per shard, each shard on cache lines of its own.
class ShardedCounts {
  public:
    explicit ShardedCounts(std::size_t n);
    void add(std::size_t i, std::uint64_t v) noexcept;
    std::uint64_t sum(std::size_t i) const noexcept;
    std::size_t size() const noexcept { return n_; }

  private:
    struct alignas(64) Line {
        std::atomic<std::uint64_t> v[8];
    };
    std::size_t n_;
    std::size_t lines_per_shard_;
    std::unique_ptr<Line[]> lines_;
};

}  // namespace detail

class Family {
  public:
    Family(std::string name, std::string help);
    virtual ~Family();
    Family(const Family&) = delete;
    Family& operator=(const Family&) = delete;
    // Appends the family (# HELP, # TYPE and its samples) to `out`.
    virtual void render(std::string& out) const = 0;
    const std::string& name() const noexcept { return name_; }

  protected:
    std::string name_;
    std::string help_;
};

// A counter family whose series are fixed, each named by its labels: Counter("x_total",
// "…", one_label("result", {"ok", "failed"})); inc(1) counts a "failed". Every series is
// shown, from 0. No series: the family is one counter.
class Counter final : public Family {
  public:
    Counter(std::string name, std::string help, std::vector<std::string> series = {});
    void inc(std::size_t series = 0, std::uint64_t n = 1) noexcept {
        if (enabled()) counts_.add(series, n);
    }
    std::uint64_t value(std::size_t series = 0) const noexcept { return counts_.sum(series); }
    void render(std::string& out) const override;

  private:
    std::vector<std::string> series_;
    detail::ShardedCounts counts_;
};

// The series of one label: {`name="v1"`, `name="v2"`, …}.
std::vector<std::string> one_label(std::string_view name,
                                   const std::vector<std::string_view>& values);

// A counter family of `size` series that the caller numbers; `labels(i)` names series i
// (`method="GET",code="200"`). Series at 0 are left out.
class NumberedCounter final : public Family {
  public:
    NumberedCounter(std::string name, std::string help, std::size_t size,
                    std::function<std::string(std::size_t)> labels);
    void inc(std::size_t series, std::uint64_t n = 1) noexcept {
        if (enabled() && series < counts_.size()) counts_.add(series, n);
    }
    std::uint64_t value(std::size_t series) const noexcept { return counts_.sum(series); }
    void render(std::string& out) const override;

  private:
    std::function<std::string(std::size_t)> labels_;
    detail::ShardedCounts counts_;
};

// A histogram of durations, in seconds, with fixed upper bounds.
class Histogram final : public Family {
  public:
    Histogram(std::string name, std::string help, std::vector<double> bounds_s);
    void observe(std::chrono::nanoseconds d) noexcept;
    std::uint64_t count() const noexcept;
    double sum_seconds() const noexcept;
    void render(std::string& out) const override;

  private:
    std::vector<std::int64_t> bounds_ns_;
    std::vector<double> bounds_s_;
    detail::ShardedCounts counts_;  // one per bucket, then +Inf, then the sum in ns
};

// Bounds for request-like durations: 0.5 ms to 10 s.
std::vector<double> latency_bounds();

// Every family made so far, in the order they were made, and samples added at scrape time
// (gauges read then: the queue, the process).
void render_all(std::string& out);

// Text-format helpers for the gauges of a scrape.
void append_header(std::string& out, std::string_view name, std::string_view help,
                   std::string_view type);
void append_sample(std::string& out, std::string_view name, std::string_view labels, double value);
// A label value with \, " and line feeds escaped.
std::string escape_label(std::string_view value);

}  // namespace posthorn::metrics
