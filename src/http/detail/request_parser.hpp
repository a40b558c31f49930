// http/detail/request_parser.hpp — the request parser of http::Server (Beast's
// basic_parser, filling http::Request as it reads). Apart so that it can be fuzzed
// (tests/fuzz/http_request_fuzz.cpp); included by server.cpp and the fuzz target only.
#pragma once

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/optional.hpp>

#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "core/text.hpp"
#include "http/message.hpp"

namespace posthorn::http::detail {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Beast's parser, writing the request straight into the product-facing struct: a
// request_parser would first build Beast's own message (each field an allocation of its
// own), which was then copied field by field (~4k instructions a request, callgrind).
// Header names are lower-cased as they come; the body is appended as it comes, chunked or
// not (basic_parser enforces the body limit on either).
class RequestParser final : public bhttp::basic_parser<true> {
  public:
    Request request;
    unsigned version = 11;
    bool head = false;             // a HEAD request: the answer has no body
    bool expect_continue = false;  // "Expect: 100-continue"

  private:
    void on_request_impl(bhttp::verb method, beast::string_view method_str,
                         beast::string_view target, int v, error_code&) override {
        request.method.assign(method_str.data(), method_str.size());
        request.target.assign(target.data(), target.size());
        version = static_cast<unsigned>(v);
        head = method == bhttp::verb::head;
    }
    void on_response_impl(int, beast::string_view, int, error_code& ec) override {
        ec = bhttp::error::bad_method;  // a request parser never sees a status line
    }
    void on_field_impl(bhttp::field name, beast::string_view name_str, beast::string_view value,
                       error_code&) override {
        if (name == bhttp::field::expect && beast::iequals(value, "100-continue"))
            expect_continue = true;
        request.headers.emplace_back(core::ascii_lower({name_str.data(), name_str.size()}),
                                     std::string(value.data(), value.size()));
    }
    void on_header_impl(error_code&) override {}
    void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
        if (length) request.body.reserve(static_cast<std::size_t>(*length));
    }
    std::size_t on_body_impl(beast::string_view body, error_code&) override {
        request.body.append(body.data(), body.size());
        return body.size();
    }
    void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code&) override {}
    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, error_code&) override {
        request.body.append(body.data(), body.size());
        return body.size();
    }
    void on_finish_impl(error_code&) override {}
};

}  // namespace posthorn::http::detail
