//! The [`Extension`] (data, implemented by the attribute) and [`ExtensionHooks`] (behaviour,
//! implemented by hand) traits, and their object-safe form.

use std::any::{Any, TypeId};
use std::sync::atomic::{AtomicU16, Ordering};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::RequestContext;
use super::dependencies::Dependencies;
use super::method::MethodEntry;
use crate::error::A2aError;
use crate::protocol::A2aRequest;
use crate::types::{
    AgentCard, AgentExtension, Empty, ListTaskPushNotificationConfigsResponse, ListTasksResponse,
    Metadata, SendMessageResponse, StreamResponse, Task, TaskPushNotificationConfig, TaskStatus,
};

/// An A2A extension's declaration. Implemented by `#[a2a_extension]`; do not implement it by
/// hand.
///
/// The implementing struct's fields are the extension's params: they are serialized into the
/// card's `AgentExtension.params` and read back typed by clients.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an A2A extension",
    note = "annotate the struct with `#[a2a_extension(uri = \"https://…/v1\")]` and derive `Serialize` and `Deserialize`"
)]
pub trait Extension: Serialize + DeserializeOwned + Send + Sync + 'static {
    /// The extension's URI (its identity; carries a version).
    const URI: &'static str;
    /// Clients must activate it.
    const REQUIRED: bool;
    /// How this agent uses the extension (the struct's doc comment unless given).
    const DESCRIPTION: &'static str;
    /// The metadata key its data lives under (the URI unless given).
    const METADATA_KEY: &'static str;
    /// The type of its data in `metadata`.
    type Metadata: Serialize + DeserializeOwned;

    /// Boxes the extension with its hooks, if it has any. Implemented by the attribute.
    #[doc(hidden)]
    fn __into_dyn(self) -> Box<dyn DynExtension>;

    /// The declaration for the card: URI, description, required, and these params.
    fn declaration(&self) -> AgentExtension {
        let params = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => Metadata(m),
            _ => Metadata::default(),
        };
        AgentExtension {
            uri: Self::URI.to_owned(),
            description: Self::DESCRIPTION.to_owned(),
            required: Self::REQUIRED,
            params,
        }
    }
}

/// The outcome of [`ExtensionHooks::activate`] for one request.
#[derive(Debug)]
pub enum Activate<A> {
    /// Active for this request, with a value the hooks and the agent can read.
    Activated(A),
    /// Not active for this request (not echoed).
    Skip,
    /// Abort the request with this error.
    Refuse(A2aError),
}

/// One result or streamed event, as seen by [`ExtensionHooks::handle_response`] (which may
/// change it) and [`ExtensionHooks::observe_response`] (which reads it).
#[derive(Debug)]
pub enum Reply<'a> {
    /// SendMessage.
    SendMessage(&'a mut SendMessageResponse),
    /// GetTask, CancelTask.
    Task(&'a mut Task),
    /// ListTasks.
    ListTasks(&'a mut ListTasksResponse),
    /// Create/Get push config.
    PushConfig(&'a mut TaskPushNotificationConfig),
    /// List push configs.
    PushConfigs(&'a mut ListTaskPushNotificationConfigsResponse),
    /// Delete push config.
    Empty(&'a mut Empty),
    /// GetExtendedAgentCard.
    AgentCard(&'a mut AgentCard),
    /// One event of SendStreamingMessage or SubscribeToTask.
    Event(&'a mut StreamResponse),
}

/// Behaviour of an extension. Every method has a default: implement only what you need.
///
/// ```
/// use a2a_runtime::a2a_extension;
/// use a2a_runtime::extension::{Activate, ExtensionHooks, MetadataExt, Reply, RequestContext};
/// use a2a_runtime::protocol::A2aRequest;
/// use a2a_runtime::A2aError;
/// use serde::{Deserialize, Serialize};
///
/// /// Requires a `locale` in the message metadata and echoes it on results.
/// #[a2a_extension(uri = "https://example.com/ext/locale/v1", metadata = String)]
/// #[derive(Default, Serialize, Deserialize)]
/// struct Locale {}
///
/// impl ExtensionHooks for Locale {
///     type Activation = Option<String>;
///
///     fn handle_request(&self, req: &mut A2aRequest, locale: &mut Option<String>, _: &RequestContext) -> Result<(), A2aError> {
///         if let Some(message) = req.message() {
///             let value = message.metadata_of::<Locale>().map_err(|e| A2aError::invalid_field("message.metadata", e.to_string()))?;
///             *locale = Some(value.ok_or_else(|| A2aError::invalid_field("message.metadata", "locale is required"))?);
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait ExtensionHooks: Extension {
    /// The per-request activation value (read by the hooks, and by the agent with
    /// `ctx.extension::<E>()`).
    type Activation: Clone + Default + Send + Sync + 'static;

    /// Run these hooks in a client too, when it is built with this extension
    /// (`A2aClient::builder().extension(value)`); they see `ctx.side == Side::Client`. By
    /// default hooks run only in servers (they check what a server receives) and a client just
    /// names the extension in `A2A-Extensions`.
    const RUNS_IN_CLIENT: bool = false;

    /// Called once when the server (or client) is built.
    fn init(&mut self) -> Result<(), A2aError> {
        Ok(())
    }

    /// Decides whether the extension is active for a request that asked for it. Default:
    /// activated with the default activation value.
    fn activate(&self, requested: &[String], ctx: &RequestContext) -> Activate<Self::Activation> {
        let _ = (requested, ctx);
        Activate::Activated(Self::Activation::default())
    }

    /// Runs before the operation, in declaration order; may change the request.
    fn handle_request(
        &self,
        request: &mut A2aRequest,
        activation: &mut Self::Activation,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let _ = (request, activation, ctx);
        default_ran::<Self>(HOOK_REQUEST);
        Ok(())
    }

    /// Runs on every result and every streamed event, in declaration order, before encoding;
    /// may change it. An error replaces the result.
    ///
    /// A hook that only reads results (metrics, logs, audit) belongs in
    /// [`observe_response`](Self::observe_response): while an activated extension implements
    /// `handle_response`, a finished task is encoded twice (once for the store, once for the
    /// reply after this hook), where it is otherwise encoded once for both.
    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        activation: &mut Self::Activation,
    ) -> Result<(), A2aError> {
        let _ = (reply, activation);
        default_ran::<Self>(HOOK_RESPONSE);
        Ok(())
    }

    /// Reads every result and every streamed event, in declaration order, after every
    /// activated extension's [`handle_response`](Self::handle_response): it sees what the client
    /// gets. It cannot change the result (which may already be encoded); an error replaces it.
    fn observe_response(
        &self,
        reply: &Reply<'_>,
        activation: &mut Self::Activation,
    ) -> Result<(), A2aError> {
        let _ = (reply, activation);
        default_ran::<Self>(HOOK_OBSERVE);
        Ok(())
    }

    /// Runs on every event the agent publishes while the extension is active, before the
    /// event is applied to the task and stored. An error refuses the event.
    fn handle_event(
        &self,
        event: &mut StreamResponse,
        activation: &mut Self::Activation,
    ) -> Result<(), A2aError> {
        let _ = (event, activation);
        default_ran::<Self>(HOOK_EVENT);
        Ok(())
    }

    /// Checks a status change the agent makes while the extension is active, against the
    /// task's current status (called with the task locked, before anything is stored). An
    /// error refuses the event and leaves the task unchanged. See
    /// [`StateMachine`](super::StateMachine).
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        activation: &mut Self::Activation,
    ) -> Result<(), A2aError> {
        let _ = (from, to, activation);
        default_ran::<Self>(HOOK_TRANSITION);
        Ok(())
    }

    /// The extensions this one requires or uses. See [`Dependencies`].
    fn dependencies(&self) -> Dependencies {
        Dependencies::default()
    }

    /// The methods this extension adds. See [`ExtensionMethod`](super::ExtensionMethod).
    fn methods(&self) -> Vec<MethodEntry> {
        Vec::new()
    }
}

/// The type-erased activation value of one activated extension (not a public API): small
/// scalars (flags, counters) inline, anything else boxed (a zero-sized value in a box is not
/// allocated). A scalar is held as a [`Scalar`] as it is, so that filling a table of values from
/// a table of scalars is copying them.
#[doc(hidden)]
#[derive(Debug)]
pub enum Slot {
    /// A small scalar, inline.
    Scalar(Scalar),
    /// Anything else.
    Boxed(Box<dyn Any + Send + Sync>),
}

/// The scalars a [`Slot`] holds inline (not a public API).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    /// `()`: an extension that keeps nothing per request.
    Unit(()),
    /// A `bool`.
    Bool(bool),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// A `usize`.
    Usize(usize),
    /// An `i64`.
    I64(i64),
}

impl From<Scalar> for Slot {
    #[inline(always)]
    fn from(value: Scalar) -> Self {
        Self::Scalar(value)
    }
}

impl Slot {
    /// Holds `value`.
    pub(crate) fn new<A: Any + Send + Sync>(value: A) -> Self {
        let mut value = Some(value);
        let any: &mut dyn Any = &mut value;
        let scalar = if let Some(v) = any.downcast_mut::<Option<()>>().and_then(Option::take) {
            Scalar::Unit(v)
        } else if let Some(v) = any.downcast_mut::<Option<bool>>().and_then(Option::take) {
            Scalar::Bool(v)
        } else if let Some(v) = any.downcast_mut::<Option<u32>>().and_then(Option::take) {
            Scalar::U32(v)
        } else if let Some(v) = any.downcast_mut::<Option<u64>>().and_then(Option::take) {
            Scalar::U64(v)
        } else if let Some(v) = any.downcast_mut::<Option<usize>>().and_then(Option::take) {
            Scalar::Usize(v)
        } else if let Some(v) = any.downcast_mut::<Option<i64>>().and_then(Option::take) {
            Scalar::I64(v)
        } else {
            return match value {
                Some(v) => Self::Boxed(Box::new(v)),
                None => Self::Boxed(Box::new(())),
            };
        };
        Self::Scalar(scalar)
    }

    /// The value, as a `dyn Any`.
    pub(crate) fn as_any(&self) -> &dyn Any {
        match self {
            Self::Scalar(Scalar::Unit(v)) => v,
            Self::Scalar(Scalar::Bool(v)) => v,
            Self::Scalar(Scalar::U32(v)) => v,
            Self::Scalar(Scalar::U64(v)) => v,
            Self::Scalar(Scalar::Usize(v)) => v,
            Self::Scalar(Scalar::I64(v)) => v,
            Self::Boxed(b) => b.as_ref(),
        }
    }

    /// The value, when it is an `A`. The variant to look at is decided at compile time from
    /// `A` (no jump on the variant in every hook call).
    #[inline(always)]
    pub(crate) fn get_mut<A: 'static>(&mut self) -> Option<&mut A> {
        fn is<A: 'static, B: 'static>() -> bool {
            TypeId::of::<A>() == TypeId::of::<B>()
        }
        macro_rules! variant {
            ($($ty:ty => $v:ident),*) => {
                $(if is::<A, $ty>() {
                    match self {
                        Self::Scalar(Scalar::$v(v)) => v as &mut dyn Any,
                        _ => return None,
                    }
                } else)* {
                    match self {
                        Self::Boxed(b) => b.as_mut(),
                        Self::Scalar(_) => return None,
                    }
                }
            };
        }
        let any: &mut dyn Any =
            variant!(() => Unit, bool => Bool, u32 => U32, u64 => U64, usize => Usize, i64 => I64);
        any.downcast_mut::<A>()
    }
}

/// `handle_request` (a bit of [`DynExtension::hooks`]).
pub(crate) const HOOK_REQUEST: u8 = 1;
/// `handle_response`.
pub(crate) const HOOK_RESPONSE: u8 = 2;
/// `handle_event`.
pub(crate) const HOOK_EVENT: u8 = 4;
/// `check_transition`.
pub(crate) const HOOK_TRANSITION: u8 = 8;
/// `observe_response`.
pub(crate) const HOOK_OBSERVE: u8 = 16;
/// Every hook.
pub(crate) const HOOK_ALL: u8 =
    HOOK_REQUEST | HOOK_RESPONSE | HOOK_EVENT | HOOK_TRANSITION | HOOK_OBSERVE;

thread_local! {
    /// The extension type and hook whose default (no-op) body ran last on this thread.
    static DEFAULT_RAN: std::cell::Cell<Option<(TypeId, u8)>> = const { std::cell::Cell::new(None) };
}

/// Called by the default bodies of the [`ExtensionHooks`] hooks: records that `E` does not
/// override `hook`. Sound because an override replaces the default body entirely, so the
/// default body of `E`'s hook runs only if `E` never overrides it.
fn default_ran<E: 'static>(hook: u8) {
    DEFAULT_RAN.with(|c| c.set(Some((TypeId::of::<E>(), hook))));
}

/// What a hook call through [`DynExtension`] returns (not a public API). The error is boxed:
/// the outcome is one word, returned in a register.
#[doc(hidden)]
pub type HookOutcome = Result<(), Box<A2aError>>;

/// The registry's knowledge of one extension's hooks (not a public API): which may do
/// something (`HOOK_*` bits; a hook found to be the default body is dropped) and which are known to be implemented (those run without asking the
/// extension's own record, which is another cache line per call).
#[doc(hidden)]
#[derive(Debug)]
pub struct Live(AtomicU16);

impl Live {
    /// `hooks` may do something; none is known yet. (`HOOK_*` bits of the per-request hooks:
    /// the low byte; the same bits in the high byte say "known to be implemented".)
    pub(crate) fn new(hooks: u8) -> Self {
        Self(AtomicU16::new(u16::from(hooks & HOOK_ALL)))
    }

    /// The hooks that may do something.
    #[inline(always)]
    pub(crate) fn hooks(&self) -> u8 {
        // The low byte: the cast keeps exactly it.
        (self.0.load(Ordering::Relaxed) as u8) & HOOK_ALL
    }

    #[inline(always)]
    fn known(&self, hook: u8) -> bool {
        self.0.load(Ordering::Relaxed) & (u16::from(hook) << 8) != 0
    }

    fn confirm(&self, hook: u8) {
        self.0.fetch_or(u16::from(hook) << 8, Ordering::Relaxed);
    }

    fn drop_hook(&self, hook: u8) {
        self.0.fetch_and(!u16::from(hook), Ordering::Relaxed);
    }
}

/// Object-safe form of an extension (not a public API).
///
/// Each hook gets the registry's [`Live`] record of its extension: a hook found to be the
/// default (no-op) body is dropped there, and the registry does not call it again.
#[doc(hidden)]
pub trait DynExtension: Send + Sync + 'static {
    fn uri(&self) -> &'static str;
    fn required(&self) -> bool;
    fn type_name(&self) -> &'static str;
    /// [`ExtensionHooks::RUNS_IN_CLIENT`] (false without hooks).
    fn runs_in_client(&self) -> bool;
    fn declaration(&self) -> AgentExtension;
    fn init(&mut self) -> Result<(), A2aError>;
    fn activate(
        &self,
        requested: &[String],
        ctx: &RequestContext,
    ) -> Result<Option<Slot>, A2aError>;
    fn handle_request(
        &self,
        req: &mut A2aRequest,
        act: &mut Slot,
        ctx: &RequestContext,
        live: &Live,
    ) -> HookOutcome;
    fn handle_response(&self, reply: &mut Reply<'_>, act: &mut Slot, live: &Live) -> HookOutcome;
    fn observe_response(&self, reply: &Reply<'_>, act: &mut Slot, live: &Live) -> HookOutcome;
    fn handle_event(&self, event: &mut StreamResponse, act: &mut Slot, live: &Live) -> HookOutcome;
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        act: &mut Slot,
        live: &Live,
    ) -> HookOutcome;
    fn dependencies(&self) -> Dependencies;
    fn methods(&self) -> Vec<MethodEntry>;
    fn has_hooks(&self) -> bool;
    /// The hooks that may do something (`HOOK_*` bits); the others are never called.
    fn hooks(&self) -> u8;
}

/// A data-only extension (no [`ExtensionHooks`] impl).
#[doc(hidden)]
#[derive(Debug)]
pub struct DataOnly<E>(pub E);

/// An extension with [`ExtensionHooks`].
#[doc(hidden)]
#[derive(Debug)]
pub struct WithHooks<E>(pub E);

impl<E> WithHooks<E> {
    /// Wraps `ext`.
    pub fn new(ext: E) -> Self {
        Self(ext)
    }

    /// Runs `hook` through `f`. Until `live` knows whether `hook` is implemented, the call
    /// finds out (did the default body run?) and records the answer there; once it knows, the
    /// hook is just called. The bookkeeping is out of line, so that the hot path of every
    /// extension's hooks stays a few instructions long.
    #[inline(always)]
    fn run(&self, hook: u8, live: &Live, f: impl FnOnce() -> Result<(), A2aError>) -> HookOutcome
    where
        E: 'static,
    {
        if live.known(hook) {
            return f().map_err(Box::new);
        }
        before_unknown();
        let outcome = f().map_err(Box::new);
        after_unknown::<E>(hook, live);
        outcome
    }
}

/// Before a call whose hook is not known yet: forgets the last default body that ran.
#[cold]
#[inline(never)]
fn before_unknown() {
    DEFAULT_RAN.with(|c| c.set(None));
}

/// After such a call: records in `live` whether `E`'s `hook` is implemented (the call did not
/// run its default body) or not (dropped: it is not called again).
#[cold]
#[inline(never)]
fn after_unknown<E: 'static>(hook: u8, live: &Live) {
    if DEFAULT_RAN.with(std::cell::Cell::take) == Some((TypeId::of::<E>(), hook)) {
        live.drop_hook(hook);
    } else {
        live.confirm(hook);
    }
}

impl<E: Extension> DynExtension for DataOnly<E> {
    fn uri(&self) -> &'static str {
        E::URI
    }
    fn required(&self) -> bool {
        E::REQUIRED
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<E>()
    }
    fn runs_in_client(&self) -> bool {
        false
    }
    fn declaration(&self) -> AgentExtension {
        self.0.declaration()
    }
    fn init(&mut self) -> Result<(), A2aError> {
        Ok(())
    }
    fn activate(&self, _: &[String], _: &RequestContext) -> Result<Option<Slot>, A2aError> {
        Ok(Some(Slot::Scalar(Scalar::Unit(()))))
    }
    // Never called: its `hooks()` are none.
    fn handle_request(
        &self,
        _: &mut A2aRequest,
        _: &mut Slot,
        _: &RequestContext,
        _: &Live,
    ) -> HookOutcome {
        Ok(())
    }
    fn handle_response(&self, _: &mut Reply<'_>, _: &mut Slot, _: &Live) -> HookOutcome {
        Ok(())
    }
    fn observe_response(&self, _: &Reply<'_>, _: &mut Slot, _: &Live) -> HookOutcome {
        Ok(())
    }
    fn handle_event(&self, _: &mut StreamResponse, _: &mut Slot, _: &Live) -> HookOutcome {
        Ok(())
    }
    fn check_transition(
        &self,
        _: &TaskStatus,
        _: &TaskStatus,
        _: &mut Slot,
        _: &Live,
    ) -> HookOutcome {
        Ok(())
    }
    fn dependencies(&self) -> Dependencies {
        Dependencies::default()
    }
    fn methods(&self) -> Vec<MethodEntry> {
        Vec::new()
    }
    fn has_hooks(&self) -> bool {
        false
    }
    fn hooks(&self) -> u8 {
        0
    }
}

#[inline]
fn with_activation<A: 'static>(
    act: &mut Slot,
    f: impl FnOnce(&mut A) -> Result<(), A2aError>,
) -> Result<(), A2aError> {
    act.get_mut::<A>().map_or(Ok(()), f)
}

impl<E: ExtensionHooks> DynExtension for WithHooks<E> {
    fn uri(&self) -> &'static str {
        E::URI
    }
    fn required(&self) -> bool {
        E::REQUIRED
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<E>()
    }
    fn runs_in_client(&self) -> bool {
        E::RUNS_IN_CLIENT
    }
    fn declaration(&self) -> AgentExtension {
        self.0.declaration()
    }
    fn init(&mut self) -> Result<(), A2aError> {
        self.0.init()
    }
    fn activate(
        &self,
        requested: &[String],
        ctx: &RequestContext,
    ) -> Result<Option<Slot>, A2aError> {
        match self.0.activate(requested, ctx) {
            // Small scalars and zero-sized values are not allocated.
            Activate::Activated(a) => Ok(Some(Slot::new(a))),
            Activate::Skip => Ok(None),
            Activate::Refuse(e) => Err(e),
        }
    }
    fn handle_request(
        &self,
        req: &mut A2aRequest,
        act: &mut Slot,
        ctx: &RequestContext,
        live: &Live,
    ) -> HookOutcome {
        self.run(HOOK_REQUEST, live, || {
            with_activation::<E::Activation>(act, |a| self.0.handle_request(req, a, ctx))
        })
    }
    fn handle_response(&self, reply: &mut Reply<'_>, act: &mut Slot, live: &Live) -> HookOutcome {
        self.run(HOOK_RESPONSE, live, || {
            with_activation::<E::Activation>(act, |a| self.0.handle_response(reply, a))
        })
    }
    fn observe_response(&self, reply: &Reply<'_>, act: &mut Slot, live: &Live) -> HookOutcome {
        self.run(HOOK_OBSERVE, live, || {
            with_activation::<E::Activation>(act, |a| self.0.observe_response(reply, a))
        })
    }
    fn handle_event(&self, event: &mut StreamResponse, act: &mut Slot, live: &Live) -> HookOutcome {
        self.run(HOOK_EVENT, live, || {
            with_activation::<E::Activation>(act, |a| self.0.handle_event(event, a))
        })
    }
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        act: &mut Slot,
        live: &Live,
    ) -> HookOutcome {
        self.run(HOOK_TRANSITION, live, || {
            with_activation::<E::Activation>(act, |a| self.0.check_transition(from, to, a))
        })
    }
    fn dependencies(&self) -> Dependencies {
        self.0.dependencies()
    }
    fn methods(&self) -> Vec<MethodEntry> {
        self.0.methods()
    }
    fn has_hooks(&self) -> bool {
        true
    }
    fn hooks(&self) -> u8 {
        HOOK_ALL
    }
}

/// Picks [`WithHooks`] when the extension implements [`ExtensionHooks`], [`DataOnly`]
/// otherwise (autoref specialization, resolved where the macro expands for a concrete type).
#[doc(hidden)]
#[derive(Debug)]
pub struct Probe<E>(pub std::marker::PhantomData<E>);

impl<E> Probe<E> {
    /// A probe for `E`.
    pub const fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<E> Default for Probe<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when `E: ExtensionHooks`.
#[doc(hidden)]
pub trait ViaHooks<E> {
    /// Boxes `value` with its hooks.
    fn wrap(&self, value: E) -> Box<dyn DynExtension>;
}

/// Chosen otherwise.
#[doc(hidden)]
pub trait ViaData<E> {
    /// Boxes `value` as data only.
    fn wrap(&self, value: E) -> Box<dyn DynExtension>;
}

impl<E: ExtensionHooks> ViaHooks<E> for &Probe<E> {
    fn wrap(&self, value: E) -> Box<dyn DynExtension> {
        Box::new(WithHooks::new(value))
    }
}

impl<E: Extension> ViaData<E> for Probe<E> {
    fn wrap(&self, value: E) -> Box<dyn DynExtension> {
        Box::new(DataOnly(value))
    }
}

/// Makes the linked default of an extension when it implements `Default`.
#[doc(hidden)]
pub trait ViaDefault<E> {
    /// `Some(E::default())`.
    fn linked_default(&self) -> Option<E>;
}

/// Chosen when the extension has no `Default`: it is only used when given explicitly.
#[doc(hidden)]
pub trait ViaNoDefault<E> {
    /// `None`.
    fn linked_default(&self) -> Option<E>;
}

impl<E: Default> ViaDefault<E> for &Probe<E> {
    fn linked_default(&self) -> Option<E> {
        Some(E::default())
    }
}

impl<E> ViaNoDefault<E> for Probe<E> {
    fn linked_default(&self) -> Option<E> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Slot;

    fn round_trip<A: std::any::Any + Send + Sync + Clone + PartialEq + std::fmt::Debug>(
        value: A,
        inline: bool,
    ) {
        let mut slot = Slot::new(value.clone());
        assert_eq!(!matches!(slot, Slot::Boxed(_)), inline, "{value:?}");
        assert_eq!(slot.as_any().downcast_ref::<A>(), Some(&value));
        assert!(slot.as_any().downcast_ref::<[u8; 3]>().is_none());
        assert_eq!(slot.get_mut::<A>(), Some(&mut value.clone()));
        assert!(slot.get_mut::<[u8; 3]>().is_none());
    }

    #[test]
    fn activation_values_keep_their_type_small_scalars_inline() {
        round_trip(true, true);
        round_trip(7u32, true);
        round_trip(u64::MAX, true);
        round_trip(3usize, true);
        round_trip(-5i64, true);
        round_trip(9u8, false);
        round_trip(Some(7u32), false);
        round_trip((), true);
        round_trip(String::from("x"), false);
        round_trip(vec![1u32, 2], false);
    }
}
