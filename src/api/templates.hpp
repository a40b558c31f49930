// api/templates.hpp — /v1/templates: stored templates (docs/templates.md). Create, list,
// read, update and delete an account's templates (a full key: "manage templates"), render
// one with variables without sending (a preview), and apply_template, which fills a send
// that names a template (POST /v1/emails, and any door that takes the same body). A
// template is named in a path or a send by its tpl_ id or by its name; a name never starts
// with "tpl_". What the parts may hold and how they render: mail/template.hpp.
#pragma once

#include <variant>

#include "api/detail/context.hpp"
#include "api/send_request.hpp"

namespace posthorn::api {

asio::awaitable<http::Response> create_template(detail::Context ctx);
asio::awaitable<http::Response> list_templates(detail::Context ctx);
asio::awaitable<http::Response> get_template(detail::Context ctx);
asio::awaitable<http::Response> update_template(detail::Context ctx);
asio::awaitable<http::Response> delete_template(detail::Context ctx);
// POST /v1/templates/{id}/render {variables}: {subject, html, text}, nothing sent.
asio::awaitable<http::Response> render_template_preview(detail::Context ctx);

// A send that names a template (req.template_ref) with its subject, html and text rendered
// from the account's template and the send's variables over the template's defaults, and
// checked as a send's own would be; a send without one as it is. Or the answer to give:
// 404 NOT_FOUND (no such template in the account), 400 TEMPLATE_VARIABLE_MISSING (naming
// every variable the template uses and neither gives), 400 VALIDATION_ERROR (a rendered
// part a send could not carry), 503/500 (the store).
asio::awaitable<std::variant<SendRequest, http::Response>> apply_template(const Deps& deps,
                                                                          std::string account_id,
                                                                          SendRequest req);

}  // namespace posthorn::api
