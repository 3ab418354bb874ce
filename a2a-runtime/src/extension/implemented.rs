//! Which hooks of an extension do something: each hook is found out on its first call, and one
//! left at its default (no-op) body is not called again.

// Why this exists: a request whose activated extensions all leave `handle_response` at its
// default cannot have its result changed, so a finished task is encoded once for the store and
// the reply (see `core::events::reply_for` and `Negotiated::hooks_responses`); for the bench's
// ten extensions that only observe results that is about 2,500 instructions and two points of
// SendMessage req/s (BENCHMARKS.md, 4d04ee1). Rust cannot tell at compile time whether an impl
// overrides a default method, so the default bodies say when they run: each records its
// extension type and hook in a thread-local, and the first call of each hook through the
// runtime checks whether that record is its own. Sound because an override replaces the
// default body entirely: `E`'s default body of a hook runs only if `E` does not override it,
// and it does nothing after recording.

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
    /// The extension type and hook whose default body ran last on this thread.
    static DEFAULT_RAN: Cell<Option<(TypeId, u8)>> = const { Cell::new(None) };
}

/// Called by the default body of `E`'s `hook`.
pub(crate) fn default_ran<E: 'static>(hook: u8) {
    DEFAULT_RAN.with(|c| c.set(Some((TypeId::of::<E>(), hook))));
}

/// What a hook call returns through the type-erased extension (the error boxed: one word).
pub type HookOutcome = Result<(), Box<A2aError>>;

/// What is known of one extension's hooks (`HOOK_*` bits): those known to be implemented, and
/// those known to be default bodies.
#[derive(Debug, Default)]
pub(crate) struct Implemented {
    implemented: AtomicU8,
    default: AtomicU8,
}

impl Implemented {
    /// The hooks that may do something: every one not found to be a default body.
    pub(crate) fn may_run(&self) -> u8 {
        HOOK_ALL & !self.default.load(Ordering::Relaxed)
    }

    /// Calls `E`'s `hook` through `f`, unless it is known to be a default body. The first call
    /// finds out; the bookkeeping is out of line, so that the usual call is a load, a test and
    /// the call.
    #[inline(always)]
    pub(crate) fn call<E: 'static>(
        &self,
        hook: u8,
        f: impl FnOnce() -> Result<(), A2aError>,
    ) -> HookOutcome {
        if self.implemented.load(Ordering::Relaxed) & hook != 0 {
            return f().map_err(Box::new);
        }
        if self.default.load(Ordering::Relaxed) & hook != 0 {
            return Ok(());
        }
        forget_default_ran();
        let outcome = f().map_err(Box::new);
        self.record::<E>(hook);
        outcome
    }

    /// After a first call of `E`'s `hook`: records whether its default body ran.
    #[cold]
    #[inline(never)]
    fn record<E: 'static>(&self, hook: u8) {
        let bits = if DEFAULT_RAN.with(Cell::take) == Some((TypeId::of::<E>(), hook)) {
            &self.default
        } else {
            &self.implemented
        };
        bits.fetch_or(hook, Ordering::Relaxed);
    }
}

/// Before a first call: forgets the default body that ran last (the call's own is looked for).
#[cold]
#[inline(never)]
fn forget_default_ran() {
    DEFAULT_RAN.with(|c| c.set(None));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct Overrides;
    struct KeepsDefault;

    #[test]
    fn a_default_body_is_dropped_after_its_first_call_and_an_override_always_runs() {
        let (implemented, calls) = (Implemented::default(), Cell::new(0));
        for _ in 0..3 {
            implemented
                .call::<Overrides>(HOOK_REQUEST, || {
                    calls.set(calls.get() + 1);
                    // Another extension's default body, run from inside this hook, does not
                    // count as this one's.
                    default_ran::<KeepsDefault>(HOOK_REQUEST);
                    Ok(())
                })
                .unwrap();
            implemented
                .call::<Overrides>(HOOK_EVENT, || {
                    calls.set(calls.get() + 10);
                    default_ran::<Overrides>(HOOK_EVENT);
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(calls.get(), 3 + 10, "the event hook ran once");
        assert_eq!(implemented.may_run(), HOOK_ALL & !HOOK_EVENT);
    }
}
