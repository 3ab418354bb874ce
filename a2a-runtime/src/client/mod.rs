//! The A2A client: every operation on JSON-RPC, HTTP+JSON or gRPC (chosen from the agent
//! card), each with per-call options ([`CallOptions`]: headers, timeout, extensions);
//! streaming with a bounded SSE decoder ([`ClientLimits`]) and streams that resume after a
//! dropped connection ([`Reconnect`], [`A2aClient::subscribe_from`]); the card fetched from a
//! base URL or its own URL, its signature verified against the caller's keys
//! ([`A2aClient::fetch_card`], [`CardSignature`]).
//!
//! ```no_run
//! use a2a_runtime::client::{A2aClient, ClientOptions, SendResult};
//! use futures::StreamExt as _;
//!
//! # async fn run() -> Result<(), a2a_runtime::client::ClientError> {
//! let client = A2aClient::discover("http://127.0.0.1:8080", ClientOptions::default()).await?;
//! match client.send_message("hello", Default::default()).await?.into_inner() {
//!     SendResult::Task(task) => println!("task {} is {}", task.id, task.status.state),
//!     SendResult::Message(message) => println!("reply: {}", message.text()),
//! }
//! let mut events = client
//!     .stream_message("stream one two", Default::default())
//!     .await?
//!     .into_inner();
//! while let Some(event) = events.next().await {
//!     println!("{:?}", event?);
//! }
//! # Ok(()) }
//! ```

mod answer;
mod card;
mod catalog;
mod error;
mod events;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod operations;
mod options;
mod response;
mod resume;
mod retry;
mod route;
mod sse;
mod stream;
mod transport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use futures::StreamExt as _;

pub use card::{CardSignature, FetchedCard};
pub use error::{AgentError, ClientError};
pub use options::{
    Auth, CallOptions, ClientLimits, ClientOptions, ClientTls, ExtensionCheck, OutgoingRequest,
    Reconnect, RequestInterceptor, SendOptions,
};
pub use response::Response;
pub use sse::{SseDecoder, SseEvent, SseLimitError};
pub use stream::ClientStream;

use crate::error::A2aError;
use crate::extension::registry::ExtensionConfig;
use crate::extension::{Extension, ExtensionSet, Negotiated, Reply};
use crate::extension::{ExtensionRegistry, RequestContext};
use crate::protocol::A2aRequest;
use crate::types::{
    AgentCard, AgentInterface, Message, Part, ProtocolBinding, SendMessageResponse,
};
use card::CardCache;
use response::Meta;
use transport::Transport;

/// The result of SendMessage: the task the agent created or continued, or its direct reply.
pub type SendResult = SendMessageResponse;

/// What to call: an agent's base URL (the card is discovered) or a card already at hand.
#[derive(Clone, Debug)]
pub enum Target {
    /// The agent's base URL.
    Url(String),
    /// The agent's card.
    Card(Box<AgentCard>),
}

impl From<&str> for Target {
    fn from(s: &str) -> Self {
        Self::Url(s.to_owned())
    }
}

impl From<String> for Target {
    fn from(s: String) -> Self {
        Self::Url(s)
    }
}

impl From<AgentCard> for Target {
    fn from(c: AgentCard) -> Self {
        Self::Card(Box::new(c))
    }
}

/// What to send: text, a message, or parts.
#[derive(Clone, Debug)]
pub struct MessageInput(Message);

impl From<&str> for MessageInput {
    fn from(s: &str) -> Self {
        Self(Message::user_text(s))
    }
}

impl From<String> for MessageInput {
    fn from(s: String) -> Self {
        Self(Message::user_text(s))
    }
}

impl From<Message> for MessageInput {
    fn from(m: Message) -> Self {
        Self(m)
    }
}

impl From<Vec<Part>> for MessageInput {
    fn from(parts: Vec<Part>) -> Self {
        Self(Message::new(crate::types::Role::User, parts))
    }
}

/// An A2A client bound to one agent.
#[derive(Clone)]
pub struct A2aClient {
    transport: Arc<Transport>,
    card: Arc<RwLock<CardCache>>,
    /// The extensions whose hooks run in the client.
    extensions: ExtensionSet,
    /// Every URI sent in `A2A-Extensions` (with required dependencies), in order.
    activated: Arc<[String]>,
    /// True once the extensions were checked against the card (reset when the card changes).
    checked: Arc<AtomicBool>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("transport", &self.transport)
            .field("activated", &self.activated)
            .finish_non_exhaustive()
    }
}

/// Builds an [`A2aClient`] with extensions.
///
/// ```no_run
/// use a2a_runtime::client::{A2aClient, ClientOptions};
/// use a2a_runtime::extension::TimestampExtension;
///
/// # async fn run() -> Result<(), a2a_runtime::client::ClientError> {
/// let client = A2aClient::builder()
///     .options(ClientOptions::default())
///     .activate::<TimestampExtension>()
///     .activate_uri("https://example.com/ext/locale/v1")
///     .connect("http://127.0.0.1:8080")
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Default)]
pub struct A2aClientBuilder {
    options: ClientOptions,
    extensions: ExtensionConfig,
    uris: Vec<String>,
}

impl std::fmt::Debug for A2aClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClientBuilder")
            .field("options", &self.options)
            .field("uris", &self.uris)
            .finish_non_exhaustive()
    }
}

impl A2aClientBuilder {
    /// The options.
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Activates extension `E` on every call: its URI goes in `A2A-Extensions`. No params are
    /// needed (they are the agent's); required dependencies `E` declares are activated too when
    /// `E` is linked into the binary and implements `Default`.
    pub fn activate<E: Extension>(mut self) -> Self {
        let linked = ExtensionRegistry::linked()
            .iter()
            .find(|r| r.uri == E::URI)
            .and_then(|r| (r.linked)());
        match linked {
            Some(ext) => self.uris.extend(
                std::iter::once(ext.uri())
                    .chain(ext.dependencies().required.iter().copied())
                    .map(str::to_owned),
            ),
            None => self.uris.push(E::URI.to_owned()),
        }
        self
    }

    /// Activates the extension with this URI on every call.
    pub fn activate_uri(mut self, uri: impl Into<String>) -> Self {
        self.uris.push(uri.into());
        self
    }

    /// Activates an extension on every call, with this value: its URI and its required
    /// dependencies go in `A2A-Extensions`, and its hooks run in the client when it asks for
    /// that ([`ExtensionHooks::RUNS_IN_CLIENT`](crate::extension::ExtensionHooks::RUNS_IN_CLIENT),
    /// e.g. Secure Passport attaching the caller's passport).
    pub fn extension<E: Extension>(mut self, value: E) -> Self {
        self.extensions.add(value);
        self
    }

    /// Builds a client for `target` (a base URL, whose card is fetched, or a card). The card's
    /// contents never make this fail: [`A2aClient::check_extensions`] compares the extensions
    /// with it, and runs before the first call.
    pub async fn connect(self, target: impl Into<Target>) -> Result<A2aClient, ClientError> {
        let mut config = self.extensions;
        config.linked = false;
        // Hooks of the extensions that did not opt in are the server's: the client only names
        // those extensions.
        let mut uris: Vec<String> = Vec::new();
        let (hooked, named): (Vec<_>, Vec<_>) = std::mem::take(&mut config.explicit)
            .into_iter()
            .partition(|e| e.runs_in_client());
        config.explicit = hooked;
        let extensions = config
            .resolve()
            .map_err(|e| ClientError::Local(A2aError::Internal(e.to_string())))?;
        let mut from_values = extensions.uris_with_dependencies();
        for e in &named {
            from_values.push(e.uri());
            from_values.extend(e.dependencies().required);
        }
        for uri in from_values.into_iter().map(str::to_owned).chain(self.uris) {
            if !uri.is_empty() && !uris.contains(&uri) {
                uris.push(uri);
            }
        }
        A2aClient::make(target.into(), self.options, extensions, uris).await
    }
}

impl A2aClient {
    /// A builder (for extensions).
    pub fn builder() -> A2aClientBuilder {
        A2aClientBuilder::default()
    }

    /// A client for `target`: a base URL (the card is fetched from it) or a card.
    pub async fn new(
        target: impl Into<Target>,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        Self::make(target.into(), options, ExtensionSet::default(), Vec::new()).await
    }

    /// Fetches the card from `base_url` + the card path and builds a client from it.
    pub async fn discover(base_url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        Self::new(base_url, options).await
    }

    async fn make(
        target: Target,
        options: ClientOptions,
        extensions: ExtensionSet,
        activated: Vec<String>,
    ) -> Result<Self, ClientError> {
        let http = http::http_client(&options)?;
        let cache = match target {
            Target::Card(card) => CardCache::given(*card),
            Target::Url(url) => CardCache::fetch(&http, &options, &url).await?,
        };
        let interface = choose_interface(&cache.card, options.preferred_binding.as_ref())
            .map_err(ClientError::Local)?;
        let transport = Transport::new(http, options, interface, &activated)?;
        Ok(Self {
            transport: Arc::new(transport),
            card: Arc::new(RwLock::new(cache)),
            extensions,
            activated: activated.into(),
            checked: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The interface in use.
    pub fn interface(&self) -> &AgentInterface {
        &self.transport.interface
    }

    /// The URIs the client sends in `A2A-Extensions` on every call.
    pub fn extensions(&self) -> &[String] {
        &self.activated
    }

    /// Compares the activated extensions with the card, as
    /// [`ClientOptions::extension_check`] says: an extension the card marks `required` that
    /// the client does not activate is `ExtensionSupportRequired` (unless the check is `Off`),
    /// an activated one the card does not declare is logged (`Warn`) or refused (`Fail`).
    /// Runs before the first call too; its error is [`ClientError::Local`].
    pub fn check_extensions(&self) -> Result<(), ClientError> {
        let result = {
            let c = self.card.read().unwrap_or_else(|p| p.into_inner());
            check_extensions(
                &c.card,
                &self.activated,
                self.transport.options.extension_check,
            )
        };
        result.map_err(ClientError::Local)?;
        self.checked.store(true, Ordering::Release);
        Ok(())
    }

    /// Checks the extensions against the card once (again after the card changed).
    fn ensure_checked(&self) -> Result<(), ClientError> {
        if self.checked.load(Ordering::Acquire) {
            return Ok(());
        }
        self.check_extensions()
    }

    /// The activated extensions whose hooks run in the client, negotiated for one call.
    fn negotiated(&self, ctx: &RequestContext) -> Result<Arc<Negotiated>, ClientError> {
        self.ensure_checked()?;
        if self.extensions.is_empty() {
            return Ok(Arc::new(Negotiated::default()));
        }
        let requested: Vec<String> = self
            .extensions
            .uris_with_dependencies()
            .into_iter()
            .map(str::to_owned)
            .collect();
        let negotiated = self
            .extensions
            .activate(requested, ctx)
            .map_err(ClientError::Local)?;
        Ok(Arc::new(negotiated))
    }

    async fn unary<T: serde::de::DeserializeOwned + 'static>(
        &self,
        mut req: A2aRequest,
        call: &CallOptions,
        reply: impl FnOnce(&mut T) -> Option<Reply<'_>>,
    ) -> Result<Response<T>, ClientError> {
        let ctx = RequestContext::client();
        let negotiated = self.negotiated(&ctx)?;
        negotiated
            .handle_request(&mut req, &ctx)
            .map_err(ClientError::Local)?;
        let policy = self.transport.options.reconnect;
        let (mut body, meta): (T, Meta) = retry::repeating(policy, &req, || async {
            Ok(self.transport.unary(&req, call).await?)
        })
        .await?;
        if let Some(mut r) = reply(&mut body) {
            negotiated
                .handle_response(&mut r, &req, &ctx)
                .map_err(ClientError::Local)?;
        }
        Ok(Response::new(body, meta))
    }

    async fn streaming(
        &self,
        mut req: A2aRequest,
        call: CallOptions,
    ) -> Result<Response<ClientStream>, ClientError> {
        let ctx = RequestContext::client();
        let negotiated = self.negotiated(&ctx)?;
        negotiated
            .handle_request(&mut req, &ctx)
            .map_err(ClientError::Local)?;
        let policy = self.transport.options.reconnect;
        let (source, meta) = retry::repeating(policy, &req, || async {
            let (mut source, meta) = self.transport.stream(&req, &call).await?;
            // A connection that drops before its first event names no task to resume: a send
            // goes again as a whole (the server answers a repeat with the first one's stream).
            let first = match source.next().await {
                Some(stream::Item::Dropped(e)) => return Err(retry::Failure::Lost(e)),
                Some(first) => first,
                None => return Ok((source, meta)),
            };
            let source: stream::Source =
                Box::pin(futures::stream::once(async { first }).chain(source));
            Ok((source, meta))
        })
        .await?;
        let mut events = Box::pin(resume::resuming(
            self.transport.clone(),
            &req,
            source,
            call,
            negotiated,
            ctx,
        ));
        // An error before the first event is the call's error, not an item of the stream.
        match events.next().await {
            Some(Err(e)) => Err(e),
            Some(Ok(first)) => {
                let rest = futures::stream::once(async move { Ok(first) }).chain(events);
                Ok(Response::new(ClientStream::new(rest), meta))
            }
            None => Err(ClientError::InvalidResponse(
                "the server closed the stream without any event".into(),
            )),
        }
    }
}

impl A2aClient {
    /// Fetches the agent card at `url` without building a client: `url` is a base URL (the
    /// card is at `options.card_path` below it) or the card's own URL (a path ending in
    /// `.json`, or through `/.well-known/`). With
    /// [`ClientOptions::card_verifier`](ClientOptions) set, its signature is verified.
    ///
    /// ```no_run
    /// use a2a_runtime::client::{A2aClient, ClientOptions};
    ///
    /// # async fn run() -> Result<(), a2a_runtime::client::ClientError> {
    /// let fetched = A2aClient::fetch_card("http://127.0.0.1:8080", &ClientOptions::default()).await?;
    /// println!("{} ({:?})", fetched.card().name, fetched.signature());
    /// # Ok(()) }
    /// ```
    pub async fn fetch_card(
        url: &str,
        options: &ClientOptions,
    ) -> Result<FetchedCard, ClientError> {
        let http = http::http_client(options)?;
        let cache = CardCache::fetch(&http, options, url).await?;
        Ok(FetchedCard {
            card: cache.card,
            url: cache.url.unwrap_or_default(),
            signature: cache.signature,
        })
    }

    /// The agent card the client was built from (or last refreshed).
    pub fn card(&self) -> AgentCard {
        self.card
            .read()
            .map(|c| c.card.clone())
            .unwrap_or_else(|p| p.into_inner().card.clone())
    }

    /// What the signature of the card showed when it was fetched (or last refreshed).
    pub fn card_signature(&self) -> CardSignature {
        self.card
            .read()
            .map(|c| c.signature.clone())
            .unwrap_or_else(|p| p.into_inner().signature.clone())
    }

    /// Revalidates the card with `If-None-Match` / `If-Modified-Since`; returns true when it
    /// changed (its signature is verified again). The transport stays on the interface chosen
    /// at build time.
    pub async fn refresh_card(&self) -> Result<bool, ClientError> {
        let poisoned = || ClientError::Local(A2aError::Internal("card cache poisoned".into()));
        let (url, etag, lm) = {
            let c = self.card.read().map_err(|_| poisoned())?;
            let Some(url) = &c.url else {
                return Ok(false);
            };
            (url.clone(), c.etag.clone(), c.last_modified.clone())
        };
        let options = &self.transport.options;
        let fetched = http::fetch_card(
            &self.transport.http,
            options,
            &url,
            etag.as_deref(),
            lm.as_deref(),
        )
        .await?;
        let Some(http::Fetched {
            card,
            json,
            etag,
            last_modified,
        }) = fetched
        else {
            return Ok(false);
        };
        let signature = card::verify(options, &json).await;
        let mut c = self.card.write().map_err(|_| poisoned())?;
        let changed = c.card != card;
        c.card = card;
        c.etag = etag;
        c.last_modified = last_modified;
        c.signature = signature;
        if changed {
            self.checked.store(false, Ordering::Release);
        }
        Ok(changed)
    }
}

/// Checks the configured extensions against the card.
fn check_extensions(
    card: &AgentCard,
    activated: &[String],
    check: ExtensionCheck,
) -> Result<(), A2aError> {
    let declared = &card.capabilities.extensions;
    let missing_required: Vec<String> = declared
        .iter()
        .filter(|d| d.required && !activated.contains(&d.uri))
        .map(|d| d.uri.clone())
        .collect();
    if !missing_required.is_empty() && check != ExtensionCheck::Off {
        return Err(A2aError::ExtensionSupportRequired {
            uris: missing_required,
        });
    }
    for uri in activated {
        if !declared.iter().any(|d| &d.uri == uri) {
            match check {
                ExtensionCheck::Off => {}
                ExtensionCheck::Warn => {
                    tracing::warn!(uri, agent = %card.name, "the agent does not declare this extension")
                }
                ExtensionCheck::Fail => {
                    return Err(A2aError::UnsupportedOperation(format!(
                        "agent {} does not declare extension {uri}",
                        card.name
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The first interface (in the card's order of preference) whose binding the client speaks;
/// a preferred binding wins when the card offers it.
fn choose_interface(
    card: &AgentCard,
    preferred: Option<&ProtocolBinding>,
) -> Result<AgentInterface, A2aError> {
    let usable = |i: &&AgentInterface| {
        (matches!(
            i.protocol_binding,
            ProtocolBinding::JsonRpc | ProtocolBinding::HttpJson
        ) || cfg!(feature = "grpc") && i.protocol_binding == ProtocolBinding::Grpc)
            && (i.protocol_version.is_empty() || i.protocol_version.split('.').next() == Some("1"))
    };
    // A v0.3-only agent: its JSON-RPC or HTTP+JSON interface, spoken in v0.3.
    let v0_3 = |i: &&AgentInterface| {
        matches!(
            i.protocol_binding,
            ProtocolBinding::JsonRpc | ProtocolBinding::HttpJson
        ) && transport::is_v0_3(i)
    };
    let mut candidates: Vec<&AgentInterface> =
        card.supported_interfaces.iter().filter(usable).collect();
    if candidates.is_empty() {
        candidates = card.supported_interfaces.iter().filter(v0_3).collect();
    }
    let chosen = preferred
        .and_then(|p| candidates.iter().find(|i| &i.protocol_binding == p))
        .or_else(|| candidates.first())
        .copied()
        .cloned();
    chosen.ok_or_else(|| {
        A2aError::UnsupportedOperation(format!(
            "agent {} offers no interface this client speaks (JSONRPC, HTTP+JSON{}) for protocol 1.x (nor JSONRPC or HTTP+JSON for 0.3)",
            card.name,
            if cfg!(feature = "grpc") { ", GRPC" } else { "" }
        ))
    })
}
