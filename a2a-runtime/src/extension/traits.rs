//! The [`Extension`] (data, implemented by the attribute) and [`ExtensionHooks`] (behaviour,
//! implemented by hand) traits, and [`DynExtension`], the object-safe form of both that the
//! attribute's output boxes (implemented in `erased`).

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::RequestContext;
use super::activation_value::ActivationValue;
use super::dependencies::Dependencies;
use super::implemented::HookOutcome;
use super::method_entry::MethodEntry;
use super::options::ExtensionOptions;
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
    /// A server may require it although it has no [`ExtensionHooks`] (data only). Off by
    /// default: a data-only extension changes nothing a server does, and the extensions guide
    /// asks agents not to require one, so a server refuses to build with it required. Set with
    /// the attribute's `allow_required_data_only = true`.
    const ALLOW_REQUIRED_DATA_ONLY: bool = false;

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
///
///     // The response hooks see the request they answer and its context.
///     fn handle_response(&self, reply: &mut Reply<'_>, locale: &mut Option<String>, request: &A2aRequest, ctx: &RequestContext) -> Result<(), A2aError> {
///         if let (Reply::Task(task), Some(locale)) = (reply, locale.as_ref()) {
///             let asked = request.operation();
///             task.set_metadata_of::<Locale>(&format!("{locale} ({asked}, tenant {:?})", ctx.tenant));
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

    /// Called once when the server (or client) is built, with the options the operator gave
    /// ([`ExtensionOptions`]; empty when none were given). An error stops the build: the
    /// builder fails with [`RegistryError::Init`](super::RegistryError::Init) naming this
    /// extension. What `init` sets on `self` is what every request's hooks see.
    fn init(&mut self, options: &ExtensionOptions) -> Result<(), A2aError> {
        let _ = options;
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
        Ok(())
    }

    /// Runs on every result and every streamed event, in declaration order, before encoding;
    /// may change it. An error replaces the result.
    ///
    /// `request` is the request as the operation received it (after every `handle_request`);
    /// `ctx` is its context: tenant, principal, headers, and the negotiation
    /// ([`RequestContext::is_active`] tells which other extensions are active; there,
    /// [`RequestContext::extension`] is `None`: each hook has its own `activation`).
    ///
    /// A hook that only reads results (metrics, logs, audit) belongs in
    /// [`observe_response`](Self::observe_response), which costs less: a result no activated
    /// extension may change is encoded once, for the store and the reply.
    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        activation: &mut Self::Activation,
        request: &A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let _ = (reply, activation, request, ctx);
        Ok(())
    }

    /// Reads every result and every streamed event, in declaration order, after every
    /// activated extension's [`handle_response`](Self::handle_response): it sees what the client
    /// gets. It cannot change the result (which may already be encoded); an error replaces it.
    /// It gets the request and its context as [`handle_response`](Self::handle_response) does.
    fn observe_response(
        &self,
        reply: &Reply<'_>,
        activation: &mut Self::Activation,
        request: &A2aRequest,
        ctx: &RequestContext,
    ) -> Result<(), A2aError> {
        let _ = (reply, activation, request, ctx);
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

/// The request a response answers and its context, as the response hooks get them (not a
/// public API).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Responding<'a> {
    /// The request, as the operation received it.
    pub request: &'a A2aRequest,
    /// Its context.
    pub ctx: &'a RequestContext,
}

/// Object-safe form of an extension (not a public API). A hook is called with the activation
/// value of its extension for the request.
#[doc(hidden)]
pub trait DynExtension: Send + Sync + 'static {
    /// [`Extension::URI`].
    fn uri(&self) -> &'static str;
    /// [`Extension::REQUIRED`].
    fn required(&self) -> bool;
    /// The type's path.
    fn type_name(&self) -> &'static str;
    /// [`ExtensionHooks::RUNS_IN_CLIENT`] (false without hooks).
    fn runs_in_client(&self) -> bool;
    /// [`Extension::declaration`].
    fn declaration(&self) -> AgentExtension;
    /// [`Extension::METADATA_KEY`].
    fn metadata_key(&self) -> &'static str;
    /// [`ExtensionHooks::init`].
    fn init(&mut self, options: &ExtensionOptions) -> Result<(), A2aError>;
    /// [`ExtensionHooks::activate`]: `None` to skip.
    fn activate(
        &self,
        requested: &[String],
        ctx: &RequestContext,
    ) -> Result<Option<ActivationValue>, A2aError>;
    /// [`ExtensionHooks::handle_request`].
    fn handle_request(
        &self,
        req: &mut A2aRequest,
        act: &mut ActivationValue,
        ctx: &RequestContext,
    ) -> HookOutcome;
    /// [`ExtensionHooks::handle_response`].
    fn handle_response(
        &self,
        reply: &mut Reply<'_>,
        act: &mut ActivationValue,
        responding: Responding<'_>,
    ) -> HookOutcome;
    /// [`ExtensionHooks::observe_response`].
    fn observe_response(
        &self,
        reply: &Reply<'_>,
        act: &mut ActivationValue,
        responding: Responding<'_>,
    ) -> HookOutcome;
    /// [`ExtensionHooks::handle_event`].
    fn handle_event(&self, event: &mut StreamResponse, act: &mut ActivationValue) -> HookOutcome;
    /// [`ExtensionHooks::check_transition`].
    fn check_transition(
        &self,
        from: &TaskStatus,
        to: &TaskStatus,
        act: &mut ActivationValue,
    ) -> HookOutcome;
    /// [`ExtensionHooks::dependencies`].
    fn dependencies(&self) -> Dependencies;
    /// [`ExtensionHooks::methods`].
    fn methods(&self) -> Vec<MethodEntry>;
    /// True when it implements [`ExtensionHooks`].
    fn has_hooks(&self) -> bool;
    /// [`Extension::ALLOW_REQUIRED_DATA_ONLY`].
    fn allow_required_data_only(&self) -> bool;
    /// The hooks that may do something (`HOOK_*` bits): a phase none of a request's
    /// extensions may hook is skipped.
    fn hooks(&self) -> u8;
}

// `Dependencies` is a plain list of URIs (dependencies.rs); naming a dependency by its type reads
// the type's `Extension::URI`, so these two live beside the trait.
impl Dependencies {
    /// Requires extension `E`.
    pub fn requires<E: Extension>(self) -> Self {
        self.requires_uri(E::URI)
    }

    /// Uses extension `E` when active.
    pub fn optional<E: Extension>(self) -> Self {
        self.optional_uri(E::URI)
    }
}
