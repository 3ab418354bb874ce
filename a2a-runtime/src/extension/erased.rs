//! The two erased forms of an extension ([`DynExtension`] implemented for a data-only
//! extension and for one with hooks), and the selection the attribute's output makes between
//! them. Not a public API: `__private` exports what the attribute's output names.

use super::RequestContext;
use super::activation_value::ActivationValue;
use super::dependencies::Dependencies;
use super::implemented::{HOOK_ALL, HookOutcome};
use super::method_entry::MethodEntry;
use super::options::ExtensionOptions;
use super::traits::{Activate, DynExtension, Extension, ExtensionHooks, Reply, Responding};
use crate::error::A2aError;
use crate::protocol::A2aRequest;
use crate::types::{AgentExtension, StreamResponse, TaskStatus};

/// A data-only extension (no [`ExtensionHooks`] impl).
#[derive(Debug)]
pub(crate) struct DataOnly<E>(E);

/// An extension with [`ExtensionHooks`].
#[derive(Debug)]
pub(crate) struct WithHooks<E> {
    ext: E,
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
    fn metadata_key(&self) -> &'static str {
        E::METADATA_KEY
    }
    fn init(&mut self, _: &ExtensionOptions) -> Result<(), A2aError> {
        Ok(())
    }
    fn activate(
        &self,
        _: &[String],
        _: &RequestContext,
    ) -> Result<Option<ActivationValue>, A2aError> {
        Ok(Some(ActivationValue::Unit(())))
    }
    // Never called: its `hooks()` are none.
    fn handle_request(
        &self,
        _: &mut A2aRequest,
        _: &mut ActivationValue,
        _: &RequestContext,
    ) -> HookOutcome {
        Ok(())
    }
    fn handle_response(
        &self,
        _: &mut Reply<'_>,
        _: &mut ActivationValue,
        _: Responding<'_>,
    ) -> HookOutcome {
        Ok(())
    }
    fn observe_response(
        &self,
        _: &Reply<'_>,
        _: &mut ActivationValue,
        _: Responding<'_>,
    ) -> HookOutcome {
        Ok(())
    }
    fn handle_event(&self, _: &mut StreamResponse, _: &mut ActivationValue) -> HookOutcome {
        Ok(())
    }
    fn check_transition(
        &self,
        _: &TaskStatus,
        _: &TaskStatus,
        _: &mut ActivationValue,
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
    fn allow_required_data_only(&self) -> bool {
        E::ALLOW_REQUIRED_DATA_ONLY
    }
    fn hooks(&self) -> u8 {
        0
    }
}

/// Runs `f` on the activation value in `act` when it is an `A` (it always is: the slot was
/// filled by the same extension's `activate`).
#[inline]
fn with_activation<A: 'static>(
    act: &mut ActivationValue,
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
        self.ext.declaration()
    }
    fn metadata_key(&self) -> &'static str {
        E::METADATA_KEY
    }
    fn init(&mut self, options: &ExtensionOptions) -> Result<(), A2aError> {
        self.ext.init(options)
    }
    fn activate(
        &self,
        requested: &[String],
        ctx: &RequestContext,
    ) -> Result<Option<ActivationValue>, A2aError> {
        match self.ext.activate(requested, ctx) {
            Activate::Activated(a) => Ok(Some(ActivationValue::new(a))),
            Activate::Skip => Ok(None),
            Activate::Refuse(e) => Err(e),
        }
    }
    fn handle_request(
        &self,
        req: &mut A2aRequest,
        act: &mut ActivationValue,
        ctx: &RequestContext,
    ) -> HookOutcome {
        with_activation::<E::Activation>(act, |a| self.ext.handle_request(req, a, ctx))
            .map_err(Box::new)
    }
    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        act: &mut ActivationValue,
        on: Responding<'_>,
    ) -> HookOutcome {
        with_activation::<E::Activation>(act, |a| {
            self.ext.handle_response(reply, a, on.request, on.ctx)
        })
        .map_err(Box::new)
    }
    fn observe_response(
        &self,
        reply: &Reply<'_>,
        act: &mut ActivationValue,
        on: Responding<'_>,
    ) -> HookOutcome {
        with_activation::<E::Activation>(act, |a| {
            self.ext.observe_response(reply, a, on.request, on.ctx)
        })
        .map_err(Box::new)
    }
    fn handle_event(&self, event: &mut StreamResponse, act: &mut ActivationValue) -> HookOutcome {
        with_activation::<E::Activation>(act, |a| self.ext.handle_event(event, a)).map_err(Box::new)
    }
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        act: &mut ActivationValue,
    ) -> HookOutcome {
        with_activation::<E::Activation>(act, |a| self.ext.check_transition(from, to, a))
            .map_err(Box::new)
    }
    fn dependencies(&self) -> Dependencies {
        self.ext.dependencies()
    }
    fn methods(&self) -> Vec<MethodEntry> {
        self.ext.methods()
    }
    fn has_hooks(&self) -> bool {
        true
    }
    fn allow_required_data_only(&self) -> bool {
        E::ALLOW_REQUIRED_DATA_ONLY
    }
    fn hooks(&self) -> u8 {
        HOOK_ALL
    }
}

// The attribute cannot see whether the struct it annotates implements `ExtensionHooks` (that
// impl is written apart), so its output picks the erased form by autoref specialization:
// `(&&Probe::<E>::new()).wrap(value)` resolves to `ViaHooks` (implemented for `&Probe<E>`,
// one autoref away) when `E: ExtensionHooks`, else to `ViaData` (implemented for `Probe<E>`).
// The same trick picks `ViaDefault` when `E: Default` (a linked extension is built from its
// default). Resolved where the attribute expands, for the concrete type.

/// Picks the erased form of an extension, and its linked default (not a public API).
#[doc(hidden)]
#[derive(Debug)]
pub struct Probe<E>(std::marker::PhantomData<E>);

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
        Box::new(WithHooks { ext: value })
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
