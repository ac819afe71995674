// Fault injection for the rollback tests: with RAILYARD_CNI_FAILPOINT=<step> in its environment,
// ADD fails right after that step has changed the system, so a test can prove that a failure
// at every step leaves the device, the pod and the state exactly as they were. Unset (as a
// runtime runs the plugin), a failpoint costs one getenv.
#pragma once

namespace railyard::cni {

// Throws CniError(kInternal, "injected fault after <step>") when the variable names `step`.
void failpoint(const char* step);

// With RAILYARD_CNI_PAUSE=<step>:<fifo>, waits at `step` until the test that made the FIFO has
// opened it and closed it again: a race between two commands, played in the order a test wants
// and without sleeps. Unset, it costs one getenv.
void pause_point(const char* step);

}  // namespace railyard::cni
