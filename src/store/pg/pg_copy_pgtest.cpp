// `posthorn store copy` at the level of the stores (store/copy.hpp), against a real server
// (PH_TEST_PG_DSN): a SQLite store filled through the Store interface — fresh, retried,
// bounced and leased recipients, routed and unrouted events, webhook deliveries and their
// attempts, idempotency keys, suppressions, inbound mail, the request log — is copied into a
// new database, and the PostgreSQL store then answers what the SQLite store answered (the
// same emails and recipients, lists, totals and searches, keys, domains and DKIM keys), its
// queue and outbox carry on where SQLite's stood (the leases lifted), and new rows number on
// after the copied ones. A second copy into the same database is refused; a copy that fails
// or whose counts differ leaves the database empty.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "core/block_on.hpp"
#include "core/log.hpp"
#include "store/contract/contract.hpp"
#include "store/copy.hpp"
#include "store/pg/detail/conn.hpp"
#include "store/pg/detail/testing/test_databases.hpp"
#include "store/pg/pg_copy_target.hpp"
#include "store/pg/pg_store.hpp"
#include "store/sqlite/sqlite_copy_source.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::store::pg {
namespace {

namespace fs = std::filesystem;
using contract::id_at;
using contract::kMinute;
using contract::kT0;
using domain::EventKind;
using testing::TestDatabase;

template <class T>
T run(asio::awaitable<T> aw) {
    return block_on(std::move(aw));
}

template <class T>
T ok(Result<T> r, std::string_view what) {
    if (!r) throw std::runtime_error(std::string(what) + ": " + r.error().message());
    return std::move(*r);
}
void ok(Result<void> r, std::string_view what) {
    if (!r) throw std::runtime_error(std::string(what) + ": " + r.error().message());
}

std::string hex(std::string_view bytes) {
    std::string out;
    for (const unsigned char c : bytes) out += fmt::format("{:02x}", c);
    return out;
}

std::string describe(const Recipient& r) {
    return fmt::format("{} {} {} {} {} next={} last={} sent={} held={} bounce={}", r.id, r.address,
                       domain::name(r.type), domain::name(r.status), r.attempts,
                       r.next_attempt_at.value_or(-1), r.last_response.value_or("-"),
                       r.sent_at.value_or(-1), r.held_at.value_or(-1),
                       r.bounce ? std::string(domain::name(r.bounce->type)) + " " + r.bounce->code +
                                      " " + r.bounce->message
                                : "-");
}

std::string describe(const Email& e) {
    std::string out = fmt::format(
        "{} {} {} {} {} {} <{}> {} | {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", e.id,
        e.account_id, e.domain_id, e.envelope_id, domain::name(e.status), e.from_email, e.from_name,
        e.to_display, e.subject, e.message_id, e.return_token, e.track_opens, e.track_clicks,
        e.source, e.size_bytes, e.created_at, e.queued_at, e.sent_at.value_or(-1),
        e.delivered_at.value_or(-1), e.failed_at.value_or(-1), e.opened_at.value_or(-1),
        e.clicked_at.value_or(-1), e.recipients.size());
    for (const auto& t : e.tags) out += " tag " + t.name + "=" + t.value;
    out += " metadata " + e.metadata_json;
    for (const auto& r : e.recipients) out += "\n  " + describe(r);
    return out;
}

std::string describe(const Page<Email>& p) {
    std::string out = fmt::format("total {}:", p.total);
    for (const auto& e : p.items) out += " " + e.id + "/" + std::string(domain::name(e.status));
    return out;
}

std::string describe(const Page<Envelope>& p) {
    std::string out = fmt::format("total {}:", p.total);
    for (const auto& e : p.items)
        out += fmt::format(" {}/{}/{}/{}", e.id, e.email_id, e.subject, e.total_recipients);
    return out;
}

std::string describe(const Page<InboundEmail>& p) {
    std::string out = fmt::format("total {}:", p.total);
    for (const auto& e : p.items)
        out += fmt::format(" {}/{}/{}/{}/{}/{}/{}", e.id, e.domain_id, e.from_email, e.to_address,
                           e.subject, e.cc_json, e.bcc_json);
    return out;
}

std::string describe(const InboundEmail& e) {
    std::string out = fmt::format("{} {} {} {} {} {} {} {} {} {} raw={}", e.id, e.account_id,
                                  e.domain_id, e.from_email, e.from_name, e.to_address, e.subject,
                                  e.reply_to, e.cc_json, e.received_at, e.raw.size());
    for (const auto& a : e.attachments)
        out += fmt::format(" [{} {} {} {} {}]", a.index, a.filename, a.content_type, a.size,
                           a.content_id);
    return out;
}

std::string describe(const Page<LogEntry>& p) {
    std::string out = fmt::format("total {}:", p.total);
    for (const auto& e : p.items)
        out += fmt::format(" {}/{}/{}/{}/{}/{}/{}/{}/{}", e.id, e.created_at, e.method, e.url,
                           e.status, e.duration_ms, e.ip, e.user_agent, e.session);
    return out;
}

std::string describe(const Webhook& w) {
    std::string out = fmt::format("{} {} {} {} {} {}:", w.id, w.url, w.active, w.secret.size(),
                                  w.created_at, w.updated_at);
    for (const auto k : w.events) out += " " + std::string(domain::name(k));
    out += fmt::format(" previous until {}", w.previous_secret_until.value_or(-1));
    // Rotated once (the fixture): both secrets, NUL bytes and all.
    return out + (w.secret == std::string("n\0\xfe", 3) + "2" &&
                          w.previous_secret == std::string("k\0\xff", 3) + "1"
                      ? " secret ok"
                      : " secret differs");
}

std::string describe(const Page<WebhookAttempt>& p) {
    std::string out = fmt::format("total {}:", p.total);
    for (const auto& a : p.items)
        out += fmt::format(" {}/{}/{}/{}/{}/{}", a.id, a.event_id, a.attempt,
                           a.status_code.value_or(-1), a.error.value_or("-"), a.duration_ms);
    return out;
}

std::string describe(const Domain& d) {
    return fmt::format("{} {} {} {} {} {}{}{}{} {} {} {} {} {} {} {}", d.id, d.account_id, d.name,
                       domain::name(d.status), d.token, d.sending, d.inbound, d.open_tracking,
                       d.click_tracking, d.records_json, d.first_verify_at.value_or(-1),
                       d.last_checked_at.value_or(-1), d.next_check_at.value_or(-1),
                       d.verified_at.value_or(-1), d.created_at, d.updated_at);
}

std::string describe(const std::vector<DkimKey>& keys) {
    std::string out;
    for (const auto& k : keys)
        out += fmt::format("[{} {} {} {} {} {} {}]", k.id, k.domain_id, k.selector,
                           hex(k.sealed_private_key), k.public_key, k.active, k.created_at);
    return out;
}

// What the tests fill the SQLite store with, to look for afterwards.
struct Filled {
    Account acme, beta;
    Domain domain;
    Webhook hook;
    std::string leased, fresh, retried, bounced, idem;  // emails
    std::vector<std::string> emails;                    // all five
    std::string inbound_id;
};

Domain make_domain(Store& s, const Account& a) {
    Domain d{.id = id_at("dom_", kT0),
             .account_id = a.id,
             .name = "mail.example.com",
             .status = domain::DomainStatus::pending,
             .token = "tok1",
             .records_json = R"({"dkim":[]})",
             .next_check_at = kT0 + kMinute,
             .created_at = kT0,
             .updated_at = kT0};
    std::vector<DkimKey> keys;
    for (const auto* selector : {"ph1", "ph2"})
        keys.push_back({.id = id_at("dk_", kT0),
                        .domain_id = d.id,
                        .selector = selector,
                        .sealed_private_key = std::string("sealed\0\xff\x01", 9) + selector,
                        .public_key = std::string("MIIB") + selector,
                        .active = std::string(selector) == "ph1",
                        .created_at = kT0});
    ok(run(s.create_domain(d, keys)), "create_domain");
    auto verified = domain::make_event(EventKind::domain_verified, a.id, std::nullopt,
                                       R"({"domain":"mail.example.com"})", kT0 + 1);
    ok(run(s.record_domain_check({.account_id = a.id,
                                  .domain_id = d.id,
                                  .status = domain::DomainStatus::verified,
                                  .records_json = R"({"dkim":[{"status":"verified"}]})",
                                  .checked_at = kT0 + 1,
                                  .next_check_at = kT0 + 86'400'000,
                                  .first_verify_at = kT0,
                                  .verified_at = kT0 + 1,
                                  .event = verified})),
       "record_domain_check");
    return ok(run(s.find_domain_by_id(a.id, d.id)), "find_domain_by_id");
}

std::string create(Store& s, NewEmail n) {
    auto id = n.email.id;
    auto r = ok(run(s.create_email(std::move(n))), "create_email");
    if (r) throw std::runtime_error("an idempotent replay");
    return id;
}

void change(Store& s, const Account& a, const std::string& id,
            const std::function<std::vector<domain::RecipientOutcome>(const Email&)>& outcomes,
            UnixMs at) {
    auto e = ok(run(s.find_email(a.id, id)), "find_email");
    ok(run(s.change_email(a.id, id, true, contract::apply({.recipients = outcomes(e), .at = at}))),
       "change_email");
}

EventRouter product_router() {
    return [](const Event& e, const std::vector<Webhook>& all) {
        return domain::webhooks_for(e, all);
    };
}

// A store with something in every table the copy moves (and a job lease, which it does not).
Filled fill(Store& s) {
    Filled f;
    f.acme = {.id = id_at("acc_", kT0), .name = "acme", .created_at = kT0};
    f.beta = {.id = id_at("acc_", kT0 + 1), .name = "beta", .created_at = kT0 + 1};
    ok(run(s.create_account(f.acme)), "acme");
    ok(run(s.create_account(f.beta)), "beta");
    ok(run(s.create_api_key({.id = id_at("key_", kT0),
                             .account_id = f.acme.id,
                             .prefix = "ph_live_abc",
                             .hash = "hash-one",
                             .created_at = kT0})),
       "key");
    const auto revoked = id_at("key_", kT0 + 1);
    ok(run(s.create_api_key({.id = revoked,
                             .account_id = f.acme.id,
                             .prefix = "ph_live_def",
                             .hash = "hash-two",
                             .created_at = kT0 + 1})),
       "key");
    ok(run(s.revoke_api_key(revoked, kT0 + 2)), "revoke");
    f.domain = make_domain(s, f.acme);
    f.hook = {.id = id_at("wh_", kT0),
              .account_id = f.acme.id,
              .url = "https://hooks.example/1",
              .events = {EventKind::email_sent, EventKind::email_delivered,
                         EventKind::domain_verified, EventKind::inbound_received},
              .secret = std::string("k\0\xff", 3) + "1",
              .created_at = kT0,
              .updated_at = kT0};
    ok(run(s.create_webhook(f.hook)), "create_webhook");
    ok(run(s.rotate_webhook_secret(f.acme.id, f.hook.id, std::string("n\0\xfe", 3) + "2",
                                   kT0 + 86'400'000, kT0 + 1)),
       "rotate_webhook_secret");

    // Leased: claimed by a node that stopped without lifting its lease (for days).
    f.leased = create(s, contract::new_email(f.acme, f.domain, 2, kT0 + 10));
    ok(run(s.claim_due(kT0 + 15, 100, "node-a", kT0 + 9'000'000)), "claim");
    // Fresh: three recipients never tried (SQLite keeps no next_attempt_at for them).
    auto fresh = contract::new_email(f.acme, f.domain, 3, kT0 + 20);
    fresh.email.subject = "Fresh news";
    fresh.email.tags = {{.name = "campaign", .value = "spring"}, {.name = "tier", .value = "a"}};
    fresh.email.metadata_json = R"({"order":42})";
    f.fresh = create(s, std::move(fresh));
    // Retried: tried once, one delivered, the other to be tried again ten minutes later.
    f.retried = create(s, contract::new_email(f.acme, f.domain, 2, kT0 + 30));
    change(
        s, f.acme, f.retried,
        [](const Email& e) {
            return std::vector{contract::delivered(e.recipients[0]),
                               contract::retry_at(e.recipients[1], kT0 + 10 * kMinute)};
        },
        kT0 + 40);
    // ... and held by the operator since (`posthorn queue hold`).
    if (ok(run(s.hold_queued({.email_id = f.retried}, kT0 + 45)), "hold") != 1)
        throw std::runtime_error("hold: no recipient held");
    // Bounced: given up, and the address suppressed.
    auto bounced = contract::new_email(f.acme, f.domain, 1, kT0 + 50);
    bounced.recipients[0].address = "gone@example.net";
    f.bounced = create(s, std::move(bounced));
    change(
        s, f.acme, f.bounced,
        [](const Email& e) { return std::vector{contract::hard_bounced(e.recipients[0])}; },
        kT0 + 70);
    // Idempotent: its key replays its response.
    auto idem = contract::new_email(f.acme, f.domain, 1, kT0 + 100);
    idem.idempotency_key = "order-17";
    idem.response = {.status = 200, .body = R"({"id":"x"})"};
    idem.idempotency_expires_at = kT0 + 86'400'000;
    f.idem = create(s, std::move(idem));
    f.emails = {f.leased, f.fresh, f.retried, f.bounced, f.idem};

    // The events so far routed; one delivery attempted and failed (retried later), the
    // others pending.
    for (int n = 1; n > 0;) n = ok(run(s.route_events(50, product_router())), "route");
    auto due = ok(run(s.claim_webhook_deliveries(kT0 + 200, 1, "node-a", kT0 + 1000)), "claim");
    if (due.size() != 1) throw std::runtime_error("no webhook delivery");
    ok(run(s.record_webhook_attempt({.delivery_id = due[0].delivery_id,
                                     .attempt = 1,
                                     .status_code = 500,
                                     .error = "HTTP 500",
                                     .duration_ms = 12,
                                     .at = kT0 + 210,
                                     .next_attempt_at = kT0 + 5 * kMinute})),
       "record_webhook_attempt");

    // Inbound, after the routing: its event is not routed yet.
    InboundEmail in{
        .id = id_at("in_", kT0 + 300),
        .account_id = f.acme.id,
        .domain_id = f.domain.id,
        .from_email = "someone@example.org",
        .from_name = "Someone",
        .to_address = "support@mail.example.com",
        .subject = "Question",
        .cc_json = R"(["c@example.org"])",
        .raw = std::string("From: someone@example.org\r\n\r\nhi\0\xff", 34),
        .received_at = kT0 + 300,
        .attachments = {
            {.index = 0, .filename = "a.pdf", .content_type = "application/pdf", .size = 10},
            {.index = 1, .content_type = "image/png", .size = 20, .content_id = "img1"}}};
    f.inbound_id = in.id;
    auto received = domain::make_event(EventKind::inbound_received, f.acme.id, std::nullopt,
                                       R"({"id":")" + in.id + R"("})", kT0 + 300);
    ok(run(s.create_inbound({in}, {received})), "create_inbound");

    for (int i = 0; i < 3; ++i)
        s.append_log({.id = id_at("log_", kT0 + 400 + i),
                      .account_id = i == 2 ? f.beta.id : f.acme.id,
                      .created_at = kT0 + 400 + i,
                      .method = i ? "GET" : "POST",
                      .url = "/v1/emails?page=" + std::to_string(i),
                      .status = i ? 200 : 422,
                      .duration_ms = 3 + i,
                      .ip = "192.0.2.1",
                      .user_agent = "test",
                      .session = i == 1});
    ok(run(s.flush()), "flush");
    ok(run(s.take_job_lease("retention", "node-a", kT0, kT0 + 1000)), "job lease");
    return f;
}

// A source that hands one row too many to a table, or counts one row too many.
class Tampered final : public CopySource {
  public:
    Tampered(CopySource& real, bool extra_row) : real_(real), extra_row_(extra_row) {}
    Result<void> read(const CopyTable& table, RowSink& sink) override {
        if (auto r = real_.read(table, sink); !r) return r;
        if (!extra_row_ || table.name != "api_keys") return {};
        // A key of an account that does not exist: a foreign key the target enforces.
        sink.text("key_orphan");
        sink.text("acc_missing");
        sink.text("p");
        sink.text("h-orphan");
        sink.integer(1);
        sink.null();
        return sink.end_row();
    }
    Result<std::int64_t> count(const CopyTable& table) override {
        auto n = real_.count(table);
        if (n && !extra_row_ && table.name == "accounts") return *n + 1;
        return n;
    }

  private:
    CopySource& real_;
    bool extra_row_;
};

class PgCopyTest : public ::testing::Test {
  protected:
    void SetUp() override {
        db_ = TestDatabase::make();
        if (!db_) GTEST_SKIP() << "no PostgreSQL server (PH_TEST_PG_DSN)";
        log::set_level(log::Level::warn);
        static int n = 0;
        dir_ = fs::temp_directory_path() /
               ("ph_copy_pgtest_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
        fs::create_directories(dir_);
        path_ = (dir_ / "posthorn.db").string();
    }
    void TearDown() override {
        db_.reset();
        if (!dir_.empty()) fs::remove_all(dir_);
    }

    std::unique_ptr<sqlite::SqliteStore> open_sqlite() {
        auto s = sqlite::SqliteStore::open({.path = path_, .readers = 1});
        if (!s) throw std::runtime_error("SqliteStore::open: " + s.error().message());
        return std::move(*s);
    }
    Filled filled() {
        auto s = open_sqlite();
        return fill(*s);
    }

    // Copies the SQLite store into the test's database; `tamper`: 0 as it is, 1 one row
    // too many, 2 a count too many.
    Result<CopyReport> copy(int tamper = 0) {
        auto source = sqlite::SqliteCopySource::open(path_);
        if (!source) return source.error();
        auto target = PgCopyTarget::open(db_->url());
        if (!target) return target.error();
        if (tamper == 0) return copy_store(**source, **target);
        Tampered t(**source, tamper == 1);
        return copy_store(t, **target);
    }

    std::int64_t rows_in(const std::string& table) {
        auto c = detail::Conn::open(db_->url());
        if (!c) return -1;
        auto rows = c->exec("SELECT count(*) FROM " + table);
        return rows ? rows->row(0).int64(0) : -1;
    }
    std::int64_t rows_in_all() {
        std::int64_t n = 0;
        for (const auto& t : copy_tables()) n += rows_in(std::string(t.name));
        return n;
    }

    std::unique_ptr<TestDatabase> db_;
    fs::path dir_;
    std::string path_;
};

TEST_F(PgCopyTest, EveryTableArrivesAndCountsMatch) {
    filled();
    auto report = copy();
    ASSERT_TRUE(report) << report.error().message();
    EXPECT_EQ(report->outcome, CopyReport::Outcome::copied);
    std::map<std::string, std::int64_t> counts;
    for (const auto& t : report->tables) {
        EXPECT_EQ(t.source, t.target) << t.table;
        counts[t.table] = t.target;
        EXPECT_EQ(rows_in(t.table), t.target) << t.table << ": committed";
    }
    EXPECT_EQ(report->tables.size(), copy_tables().size());
    EXPECT_EQ(counts["accounts"], 2);
    EXPECT_EQ(counts["api_keys"], 2);
    EXPECT_EQ(counts["dkim_keys"], 2);
    EXPECT_EQ(counts["emails"], 5);
    EXPECT_EQ(counts["email_tags"], 2);  // the fresh email's
    EXPECT_EQ(counts["recipients"], 9);
    EXPECT_EQ(counts["suppressions"], 1);
    EXPECT_EQ(counts["idempotency_keys"], 1);
    // domain.verified, the retried email's email.sent and email.delivery_delayed,
    // email.bounced and the suppression.added of its address, inbound.received; the hook
    // hears of the first two (it does not subscribe to the others, and the inbound one is not
    // routed yet).
    EXPECT_EQ(counts["events"], 6);
    EXPECT_EQ(counts["webhook_deliveries"], 2);
    EXPECT_EQ(counts["webhook_attempts"], 1);
    EXPECT_EQ(counts["request_logs"], 3);
    EXPECT_EQ(counts["inbound_emails"], 1);
    EXPECT_EQ(counts["inbound_attachments"], 2);
    EXPECT_EQ(rows_in("job_leases"), 0) << "a node's runtime state is not copied";
}

TEST_F(PgCopyTest, ThePostgresStoreAnswersWhatTheSqliteStoreAnswered) {
    const auto f = filled();
    auto report = copy();
    ASSERT_TRUE(report && report->outcome == CopyReport::Outcome::copied);
    auto lite = open_sqlite();
    auto pg = ok(PgStore::open({.url = db_->url(), .readers = 1, .listen = false}), "PgStore");
    Store* both[] = {lite.get(), pg.get()};
    auto same = [&](const auto& ask) {  // what each store answers, described
        return std::pair{ask(*both[0]), ask(*both[1])};
    };
    auto expect_same = [&](std::string_view what, const auto& ask) {
        const auto [a, b] = same(ask);
        EXPECT_EQ(a, b) << what;
    };
    expect_same("key", [](Store& s) {
        auto k = ok(run(s.find_api_key("hash-one")), "find_api_key");
        return fmt::format("{} {} {} {} {}", k.id, k.account_id, k.prefix, k.created_at,
                           k.revoked_at.value_or(-1));
    });
    expect_same("keys", [&](Store& s) {
        return ok(run(s.list_api_keys(f.acme.id)), "list_api_keys").size();
    });
    expect_same("domain", [&](Store& s) {
        return describe(ok(run(s.find_domain_by_id(f.acme.id, f.domain.id)), "domain"));
    });
    expect_same("dkim keys",
                [&](Store& s) { return describe(ok(run(s.dkim_keys(f.domain.id)), "dkim")); });
    expect_same("dkim zone", [](Store& s) { return ok(run(s.dkim_zone()), "zone").size(); });
    for (const auto& id : f.emails) {
        expect_same(id,
                    [&](Store& s) { return describe(ok(run(s.find_email(f.acme.id, id)), id)); });
        expect_same(id + " raw",
                    [&](Store& s) { return ok(run(s.email_raw(f.acme.id, id)), "raw"); });
    }
    auto fresh = ok(run(pg->find_email(f.acme.id, f.fresh)), "fresh");
    for (const auto& r : fresh.recipients)
        EXPECT_EQ(r.next_attempt_at, fresh.queued_at) << "a recipient never tried is due";
    for (const std::string search : {"", "r2@example", "GONE@", "fresh", "zzz"})
        for (const std::string sort : {"created_at", "to_email"})
            expect_same("emails " + search + " " + sort, [&](Store& s) {
                SearchQuery q{.account_id = f.acme.id, .limit = 3, .sort_by = sort};
                if (!search.empty()) q.search = search;
                return describe(ok(run(s.list_emails(q)), "list_emails"));
            });
    expect_same("by tag", [&](Store& s) {
        SearchQuery q{.account_id = f.acme.id, .tags = {{.name = "tier", .value = "a"}}};
        return describe(ok(run(s.list_emails(q)), "list_emails"));
    });
    expect_same("by status", [&](Store& s) {
        SearchQuery q{.account_id = f.acme.id, .statuses = {domain::EmailStatus::queued}};
        return describe(ok(run(s.list_emails(q)), "list_emails"));
    });
    expect_same("envelopes", [&](Store& s) {
        SearchQuery q{.account_id = f.acme.id, .sort_by = "subject", .search = "hello"};
        return describe(ok(run(s.list_envelopes(q)), "list_envelopes"));
    });
    expect_same("idempotency", [&](Store& s) {
        auto r = ok(run(s.find_idempotent(f.acme.id, "order-17", kT0 + 200)), "idem");
        return r ? fmt::format("{} {}", r->status, r->body) : std::string("none");
    });
    for (const auto& account : {f.acme.id, f.beta.id})
        expect_same("logs", [&](Store& s) {
            return describe(ok(run(s.list_logs({.account_id = account})), "logs"));
        });
    expect_same("inbound list", [&](Store& s) {
        SearchQuery q{.account_id = f.acme.id, .sort_by = "received_at", .search = "quest"};
        return describe(ok(run(s.list_inbound(q)), "list_inbound"));
    });
    expect_same("inbound", [&](Store& s) {
        return describe(ok(run(s.find_inbound(f.acme.id, f.inbound_id)), "find_inbound"));
    });
    expect_same("webhook", [&](Store& s) {
        return describe(ok(run(s.find_webhook(f.acme.id, f.hook.id)), "find_webhook"));
    });
    expect_same("webhook attempts", [&](Store& s) {
        return describe(ok(run(s.list_webhook_attempts(f.acme.id, f.hook.id, 1, 20)), "attempts"));
    });
    EXPECT_NE(describe(ok(run(pg->find_webhook(f.acme.id, f.hook.id)), "wh")).find("secret ok"),
              std::string::npos);
    // And they answered something: a search by a recipient finds its email (through the
    // recipient_addresses the copy made), the lists are not empty.
    SearchQuery by_recipient{.account_id = f.acme.id, .search = "r2@example"};
    auto found = ok(run(pg->list_emails(by_recipient)), "search");
    ASSERT_EQ(found.total, 1);
    EXPECT_EQ(found.items.at(0).id, f.fresh);
    EXPECT_EQ(ok(run(pg->list_emails({.account_id = f.acme.id})), "list").total, 5);
    auto tagged = ok(run(pg->list_emails({.account_id = f.acme.id,
                                          .tags = {{.name = "campaign", .value = "spring"}}})),
                     "by tag");
    ASSERT_EQ(tagged.total, 1);
    EXPECT_EQ(tagged.items.at(0).id, f.fresh);
    EXPECT_EQ(tagged.items.at(0).metadata_json, R"({"order":42})");
    EXPECT_EQ(ok(run(pg->list_logs({.account_id = f.acme.id})), "logs").total, 2);
    EXPECT_EQ(ok(run(pg->list_webhook_attempts(f.acme.id, f.hook.id, 1, 20)), "a").total, 1);
    auto key = ok(run(pg->find_api_key("hash-two")), "revoked key");
    EXPECT_EQ(key.revoked_at, kT0 + 2);
    EXPECT_EQ(ok(run(pg->find_domain_by_id(f.acme.id, f.domain.id)), "d").status,
              domain::DomainStatus::verified);
    EXPECT_EQ(ok(run(pg->find_inbound(f.acme.id, f.inbound_id)), "in").attachments.size(), 2u);
}

TEST_F(PgCopyTest, TheQueueAndTheOutboxCarryOnWithoutTheOldLeases) {
    const auto f = filled();
    ASSERT_TRUE(copy());
    auto pg = ok(PgStore::open({.url = db_->url(), .readers = 1, .listen = false}), "PgStore");
    // Due now: the fresh email's three, and the leased email's two (its node's lease was
    // not copied); the retried recipient is due ten minutes on, once released (its hold was
    // copied).
    auto claimed = ok(run(pg->claim_due(kT0 + 1000, 100, "node-b", kT0 + 9'000'000)), "claim");
    std::map<std::string, std::size_t> by_email;
    for (const auto& q : claimed) by_email[q.id] = q.recipients.size();
    EXPECT_EQ(by_email,
              (std::map<std::string, std::size_t>{{f.fresh, 3}, {f.leased, 2}, {f.idem, 1}}));
    EXPECT_TRUE(
        ok(run(pg->claim_due(kT0 + 10 * kMinute, 100, "node-b", kT0 + 20 * kMinute)), "claim")
            .empty())
        << "held";
    EXPECT_EQ(ok(run(pg->release_queued({.email_id = f.retried}, kT0 + 10 * kMinute)), "release"),
              1);
    auto retry =
        ok(run(pg->claim_due(kT0 + 10 * kMinute, 100, "node-b", kT0 + 20 * kMinute)), "claim");
    ASSERT_EQ(retry.size(), 1u);
    EXPECT_EQ(retry[0].id, f.retried);
    ASSERT_EQ(retry[0].recipients.size(), 1u);
    EXPECT_EQ(retry[0].recipients[0].attempts, 1);

    // The outbox: only the event written after the routing is routed now.
    std::vector<std::string> kinds;
    EventRouter router = [&kinds](const Event& e, const std::vector<Webhook>& all) {
        kinds.emplace_back(domain::name(e.kind));
        return domain::webhooks_for(e, all);
    };
    EXPECT_EQ(ok(run(pg->route_events(100, router)), "route"), 1);
    EXPECT_EQ(kinds, std::vector<std::string>{"inbound.received"});
    // The deliveries: pending ones due, the attempted one at its retry time.
    auto deliveries = ok(
        run(pg->claim_webhook_deliveries(kT0 + 4 * kMinute, 100, "node-b", kT0 + 9'000'000)), "c");
    for (const auto& d : deliveries) EXPECT_EQ(d.attempts, 0) << d.event_id;
    auto later = ok(
        run(pg->claim_webhook_deliveries(kT0 + 5 * kMinute, 100, "node-b", kT0 + 9'000'000)), "c");
    ASSERT_EQ(later.size(), 1u);
    EXPECT_EQ(later[0].attempts, 1);

    // New rows number on after the copied ones.
    auto next = contract::new_email(f.acme, f.domain, 2, kT0 + 5000);
    const auto id = create(*pg, std::move(next));
    auto e = ok(run(pg->find_email(f.acme.id, id)), "new email");
    std::int64_t max_copied = 0;
    for (const auto& old : f.emails)
        for (const auto& r : ok(run(pg->find_email(f.acme.id, old)), "old").recipients)
            max_copied = std::max(max_copied, r.id);
    ASSERT_EQ(e.recipients.size(), 2u);
    EXPECT_GT(e.recipients[0].id, max_copied);
    EXPECT_LT(e.recipients[0].id, e.recipients[1].id);
    ok(run(pg->record_webhook_attempt({.delivery_id = later[0].delivery_id,
                                       .attempt = 2,
                                       .status_code = 200,
                                       .duration_ms = 5,
                                       .at = kT0 + 6 * kMinute,
                                       .delivered = true})),
       "a new attempt");
    auto attempts = ok(run(pg->list_webhook_attempts(f.acme.id, f.hook.id, 1, 20)), "attempts");
    ASSERT_EQ(attempts.items.size(), 2u);
    EXPECT_GT(attempts.items[0].id, attempts.items[1].id) << "numbered on, newest first";
    change(
        *pg, f.acme, id,
        [](const Email& em) { return std::vector{contract::delivered(em.recipients[0])}; },
        kT0 + 6000);
    kinds.clear();
    EXPECT_EQ(ok(run(pg->route_events(100, router)), "route"), 1) << "a new event's seq";
    EXPECT_EQ(kinds, std::vector<std::string>{"email.sent"});
}

TEST_F(PgCopyTest, ASecondCopyIntoTheSameDatabaseIsRefusedAndChangesNothing) {
    filled();
    ASSERT_TRUE(copy());
    const auto before = rows_in_all();
    auto again = copy();
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ(again->outcome, CopyReport::Outcome::target_not_empty);
    ASSERT_FALSE(again->tables.empty());
    EXPECT_EQ(again->tables.front().table, "accounts");
    EXPECT_EQ(again->tables.front().target, 2);
    EXPECT_EQ(rows_in_all(), before);
}

TEST_F(PgCopyTest, AFailedCopyLeavesTheDatabaseEmptyAndAnotherCanFollow) {
    filled();
    auto failed = copy(1);
    EXPECT_FALSE(failed) << "a key of no account";
    EXPECT_EQ(rows_in_all(), 0);
    auto differ = copy(2);
    ASSERT_TRUE(differ) << differ.error().message();
    EXPECT_EQ(differ->outcome, CopyReport::Outcome::counts_differ);
    EXPECT_EQ(differ->tables.front().source, differ->tables.front().target + 1);
    EXPECT_EQ(rows_in_all(), 0) << "rolled back";
    auto good = copy();
    ASSERT_TRUE(good) << good.error().message();
    EXPECT_EQ(good->outcome, CopyReport::Outcome::copied);
    EXPECT_EQ(rows_in("accounts"), 2);
}

TEST_F(PgCopyTest, ADatabaseOfANewerSchemaIsRefused) {
    auto c = detail::Conn::open(db_->url());
    ASSERT_TRUE(c);
    ASSERT_TRUE(PgCopyTarget::open(db_->url())) << "migrates a fresh database";
    ASSERT_TRUE(c->run("INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"));
    auto target = PgCopyTarget::open(db_->url());
    ASSERT_FALSE(target);
    EXPECT_EQ(target.error(), errc::newer_schema);
}

}  // namespace
}  // namespace posthorn::store::pg
