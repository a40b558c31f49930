// store/contract/contract.hpp — the store contract (CONVENTIONS §3, "One contract, every
// back end"): the promises of store/store.hpp written once, as GoogleTest tests against the
// interfaces alone, value-parameterized over back ends. A back end runs them with one
// instantiation file that says how to open it:
//
//     INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(Backend{...}),
//                              contract::backend_name);      // sqlite/sqlite_contract_test.cpp
//
// The tests (contract/<area>_test.cpp) touch no SQL, no file and nothing of one back end:
// what they see is what a caller of the interfaces sees. Times are UnixMs far from the
// clock's (kT0); ids are made for the times they stand for (id_at), as the product makes
// them (an email's created_at is its id's millisecond). Test code only.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "core/asio.hpp"
#include "core/id.hpp"
#include "domain/delivery_policy.hpp"
#include "domain/email_rules.hpp"
#include "domain/events.hpp"
#include "store/store.hpp"

namespace posthorn::store::contract {

struct Backend {
    std::string name;  // the instantiation's suffix in test names: letters, digits, _
    // A store on a new, empty database; nullptr when the back end cannot be had here (no
    // server): the test is then skipped.
    std::function<std::unique_ptr<Store>()> open_fresh;
    // Another store on the database the last open_fresh made: another node or process.
    std::function<std::unique_ptr<Store>()> open_again;
    // Removes what open_fresh made, once every store on it is gone (may be empty).
    std::function<void()> clean_up;
    // Brings the store's search index (one a back end keeps apart from its writes) up to
    // everything written so far (may be empty: no such index).
    std::function<void(Store&)> index_searches;
};

// What a failing test prints for its parameter.
inline void PrintTo(const Backend& backend, std::ostream* os) { *os << backend.name; }

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
    return info.param.name;
}

// 2027-01-15: far from the real clock, so that nothing a back end does with its own clock
// (none should) could pass for the times a test gives.
inline constexpr UnixMs kT0 = 1'800'000'000'000;
inline constexpr UnixMs kMinute = 60'000;

// An id of `prefix` whose millisecond is `t` (core/id.hpp), distinct from every other
// id_at gives: new_id never goes back in time, so it cannot make ids for the past.
inline std::string id_at(std::string_view prefix, UnixMs t) {
    static std::atomic<std::uint64_t> counter{0};
    std::string id = first_id_at(prefix, t);
    static constexpr std::string_view kDigits = "0123456789abcdefghjkmnpqrstvwxyz";
    auto n = ++counter;
    for (std::size_t i = id.size(); n > 0 && i > id.size() - 8; --i, n /= 32)
        id[i - 1] = kDigits[n % 32];
    return id;
}

// An email of `account` from `d`, created and queued at `at`, to `recipients` addresses
// r0@example.net, r1@example.net… (the first a To, the others Cc), none tried yet.
inline NewEmail new_email(const Account& account, const Domain& d, int recipients,
                          UnixMs at = kT0) {
    NewEmail n;
    auto& e = n.email;
    e.id = id_at("em_", at);
    e.account_id = account.id;
    e.domain_id = d.id;
    e.envelope_id = id_at("env_", at);
    e.from_email = "sender@" + d.name;
    e.from_name = "Sender";
    e.subject = "Hello";
    e.message_id = e.id + "@mta.example";
    e.return_token = e.id.substr(3) + "abcdefgh" + e.id.substr(e.id.size() - 8);
    e.created_at = e.queued_at = at;
    for (int i = 0; i < recipients; ++i) {
        const auto address = "r" + std::to_string(i) + "@example.net";
        n.recipients.push_back(
            Recipient{.address = address,
                      .domain = "example.net",
                      .type = i == 0 ? domain::RecipientType::to : domain::RecipientType::cc});
        if (i == 0) e.to_display = address;
    }
    n.total_recipients = recipients;
    n.raw = "From: sender@" + d.name + "\r\nSubject: Hello\r\n\r\nbody of " + e.id + "\r\n";
    e.size_bytes = static_cast<std::int64_t>(n.raw.size());
    return n;
}

// The decision the product's rules make of `outcomes` (domain::apply_outcomes); each
// change it answers is kept in `*made`, when given, for the test to compare.
inline EmailDecision apply(domain::Outcomes outcomes,
                           std::shared_ptr<std::vector<EmailChange>> made = nullptr) {
    return [outcomes = std::move(outcomes), made](const Email& current) {
        auto change = domain::apply_outcomes(current, outcomes);
        if (change && made) made->push_back(*change);
        return change;
    };
}
// What delivery makes of an attempt at `r` (its next) that the server answered at `now`
// with `code` and `text`: the decision of the one policy home (domain::decide), retried
// a minute later when it is to be.
inline domain::RecipientOutcome answered(const Recipient& r, int code, std::string text,
                                         UnixMs now) {
    static const std::vector<int> kEveryMinute(10, 60);
    const domain::RetryState state{
        .attempts_before = r.attempts, .schedule_s = &kEveryMinute, .now = now};
    const domain::AttemptResult result{
        .stage = domain::Stage::rcpt, .code = code, .text = std::move(text)};
    return domain::outcome_of(r.id, r.attempts + 1, domain::decide(result, state));
}
inline domain::RecipientOutcome delivered(const Recipient& r) {
    return answered(r, 250, "250 2.0.0 queued as A1", kT0);
}
// A 4xx, to be tried again at `next`.
inline domain::RecipientOutcome retry_at(const Recipient& r, UnixMs next) {
    return answered(r, 451, "451 4.7.1 try again later", next - kMinute);
}
// A 5.1.1: given up (a hard bounce), and the address suppressed.
inline domain::RecipientOutcome hard_bounced(const Recipient& r) {
    return answered(r, 550, "550 5.1.1 no such user", kT0);
}

// The fixture: a store on a fresh database per test, and the helpers the tests share
// (public, for the helper classes of a test file).
class StoreContract : public ::testing::TestWithParam<Backend> {
  public:
    void SetUp() override {
        store_ = GetParam().open_fresh();
        if (!store_) GTEST_SKIP() << GetParam().name << ": no database to test against";
    }
    void TearDown() override {
        others_.clear();
        store_.reset();
        if (GetParam().clean_up) GetParam().clean_up();
    }

    Store& store() { return *store_; }
    // Backend::index_searches on store().
    void index_searches() {
        if (GetParam().index_searches) GetParam().index_searches(*store_);
    }
    // A second store on the same database (another node), kept until the test ends.
    Store& another_node() {
        auto s = GetParam().open_again();
        if (!s) throw std::runtime_error("open_again gave no store");
        others_.push_back(std::move(s));
        return *others_.back();
    }

    // Whether `holds()` comes true within `within` (tried every 10 ms): what one node writes,
    // another node sees within moments, not always at once (a node may keep API keys and
    // domains in memory until the change is announced to it).
    template <class F>
    static bool soon(F holds, std::chrono::milliseconds within = std::chrono::seconds(3)) {
        const auto until = std::chrono::steady_clock::now() + within;
        for (;;) {
            if (holds()) return true;
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }

    // Runs one awaitable to completion on a private io_context.
    template <class T>
    static T run(asio::awaitable<T> aw) {
        std::vector<asio::awaitable<T>> one;
        one.push_back(std::move(aw));
        return std::move(run_all(std::move(one)).front());
    }
    // Runs the awaitables concurrently (the store's threads do their work meanwhile) and
    // answers their results in their order.
    template <class T>
    static std::vector<T> run_all(std::vector<asio::awaitable<T>> aws) {
        asio::io_context ctx;
        std::vector<std::optional<T>> out(aws.size());
        std::exception_ptr failure;
        for (std::size_t i = 0; i < aws.size(); ++i)
            asio::co_spawn(ctx, std::move(aws[i]), [&out, &failure, i](std::exception_ptr e, T v) {
                if (e) failure = e;
                out[i] = std::move(v);
            });
        ctx.run();
        if (failure) std::rethrow_exception(failure);
        std::vector<T> values;
        for (auto& v : out) values.push_back(std::move(*v));
        return values;
    }

    // Whether `done` comes true within 5 s (a listener is a hint that may come late).
    static bool eventually(const std::function<bool()>& done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return true;
    }

    Account make_account(const std::string& name, UnixMs at = kT0) {
        Account a{.id = id_at("acc_", at), .name = name, .created_at = at};
        EXPECT_TRUE(run(store().create_account(a))) << name;
        return a;
    }

    // A new domain `name` of `account` (its DNS token unique), verified, created at `at`.
    Domain make_domain(const Account& account, const std::string& name = "mail.example.com",
                       UnixMs at = kT0) {
        static std::atomic<int> tokens{0};
        Domain d{.id = id_at("dom_", at),
                 .account_id = account.id,
                 .name = name,
                 .status = domain::DomainStatus::verified,
                 .token = "tok" + std::to_string(++tokens),
                 .created_at = at,
                 .updated_at = at};
        auto r = run(store().create_domain(d, {}));
        EXPECT_TRUE(r) << name << ": " << r.error().message();
        return d;
    }

    // Creates `n` (failing the test if it is not written) and answers its id.
    std::string create(NewEmail n) {
        auto id = n.email.id;
        auto r = run(store().create_email(std::move(n)));
        EXPECT_TRUE(r && !*r) << id;
        return id;
    }

    Email find(const std::string& account_id, const std::string& id) {
        auto e = run(store().find_email(account_id, id));
        if (!e) throw std::runtime_error("find_email " + id + ": " + e.error().message());
        return std::move(*e);
    }

    // A webhook of `account` told of `events`, created at `at`; its secret is bytes.
    Webhook make_webhook(const Account& account, std::vector<domain::EventKind> events,
                         bool active = true, UnixMs at = kT0) {
        static std::atomic<int> n{0};
        const auto i = std::to_string(++n);
        Webhook w{.id = id_at("wh_", at),
                  .account_id = account.id,
                  .url = "https://hooks.example/" + i,
                  .events = std::move(events),
                  .active = active,
                  .secret = std::string("k\0\xff", 3) + i,
                  .created_at = at,
                  .updated_at = at};
        auto r = run(store().create_webhook(w));
        EXPECT_TRUE(r) << r.error().message();
        return w;
    }

    // Records a check of `d` that raises a domain event of `kind` at `at`, and answers it.
    Event raise_domain_event(const Domain& d, domain::EventKind kind, UnixMs at,
                             Store* on = nullptr) {
        auto e = domain::make_event(kind, d.account_id, std::nullopt,
                                    R"({"domain":")" + d.name + R"("})", at);
        DomainCheck c{.account_id = d.account_id,
                      .domain_id = d.id,
                      .status = kind == domain::EventKind::domain_verified
                                    ? domain::DomainStatus::verified
                                    : domain::DomainStatus::failed,
                      .records_json = "{}",
                      .checked_at = at,
                      .event = e};
        auto r = run((on ? *on : store()).record_domain_check(c));
        EXPECT_TRUE(r) << r.error().message();
        return e;
    }

    // Routes every event not yet routed (the product's router: domain::webhooks_for) and
    // answers the events, in the order they were handed to the router.
    std::vector<Event> route_all(Store& s) {
        auto seen = std::make_shared<std::vector<Event>>();
        EventRouter router = [seen](const Event& e, const std::vector<Webhook>& all) {
            seen->push_back(e);
            return domain::webhooks_for(e, all);
        };
        for (int rounds = 0; rounds < 100; ++rounds) {
            auto n = run(s.route_events(50, router));
            EXPECT_TRUE(n) << n.error().message();
            if (!n || *n == 0) break;
        }
        return *seen;
    }
    std::vector<Event> route_all() { return route_all(store()); }

  private:
    std::unique_ptr<Store> store_;
    std::vector<std::unique_ptr<Store>> others_;
};

}  // namespace posthorn::store::contract
