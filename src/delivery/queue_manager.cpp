#include "delivery/queue_manager.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <variant>

#include "core/blocking.hpp"
#include "core/id.hpp"
#include "core/log.hpp"
#include "core/metrics.hpp"
#include "crypto/keys.hpp"
#include "crypto/tls.hpp"
#include "delivery/tls_route.hpp"
#include "domain/delivery_policy.hpp"
#include "domain/email_rules.hpp"
#include "mail/dkim.hpp"
#include "smtp/errors.hpp"

namespace posthorn::delivery {

namespace {

// How long a domain's route (its MX hosts and their addresses) is reused before it is
// looked up again. A failed lookup is not kept: the next claim asks again.
constexpr UnixMs kRouteTtlMs = 60'000;

// Where a route goes: the MX host names in the order tried (the relay's name). Domains
// whose mail goes to the same hosts (the many domains of one mail provider) share one
// destination: its sessions, its connection limit, and one transaction per email.
// Hosts whose TLS must differ (an MTA-STS policy of one domain and not of another) do not
// share sessions: the TLS is part of the key.
std::string destination_of(const std::vector<Target>& targets) {
    std::string key;
    const std::string* last = nullptr;
    for (const auto& t : targets) {
        if (last && *last == t.host) continue;  // the same host's next address
        key += (key.empty() ? "" : ",") + t.host + "~" + t.tls.key();
        last = &t.host;
    }
    return key;
}

// Policies that ask for TLS by themselves: without it, the mail waits (RFC 8461 §5, RFC 7672
// §2.2), where delivery.tls = required fails it at once (domain/delivery_policy.cpp).
bool policy_demands_tls(const HostTls& tls) {
    return tls.policy == TlsPolicy::verify || tls.policy == TlsPolicy::mta_sts ||
           tls.policy == TlsPolicy::dane;
}

metrics::Counter attempts_total(
    "posthorn_delivery_attempts_total",
    "Delivery attempts of one recipient each, by what came of them (deferred: to be retried).",
    metrics::one_label("result", {"delivered", "deferred", "bounced", "failed"}));

// The server an attempt reached: its host name and address; empty when none was.
struct Peer {
    std::string host;
    std::string ip;
};

// One email's recipients at one destination: one SMTP transaction.
struct Job {
    std::shared_ptr<store::QueuedEmail> email;
    std::vector<store::QueuedRecipient> recipients;
};

// What a failed open() comes to. A certificate that did not verify, or no STARTTLS where
// a policy demands TLS, is a temporary failure that says which policy and why.
AttemptResult tls_trouble(const error_code& ec, const std::string& where, const HostTls& tls,
                          const smtp::Client& client) {
    if (ec == smtp::errc::tls_not_verified) {
        const auto why = client.peer() ? client.peer()->failure : std::string("not verified");
        return AttemptResult{.stage = Stage::connect,
                             .trouble = domain::Trouble::tls_failed,
                             .text = where + ": the certificate does not verify for the " +
                                     std::string(to_string(tls.policy)) + " policy: " + why,
                             .tls = failed_tls(tls, &client, "certificate: " + why)};
    }
    auto a = from_error(ec, where, Stage::connect);
    if (ec == smtp::errc::tls_unavailable && policy_demands_tls(tls)) {
        a.trouble = domain::Trouble::tls_failed;
        a.text = where + ": the server does not offer STARTTLS, and the " +
                 std::string(to_string(tls.policy)) + " policy requires TLS";
    }
    if (ec == smtp::errc::tls_unavailable || ec == smtp::errc::tls_failed)
        a.tls = failed_tls(tls, &client, a.text);
    return a;
}

// Counts a job from the moment a session takes it until its outcome is recorded.
class InHand {
  public:
    explicit InHand(std::atomic<int>& n) : n_(n) { ++n_; }
    ~InHand() { --n_; }
    InHand(const InHand&) = delete;
    InHand& operator=(const InHand&) = delete;

  private:
    std::atomic<int>& n_;
};

}  // namespace

struct QueueManager::Impl : std::enable_shared_from_this<Impl> {
    Impl(asio::any_io_executor e, asio::any_io_executor b, Stores s, dns::Resolver& r,
         const core::Clock& c, Options o)
        : ex(std::move(e)),
          blocking(std::move(b)),
          stores(s),
          resolver(r),
          clock(c),
          options(std::move(o)),
          timer(ex),
          tls_context(crypto::client_context(options.tls_ca_file)) {
        if (options.policy_fetcher)
            sts = std::make_unique<StsPolicies>(resolver, *options.policy_fetcher, clock,
                                                options.mta_sts_port);
    }

    asio::awaitable<void> run();
    asio::awaitable<void> resolve(std::vector<std::string> domains);
    asio::awaitable<void> resolve_one(std::string domain, std::shared_ptr<std::size_t> left,
                                      std::shared_ptr<asio::steady_timer> done);
    asio::awaitable<void> deliver_to(std::string destination);
    asio::awaitable<void> session(std::string destination, std::vector<Target> targets);
    std::optional<Job> next_job(const std::string& destination);
    void spawn_sessions();
    // (Every argument a copy or a member's: a coroutine keeps references past its caller's
    // temporaries.)
    asio::awaitable<void> finish(const Job& job, const std::vector<AttemptResult>& results,
                                 Peer peer);
    asio::awaitable<void> record(const store::QueuedEmail& email, domain::Outcomes outcomes);
    asio::awaitable<void> finish_later(std::shared_ptr<Impl> self, Job job,
                                       std::vector<AttemptResult> results, Peer peer,
                                       std::shared_ptr<InHand> busy);
    // The message, DKIM-signed; or why not: a trouble of ours (retried), or the sending
    // domain gone with its keys (final).
    asio::awaitable<std::variant<std::string, domain::AttemptResult>> signed_message(
        const store::QueuedEmail& e);
    // Whether a store's failure `ec` is one that passes by itself (the database out of reach,
    // a connection broken) and delivery is not stopping; then waits before the next try
    // (0.25 s, doubling up to 5 s).
    asio::awaitable<bool> wait_for_store(const error_code& ec, int tries);
    // The decision on one recipient's attempt, counted and logged (a line per attempt).
    domain::RecipientOutcome outcome_for(const store::QueuedEmail& email,
                                         const store::QueuedRecipient& r, const AttemptResult& a,
                                         const Peer& peer, UnixMs now);

    asio::any_io_executor ex;
    asio::any_io_executor blocking;
    Stores stores;
    dns::Resolver& resolver;
    const core::Clock& clock;
    Options options;
    asio::steady_timer timer;
    std::shared_ptr<asio::ssl::context> tls_context;
    std::unique_ptr<StsPolicies> sts;  // touched on ex only
    std::atomic<bool> stopping{false};
    // Jobs waiting per destination (destination_of); that destination's sessions take them
    // one by one, so a session is reused for as long as its destination has mail (touched
    // on ex only).
    struct Destination {
        std::vector<Target> targets;
        std::deque<Job> jobs;
        int sessions = 0;
    };
    std::map<std::string, Destination> destinations;
    // Recipient domain ("" with a relay) → its route, kept kRouteTtlMs (touched on ex only).
    struct KnownRoute {
        std::variant<std::vector<Target>, AttemptResult> route;
        std::string destination;  // destination_of the targets; "" for nowhere to go
        UnixMs until = 0;
    };
    std::map<std::string, KnownRoute> routes;
    int active = 0;               // sessions running, in all
    std::atomic<int> in_hand{0};  // jobs taken and not yet recorded
    std::size_t backlog = 0;      // jobs claimed and not yet finished
    struct SigningKey {
        std::string key_id;  // the dkim_keys row it was parsed from
        mail::DkimKey key;
    };
    std::map<std::string, SigningKey> dkim_keys;  // domain id → parsed active signing key
    Counters counters;
};

domain::RecipientOutcome QueueManager::Impl::outcome_for(const store::QueuedEmail& email,
                                                         const store::QueuedRecipient& r,
                                                         const AttemptResult& a, const Peer& peer,
                                                         UnixMs now) {
    auto decision = domain::decide(
        a, {.attempts_before = r.attempts, .schedule_s = &options.retry_schedule_s, .now = now});
    std::size_t result = 3;
    std::string_view disposition = "failed";
    switch (decision.status) {
        case domain::RecipientStatus::delivered:
            ++counters.delivered;
            result = 0;
            disposition = "delivered";
            break;
        case domain::RecipientStatus::queued:
            ++counters.deferred;
            result = 1;
            disposition = "deferred";
            break;
        case domain::RecipientStatus::bounced:
            ++counters.bounced;
            result = 2;
            disposition = "bounced";
            break;
        default:
            ++counters.failed;
            break;
    }
    attempts_total.inc(result);
    // Postfix's line per attempt: which mail, to whom, where, how, how long after it was
    // accepted, and what the server said.
    const auto delay_ms = now - id_time(email.id, "em_");
    log::event(log::Level::info, "delivery attempt",
               {{"email_id", email.id},
                {"recipient", r.address},
                {"attempt", r.attempts + 1},
                {"host", peer.host},
                {"ip", peer.ip},
                {"tls", a.tls ? a.tls->version : std::string()},
                {"delay_s", static_cast<double>(delay_ms) / 1000.0},
                {"code", a.code},
                {"status", domain::enhanced_code(a.text)},
                {"reply", a.text},
                {"disposition", disposition}});
    auto outcome = domain::outcome_of(r.id, r.attempts + 1, std::move(decision));
    outcome.tls = a.tls;
    return outcome;
}

// Writes outcomes of one email's recipients: the email's rules make the change, the store
// writes it (and lifts the recipients' leases) in one transaction.
asio::awaitable<bool> QueueManager::Impl::wait_for_store(const error_code& ec, int tries) {
    if (stopping ||
        (ec != store::errc::unavailable && ec != store::errc::io && ec != store::errc::busy))
        co_return false;
    asio::steady_timer wait(ex);
    wait.expires_after(std::chrono::milliseconds(std::min(5000, 250 << std::min(tries, 5))));
    co_await wait.async_wait(use_nothrow_awaitable);
    co_return !stopping;
}

// Writes outcomes of one email's recipients: the email's rules make the change, the store
// writes it (and lifts the recipients' leases) in one transaction. While the store cannot be
// reached, the outcome waits in memory and is written when it is back: the mail went (or
// did not), and that must not be forgotten — its lease, renewed meanwhile, keeps the other
// nodes off it. Only a stop gives up: the lease stays, and the mail goes again after the
// node's next start lifts it, or after it runs out (at least once, as after a crash).
asio::awaitable<void> QueueManager::Impl::record(const store::QueuedEmail& email,
                                                 domain::Outcomes outcomes) {
    for (int tries = 0;; ++tries) {
        auto decide = [outcomes](const store::Email& current) {
            return domain::apply_outcomes(current, outcomes);
        };
        auto account = email.account_id;
        auto id = email.id;
        auto r = co_await stores.emails.change_email(std::move(account), std::move(id), true,
                                                     std::move(decide));
        if (r) {
            if (tries > 0) log::info("delivery: the outcome of {} is recorded now", email.id);
            co_return;
        }
        if (tries == 0)
            log::error("delivery: recording the outcome of {}: {}", email.id, r.error().message());
        if (!co_await wait_for_store(r.error(), tries)) {
            log::error("delivery: the outcome of {} is not recorded", email.id);
            co_return;
        }
    }
}

asio::awaitable<void> QueueManager::Impl::finish(const Job& job,
                                                 const std::vector<AttemptResult>& results,
                                                 Peer peer) {
    const auto now = clock.now_ms();
    domain::Outcomes outcomes{.at = now};
    for (std::size_t i = 0; i < job.recipients.size(); ++i)
        outcomes.recipients.push_back(
            outcome_for(*job.email, job.recipients[i], results[i], peer, now));
    co_await record(*job.email, std::move(outcomes));
}

asio::awaitable<void> QueueManager::Impl::finish_later(std::shared_ptr<Impl> self, Job job,
                                                       std::vector<AttemptResult> results,
                                                       Peer peer, std::shared_ptr<InHand> busy) {
    co_await self->finish(job, results, peer);
    busy.reset();  // recorded: out of hand
}

asio::awaitable<std::variant<std::string, domain::AttemptResult>>
QueueManager::Impl::signed_message(const store::QueuedEmail& e) {
    const domain::AttemptResult not_signed{.stage = Stage::data,
                                           .trouble = domain::Trouble::local,
                                           .text = "the message could not be DKIM-signed"};
    // The keys are read for every message: the store answers from its lookup cache until a
    // domain or key changes on any node (a DKIM rotation switching keys, a domain deleted),
    // and the parsed key is kept here for as long as the same key is the active one.
    auto domain_id = e.domain_id;
    auto keys = co_await stores.domains.dkim_keys(std::move(domain_id));
    if (!keys) {
        log::error("delivery: reading the DKIM key of {}: {}", e.id, keys.error().message());
        co_return not_signed;
    }
    const auto active =
        std::find_if(keys->begin(), keys->end(), [](const auto& k) { return k.active; });
    if (active == keys->end()) {
        // A domain has its keys from its creation until it is deleted, with them.
        dkim_keys.erase(e.domain_id);
        log::warn("delivery: the sending domain of {} was deleted; it cannot be signed", e.id);
        co_return domain::AttemptResult{.stage = Stage::data,
                                        .trouble = domain::Trouble::sender_domain_gone,
                                        .text = "the sending domain " + e.from_domain +
                                                " was deleted: the message cannot be DKIM-signed"};
    }
    auto it = dkim_keys.find(e.domain_id);
    if (it == dkim_keys.end() || it->second.key_id != active->id) {
        const auto& k = *active;
        auto pem = crypto::open(options.master_key, k.sealed_private_key,
                                "dkim:" + k.domain_id + ":" + k.selector);
        if (!pem) {
            log::error("delivery: cannot unseal the DKIM key of {}", e.from_domain);
            co_return not_signed;
        }
        auto parsed = crypto::PrivateKey::from_pem(*pem);
        if (!parsed) {
            log::error("delivery: the DKIM key of {} does not parse", e.from_domain);
            co_return not_signed;
        }
        mail::DkimKey dk{.domain = e.from_domain, .selector = k.selector, .key = *parsed};
        it = dkim_keys
                 .insert_or_assign(e.domain_id, SigningKey{.key_id = k.id, .key = std::move(dk)})
                 .first;
    }
    mail::DkimKey key = it->second.key;  // shares the parsed key; `it` may go meanwhile
    // Read only now, from a reader: the claim left it in the database.
    // Read again while the store cannot be reached, as record() writes again: a message that
    // could not be read for that reason has not failed.
    auto raw = Result<std::string>(store::errc::unavailable);
    for (int tries = 0;; ++tries) {
        auto account = e.account_id;
        auto id = e.id;
        raw = co_await stores.emails.email_raw(std::move(account), std::move(id));
        if (raw || !co_await wait_for_store(raw.error(), tries)) break;
    }
    if (!raw) {
        log::error("delivery: reading the message of {}: {}", e.id, raw.error().message());
        co_return not_signed;
    }
    const auto now = clock.now_ms();
    auto sign = [raw = std::move(*raw), key = std::move(key), now] {
        return mail::dkim_sign(raw, key, now);
    };
    auto pool = blocking;
    auto signed_msg = co_await core::run_blocking(std::move(pool), std::move(sign));
    if (!signed_msg) co_return not_signed;
    co_return std::move(*signed_msg);
}

std::optional<Job> QueueManager::Impl::next_job(const std::string& destination) {
    auto& d = destinations[destination];
    // Stopping: the jobs left keep their leases, which the next start lifts.
    if (d.jobs.empty() || stopping) return std::nullopt;
    Job job = std::move(d.jobs.front());
    d.jobs.pop_front();
    return job;
}

asio::awaitable<void> QueueManager::Impl::session(std::string destination,
                                                  std::vector<Target> targets) {
    auto self = shared_from_this();
    std::unique_ptr<smtp::Client> client;
    std::optional<AttemptResult> no_session;  // why there is no session, for the jobs left
    std::size_t next_target = 0;
    bool retry_plain = false;  // the next open is the plain-text retry of a failed handshake
    domain::TlsOutcome session_tls_outcome;  // of `client`
    Peer peer;                               // of `client`
    while (auto next = next_job(destination)) {
        auto& job = *next;
        --backlog;
        std::vector<AttemptResult> outcomes(job.recipients.size());
        // Open a session, trying the targets in order, unless one is open already.
        while (!client && !no_session) {
            // Opportunistic TLS whose handshake failed: the same server once more, in
            // plain text (RFC 3207 §4.1 lets the client decide; a broken TLS stack on the
            // remote side must not keep the mail from going).
            const bool plain_retry = retry_plain;
            retry_plain = false;
            if (!plain_retry && next_target >= targets.size()) {
                no_session = AttemptResult{.stage = Stage::connect,
                                           .trouble = domain::Trouble::network,
                                           .text = "no server could be reached"};
                break;
            }
            const auto& t = plain_retry ? targets[next_target - 1] : targets[next_target++];
            const auto where = t.host + "[" + t.endpoint.address().to_string() +
                               "]:" + std::to_string(t.endpoint.port());
            if (!t.tls.refuse.empty()) {
                // The TLS policy rules this host out (not an MTA-STS MX, a failed TLSA
                // look-up): not even a connection; the next host may do.
                if (next_target >= targets.size())
                    no_session = AttemptResult{.stage = Stage::connect,
                                               .trouble = domain::Trouble::tls_failed,
                                               .text = where + ": " + t.tls.refuse,
                                               .tls = failed_tls(t.tls, nullptr, t.tls.refuse)};
                continue;
            }
            smtp::ClientOptions co{.helo_name = options.hostname,
                                   .connect_timeout = options.connect_timeout,
                                   .command_timeout = options.command_timeout,
                                   .tls = plain_retry ? smtp::TlsMode::off : t.tls.mode,
                                   .tls_context = tls_context,
                                   .server_name = t.host,
                                   .peer_check = t.tls.check,
                                   .require_verified = t.tls.require_verified};
            auto c = std::make_unique<smtp::Client>(ex, std::move(co));
            auto endpoint = t.endpoint;
            auto opened = co_await c->open(endpoint);
            ++counters.sessions;
            if (!opened) {
                ++counters.connect_failures;
                if (opened.error() == smtp::errc::tls_failed && t.tls.plain_fallback &&
                    !plain_retry) {
                    log::info("delivery: TLS handshake with {} failed; once more in plain text",
                              where);
                    retry_plain = true;
                    continue;
                }
                // Any other failure, TLS required but not offered included: the next
                // server (MX) may do better; when none is left, this is the outcome.
                if (next_target >= targets.size())
                    no_session = tls_trouble(opened.error(), where, t.tls, *c);
                continue;
            }
            if (!opened->positive()) {
                ++counters.connect_failures;
                co_await c->quit();
                if (next_target >= targets.size()) no_session = from_reply(*opened, Stage::connect);
                continue;
            }
            session_tls_outcome = session_tls(t.tls, *c, plain_retry);
            if (!t.tls.report.empty() ||
                (t.tls.check && !t.tls.require_verified && !session_tls_outcome.verified))
                log::warn("delivery: {} ({} policy, reported only): {}", where,
                          session_tls_outcome.policy, session_tls_outcome.failure);
            client = std::move(c);
            peer = {t.host, t.endpoint.address().to_string()};
        }
        if (stopping) break;  // the job keeps its lease; the next start lifts it
        // From here to its recorded outcome the job is in hand: shutdown waits for it (a
        // session still connecting is not waited for; nothing has been sent yet).
        auto busy = std::make_shared<InHand>(in_hand);
        if (!client) {
            for (auto& o : outcomes) o = *no_session;
            const Peer nowhere;  // named: GCC 12 frees a braced temporary argument twice
            co_await finish(job, outcomes, nowhere);
            continue;
        }
        // Signed only now that a server is there to take it: the RSA signature is the
        // costliest step, and a destination that cannot be reached should not pay it.
        auto message = co_await signed_message(*job.email);
        if (auto* why = std::get_if<AttemptResult>(&message)) {
            for (auto& o : outcomes) o = *why;
            co_await finish(job, outcomes, peer);
            continue;
        }
        // The envelope sender's domain was decided when the email was accepted: its
        // domain's verified return path, or this server's name (docs/delivery.md).
        const auto& bounce_host =
            job.email->return_path.empty() ? options.hostname : job.email->return_path;
        smtp::Envelope env{.mail_from = "bounces+" + job.email->return_token + "@" + bounce_host,
                           .data = std::get<std::string>(std::move(message))};
        for (const auto& r : job.recipients) env.rcpt_to.push_back(r.address);
        auto tx = co_await client->send(std::move(env));
        ++counters.transactions;
        if (!tx) {
            // The session broke mid-transaction: nothing is known, so every recipient is
            // retried (at least once), and the next job gets a new session.
            auto why = from_error(tx.error(), "during the transaction", Stage::data);
            why.tls = session_tls_outcome;
            for (auto& o : outcomes) o = why;
            client.reset();
            next_target = 0;
            co_await finish(job, outcomes, peer);
            continue;
        }
        for (std::size_t i = 0; i < outcomes.size(); ++i) {
            if (!tx->mail.positive())
                outcomes[i] = from_reply(tx->mail, Stage::mail);
            else if (tx->rcpt[i] && !tx->rcpt[i]->positive())
                outcomes[i] = from_reply(*tx->rcpt[i], Stage::rcpt);
            else if (tx->data)
                outcomes[i] = from_reply(*tx->data, Stage::data);
            else
                outcomes[i] = AttemptResult{.stage = Stage::data,
                                            .trouble = domain::Trouble::network,
                                            .text = "no reply to DATA"};
            outcomes[i].tls = session_tls_outcome;
        }
        // The outcome is written while the session goes on with its next job: waiting for
        // the store's commit (a group commit gathers, then flushes) would hold each session
        // to one message a commit. The job stays in hand until it is written. The outcomes
        // not written yet are no more than the jobs claimed, and the claims wait in the same
        // writer as they do.
        asio::co_spawn(
            ex, finish_later(self, std::move(job), std::move(outcomes), peer, std::move(busy)),
            asio::detached);
    }
    if (client) co_await client->quit();
}

asio::awaitable<void> QueueManager::Impl::resolve_one(std::string domain,
                                                      std::shared_ptr<std::size_t> left,
                                                      std::shared_ptr<asio::steady_timer> done) {
    auto self = shared_from_this();
    auto relay = options.relay;
    const bool relayed = relay.has_value();
    auto routed = co_await route(resolver, domain, std::move(relay), options.mx_port,
                                 options.allow_private_targets);
    if (auto* found = std::get_if<std::vector<Target>>(&routed)) {
        TlsInputs in{.setting = options.tls,
                     .sts = sts.get(),
                     .dane = options.dane,
                     .port = options.mx_port,
                     .relay = relayed};
        routed = co_await with_tls(resolver, in, domain, std::move(*found));
    }
    const auto* targets = std::get_if<std::vector<Target>>(&routed);
    auto destination = targets ? destination_of(*targets) : std::string();
    const UnixMs until = clock.now_ms() + (targets ? kRouteTtlMs : 0);
    routes[domain] = KnownRoute{std::move(routed), std::move(destination), until};
    if (--*left == 0) done->expires_at(asio::steady_timer::time_point::min());
}

// Looks the domains up at once (c-ares runs the queries side by side) and waits for all.
asio::awaitable<void> QueueManager::Impl::resolve(std::vector<std::string> domains) {
    if (domains.empty()) co_return;
    auto left = std::make_shared<std::size_t>(domains.size());
    auto done = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
    for (auto& d : domains)
        asio::co_spawn(ex, resolve_one(std::move(d), left, done), asio::detached);
    while (*left > 0) co_await done->async_wait(use_nothrow_awaitable);
}

asio::awaitable<void> QueueManager::Impl::deliver_to(std::string destination) {
    auto self = shared_from_this();
    auto targets = destinations[destination].targets;
    co_await session(destination, std::move(targets));
    --destinations[destination].sessions;
    --active;
    if (destinations[destination].sessions == 0 && destinations[destination].jobs.empty())
        destinations.erase(destination);
    spawn_sessions();  // a slot is free: another destination may use it
    timer.cancel();    // and the loop may claim more
}

void QueueManager::Impl::spawn_sessions() {
    // Stopping: the jobs left keep their leases. (A session started now would end at once and
    // start the next one from within itself: with hundreds of jobs waiting, that recursion
    // overflowed the stack at shutdown.)
    if (stopping) return;
    // Decide first, spawn after: a new session may run at once and change `destinations`.
    std::vector<std::string> starts;
    for (auto& [key, d] : destinations) {
        // One more session while its queue is longer than what its sessions hold in hand.
        while (!d.jobs.empty() && d.sessions < options.max_connections_per_domain &&
               active < options.max_connections &&
               (d.sessions == 0 || d.jobs.size() > static_cast<std::size_t>(d.sessions))) {
            ++d.sessions;
            ++active;
            starts.push_back(key);
        }
    }
    for (auto& d : starts) asio::co_spawn(ex, deliver_to(d), asio::detached);
}

asio::awaitable<void> QueueManager::Impl::run() {
    auto self = shared_from_this();
    {
        auto owner = options.node_id;
        if (auto n = co_await stores.queue.release_leases(std::move(owner)); n && *n > 0)
            log::info("delivery: lifted {} leases left by the last run of {}", *n, options.node_id);
    }
    const auto lease_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(options.lease).count();
    UnixMs next_renewal = clock.now_ms() + lease_ms / 2;
    while (!stopping) {
        // The leases of mail claimed and not yet finished are renewed at half their term,
        // so that mail waiting long for a slow destination is not claimed a second time.
        if (const auto t = clock.now_ms(); t >= next_renewal) {
            next_renewal = t + lease_ms / 2;
            auto owner = options.node_id;
            if (auto n = co_await stores.queue.renew_leases(std::move(owner), t + lease_ms); !n)
                log::error("delivery: renewing leases: {}", n.error().message());
        }
        // Claim only what the sessions can take soon: claimed mail waits in memory under
        // its lease, which must not run out before a session gets to it.
        if (backlog >= static_cast<std::size_t>(options.batch)) {
            timer.expires_after(std::chrono::seconds(1));
            co_await timer.async_wait(use_nothrow_awaitable);
            continue;
        }
        const auto now = clock.now_ms();
        const auto lease_until = now + lease_ms;
        auto owner = options.node_id;
        auto claimed =
            co_await stores.queue.claim_due(now, options.batch, std::move(owner), lease_until);
        if (!claimed) {
            log::error("delivery: claiming due mail: {}", claimed.error().message());
        }
        if (!claimed || claimed->empty()) {
            timer.expires_after(std::chrono::seconds(1));
            co_await timer.async_wait(use_nothrow_awaitable);
            continue;
        }
        // The routes of the recipients' domains, looked up where not known (or no longer:
        // expired ones are dropped first, so that the map holds only the domains in use).
        std::erase_if(routes, [now](const auto& r) { return r.second.until <= now; });
        std::set<std::string> unknown;
        for (const auto& e : *claimed)
            for (const auto& r : e.recipients)
                if (auto d = options.relay ? std::string() : r.domain; !routes.contains(d))
                    unknown.insert(std::move(d));
        std::vector<std::string> to_resolve(unknown.begin(), unknown.end());
        co_await resolve(std::move(to_resolve));
        if (stopping) break;  // the claimed mail keeps its lease; the next start lifts it

        // Suppressed addresses are never attempted, and a domain without a route gets its
        // outcome at once; the rest go by destination, one job per email and destination.
        std::map<std::string, std::vector<Job>> by_destination;
        std::map<std::string, std::vector<Target>> targets_of;
        for (auto& e : *claimed) {
            auto email = std::make_shared<store::QueuedEmail>(std::move(e));
            std::map<std::string, Job> jobs;
            domain::Outcomes settled{.at = now};
            for (const auto& r : email->recipients) {
                if (r.suppressed) {
                    settled.recipients.push_back(
                        {.recipient_id = r.id,
                         .status = domain::RecipientStatus::blocked,
                         .attempts = r.attempts,
                         .response = "on the suppression list: not attempted"});
                    ++counters.blocked;
                    continue;
                }
                const auto& known = routes[options.relay ? std::string() : r.domain];
                if (const auto* why = std::get_if<AttemptResult>(&known.route)) {
                    settled.recipients.push_back(outcome_for(*email, r, *why, {}, now));
                    continue;
                }
                const auto& key = known.destination;
                if (!targets_of.contains(key))
                    targets_of.emplace(key, std::get<std::vector<Target>>(known.route));
                auto& job = jobs[key];
                job.email = email;
                job.recipients.push_back(r);
            }
            if (!settled.recipients.empty()) co_await record(*email, std::move(settled));
            // RFC 5321 §4.5.3.1.8: a server need take no more than 100 recipients in one
            // transaction, so an email's recipients at one destination go in chunks.
            const auto cap =
                static_cast<std::size_t>(std::max(1, options.max_rcpt_per_transaction));
            for (auto& [key, job] : jobs) {
                for (std::size_t i = 0; i < job.recipients.size(); i += cap) {
                    const auto end = std::min(job.recipients.size(), i + cap);
                    Job chunk{.email = job.email,
                              .recipients = {job.recipients.begin() + static_cast<long>(i),
                                             job.recipients.begin() + static_cast<long>(end)}};
                    by_destination[key].push_back(std::move(chunk));
                }
            }
        }
        for (auto& [key, jobs] : by_destination) {
            backlog += jobs.size();
            auto& d = destinations[key];
            if (d.targets.empty() || d.sessions == 0) d.targets = std::move(targets_of[key]);
            for (auto& j : jobs) d.jobs.push_back(std::move(j));
        }
        spawn_sessions();
    }
}

QueueManager::QueueManager(asio::any_io_executor ex, asio::any_io_executor blocking, Stores stores,
                           dns::Resolver& resolver, const core::Clock& clock, Options options)
    : impl_(std::make_shared<Impl>(std::move(ex), std::move(blocking), stores, resolver, clock,
                                   std::move(options))) {}

QueueManager::~QueueManager() = default;

asio::awaitable<void> QueueManager::run() { return impl_->run(); }

void QueueManager::wake() {
    asio::post(impl_->ex, [impl = impl_] { impl->timer.cancel(); });
}

void QueueManager::stop() {
    impl_->stopping = true;
    wake();
}

int QueueManager::jobs_in_hand() const { return impl_->in_hand; }

const Counters& QueueManager::counters() const { return impl_->counters; }

}  // namespace posthorn::delivery
