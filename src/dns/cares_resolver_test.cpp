// Component test: CaresResolver against a real DNS server (dnsmasq, see
// /work/shared/PEERS.md) on a free loopback port. Skipped when dnsmasq is not installed.
#include "dns/cares_resolver.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_future.hpp>

#include "dns/detail/wire.hpp"
#include "dns/testing/message_builder.hpp"

extern char** environ;

namespace posthorn::dns {
namespace {

using namespace std::chrono_literals;
using boost::asio::ip::make_address;
using Addresses = std::vector<asio::ip::address>;
using Strings = std::vector<std::string>;

constexpr const char* kDnsmasq = "/usr/sbin/dnsmasq";
const std::string kLong(600, 'l');   // 3 character-strings; truncated over UDP, so TCP
const std::string kHuge(3000, 'h');  // 12 character-strings

template <class T>
error_code error_of(const Result<T>& r) {
    return r ? error_code{} : r.error();
}

// A UDP socket on 127.0.0.1 with a free port, and nothing reading it: a server that never
// answers. Closed, its port is one where nobody listens.
class UdpHole {
  public:
    UdpHole() {
        fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
    }
    ~UdpHole() { close(); }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    int fd() const { return fd_; }
    std::uint16_t port() const { return port_; }

  private:
    int fd_ = -1;
    std::uint16_t port_ = 0;
};

// Answers every UDP query with an empty response of one RCODE (dnsmasq cannot be made to
// answer SERVFAIL at once).
class RcodeServer {
  public:
    explicit RcodeServer(int rcode) : rcode_(rcode), thread_([this] { loop(); }) {}
    ~RcodeServer() {
        stop_ = true;
        thread_.join();
    }
    std::uint16_t port() const { return socket_.port(); }
    int queries() const { return queries_; }

  private:
    void loop() {
        timeval tv{0, 20'000};
        ::setsockopt(socket_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while (!stop_) {
            std::uint8_t buf[512];
            sockaddr_in from{};
            socklen_t len = sizeof from;
            const auto n = ::recvfrom(socket_.fd(), buf, sizeof buf, 0,
                                      reinterpret_cast<sockaddr*>(&from), &len);
            if (n < 12) continue;
            ++queries_;
            buf[2] |= 0x80;                                     // QR, keeping opcode and RD
            buf[3] = static_cast<std::uint8_t>(0x80 | rcode_);  // RA, RCODE
            ::sendto(socket_.fd(), buf, static_cast<std::size_t>(n), 0,
                     reinterpret_cast<sockaddr*>(&from), len);
        }
    }

    UdpHole socket_;
    int rcode_;
    std::atomic<bool> stop_{false};
    std::atomic<int> queries_{0};
    std::thread thread_;
};

// dnsmasq in the foreground, answering only from its command line.
class Dnsmasq {
  public:
    static std::unique_ptr<Dnsmasq> start() {
        for (int attempt = 0; attempt < 5; ++attempt) {
            std::uint16_t port = 0;
            {
                UdpHole probe;  // a port free for UDP just now; dnsmasq also binds TCP
                port = probe.port();
            }
            auto server = std::unique_ptr<Dnsmasq>(new Dnsmasq(port));
            if (server->spawn() && server->wait_ready()) return server;
        }
        return nullptr;
    }
    ~Dnsmasq() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
        }
        if (!log_.empty()) std::remove(log_.c_str());
    }
    std::uint16_t port() const { return port_; }
    std::string log() const {
        std::ifstream in{log_};
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }

  private:
    explicit Dnsmasq(std::uint16_t port) : port_(port) {}

    bool spawn() {
        char path[] = "/tmp/ph_dnsmasq_XXXXXX";
        const int log_fd = ::mkstemp(path);
        if (log_fd < 0) return false;
        ::close(log_fd);
        log_ = path;
        std::vector<std::string> args = {
            kDnsmasq,
            "--no-daemon",
            "--conf-file=/dev/null",
            "--pid-file",  // none
            "--no-resolv",
            "--no-hosts",
            "--port=" + std::to_string(port_),
            "--listen-address=127.0.0.1",
            "--bind-interfaces",
            // Authoritative for example.test: NXDOMAIN and NODATA instead of REFUSED.
            "--local=/example.test/",
            "--txt-record=txt.example.test,v=spf1 -all",
            "--txt-record=multi.example.test,one,two",
            "--txt-record=multi.example.test,three",
            "--txt-record=long.example.test," + kLong,
            "--txt-record=huge.example.test," + kHuge,
            "--host-record=target.example.test,192.0.2.1,2001:db8::1",
            "--cname=alias.example.test,target.example.test",
            "--mx-host=example.test,mx2.example.test,20",
            "--mx-host=example.test,mx1.example.test,10",
            "--mx-host=example.test,mx0.example.test,5",
            "--mx-host=nullmx.example.test,.,0",
            "--host-record=v4.example.test,192.0.2.7",
            "--host-record=v6.example.test,2001:db8::6",
            "--host-record=dual.example.test,192.0.2.8,2001:db8::8",
        };
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_APPEND, 0);
        posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_APPEND, 0);
        const int rc = posix_spawn(&pid_, kDnsmasq, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) pid_ = -1;
        return rc == 0;
    }

    // Asks until dnsmasq answers (up to 5 s); false if it exited (port taken, say).
    bool wait_ready() {
        const auto query = testing::MessageBuilder{}
                               .flags(0x0100)
                               .question("txt.example.test", detail::kTypeTxt)
                               .build();
        UdpHole client;
        timeval tv{0, 100'000};
        ::setsockopt(client.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        to.sin_port = htons(port_);
        for (int i = 0; i < 50; ++i) {
            if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
            ::sendto(client.fd(), query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&to),
                     sizeof to);
            std::uint8_t buf[512];
            if (::recv(client.fd(), buf, sizeof buf, 0) > 0) return true;
        }
        return false;
    }

    std::uint16_t port_;
    pid_t pid_ = -1;
    std::string log_;
};

// An io_context run by its own thread, as in core::IoPool.
class IoThread {
  public:
    IoThread() : guard_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
    ~IoThread() {
        guard_.reset();
        io_.stop();
        thread_.join();
    }
    asio::io_context& io() { return io_; }
    std::thread::id id() const { return thread_.get_id(); }

    // Runs `op` on this thread and waits for its result.
    template <class T>
    T run(asio::awaitable<T> op) {
        return asio::co_spawn(io_, std::move(op), asio::use_future).get();
    }

  private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> guard_;
    std::thread thread_;
};

template <class T>
struct Where {
    Result<T> result;
    std::thread::id thread;
};

asio::awaitable<Where<Strings>> txt_and_thread(Resolver* resolver, std::string name) {
    auto result = co_await resolver->txt(std::move(name));
    co_return Where<Strings>{std::move(result), std::this_thread::get_id()};
}

class CaresResolverTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        library_init();
        if (::access(kDnsmasq, X_OK) == 0) server_ = Dnsmasq::start().release();
    }
    static void TearDownTestSuite() {
        delete server_;
        server_ = nullptr;
        library_cleanup();
    }
    void SetUp() override {
        if (::access(kDnsmasq, X_OK) != 0) GTEST_SKIP() << kDnsmasq << " is not installed";
        ASSERT_NE(server_, nullptr) << "dnsmasq did not start";
    }
    void TearDown() override { resolver_.reset(); }  // before the io thread stops

    CaresResolver& resolver(CaresResolver::Options options = {}) {
        if (options.servers.empty()) options.servers = {{"127.0.0.1", server_->port()}};
        auto r = CaresResolver::create(dns_.io().get_executor(), std::move(options));
        EXPECT_TRUE(r.has_value()) << r.error().message();
        resolver_ = std::move(*r);
        return *resolver_;
    }

    template <class T>
    T run(asio::awaitable<T> op) {
        return caller_.run(std::move(op));
    }

    static Dnsmasq* server_;
    IoThread dns_;     // where c-ares runs
    IoThread caller_;  // where the tests' coroutines run
    std::unique_ptr<CaresResolver> resolver_;
};
Dnsmasq* CaresResolverTest::server_ = nullptr;

TEST_F(CaresResolverTest, Txt) {
    auto& r = resolver();
    auto spf = run(r.txt("txt.example.test"));
    ASSERT_TRUE(spf.has_value()) << spf.error().message() << "\n" << server_->log();
    EXPECT_EQ(*spf, Strings{"v=spf1 -all"});

    auto multi = run(r.txt("Multi.Example.Test."));
    ASSERT_TRUE(multi.has_value()) << multi.error().message();
    std::sort(multi->begin(), multi->end());
    EXPECT_EQ(*multi, (Strings{"onetwo", "three"}));
}

TEST_F(CaresResolverTest, LongTxtIsJoinedAndComesOverTcp) {
    auto& r = resolver();
    auto long_txt = run(r.txt("long.example.test"));
    ASSERT_TRUE(long_txt.has_value()) << long_txt.error().message();
    EXPECT_EQ(*long_txt, Strings{kLong});

    auto huge = run(r.txt("huge.example.test"));
    ASSERT_TRUE(huge.has_value()) << huge.error().message();
    EXPECT_EQ(*huge, Strings{kHuge});
}

TEST_F(CaresResolverTest, Cname) {
    auto& r = resolver();
    auto alias = run(r.cname("alias.example.test"));
    ASSERT_TRUE(alias.has_value()) << alias.error().message();
    EXPECT_EQ(*alias, Strings{"target.example.test"});
    EXPECT_EQ(error_of(run(r.cname("target.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(r.cname("nope.example.test"))), errc::nxdomain);
}

TEST_F(CaresResolverTest, MxSortedByPreference) {
    auto& r = resolver();
    auto mx = run(r.mx("example.test"));
    ASSERT_TRUE(mx.has_value()) << mx.error().message();
    EXPECT_EQ(*mx,
              (std::vector<MxRecord>{
                  {5, "mx0.example.test"}, {10, "mx1.example.test"}, {20, "mx2.example.test"}}));
}

TEST_F(CaresResolverTest, NullMx) {
    auto& r = resolver();
    auto mx = run(r.mx("nullmx.example.test"));
    ASSERT_TRUE(mx.has_value()) << mx.error().message();
    EXPECT_EQ(*mx, (std::vector<MxRecord>{{0, ""}}));
}

TEST_F(CaresResolverTest, Addresses) {
    auto& r = resolver();
    auto v4 = run(r.addresses("v4.example.test"));
    ASSERT_TRUE(v4.has_value()) << v4.error().message();
    EXPECT_EQ(*v4, Addresses{make_address("192.0.2.7")});

    auto v6 = run(r.addresses("v6.example.test"));
    ASSERT_TRUE(v6.has_value()) << v6.error().message();
    EXPECT_EQ(*v6, Addresses{make_address("2001:db8::6")});

    auto dual = run(r.addresses("dual.example.test"));
    ASSERT_TRUE(dual.has_value()) << dual.error().message();
    EXPECT_EQ(*dual, (Addresses{make_address("192.0.2.8"), make_address("2001:db8::8")}));

    auto alias = run(r.addresses("alias.example.test"));  // through the CNAME
    ASSERT_TRUE(alias.has_value()) << alias.error().message();
    EXPECT_EQ(*alias, (Addresses{make_address("192.0.2.1"), make_address("2001:db8::1")}));
}

TEST_F(CaresResolverTest, NxdomainAndNoData) {
    auto& r = resolver();
    EXPECT_EQ(error_of(run(r.txt("nope.example.test"))), errc::nxdomain);
    EXPECT_EQ(error_of(run(r.mx("nope.example.test"))), errc::nxdomain);
    EXPECT_EQ(error_of(run(r.addresses("nope.example.test"))), errc::nxdomain);
    EXPECT_EQ(error_of(run(r.mx("txt.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(r.txt("v4.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(r.addresses("txt.example.test"))), errc::no_data);
    EXPECT_EQ(error_of(run(r.txt("alias.example.test"))), errc::no_data);  // CNAME, no TXT
}

TEST_F(CaresResolverTest, Refused) {
    auto& r = resolver({.timeout = 500ms, .tries = 1});
    EXPECT_EQ(error_of(run(r.txt("outside.other"))), errc::refused);  // not dnsmasq's zone
}

TEST_F(CaresResolverTest, ServfailIsReportedAsSuch) {
    RcodeServer server{2};
    auto& r = resolver({.servers = {{"127.0.0.1", server.port()}}, .timeout = 500ms});
    EXPECT_EQ(error_of(run(r.mx("example.test"))), errc::servfail);
    EXPECT_EQ(server.queries(), 1);  // the answer, not a reason to ask again
}

TEST_F(CaresResolverTest, FailsOverToTheNextServer) {
    UdpHole hole;
    const auto dead = hole.port();
    hole.close();
    auto& r = resolver({.servers = {{"127.0.0.1", dead}, {"127.0.0.1", server_->port()}},
                        .timeout = 300ms,
                        .tries = 1});
    auto txt = run(r.txt("txt.example.test"));
    ASSERT_TRUE(txt.has_value()) << txt.error().message();
    EXPECT_EQ(*txt, Strings{"v=spf1 -all"});
}

TEST_F(CaresResolverTest, NobodyListening) {
    UdpHole hole;
    const auto port = hole.port();
    hole.close();
    auto& r = resolver({.servers = {{"127.0.0.1", port}}, .timeout = 300ms, .tries = 1});
    const auto start = std::chrono::steady_clock::now();
    const auto ec = error_of(run(r.txt("txt.example.test")));
    EXPECT_TRUE(ec == errc::connection_refused || ec == errc::timeout) << ec.message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST_F(CaresResolverTest, ServerThatNeverAnswersTimesOut) {
    UdpHole hole;
    auto& r = resolver({.servers = {{"127.0.0.1", hole.port()}}, .timeout = 300ms, .tries = 1});
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(error_of(run(r.mx("example.test"))), errc::timeout);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_GE(took, 250ms);
    EXPECT_LT(took, 3s);
}

TEST_F(CaresResolverTest, CallersOnTwoThreadsResumeOnTheirOwn) {
    auto& r = resolver();
    IoThread other;
    std::vector<std::future<Where<Strings>>> here, there;
    for (int i = 0; i < 20; ++i) {
        here.push_back(
            asio::co_spawn(caller_.io(), txt_and_thread(&r, "txt.example.test"), asio::use_future));
        there.push_back(
            asio::co_spawn(other.io(), txt_and_thread(&r, "multi.example.test"), asio::use_future));
    }
    for (auto& f : here) {
        auto w = f.get();
        ASSERT_TRUE(w.result.has_value()) << w.result.error().message();
        EXPECT_EQ(*w.result, Strings{"v=spf1 -all"});
        EXPECT_EQ(w.thread, caller_.id());
    }
    for (auto& f : there) {
        auto w = f.get();
        ASSERT_TRUE(w.result.has_value()) << w.result.error().message();
        EXPECT_EQ(w.result->size(), 2u);
        EXPECT_EQ(w.thread, other.id());
    }
}

TEST_F(CaresResolverTest, CallerOnTheResolversOwnThread) {
    auto& r = resolver();
    auto w = dns_.run(txt_and_thread(&r, "txt.example.test"));
    ASSERT_TRUE(w.result.has_value()) << w.result.error().message();
    EXPECT_EQ(w.thread, dns_.id());
}

TEST_F(CaresResolverTest, CancellationCompletesAtOnce) {
    UdpHole hole;
    auto& r = resolver({.servers = {{"127.0.0.1", hole.port()}}, .timeout = 5000ms, .tries = 1});
    asio::cancellation_signal signal;
    const auto start = std::chrono::steady_clock::now();
    auto future = asio::co_spawn(caller_.io(), r.txt("txt.example.test"),
                                 asio::bind_cancellation_slot(signal.slot(), asio::use_future));
    std::this_thread::sleep_for(50ms);
    // A signal is emitted on the thread of the operation it cancels.
    asio::post(caller_.io(), [&signal] { signal.emit(asio::cancellation_type::terminal); });
    const auto result = future.get();
    EXPECT_EQ(error_of(result), errc::cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(CaresResolverTest, DestroyingTheResolverCancelsPendingLookups) {
    UdpHole hole;
    auto& r = resolver({.servers = {{"127.0.0.1", hole.port()}}, .timeout = 5000ms, .tries = 1});
    auto future = asio::co_spawn(caller_.io(), r.addresses("v4.example.test"), asio::use_future);
    std::this_thread::sleep_for(50ms);
    const auto start = std::chrono::steady_clock::now();
    resolver_.reset();
    EXPECT_EQ(error_of(future.get()), errc::cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(CaresResolverTest, RefusesNamesItCannotSend) {
    auto& r = resolver();
    EXPECT_EQ(error_of(run(r.txt(""))), errc::other);
    EXPECT_EQ(error_of(run(r.txt(std::string{"txt.example.test\0.evil", 22}))), errc::other);
}

TEST_F(CaresResolverTest, CreateChecksOptions) {
    auto bad = [this](CaresResolver::Options o) {
        auto r = CaresResolver::create(dns_.io().get_executor(), std::move(o));
        return r ? error_code{} : r.error();
    };
    const error_code invalid = make_error_code(boost::system::errc::invalid_argument);
    EXPECT_EQ(bad({.servers = {{"not-an-ip", 53}}}), invalid);
    EXPECT_EQ(bad({.servers = {{"127.0.0.1", 0}}}), invalid);
    EXPECT_EQ(bad({.tries = 0}), invalid);
    EXPECT_EQ(bad({.timeout = 0ms}), invalid);
    EXPECT_FALSE(bad({.servers = {{"::1", 5353}, {"127.0.0.1", 5353}}}));
}

}  // namespace
}  // namespace posthorn::dns
