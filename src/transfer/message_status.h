// Exchange-time misuse (docs/errors.md): a rank whose exchange arguments are wrong still takes
// part in the exchange, so that no peer waits for it without end. Every message starts with a
// status word: 0, or the error code of a sender that could not pack its data. A receiver that
// finds a non-zero status leaves the points of that message unwritten and fails with the
// sender's code, naming it. The word costs 8 bytes per message and nothing else: no extra
// message, no reduction.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "base/error.h"
#include "transfer/executor.h"

namespace isthmus {

constexpr size_t kStatusBytes = sizeof(int64_t);

// Wraps the packer of an exchange. inner == nullptr: this rank failed with `code` before the
// exchange (it sends status words only, and discards what it receives).
class StatusPacker final : public Packer {
 public:
  StatusPacker(Packer* inner, int code, const std::vector<int>& recv_peers)
      : inner_(inner), code_(inner ? 0 : code), recv_peers_(recv_peers) {}

  void pack(size_t i, char* msg) override {
    const int64_t status = code_;
    std::memcpy(msg, &status, kStatusBytes);
    if (inner_) inner_->pack(i, msg + kStatusBytes);
  }
  void unpack(size_t i, const char* msg) override {
    int64_t status = 0;
    std::memcpy(&status, msg, kStatusBytes);
    if (status != 0) {
      if (!peer_failure_) peer_failure_ = Failure{recv_peers_[i], static_cast<int>(status)};
      return;
    }
    if (inner_) inner_->unpack(i, msg + kStatusBytes);
  }
  void local() override {
    if (inner_) inner_->local();
  }

  struct Failure {
    int peer;
    int code;
  };
  // The first sender whose message carried a failure (lowest receive index), if any.
  const std::optional<Failure>& peer_failure() const { return peer_failure_; }

  // Carries over a failure seen by an earlier packer of the same exchange (split exchanges).
  void inherit(const std::optional<Failure>& f) {
    if (!peer_failure_) peer_failure_ = f;
  }

  // Throws the error of a failed peer, if there was one; `what` names the exchange.
  void throw_if_peer_failed(const char* what) const {
    if (!peer_failure_) return;
    fail(peer_failure_->code, what, ": rank ", peer_failure_->peer,
         " could not take part (", isthmus_error_name(peer_failure_->code),
         "; its own message says why) and sent no data: the points it sends to this rank were "
         "not written");
  }

 private:
  Packer* inner_;
  int code_;
  const std::vector<int>& recv_peers_;
  std::optional<Failure> peer_failure_;
};

}  // namespace isthmus
