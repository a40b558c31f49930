#include "dns/cares_resolver.hpp"

#include <atomic>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <utility>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "dns/detail/ares.hpp"
#include "dns/detail/channel.hpp"
#include "dns/detail/names.hpp"
#include "dns/detail/replies.hpp"
#include "dns/detail/wire.hpp"

namespace posthorn::dns {

struct CaresResolver::Impl {
    std::shared_ptr<detail::Channel> channel;
};

namespace {

using detail::Channel;
template <class T>
using Deliver = std::function<void(Result<T>)>;  // called once, from the channel's strand

// The caller's side of one lookup: its completion handler, kept until the answer (from the
// strand) or a cancellation (from the caller's thread) comes first, whichever it is.
template <class T, class Handler>
class Waiter : public std::enable_shared_from_this<Waiter<T, Handler>> {
  public:
    explicit Waiter(Handler handler)
        : handler_(std::move(handler)), work_(asio::get_associated_executor(handler_)) {}

    // The first call wins; the handler runs on its own executor, never inline.
    void finish(Result<T> result) {
        if (done_.exchange(true)) return;
        auto executor = work_.get_executor();
        asio::post(executor, [self = this->shared_from_this(), r = std::move(result)]() mutable {
            asio::get_associated_cancellation_slot(self->handler_).clear();
            auto handler = std::move(self->handler_);
            self->work_.reset();
            std::move(handler)(std::move(r));
        });
    }

    // Lets the caller cancel: the lookup then completes with errc::cancelled at once, and
    // its answer, when it comes, goes nowhere.
    void connect_cancellation() {
        auto slot = asio::get_associated_cancellation_slot(handler_);
        if (!slot.is_connected()) return;
        slot.assign([weak = this->weak_from_this()](asio::cancellation_type) {
            if (auto self = weak.lock()) self->finish(make_error_code(errc::cancelled));
        });
    }

  private:
    Handler handler_;
    asio::executor_work_guard<asio::associated_executor_t<Handler>> work_;
    std::atomic<bool> done_{false};
};

// An initiation (see store/sqlite/detail/writer.hpp for why not a coroutine): runs
// `start(Channel&, Deliver<T>)` on the channel's strand.
template <class T, class Start>
struct LookupOp {
    std::shared_ptr<Channel> channel;
    Start start;

    template <class Handler>
    void operator()(Handler handler) {
        auto waiter = std::make_shared<Waiter<T, Handler>>(std::move(handler));
        waiter->connect_cancellation();
        Deliver<T> deliver = [waiter](Result<T> r) { waiter->finish(std::move(r)); };
        const auto strand = channel->strand();
        asio::dispatch(strand, [channel = std::move(channel), start = std::move(start),
                                deliver = std::move(deliver)]() mutable {
            if (channel->closed()) {
                deliver(make_error_code(errc::cancelled));
                return;
            }
            start(*channel, std::move(deliver));
        });
    }
};

template <class T, class Start>
asio::awaitable<Result<T>> lookup(const std::shared_ptr<Channel>& channel, Start start) {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(Result<T>)>(
        LookupOp<T, Start>{channel, std::move(start)}, asio::use_awaitable);
}

// One query whose answer `parse(status, answer)` turns into a Result<T>.
template <class T, class Parse>
asio::awaitable<Result<T>> simple_lookup(const std::shared_ptr<Channel>& channel, std::string name,
                                         int type, Parse parse) {
    return lookup<T>(channel,
                     [name = std::move(name), type, parse](Channel& ch, Deliver<T> deliver) {
                         if (detail::is_bad_query_name(name)) {
                             deliver(make_error_code(errc::other));
                             return;
                         }
                         ch.query(name, type,
                                  [deliver = std::move(deliver), parse, name](
                                      int status, std::span<const std::uint8_t> answer) {
                                      deliver(parse(status, answer, name));
                                  });
                     });
}

using Addresses = std::vector<asio::ip::address>;

// Both queries of addresses(): whichever answers last merges.
struct AddressPair {
    explicit AddressPair(Deliver<Addresses> d) : deliver(std::move(d)) {}
    void set(bool v6, Result<Addresses> r) {
        (v6 ? aaaa : a).emplace(std::move(r));
        if (a && aaaa) deliver(detail::merge_addresses(std::move(*a), std::move(*aaaa)));
    }
    Deliver<Addresses> deliver;
    std::optional<Result<Addresses>> a, aaaa;
};

}  // namespace

void library_init() {
    const int status = ares_library_init(ARES_LIB_INIT_ALL);
    if (status != ARES_SUCCESS) {
        throw std::runtime_error(std::string{"ares_library_init: "} + ares_strerror(status));
    }
}

void library_cleanup() noexcept { ares_library_cleanup(); }

Result<std::unique_ptr<CaresResolver>> CaresResolver::create(const asio::any_io_executor& executor,
                                                             const Options& options) {
    auto channel = Channel::open(executor, options);
    if (!channel) return channel.error();
    auto impl = std::make_shared<Impl>(Impl{std::move(*channel)});
    return std::unique_ptr<CaresResolver>(new CaresResolver(std::move(impl)));
}

CaresResolver::CaresResolver(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

// asio::dispatch throws only for an empty executor (never here) or when out of memory, and
// then terminating is right.
// NOLINTNEXTLINE(bugprone-exception-escape)
CaresResolver::~CaresResolver() {
    // c-ares may only be touched on its strand: close there (at once, when we are on it).
    auto channel = impl_->channel;
    const auto strand = channel->strand();
    asio::dispatch(strand, [channel = std::move(channel)] { channel->close(); });
}

void CaresResolver::close() {
    auto channel = impl_->channel;
    auto closed = std::make_shared<std::promise<void>>();
    auto done = closed->get_future();
    asio::post(channel->strand(), [channel, closed] {
        channel->close();
        closed->set_value();
    });
    // A stopped executor never runs the close: do not wait forever for it.
    done.wait_for(std::chrono::seconds(5));
}

asio::awaitable<Result<std::vector<std::string>>> CaresResolver::txt(std::string name) {
    return simple_lookup<std::vector<std::string>>(
        impl_->channel, std::move(name), detail::kTypeTxt,
        [](int status, detail::Answer answer, const std::string&) {
            return detail::txt_reply(status, answer);
        });
}

asio::awaitable<Result<std::vector<std::string>>> CaresResolver::cname(std::string name) {
    return simple_lookup<std::vector<std::string>>(
        impl_->channel, std::move(name), detail::kTypeCname,
        [](int status, detail::Answer answer, const std::string& qname) {
            return detail::cname_reply(status, answer, qname);
        });
}

asio::awaitable<Result<std::vector<MxRecord>>> CaresResolver::mx(std::string name) {
    return simple_lookup<std::vector<MxRecord>>(
        impl_->channel, std::move(name), detail::kTypeMx,
        [](int status, detail::Answer answer, const std::string&) {
            return detail::mx_reply(status, answer);
        });
}

asio::awaitable<Result<std::vector<asio::ip::address>>> CaresResolver::addresses(std::string host) {
    return lookup<Addresses>(
        impl_->channel, [host = std::move(host)](Channel& ch, Deliver<Addresses> deliver) {
            if (detail::is_bad_query_name(host)) {
                deliver(make_error_code(errc::other));
                return;
            }
            auto pair = std::make_shared<AddressPair>(std::move(deliver));
            ch.query(host, detail::kTypeA, [pair](int status, detail::Answer answer) {
                pair->set(false, detail::a_reply(status, answer));
            });
            ch.query(host, detail::kTypeAaaa, [pair](int status, detail::Answer answer) {
                pair->set(true, detail::aaaa_reply(status, answer));
            });
        });
}

asio::awaitable<Result<TlsaAnswer>> CaresResolver::tlsa(std::string name) {
    return lookup<TlsaAnswer>(
        impl_->channel, [name = std::move(name)](Channel& ch, Deliver<TlsaAnswer> deliver) {
            if (detail::is_bad_query_name(name)) {
                deliver(make_error_code(errc::other));
                return;
            }
            ch.query_ad(name, detail::kTypeTlsa,
                        [deliver = std::move(deliver)](int status, detail::Answer answer) {
                            if (status != ARES_SUCCESS)
                                deliver(detail::from_ares_status(status));
                            else
                                deliver(detail::parse_tlsa_answer(answer));
                        });
        });
}

}  // namespace posthorn::dns
