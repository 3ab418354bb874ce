//! The A2A client: every operation on JSON-RPC or HTTP+JSON (chosen from the agent card),
//! streaming with a robust SSE decoder, extensions negotiated per call.
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
mod error;
mod events;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod options;
mod response;
mod route;
mod sse;
mod stream;
mod transport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt as _};

pub use error::{AgentError, ClientError};
pub use options::{
    Auth, CallOptions, ClientOptions, ClientTls, ExtensionCheck, OutgoingRequest,
    RequestInterceptor, SendOptions,
};
pub use response::Response;
pub use sse::{SseDecoder, SseEvent};
pub use stream::ClientStream;

use crate::error::A2aError;
use crate::extension::registry::ExtensionConfig;
use crate::extension::{Extension, ExtensionSet, Negotiated, Reply};
use crate::extension::{ExtensionRegistry, RequestContext};
use crate::protocol::A2aRequest;
use crate::types::{
    AgentCard, AgentInterface, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Part, ProtocolBinding, PushConfigId,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest,
    Task, TaskId, TaskPushNotificationConfig,
};
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

#[derive(Debug, Default)]
struct CardCache {
    card: AgentCard,
    base_url: Option<String>,
    etag: Option<String>,
    last_modified: Option<String>,
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
        let mut cache = CardCache::default();
        match target {
            Target::Card(card) => cache.card = *card,
            Target::Url(url) => {
                let base = url.trim_end_matches('/').to_owned();
                let fetched = http::fetch_card(
                    &http,
                    &options,
                    &format!("{base}{}", options.card_path),
                    None,
                    None,
                )
                .await?;
                let Some((card, etag, last_modified)) = fetched else {
                    return Err(ClientError::InvalidResponse(
                        "the agent card request answered 304 without a cached card".into(),
                    ));
                };
                cache = CardCache {
                    card,
                    base_url: Some(base),
                    etag,
                    last_modified,
                };
            }
        }
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

    /// The agent card the client was built from (or last refreshed).
    pub fn card(&self) -> AgentCard {
        self.card
            .read()
            .map(|c| c.card.clone())
            .unwrap_or_else(|p| p.into_inner().card.clone())
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

    /// Revalidates the card with `If-None-Match` / `If-Modified-Since`; returns true when it
    /// changed. (The transport stays on the interface chosen at build time.)
    pub async fn refresh_card(&self) -> Result<bool, ClientError> {
        let poisoned = || ClientError::Local(A2aError::Internal("card cache poisoned".into()));
        let (url, etag, lm) = {
            let c = self.card.read().map_err(|_| poisoned())?;
            let Some(base) = &c.base_url else {
                return Ok(false);
            };
            (
                format!("{base}{}", self.transport.options.card_path),
                c.etag.clone(),
                c.last_modified.clone(),
            )
        };
        let fetched = http::fetch_card(
            &self.transport.http,
            &self.transport.options,
            &url,
            etag.as_deref(),
            lm.as_deref(),
        )
        .await?;
        match fetched {
            None => Ok(false),
            Some((card, etag, last_modified)) => {
                let mut c = self.card.write().map_err(|_| poisoned())?;
                let changed = c.card != card;
                c.card = card;
                c.etag = etag;
                c.last_modified = last_modified;
                if changed {
                    self.checked.store(false, Ordering::Release);
                }
                Ok(changed)
            }
        }
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
        headers: &[(String, String)],
        timeout: Option<std::time::Duration>,
        reply: impl FnOnce(&mut T) -> Option<Reply<'_>>,
    ) -> Result<Response<T>, ClientError> {
        let ctx = RequestContext::client();
        let negotiated = self.negotiated(&ctx)?;
        negotiated
            .handle_request(&mut req, &ctx)
            .map_err(ClientError::Local)?;
        let (mut body, meta): (T, Meta) = self.transport.unary(&req, headers, timeout).await?;
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
        headers: &[(String, String)],
        timeout: Option<std::time::Duration>,
    ) -> Result<Response<ClientStream>, ClientError> {
        let ctx = RequestContext::client();
        let negotiated = self.negotiated(&ctx)?;
        negotiated
            .handle_request(&mut req, &ctx)
            .map_err(ClientError::Local)?;
        let (stream, meta) = self.transport.stream(&req, headers, timeout).await?;
        let mut stream: ClientStream = if negotiated.activated.is_empty() {
            stream
        } else {
            Box::pin(stream.map(move |item| {
                let mut ev = item?;
                negotiated
                    .handle_response(&mut Reply::Event(&mut ev), &req, &ctx)
                    .map_err(ClientError::Local)?;
                Ok(ev)
            }))
        };
        // An error before the first event is the call's error, not an item of the stream.
        match stream.next().await {
            Some(Err(e)) => Err(e),
            Some(Ok(first)) => {
                let rest: ClientStream =
                    Box::pin(futures::stream::once(async move { Ok(first) }).chain(stream));
                Ok(Response::new(rest, meta))
            }
            None => Err(ClientError::InvalidResponse(
                "the server closed the stream without any event".into(),
            )),
        }
    }

    fn send_request(&self, input: MessageInput, opts: &SendOptions) -> A2aRequest {
        let mut message = input.0;
        if let Some(t) = &opts.task_id {
            message.task_id = TaskId::from(t.as_str());
        }
        if let Some(c) = &opts.context_id {
            message.context_id = c.as_str().into();
        }
        let mut configuration = opts.configuration.clone();
        if let Some(n) = opts.history_length {
            configuration
                .get_or_insert_with(SendMessageConfiguration::default)
                .history_length = Some(n);
        }
        A2aRequest::SendMessage(SendMessageRequest {
            tenant: self.transport.interface.tenant.clone(),
            message,
            configuration,
            metadata: opts.metadata.clone(),
        })
    }

    /// SendMessage: the task (when it is terminal or interrupted, unless `returnImmediately`)
    /// or the agent's direct reply.
    pub async fn send_message(
        &self,
        input: impl Into<MessageInput>,
        opts: SendOptions,
    ) -> Result<Response<SendResult>, ClientError> {
        let req = self.send_request(input.into(), &opts);
        self.unary(req, &opts.headers, opts.timeout, |r: &mut SendResult| {
            Some(Reply::SendMessage(r))
        })
        .await
    }

    /// SendStreamingMessage: the events as they happen (the task first, then updates).
    pub async fn stream_message(
        &self,
        input: impl Into<MessageInput>,
        opts: SendOptions,
    ) -> Result<Response<ClientStream>, ClientError> {
        let req = match self.send_request(input.into(), &opts) {
            A2aRequest::SendMessage(r) => A2aRequest::SendStreamingMessage(r),
            other => other,
        };
        self.streaming(req, &opts.headers, opts.timeout).await
    }

    /// GetTask.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Response<Task>, ClientError> {
        let req = A2aRequest::GetTask(GetTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
            history_length,
        });
        self.unary(req, &[], None, |t: &mut Task| Some(Reply::Task(t)))
            .await
    }

    /// ListTasks (one page).
    pub async fn list_tasks(
        &self,
        mut req: ListTasksRequest,
    ) -> Result<Response<ListTasksResponse>, ClientError> {
        req.tenant.clone_from(&self.transport.interface.tenant);
        self.unary(
            A2aRequest::ListTasks(req),
            &[],
            None,
            |r: &mut ListTasksResponse| Some(Reply::ListTasks(r)),
        )
        .await
    }

    /// Every task matching `req`, walking `nextPageToken` page by page.
    pub fn list_all_tasks(
        &self,
        req: ListTasksRequest,
    ) -> impl Stream<Item = Result<Task, ClientError>> + Send + '_ {
        struct Walk {
            next: Option<ListTasksRequest>,
            buffered: std::collections::VecDeque<Task>,
        }
        let start = Walk {
            next: Some(req),
            buffered: Default::default(),
        };
        futures::stream::unfold(start, move |mut walk| async move {
            loop {
                if let Some(task) = walk.buffered.pop_front() {
                    return Some((Ok(task), walk));
                }
                let req = walk.next.take()?;
                match self.list_tasks(req.clone()).await {
                    Err(e) => return Some((Err(e), walk)),
                    Ok(page) => {
                        let page = page.into_inner();
                        if !page.next_page_token.is_empty() {
                            if page.tasks.is_empty() {
                                let e = ClientError::InvalidResponse(
                                    "an empty page with a next page token".into(),
                                );
                                return Some((Err(e), walk));
                            }
                            walk.next = Some(ListTasksRequest {
                                page_token: page.next_page_token,
                                ..req
                            });
                        }
                        walk.buffered.extend(page.tasks);
                    }
                }
            }
        })
    }

    /// CancelTask.
    pub async fn cancel_task(&self, id: &str) -> Result<Response<Task>, ClientError> {
        let req = A2aRequest::CancelTask(CancelTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
            metadata: Default::default(),
        });
        self.unary(req, &[], None, |t: &mut Task| Some(Reply::Task(t)))
            .await
    }

    /// SubscribeToTask: the task as it stands, then its live events until it is terminal. A
    /// missing task is TaskNotFound and a finished one UnsupportedOperation.
    pub async fn resubscribe(&self, id: &str) -> Result<Response<ClientStream>, ClientError> {
        self.resubscribe_with(id, CallOptions::default()).await
    }

    /// SubscribeToTask with per-call options (e.g. a `Last-Event-ID` header to resume after an
    /// event).
    pub async fn resubscribe_with(
        &self,
        id: &str,
        opts: CallOptions,
    ) -> Result<Response<ClientStream>, ClientError> {
        let req = A2aRequest::SubscribeToTask(SubscribeToTaskRequest {
            tenant: self.transport.interface.tenant.clone(),
            id: id.into(),
        });
        self.streaming(req, &opts.headers, opts.timeout).await
    }

    /// CreateTaskPushNotificationConfig (the server assigns the id when `config.id` is empty).
    pub async fn set_push_config(
        &self,
        mut config: TaskPushNotificationConfig,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        config.tenant.clone_from(&self.transport.interface.tenant);
        let req = A2aRequest::CreateTaskPushNotificationConfig(config);
        self.unary(req, &[], None, |c: &mut TaskPushNotificationConfig| {
            Some(Reply::PushConfig(c))
        })
        .await
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Response<TaskPushNotificationConfig>, ClientError> {
        let req = A2aRequest::GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest {
            tenant: self.transport.interface.tenant.clone(),
            task_id: task_id.into(),
            id: PushConfigId::from(id),
        });
        self.unary(req, &[], None, |c: &mut TaskPushNotificationConfig| {
            Some(Reply::PushConfig(c))
        })
        .await
    }

    /// ListTaskPushNotificationConfigs.
    pub async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<Response<ListTaskPushNotificationConfigsResponse>, ClientError> {
        let req =
            A2aRequest::ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest {
                tenant: self.transport.interface.tenant.clone(),
                task_id: task_id.into(),
                ..Default::default()
            });
        self.unary(
            req,
            &[],
            None,
            |c: &mut ListTaskPushNotificationConfigsResponse| Some(Reply::PushConfigs(c)),
        )
        .await
    }

    /// DeleteTaskPushNotificationConfig (idempotent).
    pub async fn delete_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<Response<()>, ClientError> {
        let req =
            A2aRequest::DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest {
                tenant: self.transport.interface.tenant.clone(),
                task_id: task_id.into(),
                id: PushConfigId::from(id),
            });
        let r: Response<crate::types::Empty> = self
            .unary(req, &[], None, |e: &mut crate::types::Empty| {
                Some(Reply::Empty(e))
            })
            .await?;
        Ok(r.map(|_| ()))
    }

    /// GetExtendedAgentCard.
    pub async fn extended_card(&self) -> Result<Response<AgentCard>, ClientError> {
        let req = A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest {
            tenant: self.transport.interface.tenant.clone(),
        });
        self.unary(req, &[], None, |c: &mut AgentCard| {
            Some(Reply::AgentCard(c))
        })
        .await
    }

    /// Calls a method added by an extension, typed; its extension is activated for the call.
    pub async fn call<M: crate::extension::ExtensionMethod>(
        &self,
        params: M::Params,
    ) -> Result<Response<M::Result>, ClientError> {
        let value = serde_json::to_value(&params).map_err(|e| {
            ClientError::Local(A2aError::Internal(format!(
                "could not encode the params of {}: {e}",
                M::METHOD
            )))
        })?;
        self.ensure_checked()?;
        let uri = <M::Extension as Extension>::URI;
        let (result, meta) = self
            .transport
            .call_method(M::METHOD, M::REST_PATH, uri, value, &[], None)
            .await?;
        let typed = crate::json::from_value(result).map_err(|e| {
            ClientError::InvalidResponse(format!("the result of {} does not fit: {e}", M::METHOD))
        })?;
        Ok(Response::new(typed, meta))
    }

    /// Calls a method added by an extension by name, untyped: `method` on JSON-RPC, a POST on
    /// `rest_path` (below the interface URL) on HTTP+JSON; `extension` is activated for the
    /// call.
    pub async fn call_raw(
        &self,
        method: &'static str,
        rest_path: &'static str,
        extension: &'static str,
        params: serde_json::Value,
        opts: CallOptions,
    ) -> Result<Response<serde_json::Value>, ClientError> {
        self.ensure_checked()?;
        let (result, meta) = self
            .transport
            .call_method(
                method,
                rest_path,
                extension,
                params,
                &opts.headers,
                opts.timeout,
            )
            .await?;
        Ok(Response::new(result, meta))
    }

    /// Calls any operation with per-call options (headers, timeout).
    pub async fn call_with<T: serde::de::DeserializeOwned + 'static>(
        &self,
        req: A2aRequest,
        opts: CallOptions,
    ) -> Result<Response<T>, ClientError> {
        if req.operation().is_streaming() {
            return Err(ClientError::Local(A2aError::InvalidRequest(format!(
                "{} is a streaming operation",
                req.operation()
            ))));
        }
        self.unary(req, &opts.headers, opts.timeout, |_: &mut T| None)
            .await
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
