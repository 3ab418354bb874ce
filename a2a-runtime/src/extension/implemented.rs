//! Which activated extensions may change a result: an extension's `handle_response` is found
//! out on its first call, and one left at its default (no-op) body is not called again.

// Why this exists: a request whose activated extensions all leave `handle_response` at its
// default cannot have its result changed, so a finished task is encoded once, for the store and
// the reply (see `core::events::reply` and `Negotiated::hooks_responses`). Measured with
// callgrind on the `extensions` bench's loopback SendMessage with its ten extensions observing
// results (`observe_response`) instead of changing them: the service's call and the reply's
// encoding took 17,846 instructions per request with this probe and 20,591 without it: 2,745
// fewer, about 4% of the ~65,000 BENCHMARKS.md counts for a whole ten-extension SendMessage.
// Skipping the other hooks left at their default saved 2.2% of the in-process SendMessage with
// ten extensions (24,024 against 24,556 instructions per request) and about 500 instructions
// (under 1%) of a loopback one: those hooks are always called, and their default bodies record
// nothing.
//
// Rust cannot tell whether an impl overrides a default method, so the default body of
// `handle_response` says when it runs: it records its extension type in a thread-local, and the
// first call of the hook through the runtime checks whether that record is its own. Sound
// because an override replaces the default body entirely: `E`'s default body runs only if `E`
// does not override it, and it does nothing after recording.

use std::any::TypeId;
use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::A2aError;

/// `handle_request` (a bit of a hook mask).
pub(crate) const HOOK_REQUEST: u8 = 1;
/// `handle_response`.
pub(crate) const HOOK_RESPONSE: u8 = 2;
/// `handle_event`.
pub(crate) const HOOK_EVENT: u8 = 4;
/// `check_transition`.
pub(crate) const HOOK_TRANSITION: u8 = 8;
/// `observe_response`.
pub(crate) const HOOK_OBSERVE: u8 = 16;
/// Every per-request hook.
pub(crate) const HOOK_ALL: u8 =
    HOOK_REQUEST | HOOK_RESPONSE | HOOK_EVENT | HOOK_TRANSITION | HOOK_OBSERVE;

thread_local! {
    /// The extension type whose default `handle_response` ran last on this thread.
    static DEFAULT_RESPONSE_RAN: Cell<Option<TypeId>> = const { Cell::new(None) };
}

/// Called by the default body of `E`'s `handle_response`.
pub(crate) fn default_response_ran<E: 'static>() {
    DEFAULT_RESPONSE_RAN.with(|c| c.set(Some(TypeId::of::<E>())));
}

/// What a hook call returns through the type-erased extension (the error boxed: one word).
pub type HookOutcome = Result<(), Box<A2aError>>;

/// Not known yet (before the first call).
const UNKNOWN: u8 = 0;
/// Overridden: may change a result.
const OVERRIDDEN: u8 = 1;
/// The default body: changes nothing.
const DEFAULT: u8 = 2;

/// What is known of one extension's `handle_response`.
#[derive(Debug, Default)]
pub(crate) struct ResponseHook(AtomicU8);

impl ResponseHook {
    /// The hooks that may do something (`HOOK_*` bits): all of them, but `handle_response` once
    /// it was found to be the default body.
    pub(crate) fn may_run(&self) -> u8 {
        if self.0.load(Ordering::Relaxed) == DEFAULT {
            HOOK_ALL & !HOOK_RESPONSE
        } else {
            HOOK_ALL
        }
    }

    /// Calls `E`'s `handle_response` through `f`, unless it is known to be the default body.
    /// The first call finds out; the bookkeeping is out of line, so that the usual call is a
    /// load, a test and the call.
    #[inline(always)]
    pub(crate) fn call<E: 'static>(&self, f: impl FnOnce() -> Result<(), A2aError>) -> HookOutcome {
        match self.0.load(Ordering::Relaxed) {
            OVERRIDDEN => f().map_err(Box::new),
            DEFAULT => Ok(()),
            _ => {
                forget_default_ran();
                let outcome = f().map_err(Box::new);
                self.record::<E>();
                outcome
            }
        }
    }

    /// After a first call of `E`'s `handle_response`: records whether its default body ran.
    #[cold]
    #[inline(never)]
    fn record<E: 'static>(&self) {
        let found = if DEFAULT_RESPONSE_RAN.with(Cell::take) == Some(TypeId::of::<E>()) {
            DEFAULT
        } else {
            OVERRIDDEN
        };
        let _ = self
            .0
            .compare_exchange(UNKNOWN, found, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Before a first call: forgets the default body that ran last (the call's own is looked for).
#[cold]
#[inline(never)]
fn forget_default_ran() {
    DEFAULT_RESPONSE_RAN.with(|c| c.set(None));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Overrides;
    struct KeepsDefault;

    #[test]
    fn a_default_response_hook_is_dropped_after_its_first_call_and_an_override_always_runs() {
        let (overrides, keeps, calls) = (
            ResponseHook::default(),
            ResponseHook::default(),
            Cell::new(0),
        );
        for _ in 0..3 {
            overrides
                .call::<Overrides>(|| {
                    calls.set(calls.get() + 1);
                    // Another extension's default body, run from inside this hook, does not
                    // count as this one's.
                    default_response_ran::<KeepsDefault>();
                    Ok(())
                })
                .unwrap();
            keeps
                .call::<KeepsDefault>(|| {
                    calls.set(calls.get() + 10);
                    default_response_ran::<KeepsDefault>();
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(calls.get(), 3 + 10, "the default ran once");
        assert_eq!(overrides.may_run(), HOOK_ALL);
        assert_eq!(keeps.may_run(), HOOK_ALL & !HOOK_RESPONSE);
    }
}
