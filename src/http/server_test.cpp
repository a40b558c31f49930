// Component test: http::Server's connection handling on 127.0.0.1:0, driven by a real TCP
// client from the test's thread (core::testing::LoopbackClient). The handler records each
// request and answers what it saw; routing is not the server's business, so none is here.
#include "http/server.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/testing/loopback_client.hpp"

namespace posthorn::http {
namespace {

using namespace std::chrono_literals;
using core::testing::eventually;
using core::testing::LoopbackClient;

// The requests the handler was given, from every connection of a test.
struct Seen {
    std::mutex mutex;
    std::vector<Request> requests;

    void add(const Request& r) {
        std::lock_guard lock(mutex);
        requests.push_back(r);
    }
    std::vector<Request> all() {
        std::lock_guard lock(mutex);
        return requests;
    }
    std::size_t count() {
        std::lock_guard lock(mutex);
        return requests.size();
    }
};

// Answers "<method> <target> <body>" in text; /throw throws.
asio::awaitable<Response> echo(std::shared_ptr<Seen> seen, Request request) {
    seen->add(request);
    if (request.path == "/throw") throw std::runtime_error("the handler broke");
    co_return Response{.status = 200,
                       .body = request.method + " " + request.target + " " + request.body,
                       .content_type = "text/plain"};
}

struct Answer {
    unsigned status = 0;  // 0: none came; `head` then says why
    std::string head;     // the status line and fields, without the blank line
    std::string body;

    std::optional<std::string> field(std::string_view name) const {
        const std::string key = "\r\n" + std::string(name) + ": ";
        const auto at = head.find(key);
        if (at == std::string::npos) return std::nullopt;
        const auto from = at + key.size();
        return head.substr(from, head.find("\r\n", from) - from);
    }
};

class HttpClient {
  public:
    error_code connect(const asio::ip::tcp::endpoint& server) { return net_.connect(server); }

    void send(std::string_view bytes) {
        const auto ec = net_.write(bytes);
        EXPECT_FALSE(ec) << "writing " << bytes.substr(0, 60) << ": " << ec.message();
    }
    void trickle(std::string_view bytes, std::size_t piece) {
        EXPECT_FALSE(net_.trickle(bytes, piece));
    }

    // The next answer; its body is read by its Content-Length, none for HEAD and 1xx.
    Answer next(bool head_request = false,
                std::chrono::milliseconds limit = LoopbackClient::kWait) {
        Answer a;
        std::size_t end;
        while ((end = in_.find("\r\n\r\n")) == std::string::npos)
            if (auto ec = net_.read_some(in_, limit)) return {0, "<" + ec.message() + ">", ""};
        a.head = in_.substr(0, end);
        in_.erase(0, end + 4);
        const auto sp = a.head.find(' ');
        a.status = static_cast<unsigned>(std::stoul(a.head.substr(sp + 1, 3)));
        std::size_t length = 0;
        if (auto cl = a.field("Content-Length"); cl && !head_request && a.status >= 200)
            length = std::stoul(*cl);
        while (in_.size() < length)
            if (auto ec = net_.read_some(in_, limit)) return {0, "<" + ec.message() + ">", ""};
        a.body = in_.substr(0, length);
        in_.erase(0, length);
        return a;
    }
    Answer exchange(std::string_view request, bool head_request = false) {
        send(request);
        return next(head_request);
    }

    // True when the server closes the connection with nothing more to say.
    bool closed(std::chrono::milliseconds limit = LoopbackClient::kWait) {
        std::string rest = in_;
        in_.clear();
        const bool eof = net_.read_to_eof(rest, limit);
        EXPECT_EQ(rest, "") << "after the last answer";
        return eof;
    }
    // Whether the server said nothing and kept the connection open for `quiet`.
    bool quiet_for(std::chrono::milliseconds quiet) {
        return in_.empty() && net_.read_some(in_, quiet) == asio::error::timed_out;
    }

  private:
    LoopbackClient net_;
    std::string in_;
};

std::string get(std::string_view target, std::string_view extra = "") {
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
}
std::string post(std::string_view target, std::string_view body) {
    return "POST " + std::string(target) + " HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\n" +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

class HttpServerTest : public ::testing::Test {
  protected:
    static Server::Options options() {
        Server::Options o;
        o.listen = {asio::ip::make_address("127.0.0.1"), 0};
        return o;
    }

    void start(Server::Options o = options()) {
        server_.emplace(pool_, std::move(o),
                        [seen = seen_](Request r) { return echo(seen, std::move(r)); });
        auto bound = server_->start();
        ASSERT_TRUE(bound) << bound.error().message();
        endpoint_ = *bound;
        pool_.start();
    }

    void TearDown() override {
        if (server_) {
            server_->stop();
            EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }))
                << server_->connections() << " connections did not end";
        }
        pool_.stop();
    }

    std::unique_ptr<HttpClient> client() {
        auto c = std::make_unique<HttpClient>();
        EXPECT_FALSE(c->connect(endpoint_));
        return c;
    }
    // A new connection the server has taken (it counts in connections()).
    std::unique_ptr<HttpClient> accepted() {
        const auto before = server_->connections();
        auto c = client();
        EXPECT_TRUE(eventually([&] { return server_->connections() == before + 1; }));
        return c;
    }

    // A connection in the middle of a request: its head is read (the 100 says so), its
    // body, "body", is still to come.
    std::unique_ptr<HttpClient> in_a_request() {
        auto c = client();
        c->send(
            "POST /busy HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
        EXPECT_EQ(c->next().status, 100u);
        return c;
    }

    core::IoPool pool_{1};
    std::shared_ptr<Seen> seen_ = std::make_shared<Seen>();
    std::optional<Server> server_;
    asio::ip::tcp::endpoint endpoint_;
};

TEST_F(HttpServerTest, KeepsTheConnectionForSeveralRequests) {
    start();
    auto c = client();
    for (int i = 0; i < 3; ++i) {
        const auto a = c->exchange(get("/a?n=" + std::to_string(i)));
        EXPECT_EQ(a.status, 200u) << a.head;
        EXPECT_TRUE(a.head.starts_with("HTTP/1.1 200 OK\r\n")) << a.head;
        EXPECT_EQ(a.field("Connection"), std::nullopt);
        EXPECT_EQ(a.field("Content-Type"), "text/plain");
        EXPECT_EQ(a.body, "GET /a?n=" + std::to_string(i) + " ");
    }
    EXPECT_EQ(server_->connections(), 1u);
    const auto seen = seen_->all();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[2].path, "/a");
    EXPECT_EQ(seen[2].param("n"), "2");
    EXPECT_EQ(seen[2].header("host"), "t");
    EXPECT_EQ(seen[2].remote_ip, "127.0.0.1");
}

TEST_F(HttpServerTest, ReadsARequestThatTricklesIn) {
    start();
    auto c = client();
    c->trickle(post("/split", "a body in many small writes"), 3);
    const auto a = c->next();
    EXPECT_EQ(a.status, 200u) << a.head;
    EXPECT_EQ(a.body, "POST /split a body in many small writes");
    const auto seen = seen_->all();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].header("content-type"), "text/plain");
    EXPECT_EQ(c->exchange(get("/after")).body, "GET /after ");
}

TEST_F(HttpServerTest, AnswersPipelinedRequestsInOrder) {
    start();
    auto c = client();
    c->send(get("/one") + post("/two", "2") + "HEAD /three HTTP/1.1\r\nHost: t\r\n\r\n" +
            post("/four", "") + get("/five"));
    EXPECT_EQ(c->next().body, "GET /one ");
    EXPECT_EQ(c->next().body, "POST /two 2");
    const auto head = c->next(true);
    EXPECT_EQ(head.status, 200u);
    EXPECT_EQ(head.field("Content-Length"), "12");  // "HEAD /three "
    EXPECT_EQ(c->next().body, "POST /four ");
    EXPECT_EQ(c->next().body, "GET /five ");
    EXPECT_EQ(seen_->count(), 5u);
}

TEST_F(HttpServerTest, AnswersHeadWithTheHeadOfAGet) {
    start();
    auto c = client();
    const auto a = c->exchange("HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n", true);
    EXPECT_EQ(a.status, 200u) << a.head;
    EXPECT_EQ(a.field("Content-Length"), "8");  // "HEAD /h "
    // No body was sent: the next answer is read from its first byte.
    const auto b = c->exchange(get("/g"));
    EXPECT_TRUE(b.head.starts_with("HTTP/1.1 200 OK")) << b.head;
    EXPECT_EQ(b.body, "GET /g ");
    ASSERT_EQ(seen_->count(), 2u);
    EXPECT_EQ(seen_->all()[0].method, "HEAD");
}

TEST_F(HttpServerTest, ReassemblesAChunkedBody) {
    start();
    auto c = client();
    const std::string request =
        "POST /chunked HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    c->trickle(request, 7);
    const auto a = c->next();
    EXPECT_EQ(a.status, 200u) << a.head;
    EXPECT_EQ(a.body, "POST /chunked hello world");
    EXPECT_EQ(c->exchange(get("/after")).body, "GET /after ");  // still in step
}

TEST_F(HttpServerTest, RefusesABodyOverTheLimitWith413AndCloses) {
    auto o = options();
    o.body_limit = 100;
    start(o);
    auto c = client();
    EXPECT_EQ(c->exchange(post("/fits", std::string(100, 'a'))).status, 200u);
    // Sent whole, body too: the client reads the answer, not a reset.
    const auto a = c->exchange(post("/big", std::string(101, 'b')));
    EXPECT_EQ(a.status, 413u) << a.head;
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_EQ(a.field("Content-Type"), "application/json");
    EXPECT_EQ(a.body,
              R"({"code":"PAYLOAD_TOO_LARGE","message":"request body is larger than the limit )"
              R"(of 100 bytes","status":413})");
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(seen_->count(), 1u);
}

TEST_F(HttpServerTest, RefusesAChunkedBodyOverTheLimit) {
    auto o = options();
    o.body_limit = 100;
    start(o);
    auto c = client();
    const std::string chunk = "3c\r\n" + std::string(60, 'c') + "\r\n";
    const auto a =
        c->exchange("POST /chunks HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
                    chunk + chunk + "0\r\n\r\n");
    EXPECT_EQ(a.status, 413u) << a.head;
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(seen_->count(), 0u);
}

TEST_F(HttpServerTest, HonoursExpectContinue) {
    auto o = options();
    o.body_limit = 100;
    start(o);
    auto c = client();
    c->send("POST /e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    const auto go = c->next();
    EXPECT_EQ(go.status, 100u) << go.head;
    EXPECT_EQ(seen_->count(), 0u);
    c->send("abcde");
    EXPECT_EQ(c->next().body, "POST /e abcde");
    // Over the limit: refused before the body is sent, without a 100.
    const auto no = c->exchange(
        "POST /e HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n");
    EXPECT_EQ(no.status, 413u) << no.head;
    EXPECT_TRUE(c->closed());
}

TEST_F(HttpServerTest, RefusesHeadersOver16KiBWith431AndCloses) {
    start();
    auto c = client();
    EXPECT_EQ(c->exchange(get("/ok", "X-Big: " + std::string(15 * 1024, 'a') + "\r\n")).status,
              200u);
    const auto a = c->exchange(get("/big", "X-Big: " + std::string(17 * 1024, 'a') + "\r\n"));
    EXPECT_EQ(a.status, 431u) << a.head;
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_EQ(a.body, R"({"code":"VALIDATION_ERROR","message":"request headers are too large",)"
                      R"("status":431})");
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(seen_->count(), 1u);
}

TEST_F(HttpServerTest, RefusesAMalformedRequestWith400AndCloses) {
    start();
    auto c = client();
    c->send(get("/first") + "NOT A REQUEST\r\n\r\n" + get("/never"));
    EXPECT_EQ(c->next().body, "GET /first ");
    const auto a = c->next();
    EXPECT_EQ(a.status, 400u) << a.head;
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_TRUE(
        a.body.starts_with(R"({"code":"VALIDATION_ERROR","message":"malformed HTTP request: )"))
        << a.body;
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(seen_->count(), 1u);
}

TEST_F(HttpServerTest, RefusesATargetThatIsNotAPathWith400AndCloses) {
    start();
    auto c = client();
    const auto a = c->exchange(get("http://t/absolute-form"));
    EXPECT_EQ(a.status, 400u) << a.head;
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_EQ(a.body,
              R"({"code":"VALIDATION_ERROR","message":"malformed request target","status":400})");
    EXPECT_TRUE(c->closed());
    EXPECT_EQ(seen_->count(), 0u);
}

TEST_F(HttpServerTest, HonoursConnectionClose) {
    start();
    auto c = client();
    const auto a = c->exchange(get("/bye", "Connection: close\r\n"));
    EXPECT_EQ(a.status, 200u);
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_TRUE(c->closed());
}

TEST_F(HttpServerTest, ClosesAnHttp10ConnectionUnlessAskedToKeepIt) {
    start();
    auto kept = client();
    const std::string keep = "GET /k HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
    for (int i = 0; i < 2; ++i) {
        const auto a = kept->exchange(keep);
        EXPECT_TRUE(a.head.starts_with("HTTP/1.0 200 OK\r\n")) << a.head;
        EXPECT_EQ(a.field("Connection"), "keep-alive");
        EXPECT_EQ(a.body, "GET /k ");
    }
    auto once = client();
    const auto a = once->exchange("GET /once HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(a.head.starts_with("HTTP/1.0 200 OK\r\n")) << a.head;
    EXPECT_EQ(a.field("Connection"), std::nullopt);
    EXPECT_TRUE(once->closed());
}

TEST_F(HttpServerTest, AnswersAThrowingHandlerWith500AndGoesOn) {
    start();
    auto c = client();
    const auto a = c->exchange(get("/throw"));
    EXPECT_EQ(a.status, 500u) << a.head;
    EXPECT_EQ(a.body, R"({"code":"INTERNAL_ERROR","message":"internal error","status":500})");
    EXPECT_EQ(c->exchange(get("/after")).body, "GET /after ");
}

TEST_F(HttpServerTest, ClosesConnectionsThatMissTheirDeadlines) {
    auto o = options();
    o.idle_timeout = 1s;
    o.request_timeout = 1s;
    start(o);
    auto silent = accepted();  // never sends a byte
    auto slow_head = accepted();
    slow_head->send("GET /slow HTTP/1.1\r\nHost: t\r\n");  // the head never ends
    auto slow_body = accepted();
    slow_body->send(
        "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhalf ");  // 5 of 10
    auto kept = accepted();
    EXPECT_EQ(kept->exchange(get("/done")).status, 200u);  // then idle
    // Not before their time...
    EXPECT_TRUE(kept->quiet_for(500ms));
    // ...but then, without a word (nothing is owed to a client that stalls).
    for (auto* c : {silent.get(), slow_head.get(), slow_body.get(), kept.get()})
        EXPECT_TRUE(c->closed(1500ms));
    EXPECT_EQ(seen_->count(), 1u);
    EXPECT_TRUE(eventually([&] { return server_->connections() == 0; }));
}

TEST_F(HttpServerTest, MakesRoomByClosingTheConnectionIdleLongest) {
    auto o = options();
    o.limits.max_connections = 2;
    start(o);
    auto oldest = accepted();
    auto newer = accepted();
    EXPECT_EQ(newer->exchange(get("/newer")).status, 200u);  // idle again, since later
    auto third = client();
    EXPECT_EQ(third->exchange(get("/third")).body, "GET /third ");
    EXPECT_TRUE(oldest->closed());
    EXPECT_EQ(newer->exchange(get("/still")).body, "GET /still ");
    EXPECT_LE(server_->connections(), 2u);
}

TEST_F(HttpServerTest, ANewcomerWaitsWhileEveryConnectionIsInARequest) {
    auto o = options();
    o.limits.max_connections = 1;
    start(o);
    auto busy = in_a_request();
    auto waiting = client();  // taken by the kernel's listen queue only
    waiting->send(get("/waiting"));
    EXPECT_TRUE(waiting->quiet_for(300ms));
    EXPECT_EQ(seen_->count(), 0u);
    // The request in progress ends well; its connection, idle now, makes room.
    busy->send("body");
    EXPECT_EQ(busy->next().body, "POST /busy body");
    EXPECT_EQ(waiting->next().body, "GET /waiting ");
    EXPECT_TRUE(busy->closed());
}

TEST_F(HttpServerTest, StopClosesIdleConnectionsAndEndsTheOthersAfterTheirAnswer) {
    start();
    auto idle = client();
    EXPECT_EQ(idle->exchange(get("/idle")).status, 200u);
    auto busy = in_a_request();
    server_->stop();
    EXPECT_TRUE(idle->closed());
    busy->send("body");
    const auto a = busy->next();
    EXPECT_EQ(a.body, "POST /busy body");
    EXPECT_EQ(a.field("Connection"), "close");
    EXPECT_TRUE(busy->closed());
}

}  // namespace
}  // namespace posthorn::http
