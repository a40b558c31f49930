#include "core/metrics.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace posthorn::metrics {
namespace {

using namespace std::chrono_literals;

std::string rendered(const Family& f) {
    std::string out;
    f.render(out);
    return out;
}

TEST(Counter, SumsTheCountsOfEveryThread) {
    Counter c("t_sum_total", "Test.", one_label("result", {"ok", "failed"}));
    std::vector<std::thread> threads;
    for (int t = 0; t < 20; ++t)  // more threads than shards: some share one
        threads.emplace_back([&c, t] {
            for (int i = 0; i < 10'000; ++i) c.inc(t % 2 == 0 ? 0 : 1);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(c.value(0), 100'000u);
    EXPECT_EQ(c.value(1), 100'000u);
    EXPECT_EQ(rendered(c),
              "# HELP t_sum_total Test.\n# TYPE t_sum_total counter\n"
              "t_sum_total{result=\"ok\"} 100000\nt_sum_total{result=\"failed\"} 100000\n");
}

TEST(Counter, ShowsEverySeriesFromZeroAndIgnoresUnknownOnes) {
    Counter c("t_zero_total", "Test.", one_label("door", {"api", "smtp"}));
    c.inc(7);  // not a series
    EXPECT_EQ(rendered(c),
              "# HELP t_zero_total Test.\n# TYPE t_zero_total counter\n"
              "t_zero_total{door=\"api\"} 0\nt_zero_total{door=\"smtp\"} 0\n");
    Counter plain("t_plain_total", "Test.");
    plain.inc(0, 3);
    EXPECT_NE(rendered(plain).find("\nt_plain_total 3\n"), std::string::npos);
}

TEST(NumberedCounter, ShowsOnlyTheSeriesCounted) {
    NumberedCounter c("t_num_total", "Test.", 10,
                      [](std::size_t i) { return "n=\"" + std::to_string(i) + "\""; });
    c.inc(3);
    c.inc(3);
    c.inc(9);
    c.inc(10);  // out of range: dropped
    EXPECT_EQ(rendered(c),
              "# HELP t_num_total Test.\n# TYPE t_num_total counter\n"
              "t_num_total{n=\"3\"} 2\nt_num_total{n=\"9\"} 1\n");
}

TEST(Histogram, CountsEachDurationInItsBucketCumulatively) {
    Histogram h("t_seconds", "Test.", {0.001, 0.01, 0.1});
    h.observe(500us);
    h.observe(1ms);  // on a bound: in that bucket (le is ≤)
    h.observe(5ms);
    h.observe(2s);
    EXPECT_EQ(h.count(), 4u);
    EXPECT_DOUBLE_EQ(h.sum_seconds(), 2.0065);
    EXPECT_EQ(rendered(h),
              "# HELP t_seconds Test.\n# TYPE t_seconds histogram\n"
              "t_seconds_bucket{le=\"0.001\"} 2\nt_seconds_bucket{le=\"0.01\"} 3\n"
              "t_seconds_bucket{le=\"0.1\"} 3\nt_seconds_bucket{le=\"+Inf\"} 4\n"
              "t_seconds_sum 2.0065\nt_seconds_count 4\n");
}

TEST(Metrics, DisabledCountsNothing) {
    Counter c("t_off_total", "Test.");
    Histogram h("t_off_seconds", "Test.", latency_bounds());
    set_enabled(false);
    c.inc();
    h.observe(1ms);
    set_enabled(true);
    EXPECT_EQ(c.value(), 0u);
    EXPECT_EQ(h.count(), 0u);
    c.inc();
    EXPECT_EQ(c.value(), 1u);
}

TEST(Metrics, RenderAllHasEveryLiveFamilyOnce) {
    std::string before;
    render_all(before);
    {
        Counter c("t_live_total", "Live.");
        std::string during;
        render_all(during);
        EXPECT_NE(during.find("# TYPE t_live_total counter"), std::string::npos);
    }
    std::string after;
    render_all(after);
    EXPECT_EQ(after.find("t_live_total"), std::string::npos);
    EXPECT_EQ(after, before);
}

TEST(Metrics, LabelValuesAreEscaped) { EXPECT_EQ(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd"); }

}  // namespace
}  // namespace posthorn::metrics
