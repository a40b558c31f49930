#include "webhooks/http_client.hpp"

#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/address.hpp"
#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace posthorn::webhooks {
namespace {

constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            throw std::runtime_error("curl_global_init failed");
    });
}

// One transfer: its easy handle and everything curl points into while it runs.
struct Transfer {
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    curl_slist* resolve = nullptr;
    HttpRequest request;
    bool get = false;  // a GET, whose answer is kept in `body`
    std::string body;
    std::function<void(HttpResult)> done;
    bool allow_private = false;
    std::string refused;  // the special-purpose address not connected to, and its range
    std::size_t answer_bytes = 0;
    char error[CURL_ERROR_SIZE] = {};
    std::chrono::steady_clock::time_point started;

    ~Transfer() {
        if (easy) curl_easy_cleanup(easy);
        if (headers) curl_slist_free_all(headers);
        if (resolve) curl_slist_free_all(resolve);
    }
};

std::size_t discard(char* data, std::size_t size, std::size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    t->answer_bytes += size * n;
    if (t->answer_bytes > kMaxAnswerBytes) return 0;  // 0 ends a runaway answer
    if (t->get) t->body.append(data, size * n);
    return size * n;
}

curl_socket_t open_socket(void* user, curlsocktype purpose, curl_sockaddr* a) {
    auto* t = static_cast<Transfer*>(user);
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    if (!t->allow_private) {
        asio::ip::address ip;
        if (a->family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(&a->addr);
            ip = asio::ip::address_v4(ntohl(in->sin_addr.s_addr));
        } else if (a->family == AF_INET6) {
            const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a->addr);
            asio::ip::address_v6::bytes_type b;
            std::copy(std::begin(in6->sin6_addr.s6_addr), std::end(in6->sin6_addr.s6_addr),
                      b.begin());
            ip = asio::ip::address_v6(b);
        } else {
            t->refused = "an address of an unknown family";
            return CURL_SOCKET_BAD;
        }
        if (const auto why = core::special_purpose(ip); !why.empty()) {
            t->refused = ip.to_string() + " is " + std::string(why);
            return CURL_SOCKET_BAD;
        }
    }
    return ::socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

}  // namespace

struct HttpClient::Impl {
    explicit Impl(Options o) : options(std::move(o)) {
        global_init();
        multi = curl_multi_init();
        if (!multi) throw std::runtime_error("curl_multi_init failed");
        thread = std::thread([this] {
            core::name_this_thread("ph-webhooks");
            loop();
        });
    }

    ~Impl() {
        stopping = true;
        curl_multi_wakeup(multi);
        thread.join();
        for (auto& [easy, t] : running) curl_multi_remove_handle(multi, easy);
        running.clear();
        curl_multi_cleanup(multi);
    }

    void add(std::unique_ptr<Transfer> t);
    void loop();
    void finish(CURL* easy, CURLcode code);

    Options options;
    CURLM* multi = nullptr;
    std::thread thread;
    std::atomic<bool> stopping{false};
    std::mutex mutex;
    std::deque<std::unique_ptr<Transfer>> incoming;      // under mutex
    std::map<CURL*, std::unique_ptr<Transfer>> running;  // the client's thread only
};

void HttpClient::Impl::add(std::unique_ptr<Transfer> t) {
    CURL* e = curl_easy_init();
    if (!e) {
        t->done({.error = "cannot make a curl handle"});
        return;
    }
    t->easy = e;
    for (const auto& [name, value] : t->request.headers)
        t->headers = curl_slist_append(t->headers, (name + ": " + value).c_str());
    t->headers = curl_slist_append(t->headers, "Expect:");  // no 100-continue round trip
    curl_easy_setopt(e, CURLOPT_URL, t->request.url.c_str());
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_PROXY, "");  // never a proxy from the environment
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout.count()));
    curl_easy_setopt(e, CURLOPT_USERAGENT, options.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    if (!options.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
    for (const auto& r : t->request.resolve) t->resolve = curl_slist_append(t->resolve, r.c_str());
    if (t->resolve) curl_easy_setopt(e, CURLOPT_RESOLVE, t->resolve);
    if (t->get) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->request.body.data());
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(t->request.body.size()));
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &discard);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, t.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    t->allow_private = options.allow_private;
    t->started = std::chrono::steady_clock::now();
    if (curl_multi_add_handle(multi, e) != CURLM_OK) {
        t->done({.error = "cannot start the transfer"});
        return;
    }
    running.emplace(e, std::move(t));
}

void HttpClient::Impl::finish(CURL* easy, CURLcode code) {
    auto it = running.find(easy);
    if (it == running.end()) return;
    auto t = std::move(it->second);
    running.erase(it);
    curl_multi_remove_handle(multi, easy);
    HttpResult r;
    r.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - t->started)
                        .count();
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (code == CURLE_OK || (code == CURLE_WRITE_ERROR && status > 0 && !t->get)) {
        r.status = static_cast<int>(status);
        char* type = nullptr;
        if (curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
            r.content_type = type;
        r.body = std::move(t->body);
    } else if (code == CURLE_WRITE_ERROR && t->get) {
        r.error = "the answer is larger than 64 KiB";
    } else if (!t->refused.empty()) {
        r.error = "refused: " + t->refused +
                  "; private, loopback, link-local and other special-purpose targets are not "
                  "connected to (" +
                  options.private_setting + " is false)";
    } else {
        r.error = t->error[0] ? t->error : curl_easy_strerror(code);
    }
    auto done = std::move(t->done);
    t.reset();
    done(std::move(r));
}

void HttpClient::Impl::loop() {
    while (!stopping) {
        std::deque<std::unique_ptr<Transfer>> take;
        {
            std::lock_guard lock(mutex);
            take.swap(incoming);
        }
        for (auto& t : take) add(std::move(t));
        int still = 0;
        curl_multi_perform(multi, &still);
        int left = 0;
        while (CURLMsg* m = curl_multi_info_read(multi, &left))
            if (m->msg == CURLMSG_DONE) finish(m->easy_handle, m->data.result);
        curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
}

HttpClient::HttpClient(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpClient::~HttpClient() = default;

void HttpClient::post(HttpRequest request, std::function<void(HttpResult)> done) {
    start(std::move(request), std::move(done), false);
}

void HttpClient::get_then(HttpRequest request, std::function<void(HttpResult)> done) {
    start(std::move(request), std::move(done), true);
}

void HttpClient::start(HttpRequest request, std::function<void(HttpResult)> done, bool get) {
    auto t = std::make_unique<Transfer>();
    t->request = std::move(request);
    t->done = std::move(done);
    t->get = get;
    {
        std::lock_guard lock(impl_->mutex);
        impl_->incoming.push_back(std::move(t));
    }
    curl_multi_wakeup(impl_->multi);
}

namespace {

// The caller's side: its handler, resumed on its own executor when the answer comes.
template <class Handler>
struct Waiting {
    explicit Waiting(Handler h)
        : handler(std::move(h)), work(asio::get_associated_executor(handler)) {}
    Handler handler;
    asio::executor_work_guard<asio::associated_executor_t<Handler>> work;
};

struct PostOp {
    HttpClient* client;
    HttpRequest request;
    bool get = false;

    template <class Handler>
    void operator()(Handler handler) {
        auto waiting = std::make_shared<Waiting<Handler>>(std::move(handler));
        auto done = [waiting](HttpResult r) {
            auto executor = waiting->work.get_executor();
            asio::post(executor, [waiting, r = std::move(r)]() mutable {
                auto h = std::move(waiting->handler);
                waiting->work.reset();
                std::move(h)(std::move(r));
            });
        };
        if (get)
            client->get_then(std::move(request), std::move(done));
        else
            client->post(std::move(request), std::move(done));
    }
};

}  // namespace

asio::awaitable<HttpResult> HttpClient::post(HttpRequest request) {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(HttpResult)>(
        PostOp{this, std::move(request)}, asio::use_awaitable);
}

asio::awaitable<HttpResult> HttpClient::get(HttpRequest request) {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(HttpResult)>(
        PostOp{this, std::move(request), true}, asio::use_awaitable);
}

}  // namespace posthorn::webhooks
