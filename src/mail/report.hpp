// mail/report.hpp — reports that come back about mail we sent: delivery status
// notifications (RFC 3464, multipart/report; report-type=delivery-status) and abuse
// feedback (ARF, RFC 5965, report-type=feedback-report). Reads the machine-readable part;
// never trusts it to name anything but recipients (the caller checks they were ours).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace posthorn::mail {

struct ReportRecipient {
    std::string address;     // Final-Recipient (DSN) or Original-Rcpt-To (ARF), lower-case
    std::string action;      // DSN Action: failed, delayed, delivered, relayed, expanded
    std::string status;      // DSN Status: 5.1.1
    std::string diagnostic;  // DSN Diagnostic-Code, as written
};

struct Report {
    enum class Kind { none, dsn, arf } kind = Kind::none;
    std::vector<ReportRecipient> recipients;
    std::string feedback_type;  // ARF: abuse, fraud, …
};

Report parse_report(std::string_view raw);

}  // namespace posthorn::mail
