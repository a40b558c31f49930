// The queue manager through its seams: a real store (SQLite in a temporary directory), an
// in-memory DNS zone (dns::StaticResolver), a clock the test moves (core::ManualClock), and
// a scripted SMTP peer — posthorn's own server engine (smtp::Server) with a handler that
// answers as each test says and records what it saw.
#include "delivery/queue_manager.hpp"
#include "core/block_on.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "core/id.hpp"
#include "core/io_pool.hpp"
#include "core/testing/manual_clock.hpp"
#include "crypto/keys.hpp"
#include "dns/testing/static_resolver.hpp"
#include "smtp/server.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace posthorn::delivery {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using domain::BounceType;
using domain::EmailStatus;
using domain::RecipientStatus;

constexpr UnixMs kStart = 1'900'000'000'000;

// What the scripted peer answers, and what it saw. Thread-safe.
struct Peer {
    std::mutex mutex;
    std::map<std::string, std::string> rcpt;  // address → reply ("550 5.1.1 …"); else 250
    std::vector<std::string> data;            // replies to messages, in turn; then 250
    std::vector<smtp::ReceivedMessage> messages;
    int sessions = 0;
    int rcpt_attempts = 0;

    smtp::Reply rcpt_reply(const std::string& address) {
        std::lock_guard lock(mutex);
        ++rcpt_attempts;
        auto it = rcpt.find(address);
        return it == rcpt.end() ? *smtp::parse_reply("250 2.1.5 OK\r\n")
                                : *smtp::parse_reply(it->second + "\r\n");
    }
    smtp::Reply message_reply(smtp::ReceivedMessage m) {
        std::lock_guard lock(mutex);
        if (!data.empty()) {
            auto reply = data.front();
            data.erase(data.begin());
            if (reply[0] != '2') return *smtp::parse_reply(reply + "\r\n");
        }
        messages.push_back(std::move(m));
        return *smtp::parse_reply("250 2.0.0 Ok: queued\r\n");
    }
    std::size_t received() {
        std::lock_guard lock(mutex);
        return messages.size();
    }
    int rcpts() {
        std::lock_guard lock(mutex);
        return rcpt_attempts;
    }
};

class ScriptedHandler final : public smtp::SessionHandler {
  public:
    explicit ScriptedHandler(Peer& p) : peer_(p) {
        std::lock_guard lock(peer_.mutex);
        ++peer_.sessions;
    }
    asio::awaitable<smtp::Reply> on_auth(std::string, std::string, std::string) override {
        co_return *smtp::parse_reply("502 5.5.1 no AUTH\r\n");
    }
    asio::awaitable<smtp::Reply> on_mail_from(std::string, std::size_t) override {
        co_return *smtp::parse_reply("250 2.1.0 OK\r\n");
    }
    asio::awaitable<smtp::Reply> on_rcpt_to(std::string address) override {
        co_return peer_.rcpt_reply(address);
    }
    asio::awaitable<smtp::Reply> on_message(smtp::ReceivedMessage m) override {
        co_return peer_.message_reply(std::move(m));
    }
    void on_reset() override {}

  private:
    Peer& peer_;
};

// The email store, but a change of an email waits while the gate is shut (polled on the
// caller's executor): an outcome that the store takes its time to commit.
class GatedEmails final : public store::EmailStore {
  public:
    explicit GatedEmails(store::EmailStore& inner) : inner_(inner) {}
    std::atomic<bool> shut{true};
    std::atomic<int> waiting{0};  // changes held at the gate

    asio::awaitable<Result<void>> change_email(std::string account_id, std::string email_id,
                                               bool with_recipients,
                                               store::EmailDecision decide) override {
        if (shut) {
            ++waiting;
            asio::steady_timer t(co_await asio::this_coro::executor);
            while (shut) {
                t.expires_after(5ms);
                co_await t.async_wait(asio::use_awaitable);
            }
            --waiting;
        }
        co_return co_await inner_.change_email(std::move(account_id), std::move(email_id),
                                               with_recipients, std::move(decide));
    }
    asio::awaitable<Result<std::optional<store::StoredResponse>>> create_email(
        store::NewEmail e) override {
        return inner_.create_email(std::move(e));
    }
    asio::awaitable<Result<std::vector<std::optional<store::StoredResponse>>>> create_emails(
        std::vector<store::NewEmail> es) override {
        return inner_.create_emails(std::move(es));
    }
    asio::awaitable<Result<std::optional<store::StoredResponse>>> find_idempotent(
        std::string account_id, std::string key, UnixMs now) override {
        return inner_.find_idempotent(std::move(account_id), std::move(key), now);
    }
    asio::awaitable<Result<void>> change_email_locked(std::string account_id, std::string email_id,
                                                      store::EmailDecision decide) override {
        return inner_.change_email_locked(std::move(account_id), std::move(email_id),
                                          std::move(decide));
    }
    asio::awaitable<Result<std::vector<store::Email>>> scheduled_due(UnixMs now,
                                                                     int limit) override {
        return inner_.scheduled_due(now, limit);
    }
    asio::awaitable<Result<store::Email>> find_email_by_return_token(std::string token) override {
        return inner_.find_email_by_return_token(std::move(token));
    }
    asio::awaitable<Result<store::Email>> find_email(std::string account_id,
                                                     std::string id) override {
        return inner_.find_email(std::move(account_id), std::move(id));
    }
    asio::awaitable<Result<std::string>> email_raw(std::string account_id,
                                                   std::string id) override {
        return inner_.email_raw(std::move(account_id), std::move(id));
    }
    asio::awaitable<Result<std::vector<store::Event>>> email_events(std::string account_id,
                                                                    std::string id) override {
        return inner_.email_events(std::move(account_id), std::move(id));
    }
    asio::awaitable<Result<store::Page<store::Email>>> list_emails(
        store::SearchQuery query) override {
        return inner_.list_emails(std::move(query));
    }
    asio::awaitable<Result<store::Page<store::Envelope>>> list_envelopes(
        store::SearchQuery query) override {
        return inner_.list_envelopes(std::move(query));
    }

  private:
    store::EmailStore& inner_;
};

// A DKIM key pair made once for every test (RSA generation is slow).
const crypto::RsaKeyPair& dkim_pair() {
    static const auto pair = *crypto::generate_rsa(2048);
    return pair;
}

class QueueManagerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("ph_qm_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
        fs::create_directories(dir_);
        auto s = store::sqlite::SqliteStore::open({.path = (dir_ / "q.db").string(), .readers = 2});
        ASSERT_TRUE(s) << s.error().message();
        store_ = std::move(*s);
        peer_pool_.start();
        server_ = std::make_unique<smtp::Server>(
            peer_pool_,
            smtp::ServerOptions{.listen = {asio::ip::make_address("127.0.0.1"), 0},
                                .hostname = "mx.dest.test"},
            [this](std::string) { return std::make_unique<ScriptedHandler>(peer_); });
        auto bound = server_->start();
        ASSERT_TRUE(bound) << bound.error().message();
        port_ = bound->port();
        zone_.add_mx("dest.test", "mx.dest.test").add_address("mx.dest.test", loopback());
        zone_.add_mx("nomail.test", "");  // RFC 7505
        account_ = "acc_" + std::string(26, '1');
        ASSERT_TRUE(run(store_->create_account({.id = account_, .name = "acme"})));
        domain_ = new_id("dom_", kStart);
        const store::DkimKey key{
            .id = new_id("dk_", kStart),
            .domain_id = domain_,
            .selector = "s1",
            .sealed_private_key =
                crypto::seal(master_key_, dkim_pair().private_pem, "dkim:" + domain_ + ":s1"),
            .public_key = dkim_pair().public_spki_b64,
            .active = true,
            .created_at = kStart};
        ASSERT_TRUE(run(store_->create_domain({.id = domain_,
                                               .account_id = account_,
                                               .name = "sender.test",
                                               .token = "tok",
                                               .created_at = kStart,
                                               .updated_at = kStart},
                                              {key})));
    }

    void TearDown() override {
        stop_manager();
        if (server_) server_->stop();
        peer_pool_.stop();
        store_.reset();
        fs::remove_all(dir_);
    }

    static asio::ip::address loopback() { return asio::ip::make_address("127.0.0.1"); }

    template <class T>
    static T run(asio::awaitable<T> aw) {
        return block_on(std::move(aw));
    }

    Options options() {
        return Options{.hostname = "posthorn.test",
                       .mx_port = port_,
                       .allow_private_targets = true,  // the test's MX is on loopback
                       .tls = TlsSetting::off,
                       .retry_schedule_s = {60, 300},
                       .connect_timeout = 2s,
                       .command_timeout = 5s,
                       .master_key = master_key_,
                       .node_id = "node-a"};
    }

    void start_manager(Options o) { start_manager(std::move(o), *store_); }
    void start_manager(Options o, store::EmailStore& emails) {
        manager_ = std::make_unique<QueueManager>(
            manager_ctx_.get_executor(), blocking_.get_executor(),
            QueueManager::Stores{.queue = *store_, .emails = emails, .domains = *store_}, zone_,
            clock_, std::move(o));
        asio::co_spawn(manager_ctx_, manager_->run(), asio::detached);
        manager_thread_ = std::thread([this] { manager_ctx_.run(); });
    }
    void start_manager() { start_manager(options()); }

    void stop_manager() {
        if (!manager_) return;
        manager_->stop();
        // Let its sessions finish what they hold, then stop the context.
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (manager_->jobs_in_hand() > 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(5ms);
        manager_ctx_.stop();
        manager_thread_.join();
        manager_.reset();
    }

    // Queues an email from sender.test to `to` (fresh: due at once).
    std::string queue(const std::vector<std::string>& to, const std::string& return_path = "") {
        store::NewEmail n;
        n.email = {.id = new_id("em_", clock_.now_ms()),
                   .account_id = account_,
                   .domain_id = domain_,
                   .from_email = "a@sender.test",
                   .to_display = to.front(),
                   .subject = "s",
                   .message_id = "m@posthorn.test",
                   .source = "api"};
        n.email.return_token = n.email.id.substr(3) + "abcdefghij012345";
        n.email.return_path = return_path;
        n.email.created_at = n.email.queued_at = id_time(n.email.id, "em_");
        n.email.envelope_id = new_id("env_", clock_.now_ms());
        n.total_recipients = static_cast<int>(to.size());
        for (const auto& a : to)
            n.recipients.push_back({.address = a,
                                    .domain = a.substr(a.find('@') + 1),
                                    .type = domain::RecipientType::to});
        n.raw = "From: a@sender.test\r\nTo: " + to.front() +
                "\r\nSubject: s\r\nMessage-ID: <m@posthorn.test>\r\n\r\nhello\r\n";
        const auto id = n.email.id;
        EXPECT_TRUE(run(store_->create_email(std::move(n))));
        if (manager_) manager_->wake();
        return id;
    }

    store::Email email(const std::string& id) {
        auto e = run(store_->find_email(account_, id));
        EXPECT_TRUE(e) << e.error().message();
        return e ? *e : store::Email{};
    }

    // Waits (real time) until `pred` holds of the email, waking the manager meanwhile.
    template <class Pred>
    store::Email wait_until(const std::string& id, Pred pred, std::chrono::seconds limit = 10s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        for (;;) {
            auto e = email(id);
            if (pred(e) || std::chrono::steady_clock::now() > deadline) return e;
            std::this_thread::sleep_for(10ms);
        }
    }
    store::Email wait_final(const std::string& id) {
        return wait_until(id, [](const store::Email& e) { return domain::is_final(e.status); });
    }

    static inline std::atomic<int> counter_{0};
    fs::path dir_;
    std::unique_ptr<store::sqlite::SqliteStore> store_;
    Peer peer_;
    core::IoPool peer_pool_{1};
    std::unique_ptr<smtp::Server> server_;
    std::uint16_t port_ = 0;
    dns::StaticResolver zone_;
    core::testing::ManualClock clock_{kStart};
    std::string master_key_ = std::string(crypto::kMasterKeyBytes, 'k');
    std::string account_, domain_;
    asio::io_context manager_ctx_;
    asio::thread_pool blocking_{1};
    std::unique_ptr<QueueManager> manager_;
    std::thread manager_thread_;
};

TEST_F(QueueManagerTest, DeliversAnEmailInOneSignedTransaction) {
    start_manager();
    const auto first = queue({"ann@dest.test", "bob@dest.test"});
    auto e = wait_final(first);
    ASSERT_EQ(e.status, EmailStatus::delivered);
    EXPECT_TRUE(e.sent_at);
    EXPECT_TRUE(e.delivered_at);
    for (const auto& r : e.recipients) {
        EXPECT_EQ(r.status, RecipientStatus::delivered);
        EXPECT_EQ(r.attempts, 1);
        EXPECT_FALSE(r.bounce);
    }
    ASSERT_EQ(peer_.received(), 1u) << "both recipients in one transaction";
    {
        std::lock_guard lock(peer_.mutex);
        const auto& m = peer_.messages[0];
        EXPECT_EQ(m.rcpt_to, (std::vector<std::string>{"ann@dest.test", "bob@dest.test"}));
        EXPECT_EQ(m.mail_from, "bounces+" + e.return_token + "@posthorn.test");
        EXPECT_EQ(m.data.rfind("DKIM-Signature:", 0), 0u) << "signed: " << m.data.substr(0, 80);
        EXPECT_NE(m.data.find("d=sender.test"), std::string::npos);
        EXPECT_NE(m.data.find("s=s1"), std::string::npos);
    }
}

// An email accepted with a custom return path (domain::envelope_domain) leaves with it as the
// host of its envelope sender; the others with the server's name.
TEST_F(QueueManagerTest, TheEnvelopeSenderIsUnderTheEmailsReturnPath) {
    start_manager();
    const auto custom = queue({"ann@dest.test"}, "bounces.sender.test");
    auto e = wait_final(custom);
    ASSERT_EQ(e.status, EmailStatus::delivered);
    const auto plain = wait_final(queue({"bob@dest.test"}));
    ASSERT_EQ(plain.status, EmailStatus::delivered);
    ASSERT_EQ(peer_.received(), 2u);
    std::lock_guard lock(peer_.mutex);
    EXPECT_EQ(peer_.messages[0].mail_from, "bounces+" + e.return_token + "@bounces.sender.test");
    EXPECT_EQ(peer_.messages[1].mail_from, "bounces+" + plain.return_token + "@posthorn.test");
}

// Emails waiting for one destination go over one session, one transaction each, when the
// destination allows one connection.
TEST_F(QueueManagerTest, OneSessionCarriesTheMailWaitingForItsDestination) {
    std::vector<std::string> ids;
    for (const char* to : {"a@dest.test", "b@dest.test", "c@dest.test"}) ids.push_back(queue({to}));
    auto o = options();
    o.max_connections_per_domain = 1;
    start_manager(std::move(o));
    for (const auto& id : ids) EXPECT_EQ(wait_final(id).status, EmailStatus::delivered);
    EXPECT_EQ(peer_.received(), 3u);
    std::lock_guard lock(peer_.mutex);
    EXPECT_EQ(peer_.sessions, 1) << "the session was reused while its destination had mail";
}

// A session goes on with its next job while the store writes the last one's outcome: it does
// not wait for the commit. The jobs stay in hand (what a stop waits for) until they are written.
TEST_F(QueueManagerTest, ASessionDoesNotWaitForTheStoreToWriteAnOutcome) {
    std::vector<std::string> ids;
    for (const char* to : {"a@dest.test", "b@dest.test", "c@dest.test"}) ids.push_back(queue({to}));
    GatedEmails gated(*store_);
    auto o = options();
    o.max_connections_per_domain = 1;
    start_manager(std::move(o), gated);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (peer_.received() < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(5ms);
    EXPECT_EQ(peer_.received(), 3u) << "every message went while no outcome was written";
    EXPECT_EQ(gated.waiting.load(), 3);
    EXPECT_EQ(manager_->jobs_in_hand(), 3);
    for (const auto& id : ids) EXPECT_EQ(email(id).status, EmailStatus::queued);
    gated.shut = false;
    for (const auto& id : ids) EXPECT_EQ(wait_final(id).status, EmailStatus::delivered);
    EXPECT_EQ(peer_.received(), 3u);
    std::lock_guard lock(peer_.mutex);
    EXPECT_EQ(peer_.sessions, 1);
}

TEST_F(QueueManagerTest, ATemporaryRefusalIsRetriedWhenTheClockSaysSo) {
    peer_.rcpt["ann@dest.test"] = "450 4.2.1 try again later";
    start_manager();
    const auto id = queue({"ann@dest.test"});
    auto e = wait_until(id, [](const store::Email& e) { return e.recipients.at(0).attempts == 1; });
    ASSERT_EQ(e.recipients.at(0).attempts, 1);
    EXPECT_EQ(e.status, EmailStatus::queued);
    EXPECT_EQ(e.recipients[0].status, RecipientStatus::queued);
    EXPECT_EQ(e.recipients[0].next_attempt_at, clock_.now_ms() + 60'000);
    EXPECT_EQ(e.recipients[0].last_response, "450 4.2.1 try again later");
    // Not before its time: the manager polls, but the clock has not moved.
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(peer_.rcpts(), 1);
    {
        std::lock_guard lock(peer_.mutex);
        peer_.rcpt.clear();
    }
    clock_.advance(60'000);
    manager_->wake();
    e = wait_final(id);
    EXPECT_EQ(e.status, EmailStatus::delivered);
    EXPECT_EQ(e.recipients.at(0).attempts, 2);
    EXPECT_EQ(peer_.rcpts(), 2);
}

TEST_F(QueueManagerTest, RetriesThatRunOutFailSoftAndSuppressNothing) {
    peer_.rcpt["ann@dest.test"] = "451 4.3.0 mailbox busy";
    start_manager();
    const auto id = queue({"ann@dest.test"});
    for (int attempt = 1; attempt <= 2; ++attempt) {
        wait_until(id,
                   [&](const store::Email& e) { return e.recipients.at(0).attempts == attempt; });
        clock_.advance(attempt == 1 ? 60'000 : 300'000);
        manager_->wake();
    }
    const auto e = wait_final(id);
    ASSERT_EQ(e.status, EmailStatus::failed);
    const auto& r = e.recipients.at(0);
    EXPECT_EQ(r.attempts, 3) << "the first attempt and the two retries of the schedule";
    ASSERT_TRUE(r.bounce);
    EXPECT_EQ(r.bounce->type, BounceType::soft);
    EXPECT_EQ(r.bounce->code, "4.3.0");
    // Not suppressed: the next email to it is attempted.
    const auto again = queue({"ann@dest.test"});
    wait_until(again, [](const store::Email& e) { return e.recipients.at(0).attempts == 1; });
    EXPECT_EQ(peer_.rcpts(), 4);
}

TEST_F(QueueManagerTest, AHardBounceSuppressesAndTheNextEmailIsBlockedWithoutAConnection) {
    peer_.rcpt["gone@dest.test"] = "550 5.1.1 <gone@dest.test>: Recipient address rejected";
    start_manager();
    const auto id = queue({"gone@dest.test", "ann@dest.test"});
    auto e = wait_final(id);
    ASSERT_EQ(e.status, EmailStatus::bounced);
    std::map<std::string, store::Recipient> by;
    for (const auto& r : e.recipients) by[r.address] = r;
    ASSERT_TRUE(by["gone@dest.test"].bounce);
    EXPECT_EQ(by["gone@dest.test"].bounce->type, BounceType::hard);
    EXPECT_EQ(by["ann@dest.test"].status, RecipientStatus::delivered);
    const int rcpts = peer_.rcpts();
    const int sessions = [&] {
        std::lock_guard lock(peer_.mutex);
        return peer_.sessions;
    }();
    const auto next = queue({"Gone@dest.test"});
    e = wait_final(next);
    EXPECT_EQ(e.status, EmailStatus::blocked);
    EXPECT_FALSE(e.sent_at);
    EXPECT_EQ(e.recipients.at(0).attempts, 0);
    EXPECT_EQ(peer_.rcpts(), rcpts) << "never attempted";
    std::lock_guard lock(peer_.mutex);
    EXPECT_EQ(peer_.sessions, sessions) << "no connection for it";
}

TEST_F(QueueManagerTest, ADomainThatTakesNoMailFailsAtOnce) {
    start_manager();
    const auto id = queue({"x@nomail.test"});
    const auto e = wait_final(id);
    ASSERT_EQ(e.status, EmailStatus::failed);
    EXPECT_EQ(e.recipients.at(0).attempts, 1);
    ASSERT_TRUE(e.recipients[0].bounce);
    EXPECT_EQ(e.recipients[0].bounce->code, "5.1.10");
    EXPECT_EQ(peer_.rcpts(), 0);
}

TEST_F(QueueManagerTest, AnUnreachableServerIsRetried) {
    zone_.add_mx("dead.test", "mx.dead.test").add_address("mx.dead.test", loopback());
    auto o = options();
    // Nothing listens on the peer's port + 1 for mx.dead.test; dest.test is not used here.
    o.mx_port = static_cast<std::uint16_t>(port_ + 1);
    start_manager(std::move(o));
    const auto id = queue({"x@dead.test"});
    const auto e =
        wait_until(id, [](const store::Email& e) { return e.recipients.at(0).attempts == 1; });
    EXPECT_EQ(e.status, EmailStatus::queued);
    ASSERT_TRUE(e.recipients[0].last_response);
    EXPECT_NE(e.recipients[0].last_response->find("mx.dead.test"), std::string::npos)
        << *e.recipients[0].last_response;
    EXPECT_EQ(e.recipients[0].next_attempt_at, clock_.now_ms() + 60'000);
}

TEST_F(QueueManagerTest, RecipientsOverTheTransactionLimitGoInSeveralTransactions) {
    auto o = options();
    o.max_rcpt_per_transaction = 2;
    start_manager(std::move(o));
    const auto id =
        queue({"a@dest.test", "b@dest.test", "c@dest.test", "d@dest.test", "e@dest.test"});
    EXPECT_EQ(wait_final(id).status, EmailStatus::delivered);
    ASSERT_EQ(peer_.received(), 3u);
    std::lock_guard lock(peer_.mutex);
    std::size_t total = 0;
    for (const auto& m : peer_.messages) {
        EXPECT_LE(m.rcpt_to.size(), 2u);
        total += m.rcpt_to.size();
    }
    EXPECT_EQ(total, 5u);
}

// A node lifts its own leases at start, not another node's: mail another node claimed is
// left to it until its lease runs out, then taken over.
TEST_F(QueueManagerTest, AnotherNodesLeaseIsLeftUntilItRunsOut) {
    const auto id = queue({"ann@dest.test"});
    auto claimed = run(store_->claim_due(clock_.now_ms(), 10, "node-b", clock_.now_ms() + 600'000));
    ASSERT_TRUE(claimed);
    ASSERT_EQ(claimed->size(), 1u);
    start_manager();  // node-a
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(peer_.rcpts(), 0) << "node-b's lease holds";
    EXPECT_EQ(email(id).status, EmailStatus::queued);
    clock_.advance(600'001);
    manager_->wake();
    EXPECT_EQ(wait_final(id).status, EmailStatus::delivered);
}

}  // namespace
}  // namespace posthorn::delivery
