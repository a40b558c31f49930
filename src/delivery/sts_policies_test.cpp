#include "delivery/sts_policies.hpp"

#include <gtest/gtest.h>

#include "core/block_on.hpp"
#include "core/testing/manual_clock.hpp"
#include "dns/testing/static_resolver.hpp"

namespace posthorn::delivery {
namespace {

// A working policy server in memory: answers what it was given, and counts the fetches.
class FakeFetcher final : public PolicyFetcher {
  public:
    asio::awaitable<FetchResult> fetch(std::string host, std::uint16_t port,
                                       std::vector<asio::ip::address> addresses) override {
        ++fetches;
        last_host = host;
        last_port = port;
        last_addresses = std::move(addresses);
        co_return answer;
    }
    FetchResult answer;
    int fetches = 0;
    std::string last_host;
    std::uint16_t last_port = 0;
    std::vector<asio::ip::address> last_addresses;
};

FetchResult policy(const std::string& mode, int max_age) {
    return {.status = 200,
            .content_type = "text/plain; charset=utf-8",
            .body = "version: STSv1\r\nmode: " + mode +
                    "\r\nmx: *.example.net\r\nmax_age: " + std::to_string(max_age) + "\r\n"};
}

struct StsPoliciesTest : ::testing::Test {
    StsPoliciesTest() {
        dns.add_address("mta-sts.example.org", asio::ip::make_address("192.0.2.8"));
        fetcher.answer = policy("enforce", 3600);
    }
    std::optional<StsPolicy> ask(const std::string& domain = "example.org") {
        return block_on(policies.policy_for(domain));
    }
    dns::StaticResolver dns;
    FakeFetcher fetcher;
    core::testing::ManualClock clock{1'000'000};
    StsPolicies policies{dns, fetcher, clock, 8443};
};

TEST_F(StsPoliciesTest, NoRecordNoPolicyNoFetch) {
    EXPECT_FALSE(ask());
    EXPECT_EQ(fetcher.fetches, 0);
}

TEST_F(StsPoliciesTest, FetchesFromTheDomainsPolicyHostAndCachesById) {
    dns.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    auto p = ask();
    ASSERT_TRUE(p);
    EXPECT_EQ(p->mode, StsMode::enforce);
    EXPECT_EQ(fetcher.last_host, "mta-sts.example.org");
    EXPECT_EQ(fetcher.last_port, 8443);
    EXPECT_EQ(fetcher.last_addresses.size(), 1u);
    EXPECT_TRUE(ask());
    EXPECT_EQ(fetcher.fetches, 1);  // the same id: the cache answers
}

TEST_F(StsPoliciesTest, ANewIdFetchesAgain) {
    dns.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    ASSERT_TRUE(ask());
    dns::StaticResolver other;
    other.add_txt("_mta-sts.example.org", "v=STSv1; id=2;");
    other.add_address("mta-sts.example.org", asio::ip::make_address("192.0.2.8"));
    StsPolicies again{other, fetcher, clock, 443};
    // A fresh cache fetches; so does a changed id in the same cache (below).
    ASSERT_TRUE(block_on(again.policy_for("example.org")));
    EXPECT_EQ(fetcher.fetches, 2);
    fetcher.answer = policy("testing", 60);
    dns.add_failure("_mta-sts.example.org", dns::errc::servfail);
    EXPECT_EQ(ask()->mode, StsMode::enforce);  // the lookup failed: the cached one
    EXPECT_EQ(fetcher.fetches, 2);
}

TEST_F(StsPoliciesTest, AnExpiredPolicyIsFetchedAgain) {
    dns.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    ASSERT_TRUE(ask());
    clock.advance(3600 * 1000 + 1);
    ASSERT_TRUE(ask());
    EXPECT_EQ(fetcher.fetches, 2);
}

TEST_F(StsPoliciesTest, AStrippedRecordKeepsTheCachedPolicyUntilItExpires) {
    dns::StaticResolver with_record;
    with_record.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    with_record.add_address("mta-sts.example.org", asio::ip::make_address("192.0.2.8"));
    dns::StaticResolver without;  // what an attacker who strips the record leaves
    // One cache, two views of the DNS: the policy learnt through the first holds in the second.
    struct Switch final : dns::Resolver {
        dns::Resolver* now;
        asio::awaitable<Result<std::vector<std::string>>> txt(std::string n) override {
            return now->txt(std::move(n));
        }
        asio::awaitable<Result<std::vector<std::string>>> cname(std::string n) override {
            return now->cname(std::move(n));
        }
        asio::awaitable<Result<std::vector<dns::MxRecord>>> mx(std::string n) override {
            return now->mx(std::move(n));
        }
        asio::awaitable<Result<std::vector<asio::ip::address>>> addresses(std::string n) override {
            return now->addresses(std::move(n));
        }
        asio::awaitable<Result<dns::TlsaAnswer>> tlsa(std::string n) override {
            return now->tlsa(std::move(n));
        }
    } view;
    view.now = &with_record;
    StsPolicies cache{view, fetcher, clock, 443};
    ASSERT_TRUE(block_on(cache.policy_for("example.org")));
    view.now = &without;
    EXPECT_TRUE(block_on(cache.policy_for("example.org")));
    clock.advance(3600 * 1000 + 1);
    EXPECT_FALSE(block_on(cache.policy_for("example.org")));
}

TEST_F(StsPoliciesTest, FailedFetchesAreNoPolicy) {
    dns.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    for (const auto& bad : std::vector<FetchResult>{
             {.error = "connection refused"},
             {.status = 404, .content_type = "text/plain", .body = ""},
             {.status = 301, .content_type = "text/plain", .body = ""},
             {.status = 200, .content_type = "text/html", .body = policy("enforce", 60).body},
             {.status = 200, .content_type = "text/plain", .body = "version: STSv1\n"},
         }) {
        fetcher.answer = bad;
        EXPECT_FALSE(ask()) << bad.error << bad.content_type;
    }
}

TEST_F(StsPoliciesTest, ModeNoneIsNoPolicyButIsCached) {
    dns.add_txt("_mta-sts.example.org", "v=STSv1; id=1;");
    fetcher.answer = {.status = 200,
                      .content_type = "text/plain",
                      .body = "version: STSv1\nmode: none\nmax_age: 600\n"};
    EXPECT_FALSE(ask());
    EXPECT_FALSE(ask());
    EXPECT_EQ(fetcher.fetches, 1);
}

}  // namespace
}  // namespace posthorn::delivery
