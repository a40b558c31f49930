// core/testing/manual_clock.hpp — a Clock that only moves when a test moves it.
#pragma once

#include <atomic>

#include "core/clock.hpp"

namespace posthorn::core::testing {

class ManualClock final : public Clock {
  public:
    explicit ManualClock(UnixMs start) : now_(start) {}
    UnixMs now_ms() const override { return now_.load(); }
    void advance(UnixMs by) { now_ += by; }
    void set(UnixMs to) { now_ = to; }

  private:
    std::atomic<UnixMs> now_;
};

}  // namespace posthorn::core::testing
