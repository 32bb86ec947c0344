#pragma once
// The HTTP status of an admission decision, from the overload contract (api/overload_contract.h):
// admission decides a verdict and a reason, the contract what it means on the wire. Both
// drivers (the server's replies, the simulator's counts) take the status from here.

#include "admission/admission.h"

namespace spillway {

/// The contract's status for `reason`: 429, 503 or 400 (200 for kNone). Looked up once per
/// reason: refusals are the common case under overload, so the 429 path does no string search.
int ContractStatus(OverloadReason reason);

/// 200 when `decision` admits, else ContractStatus(decision.reason).
inline int HttpStatus(const AdmissionDecision& decision) {
  return decision.admitted() ? 200 : ContractStatus(decision.reason);
}

}  // namespace spillway
