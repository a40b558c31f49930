// Component test: smtp::Server on 127.0.0.1:0, driven by a real TCP client from the test's
// thread (core::testing::LoopbackClient), with a SessionHandler that records what it is
// asked and answers from a script. The replies asserted are those docs/smtp.md promises.
#include "smtp/server.hpp"

#include <gtest/gtest.h>

#include <boost/asio/ssl/stream.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/loopback_client.hpp"
#include "crypto/keys.hpp"
#include "crypto/server_certificate.hpp"
#include "crypto/tls.hpp"
#include "smtp/reply.hpp"

namespace posthorn::smtp {
namespace {

using namespace std::chrono_literals;
using core::testing::eventually;
using core::testing::LoopbackClient;
using Strings = std::vector<std::string>;

// What the handlers of a test's sessions were asked, in order, and what they answer.
struct Script {
    std::mutex mutex;
    Strings calls;  // "open 127.0.0.1", "mail a@x 0", "rcpt b@y", "message", "reset", "auth z u p"
    std::vector<ReceivedMessage> messages;

    // The answers; set them before start(), or with set() once sessions run.
    Reply mail{250, {"2.1.0 Sender OK"}};
    Reply rcpt{250, {"2.1.5 Recipient OK"}};
    std::map<std::string, Reply> rcpt_for;  // by address, instead of `rcpt`
    Reply message{250, {"2.0.0 Ok: queued as em_1"}};
    Reply auth{235, {"2.7.0 Authentication successful"}};

    // Records a call; answers from the script (under the lock: a test may change the
    // script while a session runs).
    Reply note(std::string call, Reply Script::*answer = nullptr) {
        std::lock_guard lock(mutex);
        calls.push_back(std::move(call));
        return answer ? this->*answer : Reply{};
    }
    Reply note_rcpt(const std::string& address) {
        std::lock_guard lock(mutex);
        calls.push_back("rcpt " + address);
        const auto it = rcpt_for.find(address);
        return it == rcpt_for.end() ? rcpt : it->second;
    }
    void set(Reply Script::*answer, Reply r) {
        std::lock_guard lock(mutex);
        this->*answer = std::move(r);
    }
    Strings seen() {
        std::lock_guard lock(mutex);
        return calls;
    }
    std::vector<ReceivedMessage> received() {
        std::lock_guard lock(mutex);
        return messages;
    }
};

class ScriptedHandler final : public SessionHandler {
  public:
    explicit ScriptedHandler(std::shared_ptr<Script> script) : script_(std::move(script)) {}

    asio::awaitable<Reply> on_auth(std::string authzid, std::string user,
                                   std::string password) override {
        co_return script_->note("auth " + authzid + " " + user + " " + password, &Script::auth);
    }
    asio::awaitable<Reply> on_mail_from(std::string address, std::size_t declared_size) override {
        co_return script_->note("mail " + address + " " + std::to_string(declared_size),
                                &Script::mail);
    }
    asio::awaitable<Reply> on_rcpt_to(std::string address) override {
        co_return script_->note_rcpt(address);
    }
    asio::awaitable<Reply> on_message(ReceivedMessage message) override {
        {
            std::lock_guard lock(script_->mutex);
            script_->messages.push_back(message);
        }
        co_return script_->note("message", &Script::message);
    }
    void on_reset() override { script_->note("reset"); }

  private:
    std::shared_ptr<Script> script_;
};

// An SMTP client: the commands go out as given, the replies come back parsed.
class SmtpClient {
  public:
    error_code connect(const asio::ip::tcp::endpoint& server,
                       std::optional<asio::ip::address> from = std::nullopt) {
        return net_.connect(server, from);
    }

    void send(std::string_view bytes) {
        const auto ec = tls_ ? net_.write(*tls_, bytes) : net_.write(bytes);
        EXPECT_FALSE(ec) << "writing " << bytes.substr(0, 60) << ": " << ec.message();
    }

    // The next reply, whole; code 0 and the error as its text when none came.
    Reply next(std::chrono::milliseconds limit = LoopbackClient::kWait) {
        Reply r;
        for (;;) {
            for (auto eol = in_.find("\r\n"); eol != std::string::npos; eol = in_.find("\r\n")) {
                auto done = add_reply_line(r, std::string_view(in_).substr(0, eol));
                in_.erase(0, eol + 2);
                if (!done) return {0, {"malformed: " + done.error().message()}};
                if (*done) return r;
            }
            const auto ec = tls_ ? net_.read_some(*tls_, in_, limit) : net_.read_some(in_, limit);
            if (ec) return {0, {"<" + ec.message() + ">"}};
        }
    }
    // The next reply as sent, "250 2.0.0 OK" ("250-a\r\n250 b" for more lines).
    std::string reply(std::chrono::milliseconds limit = LoopbackClient::kWait) {
        return next(limit).verbatim();
    }
    std::string say(std::string_view command) {
        send(std::string(command) + "\r\n");
        return reply();
    }
    // True when the server closes the connection with nothing more to say.
    bool closed() {
        std::string rest = in_;
        in_.clear();
        const bool eof = net_.read_to_eof(rest);
        EXPECT_EQ(rest, "") << "after the last reply";
        return eof;
    }
    // Whether the server said nothing and kept the connection open for `quiet`.
    bool quiet_for(std::chrono::milliseconds quiet) {
        return in_.empty() && net_.read_some(in_, quiet) == asio::error::timed_out;
    }

    // The TLS handshake after a 220 to STARTTLS.
    error_code handshake(boost::asio::ssl::context& ctx) {
        EXPECT_EQ(in_, "");
        tls_.emplace(net_.socket(), ctx);
        return net_
            .wait([&](auto handler) {
                tls_->async_handshake(boost::asio::ssl::stream_base::client, std::move(handler));
            })
            .ec;
    }

    void close() { net_.close(); }

  private:
    LoopbackClient net_;
    std::optional<boost::asio::ssl::stream<asio::ip::tcp::socket&>> tls_;
    std::string in_;
};

// A self-signed pair for mx.test, made once; the files are gone once the context has them.
std::shared_ptr<boost::asio::ssl::context> server_tls() {
    static const auto ctx = [] {
        std::string dir = ::testing::TempDir() + "smtp_server_test_XXXXXX";
        if (!::mkdtemp(dir.data())) throw std::runtime_error("mkdtemp");
        const auto pair = crypto::ensure_self_signed(dir, {.dns = {"mx.test"}});
        auto made = crypto::server_context(pair.cert_path, pair.key_path);
        std::filesystem::remove_all(dir);
        return made;
    }();
    return ctx;
}

std::string plain_response(std::string_view authzid, std::string_view user,
                           std::string_view password) {
    std::string raw(authzid);
    raw.append(1, '\0').append(user).append(1, '\0').append(password);
    return crypto::base64_encode(raw);
}

class SmtpServerTest : public ::testing::Test {
  protected:
    static ServerOptions options() {
        ServerOptions o;
        o.listen = {asio::ip::make_address("127.0.0.1"), 0};
        o.hostname = "mx.test";
        return o;
    }

    void start(ServerOptions o = options()) {
        server_.emplace(pool_, std::move(o), [script = script_](std::string ip) {
            script->note("open " + ip);
            return std::make_unique<ScriptedHandler>(script);
        });
        auto bound = server_->start();
        ASSERT_TRUE(bound) << bound.error().message();
        endpoint_ = *bound;
        pool_.start();
    }

    void TearDown() override {
        if (server_) {
            server_->stop();
            EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }))
                << server_->connections() << " sessions did not end";
        }
        pool_.stop();
    }

    // A client that has read the greeting.
    std::unique_ptr<SmtpClient> greeted(std::optional<asio::ip::address> from = std::nullopt) {
        auto c = std::make_unique<SmtpClient>();
        EXPECT_FALSE(c->connect(endpoint_, from));
        EXPECT_EQ(c->reply(), "220 mx.test ESMTP posthorn");
        return c;
    }
    // A client past EHLO.
    std::unique_ptr<SmtpClient> ready() {
        auto c = greeted();
        c->send("EHLO client.example\r\n");
        EXPECT_EQ(c->next().code, 250);
        return c;
    }

    // The calls that were not "open …" (the factory's).
    Strings handler_calls() {
        Strings out;
        for (auto& c : script_->seen())
            if (!c.starts_with("open ")) out.push_back(c);
        return out;
    }

    core::IoPool pool_{1};
    std::shared_ptr<Script> script_ = std::make_shared<Script>();
    std::optional<Server> server_;
    asio::ip::tcp::endpoint endpoint_;
};

Strings ehlo_lines(const std::string& greeting, std::size_t size, Strings extra = {}) {
    Strings lines{greeting,   "PIPELINING",          "SIZE " + std::to_string(size),
                  "8BITMIME", "ENHANCEDSTATUSCODES", "SMTPUTF8"};
    lines.insert(lines.end(), extra.begin(), extra.end());
    return lines;
}

TEST_F(SmtpServerTest, GreetsAndListsItsExtensions) {
    auto o = options();
    o.max_message_bytes = 12345;
    start(o);
    auto c = greeted();
    c->send("EHLO client.example\r\n");
    const auto r = c->next();
    EXPECT_EQ(r.code, 250);
    EXPECT_EQ(r.lines, ehlo_lines("mx.test greets client.example", 12345));
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(script_->seen(), Strings{"open 127.0.0.1"});
}

TEST_F(SmtpServerTest, HeloIsAnsweredWithoutTheList) {
    start();
    auto c = greeted();
    EXPECT_EQ(c->say("HELO client.example"), "250 mx.test");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
}

TEST_F(SmtpServerTest, WritesControlCharactersOfTheEhloNameAsQuestionMarks) {
    start();
    auto c = greeted();
    c->send(std::string("EHLO a") + '\x01' + 'b' + '\x7f' + "c\r\n");
    EXPECT_EQ(c->next().lines.at(0), "mx.test greets a?b?c");
}

TEST_F(SmtpServerTest, OffersAuthBeforeTlsOnlyWhenAllowed) {
    auto o = options();
    o.offer_auth = true;
    o.auth_requires_tls = false;
    o.max_message_bytes = 100;
    start(o);
    auto c = greeted();
    c->send("EHLO c\r\n");
    EXPECT_EQ(c->next().lines, ehlo_lines("mx.test greets c", 100, {"AUTH PLAIN LOGIN"}));
}

TEST_F(SmtpServerTest, OffersStartTlsAndRefusesAuthBeforeIt) {
    auto o = options();
    o.offer_auth = true;  // auth_requires_tls by default
    o.max_message_bytes = 100;
    o.tls = server_tls();
    start(o);
    auto c = greeted();
    c->send("EHLO c\r\n");
    EXPECT_EQ(c->next().lines, ehlo_lines("mx.test greets c", 100, {"STARTTLS"}));
    EXPECT_EQ(c->say("AUTH PLAIN " + plain_response("", "u", "p")),
              "538 5.7.11 Encryption required: use STARTTLS first");
    EXPECT_EQ(handler_calls(), Strings{});
}

TEST_F(SmtpServerTest, StartsTlsThenStartsOverWithAuth) {
    auto o = options();
    o.offer_auth = true;
    o.require_auth = true;
    o.max_message_bytes = 100;
    o.tls = server_tls();
    start(o);
    auto c = ready();
    EXPECT_EQ(c->say("STARTTLS"), "220 2.0.0 Ready to start TLS");
    const auto client_tls = crypto::client_context();
    ASSERT_FALSE(c->handshake(*client_tls));

    // RFC 3207 §4.2: the session starts over; STARTTLS is no longer offered, AUTH is.
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "503 5.5.1 Say EHLO first");
    c->send("EHLO c\r\n");
    EXPECT_EQ(c->next().lines, ehlo_lines("mx.test greets c", 100, {"AUTH PLAIN LOGIN"}));
    EXPECT_EQ(c->say("STARTTLS"), "502 5.5.1 STARTTLS not available");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "530 5.7.0 Authentication required");
    EXPECT_EQ(c->say("AUTH PLAIN " + plain_response("z", "user", "secret")),
              "235 2.7.0 Authentication successful");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    EXPECT_EQ(c->say("hi\r\n."), "250 2.0.0 Ok: queued as em_1");
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].tls);
    EXPECT_EQ(got[0].helo, "c");
    EXPECT_EQ(got[0].data, "hi\r\n");
    EXPECT_EQ(handler_calls(), (Strings{"reset", "auth z user secret", "mail a@x.test 0",
                                        "rcpt b@y.test", "message", "reset"}));
}

TEST_F(SmtpServerTest, StartTlsMustBeTheLastCommandSent) {
    auto o = options();
    o.tls = server_tls();
    start(o);
    auto c = ready();
    c->send("STARTTLS\r\nNOOP\r\n");
    EXPECT_EQ(c->reply(), "501 5.5.4 STARTTLS takes no argument and must be last");
    // What was sent behind it was dropped: the next reply answers the next command.
    EXPECT_EQ(c->say("HELP"), "214 2.0.0 See RFC 5321");
    EXPECT_EQ(c->say("STARTTLS now"), "501 5.5.4 STARTTLS takes no argument and must be last");
}

TEST_F(SmtpServerTest, StartTlsWithoutAContextIsNotAvailable) {
    start();
    auto c = ready();
    EXPECT_EQ(c->say("STARTTLS"), "502 5.5.1 STARTTLS not available");
}

TEST_F(SmtpServerTest, PassesTheHandlersRepliesThrough) {
    script_->mail = {250, {"2.1.0 sender fine by me"}};
    script_->rcpt_for["nobody@y.test"] = {550, {"5.1.1 no such user"}};
    script_->rcpt_for["later@y.test"] = {451, {"4.3.0 try later"}};
    script_->message = {250, {"2.0.0 Ok: queued as em_42"}};
    start();
    auto c = greeted();
    c->send("EHLO client.example\r\n");
    EXPECT_EQ(c->next().code, 250);
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test> SIZE=120 BODY=8BITMIME"), "250 2.1.0 sender fine by me");
    EXPECT_EQ(c->say("RCPT TO:<nobody@y.test>"), "550 5.1.1 no such user");
    EXPECT_EQ(c->say("RCPT TO:<later@y.test>"), "451 4.3.0 try later");
    EXPECT_EQ(c->say("RCPT TO: <b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    EXPECT_EQ(c->say("Subject: hi\r\n\r\nbody\r\n."), "250 2.0.0 Ok: queued as em_42");

    EXPECT_EQ(handler_calls(), (Strings{"mail a@x.test 120", "rcpt nobody@y.test",
                                        "rcpt later@y.test", "rcpt b@y.test", "message", "reset"}));
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].helo, "client.example");
    EXPECT_EQ(got[0].mail_from, "a@x.test");
    EXPECT_EQ(got[0].rcpt_to, Strings{"b@y.test"});  // the accepted ones only
    EXPECT_EQ(got[0].data, "Subject: hi\r\n\r\nbody\r\n");
    EXPECT_FALSE(got[0].tls);
    EXPECT_EQ(got[0].remote_ip, "127.0.0.1");

    // The transaction is over: a new one may start, and needs its own MAIL.
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "503 5.5.1 MAIL first");
    EXPECT_EQ(c->say("MAIL FROM:<>"), "250 2.1.0 sender fine by me");
    EXPECT_EQ(handler_calls().back(), "mail  0");  // the null sender
}

TEST_F(SmtpServerTest, AHandlerRefusingMailStartsNoTransaction) {
    script_->mail = {550, {"5.7.1 not from you"}};
    start();
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "550 5.7.1 not from you");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "503 5.5.1 MAIL first");
    script_->set(&Script::mail, {250, {"2.1.0 ok now"}});
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 ok now");
}

TEST_F(SmtpServerTest, RefusesCommandsOutOfOrderOrMalformed) {
    auto o = options();
    o.max_bad_commands = 100;  // this test makes ten
    start(o);
    auto c = greeted();
    // These work before EHLO; the others do not.
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(c->say("RSET"), "250 2.0.0 OK");
    EXPECT_EQ(c->say("VRFY someone"), "252 2.5.2 Cannot VRFY; send the mail and see");
    EXPECT_EQ(c->say("HELP"), "214 2.0.0 See RFC 5321");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "503 5.5.1 Say EHLO first");
    EXPECT_EQ(c->say("EHLO"), "501 5.5.4 EHLO needs a domain or address");
    EXPECT_EQ(c->say("HELO"), "501 5.5.4 HELO needs a domain or address");
    EXPECT_EQ(c->say("HELO c"), "250 mx.test");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "503 5.5.1 MAIL first");
    EXPECT_EQ(c->say("DATA"), "503 5.5.1 MAIL first");
    EXPECT_EQ(c->say("MAIL FROM:a@x.test"), "501 5.5.4 Syntax: MAIL FROM:<address>");
    EXPECT_EQ(c->say("MAIL FROM:<a b@x.test>"), "501 5.5.4 Syntax: MAIL FROM:<address>");
    EXPECT_EQ(c->say("FROB"), "500 5.5.1 Unknown command");
    EXPECT_EQ(c->say("mail from:<a@x.test>"), "250 2.1.0 Sender OK");  // verbs in any case
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "503 5.5.1 Nested MAIL command");
    EXPECT_EQ(c->say("RCPT TO:<>"), "501 5.5.4 Syntax: RCPT TO:<address>");
    EXPECT_EQ(c->say("DATA"), "554 5.5.1 No valid recipients");
    EXPECT_EQ(c->say("AUTH PLAIN"), "502 5.5.1 AUTH not available here");
    EXPECT_EQ(handler_calls(), (Strings{"reset", "mail a@x.test 0"}));
}

TEST_F(SmtpServerTest, AnswersPipelinedCommandsInOrder) {
    script_->rcpt_for["nobody@y.test"] = {550, {"5.1.1 no such user"}};
    start();
    auto c = greeted();
    c->send(
        "EHLO c\r\nMAIL FROM:<a@x.test>\r\nRCPT TO:<b@y.test>\r\nRCPT TO:<nobody@y.test>\r\n"
        "RCPT TO:<c@y.test>\r\nDATA\r\n");
    EXPECT_EQ(c->next().lines.at(0), "mx.test greets c");
    EXPECT_EQ(c->reply(), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->reply(), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->reply(), "550 5.1.1 no such user");
    EXPECT_EQ(c->reply(), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->reply(), "354 End data with <CR><LF>.<CR><LF>");
    // The message, and the next transaction behind it, in one write.
    c->send("one\r\n.\r\nMAIL FROM:<d@x.test>\r\nRCPT TO:<e@y.test>\r\nNOOP\r\nQUIT\r\n");
    EXPECT_EQ(c->reply(), "250 2.0.0 Ok: queued as em_1");
    EXPECT_EQ(c->reply(), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->reply(), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->reply(), "250 2.0.0 OK");
    EXPECT_EQ(c->reply(), "221 2.0.0 Bye");
    EXPECT_TRUE(c->closed());
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].rcpt_to, (Strings{"b@y.test", "c@y.test"}));
    EXPECT_EQ(got[0].data, "one\r\n");
}

TEST_F(SmtpServerTest, UndoesDotStuffing) {
    start();
    auto c = ready();
    auto send_message = [&](std::string_view wire) {
        EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
        EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
        EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
        c->send(wire);
        EXPECT_EQ(c->reply(), "250 2.0.0 Ok: queued as em_1");
    };
    send_message("..starts with a dot\r\nmiddle\r\n...\r\n. \r\n.x.\r\nend\r\n.\r\n");
    send_message(".\r\n");  // an empty message
    send_message("..\r\n.\r\n");
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].data, ".starts with a dot\r\nmiddle\r\n..\r\n \r\nx.\r\nend\r\n");
    EXPECT_EQ(got[1].data, "");
    EXPECT_EQ(got[2].data, ".\r\n");
}

TEST_F(SmtpServerTest, FindsTheEndOfDataAcrossReads) {
    start();
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    // Each piece its own segment: the end marker arrives split, a byte at a time.
    for (std::string_view piece : {"line one\r\nline two\r", "\n", ".", "\r", "\n"}) {
        c->send(piece);
        std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(c->reply(), "250 2.0.0 Ok: queued as em_1");
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].data, "line one\r\nline two\r\n");
}

TEST_F(SmtpServerTest, RsetEndsTheTransactionAndTellsTheHandler) {
    start();
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("RSET"), "250 2.0.0 OK");
    EXPECT_EQ(c->say("DATA"), "503 5.5.1 MAIL first");
    EXPECT_EQ(c->say("MAIL FROM:<c@x.test>"), "250 2.1.0 Sender OK");  // not nested
    EXPECT_EQ(c->say("RCPT TO:<d@y.test>"), "250 2.1.5 Recipient OK");
    // A new EHLO ends the transaction too.
    c->send("EHLO again\r\n");
    EXPECT_EQ(c->next().code, 250);
    EXPECT_EQ(c->say("DATA"), "503 5.5.1 MAIL first");
    EXPECT_EQ(handler_calls(), (Strings{"mail a@x.test 0", "rcpt b@y.test", "reset",
                                        "mail c@x.test 0", "rcpt d@y.test", "reset"}));
}

TEST_F(SmtpServerTest, RefusesOverlongCommandLinesAndGoesOn) {
    start();
    auto c = ready();
    // 1000 octets with the CRLF is the most a line may have (RFC 5321 §4.5.3.1.6).
    const std::string longest = "NOOP " + std::string(993, 'x');
    EXPECT_EQ(c->say(longest), "250 2.0.0 OK");
    EXPECT_EQ(c->say(longest + "x"), "500 5.5.2 Line too long");
    // A line far over the limit, arriving in pieces, is one bad line: the rest of it is
    // skipped, not read as commands.
    c->send(std::string(3000, 'y'));
    c->send(std::string(3000, 'z') + "\r\n");
    EXPECT_EQ(c->reply(), "500 5.5.2 Line too long");
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(handler_calls(), Strings{});
}

TEST_F(SmtpServerTest, RefusesCommandLinesThatDoNotEndInCrlf) {
    start();
    auto c = ready();
    c->send("NOOP\n");
    EXPECT_EQ(c->reply(), "500 5.5.2 Lines must end in CRLF");
    c->send("NO\rOP\r\n");
    EXPECT_EQ(c->reply(), "500 5.5.2 Lines must end in CRLF");
    c->send("MAIL FROM:<a@x.test>\r\rRCPT TO:<b@y.test>\r\n");
    EXPECT_EQ(c->reply(), "500 5.5.2 Lines must end in CRLF");
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(handler_calls(), Strings{});
}

TEST_F(SmtpServerTest, RefusesMessagesWithABareCrOrLf) {
    start();
    auto c = ready();
    auto refused = [&](std::string_view wire) {
        EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
        EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
        EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
        c->send(wire);
        EXPECT_EQ(c->reply(), "550 5.6.0 Message contains a bare CR or LF; lines must end in CRLF")
            << wire;
    };
    refused("a\nb\r\n.\r\n");
    refused("a\rb\r\n.\r\n");
    // SMTP smuggling: "\n.\r\n" ends no message here, so what follows it is data, not a
    // second transaction (its MAIL never reaches the handler).
    refused("x\r\n\n.\r\nMAIL FROM:<evil@x.test>\r\nRCPT TO:<b@y.test>\r\nDATA\r\n\r\n.\r\n");
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(script_->received().size(), 0u);
    for (const auto& call : handler_calls()) EXPECT_NE(call, "mail evil@x.test 0");
}

TEST_F(SmtpServerTest, RefusesADeclaredSizeOverTheLimitAtMail) {
    auto o = options();
    o.max_message_bytes = 1000;
    start(o);
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test> SIZE=1001"), "552 5.3.4 Message larger than 1000 bytes");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "503 5.5.1 MAIL first");  // no transaction
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test> SIZE=1000"), "250 2.1.0 Sender OK");
    EXPECT_EQ(handler_calls(), Strings{"mail a@x.test 1000"});
}

TEST_F(SmtpServerTest, RefusesDataOverTheLimitAfterItsEnd) {
    auto o = options();
    o.max_message_bytes = 1000;
    start(o);
    auto c = ready();
    auto send_message = [&](const std::string& wire, std::string_view expected) {
        EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
        EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
        EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
        // In two writes: the limit is passed before the end arrives, or not.
        c->send(wire.substr(0, wire.size() / 2));
        c->send(wire.substr(wire.size() / 2) + ".\r\n");
        EXPECT_EQ(c->reply(), expected) << wire.size() << " bytes";
    };
    auto lines = [](std::size_t bytes) {  // `bytes` octets of 100-octet CRLF lines
        std::string s;
        while (s.size() < bytes) s += std::string(98, 'a') + "\r\n";
        s.resize(bytes - 2);
        return s + "\r\n";
    };
    send_message(lines(1000), "250 2.0.0 Ok: queued as em_1");
    send_message(lines(1002), "552 5.3.4 Message larger than 1000 bytes");
    send_message(lines(50'000), "552 5.3.4 Message larger than 1000 bytes");
    // Read to its end: the rest of the message was not taken for commands.
    EXPECT_EQ(c->say("NOOP"), "250 2.0.0 OK");
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].data.size(), 1000u);
}

TEST_F(SmtpServerTest, LimitsRecipientsPerTransaction) {
    auto o = options();
    o.max_recipients = 2;
    start(o);
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b1@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("RCPT TO:<b2@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("RCPT TO:<b3@y.test>"), "452 4.5.3 Too many recipients");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    EXPECT_EQ(c->say("x\r\n."), "250 2.0.0 Ok: queued as em_1");
    const auto got = script_->received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].rcpt_to, (Strings{"b1@y.test", "b2@y.test"}));
}

TEST_F(SmtpServerTest, ClosesTheSessionAfterTooManyBadCommands) {
    start();
    auto c = greeted();
    // Ten are forgiven (RSET does not reset the count); the eleventh gets its reply, then
    // 421, then the connection is closed.
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "503 5.5.1 Say EHLO first");
    EXPECT_EQ(c->say("RSET"), "250 2.0.0 OK");
    c->send("EHLO\r\nEHLO c\r\nFROB\r\nFROB\r\nFROB\r\n");
    EXPECT_EQ(c->reply(), "501 5.5.4 EHLO needs a domain or address");
    EXPECT_EQ(c->next().code, 250);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c->reply(), "500 5.5.1 Unknown command");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "503 5.5.1 MAIL first");
    c->send("NOOP\r\nFROB\r\nFROB\r\nNOOP\r\n");
    EXPECT_EQ(c->reply(), "250 2.0.0 OK");
    EXPECT_EQ(c->reply(), "500 5.5.1 Unknown command");
    EXPECT_EQ(c->reply(), "500 5.5.1 Unknown command");
    EXPECT_EQ(c->reply(), "421 4.7.0 Too many errors, closing");
    EXPECT_TRUE(c->closed());  // the last NOOP is not answered
}

TEST_F(SmtpServerTest, CountsFailedAuthAsABadCommand) {
    script_->auth = {535, {"5.7.8 Authentication credentials invalid"}};
    auto o = options();
    o.offer_auth = true;
    o.auth_requires_tls = false;
    o.max_bad_commands = 2;
    start(o);
    auto c = ready();
    const auto creds = plain_response("", "u", "wrong");
    EXPECT_EQ(c->say("AUTH PLAIN " + creds), "535 5.7.8 Authentication credentials invalid");
    EXPECT_EQ(c->say("AUTH PLAIN " + creds), "535 5.7.8 Authentication credentials invalid");
    // The one too many: docs/smtp.md says the 421 is written before the 535.
    c->send("AUTH PLAIN " + creds + "\r\n");
    EXPECT_EQ(c->reply(), "421 4.7.0 Too many errors, closing");
    EXPECT_EQ(c->reply(), "535 5.7.8 Authentication credentials invalid");
    EXPECT_TRUE(c->closed());
}

TEST_F(SmtpServerTest, AuthenticatesWithPlainAndLogin) {
    auto o = options();
    o.offer_auth = true;
    o.auth_requires_tls = false;
    o.require_auth = true;
    start(o);
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "530 5.7.0 Authentication required");
    EXPECT_EQ(c->say("AUTH CRAM-MD5"),
              "504 5.5.4 Unknown AUTH mechanism; PLAIN and LOGIN are offered");
    EXPECT_EQ(c->say("AUTH PLAIN !!notbase64"), "501 5.5.2 Cannot decode the AUTH PLAIN response");
    EXPECT_EQ(c->say("AUTH PLAIN " + crypto::base64_encode("no nuls")),
              "501 5.5.2 Cannot decode the AUTH PLAIN response");
    // PLAIN, the response after a 334; cancelled.
    EXPECT_EQ(c->say("AUTH PLAIN"), "334 ");
    EXPECT_EQ(c->say("*"), "501 5.0.0 AUTH cancelled");
    // LOGIN, cancelled, then with a password that is not base64.
    EXPECT_EQ(c->say("AUTH LOGIN"), "334 VXNlcm5hbWU6");
    EXPECT_EQ(c->say("*"), "501 5.0.0 AUTH cancelled");
    EXPECT_EQ(c->say("AUTH LOGIN " + crypto::base64_encode("user")), "334 UGFzc3dvcmQ6");
    EXPECT_EQ(c->say("%%%"), "501 5.5.2 Cannot decode the password");
    // LOGIN, whole.
    EXPECT_EQ(c->say("AUTH LOGIN"), "334 VXNlcm5hbWU6");
    EXPECT_EQ(c->say(crypto::base64_encode("user")), "334 UGFzc3dvcmQ6");
    EXPECT_EQ(c->say(crypto::base64_encode("pa ss")), "235 2.7.0 Authentication successful");
    EXPECT_EQ(c->say("AUTH PLAIN " + plain_response("", "u", "p")),
              "503 5.5.1 AUTH not allowed now");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    // A second session: PLAIN with the response on the command line.
    auto d = ready();
    EXPECT_EQ(d->say("AUTH PLAIN " + plain_response("admin", "user", "pw")),
              "235 2.7.0 Authentication successful");
    EXPECT_EQ(handler_calls(),
              (Strings{"auth  user pa ss", "mail a@x.test 0", "auth admin user pw"}));
}

TEST_F(SmtpServerTest, ForgetsTheAuthenticationTheHandlerWithdraws) {
    script_->mail = {530, {"5.7.0 The API key was revoked; authenticate again"}};
    auto o = options();
    o.offer_auth = true;
    o.auth_requires_tls = false;
    o.require_auth = true;
    start(o);
    auto c = ready();
    EXPECT_EQ(c->say("AUTH PLAIN " + plain_response("", "u", "p")),
              "235 2.7.0 Authentication successful");
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"),
              "530 5.7.0 The API key was revoked; authenticate again");
    // No longer authenticated: MAIL is refused before the handler, and AUTH is allowed.
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "530 5.7.0 Authentication required");
    EXPECT_EQ(c->say("AUTH PLAIN " + plain_response("", "u", "p")),
              "235 2.7.0 Authentication successful");
}

TEST_F(SmtpServerTest, QuitSaysByeAndCloses) {
    start();
    auto c = greeted();
    c->send("QUIT\r\nNOOP\r\n");  // nothing after QUIT is answered
    EXPECT_EQ(c->reply(), "221 2.0.0 Bye");
    EXPECT_TRUE(c->closed());
    EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }));
}

TEST_F(SmtpServerTest, AClientLeavingDuringDataLeavesNothingAndFreesItsSession) {
    start();  // the idle timeout is 300 s: the session must end because the client left
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    c->send("half a message\r\n");
    c->close();
    EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }, 1000ms));
    EXPECT_EQ(script_->received().size(), 0u);
}

TEST_F(SmtpServerTest, TellsIdleClientsThatTheyWaitedTooLong) {
    auto o = options();
    o.idle_timeout = 1s;
    o.tls = server_tls();
    start(o);
    // Two sessions idle at once: one in the middle of DATA, one encrypted.
    auto c = ready();
    EXPECT_EQ(c->say("MAIL FROM:<a@x.test>"), "250 2.1.0 Sender OK");
    EXPECT_EQ(c->say("RCPT TO:<b@y.test>"), "250 2.1.5 Recipient OK");
    EXPECT_EQ(c->say("DATA"), "354 End data with <CR><LF>.<CR><LF>");
    c->send("the start of a message\r\n");
    const auto before = std::chrono::steady_clock::now();
    auto t = ready();
    EXPECT_EQ(t->say("STARTTLS"), "220 2.0.0 Ready to start TLS");
    const auto client_tls = crypto::client_context();
    ASSERT_FALSE(t->handshake(*client_tls));

    EXPECT_TRUE(c->quiet_for(500ms));  // not before its time
    EXPECT_EQ(c->reply(3000ms), "421 4.4.2 mx.test idle too long, closing");
    EXPECT_GE(std::chrono::steady_clock::now() - before, 900ms);
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(t->reply(3000ms), "421 4.4.2 mx.test idle too long, closing");
    EXPECT_TRUE(t->closed());
    EXPECT_EQ(script_->received().size(), 0u);
}

TEST_F(SmtpServerTest, RefusesConnectionsOverTheSessionLimit) {
    auto o = options();
    o.limits.max_connections = 2;
    start(o);
    auto a = greeted();
    auto b = greeted();
    SmtpClient refused;
    ASSERT_FALSE(refused.connect(endpoint_));
    EXPECT_EQ(refused.reply(), "421 4.7.0 mx.test too many connections, try again later");
    EXPECT_TRUE(refused.closed());
    // The sessions open go on; once one ends, its place is free again.
    EXPECT_EQ(a->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(b->say("QUIT"), "221 2.0.0 Bye");
    EXPECT_TRUE(b->closed());
    EXPECT_TRUE(eventually([&] { return server_->connections() == 1; }));
    auto again = greeted();
    EXPECT_EQ(again->say("NOOP"), "250 2.0.0 OK");
    // A refused connection never got a handler.
    const auto calls = script_->seen();
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "open 127.0.0.1"), 3);
}

TEST_F(SmtpServerTest, RefusesConnectionsOverThePerClientLimitOnly) {
    auto o = options();
    o.limits.max_connections_per_client = 1;
    start(o);
    auto a = greeted();
    SmtpClient refused;
    ASSERT_FALSE(refused.connect(endpoint_));
    EXPECT_EQ(refused.reply(),
              "421 4.7.0 mx.test too many connections from your address, try again later");
    EXPECT_TRUE(refused.closed());
    // Another address is not held back.
    auto other = greeted(asio::ip::make_address("127.0.0.2"));
    EXPECT_EQ(other->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(a->say("QUIT"), "221 2.0.0 Bye");
    EXPECT_TRUE(a->closed());
    EXPECT_TRUE(eventually([&] { return server_->connections() == 1; }));
    auto again = greeted();
    EXPECT_EQ(again->say("NOOP"), "250 2.0.0 OK");
}

// Postfix's anvil, and more: a full listener makes room for a newcomer holding fewer
// sessions than the busiest client, by closing that client's longest-waiting session.
TEST_F(SmtpServerTest, AFullListenerMakesRoomFromTheBusiestClient) {
    auto o = options();
    o.limits = {.max_connections = 3, .max_connections_per_client = 0};
    start(o);
    auto a = greeted();
    std::this_thread::sleep_for(20ms);
    auto b = greeted();
    auto c = greeted();
    auto newcomer = greeted(asio::ip::make_address("127.0.0.2"));
    EXPECT_EQ(newcomer->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(a->reply(), "421 4.7.0 mx.test too many connections, closing");
    EXPECT_TRUE(a->closed());
    EXPECT_EQ(b->say("NOOP"), "250 2.0.0 OK");
    // The busiest client gets no more room from the others: it is refused.
    EXPECT_TRUE(eventually([&] { return server_->connections() == 3; }));
    SmtpClient refused;
    ASSERT_FALSE(refused.connect(endpoint_));
    EXPECT_EQ(refused.reply(), "421 4.7.0 mx.test too many connections, try again later");
}

TEST_F(SmtpServerTest, ANearlyFullListenerWaitsLessForIdleClients) {
    auto o = options();
    o.limits = {.max_connections = 4, .max_connections_per_client = 0};
    o.idle_timeout = 60s;
    o.busy_idle_timeout = 1s;
    start(o);
    auto a = greeted();
    auto b = greeted();
    auto c = greeted();  // three of four: from now on a wait is short
    const auto before = std::chrono::steady_clock::now();
    EXPECT_EQ(a->say("NOOP"), "250 2.0.0 OK");
    EXPECT_EQ(a->reply(3000ms), "421 4.4.2 mx.test idle too long, closing");
    EXPECT_LT(std::chrono::steady_clock::now() - before, 3s);
    EXPECT_TRUE(a->closed());
}

TEST_F(SmtpServerTest, TakesTheClientFromAProxyHeaderOfATrustedPeerOnly) {
    auto o = options();
    o.proxy_protocol = true;
    o.limits = {.max_connections = 10,
                .max_connections_per_client = 1,
                .trusted = {*core::parse_network("127.0.0.1")}};
    start(o);
    SmtpClient c;
    ASSERT_FALSE(c.connect(endpoint_));
    c.send("PROXY TCP4 203.0.113.9 198.51.100.1 40000 25\r\n");
    EXPECT_EQ(c.reply(), "220 mx.test ESMTP posthorn");
    EXPECT_EQ(c.say("NOOP"), "250 2.0.0 OK");
    // The client behind the balancer counts: a second connection for it is refused.
    SmtpClient same;
    ASSERT_FALSE(same.connect(endpoint_));
    same.send("PROXY TCP4 203.0.113.9 198.51.100.1 40001 25\r\n");
    EXPECT_EQ(same.reply(),
              "421 4.7.0 mx.test too many connections from your address, try again later");
    // A v2 LOCAL header (the balancer's health check) stands for the balancer itself.
    SmtpClient local;
    ASSERT_FALSE(local.connect(endpoint_));
    local.send(std::string("\r\n\r\n\0\r\nQUIT\n\x20\x00\x00\x00", 16));
    EXPECT_EQ(local.reply(), "220 mx.test ESMTP posthorn");
    // From a trusted peer the header is required: without one, nothing is said.
    SmtpClient bare;
    ASSERT_FALSE(bare.connect(endpoint_));
    bare.send("EHLO x\r\n");
    EXPECT_TRUE(bare.closed());
    // From anyone else it is not taken: it is an unknown command.
    auto other = greeted(asio::ip::make_address("127.0.0.2"));
    other->send("PROXY TCP4 192.0.2.1 198.51.100.1 1 25\r\n");
    EXPECT_EQ(other->next().code / 100, 5);  // refused, as any unknown command
    const auto calls = script_->seen();
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "open 203.0.113.9"), 1);
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "open 127.0.0.1"), 1);  // LOCAL
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "open 127.0.0.2"), 1);
}

TEST_F(SmtpServerTest, StopTellsWaitingSessionsToComeBackLater) {
    start();
    auto c = ready();
    server_->stop();
    EXPECT_EQ(c->reply(), "421 4.3.2 mx.test shutting down, try again later");
    EXPECT_TRUE(c->closed());
    SmtpClient late;
    // Refused, or accepted by the kernel and then closed unanswered; never greeted.
    if (!late.connect(endpoint_)) {
        EXPECT_EQ(late.next(500ms).code, 0);
    }
}

}  // namespace
}  // namespace posthorn::smtp
