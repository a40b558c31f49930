#include "app/queue_commands.hpp"

#include <fmt/format.h>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <iostream>
#include <variant>

#include "api/queue_summary.hpp"
#include "app/store_open.hpp"
#include "core/block_on.hpp"
#include "core/clock.hpp"
#include "core/id.hpp"
#include "mail/domain_name.hpp"

namespace posthorn::app {
namespace {

constexpr int kBadUsage = 2;

int fail(int code, const std::string& what) {
    std::cerr << "posthorn: " << what << "\n";
    return code;
}

// The filter as a store selector: the domain made canonical, the account found by its name,
// the email id checked. Answers the exit code and message of a bad one instead.
struct Refusal {
    int code;
    std::string message;
};
std::variant<store::QueueSelector, Refusal> selector_of(store::Store& store,
                                                        const QueueFilter& filter) {
    store::QueueSelector sel;
    if (filter.domain) {
        auto name = mail::normalize_domain(*filter.domain);
        if (auto* bad = std::get_if<mail::BadDomain>(&name))
            return Refusal{kBadUsage, "--domain '" + *filter.domain +
                                          "' is not a domain name: " + bad->reason};
        sel.domain = std::get<std::string>(std::move(name));
    }
    if (filter.email) {
        if (!is_id(*filter.email, "em_"))
            return Refusal{kBadUsage, "--email '" + *filter.email +
                                          "' is not an email id (em_ and 26 characters)"};
        sel.email_id = *filter.email;
    }
    if (filter.account) {
        auto account = block_on(store.find_account_by_name(*filter.account));
        if (!account && account.error() == store::errc::not_found)
            return Refusal{1, "no account named '" + *filter.account + "'"};
        if (!account) return Refusal{1, "cannot read the accounts: " + account.error().message()};
        sel.account_id = account->id;
    }
    return sel;
}

std::unique_ptr<store::Store> open_store_or_null(const Config& config) {
    auto s = open_store(config, 1);
    if (!s) {
        std::cerr << "posthorn: cannot open the database: " << s.error().message() << "\n";
        return nullptr;
    }
    return std::move(*s);
}

void print_table(const std::vector<store::QueueGroup>& groups, UnixMs now) {
    std::size_t width = std::string_view("DOMAIN").size();
    for (const auto& g : groups) width = std::max(width, g.domain.size());
    std::cout << fmt::format("{:<{}}  {:<9}  {:>10}  {:<24}  {}\n", "DOMAIN", width, "STATE",
                             "RECIPIENTS", "OLDEST QUEUED", "NEXT ATTEMPT");
    std::int64_t total = 0;
    std::optional<UnixMs> oldest;
    for (const auto& g : groups) {
        std::cout << fmt::format(
            "{:<{}}  {:<9}  {:>10}  {:<24}  {}\n", g.domain, width, domain::name(g.state),
            g.recipients, format_iso8601(g.oldest_queued_at), format_iso8601(g.next_attempt_at));
        total += g.recipients;
        oldest = std::min(oldest.value_or(g.oldest_queued_at), g.oldest_queued_at);
    }
    std::cout << fmt::format("{} recipient{} queued", total, total == 1 ? "" : "s");
    if (oldest)
        std::cout << fmt::format("; the oldest since {} ({} s ago)", format_iso8601(*oldest),
                                 std::max<UnixMs>(0, now - *oldest) / 1000);
    std::cout << "\n";
}

}  // namespace

int queue_summary(const Config& config, const QueueFilter& filter, bool json) {
    auto store = open_store_or_null(config);
    if (!store) return 1;
    auto sel = selector_of(*store, filter);
    if (auto* refused = std::get_if<Refusal>(&sel)) return fail(refused->code, refused->message);
    core::SystemClock clock;
    const auto now = clock.now_ms();
    auto groups =
        block_on(store->queue_summary(std::get<store::QueueSelector>(std::move(sel)), now));
    if (!groups) return fail(1, "cannot read the queue: " + groups.error().message());
    if (json)
        std::cout << boost::json::serialize(api::queue_summary_json(*groups)) << "\n";
    else
        print_table(*groups, now);
    return 0;
}

int queue_control(const Config& config, domain::QueueAction action, const QueueFilter& filter) {
    if (!filter.domain && !filter.account && !filter.email)
        return fail(kBadUsage,
                    "say which recipients: --domain, --account or --email (each narrows)");
    auto store = open_store_or_null(config);
    if (!store) return 1;
    auto sel = selector_of(*store, filter);
    if (auto* refused = std::get_if<Refusal>(&sel)) return fail(refused->code, refused->message);
    auto select = std::get<store::QueueSelector>(std::move(sel));
    select.states = domain::queue_states_for(action);
    core::SystemClock clock;
    const auto now = clock.now_ms();
    Result<std::int64_t> changed{std::int64_t{0}};
    const char* done = "";
    switch (action) {
        case domain::QueueAction::hold:
            changed = block_on(store->hold_queued(std::move(select), now));
            done = "held";
            break;
        case domain::QueueAction::release:
            changed = block_on(store->release_queued(std::move(select), now));
            done = "released";
            break;
        case domain::QueueAction::retry:
            changed = block_on(store->make_due(std::move(select), now));
            done = "retried (due now)";
            break;
        case domain::QueueAction::purge: {
            auto decide = [now](const store::Email& e, const std::vector<std::int64_t>& ids) {
                return domain::purge(e, ids, now);
            };
            changed = block_on(store->change_queued(std::move(select), now, std::move(decide)));
            done = "purged (FAILED, reason purged)";
            break;
        }
    }
    if (!changed) return fail(1, "cannot change the queue: " + changed.error().message());
    std::cout << fmt::format("{} recipient{} {}\n", *changed, *changed == 1 ? "" : "s", done);
    return 0;
}

}  // namespace posthorn::app
