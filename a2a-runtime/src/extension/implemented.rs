//! The hooks an activated extension may run (`HOOK_*` bits): every hook of an extension with
//! [`ExtensionHooks`](super::ExtensionHooks), none of a data-only one. A phase none of a
//! request's extensions may hook is skipped.
//!
//! Rust cannot tell whether an impl overrides a default method, so an extension with hooks is
//! asked every hook, its defaults included (they do nothing). An earlier version found the
//! defaults out through thread-locals written by the public default bodies; that probing is
//! gone from the public contract. Its one measurable gain: a result that no activated
//! extension can change was encoded once, for the store and the reply (2,745 instructions per
//! ten-extension SendMessage by callgrind, about 4%); it is now encoded again after the hooks
//! whenever an extension with hooks is active.

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

/// What a hook call returns through the type-erased extension (the error boxed: one word).
pub type HookOutcome = Result<(), Box<A2aError>>;
