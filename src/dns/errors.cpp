#include "dns/errors.hpp"

#include <string>

namespace posthorn::dns {
namespace {
class Category final : public boost::system::error_category {
  public:
    const char* name() const noexcept override { return "posthorn.dns"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::nxdomain:
                return "no such domain";
            case errc::no_data:
                return "no record of the requested type";
            case errc::servfail:
                return "DNS server failure";
            case errc::timeout:
                return "DNS timeout";
            case errc::refused:
                return "DNS query refused";
            case errc::connection_refused:
                return "DNS server unreachable (connection refused)";
            case errc::bad_response:
                return "malformed DNS response";
            case errc::cancelled:
                return "DNS lookup cancelled";
            case errc::other:
                return "DNS lookup failed";
        }
        return "unknown DNS error";
    }
};
}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

bool is_not_found(const error_code& ec) noexcept {
    return ec == errc::nxdomain || ec == errc::no_data;
}

}  // namespace posthorn::dns
