#include "store/errors.hpp"

#include <string>

namespace posthorn::store {
namespace {
class Category final : public boost::system::error_category {
  public:
    const char* name() const noexcept override { return "posthorn.store"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::not_found:
                return "not found";
            case errc::conflict:
                return "already exists";
            case errc::busy:
                return "database busy";
            case errc::io:
                return "database error";
            case errc::closed:
                return "store closed";
            case errc::unavailable:
                return "the database cannot be reached";
            case errc::newer_schema:
                return "the database's schema is newer than this posthorn knows: upgrade posthorn";
            case errc::older_schema:
                return "the database's schema is older than this posthorn's: start this posthorn "
                       "on "
                       "it once (it migrates at start)";
            case errc::no_schema:
                return "no posthorn database there";
        }
        return "unknown store error";
    }
};
}  // namespace

const boost::system::error_category& error_category() noexcept {
    static const Category category;
    return category;
}

}  // namespace posthorn::store
